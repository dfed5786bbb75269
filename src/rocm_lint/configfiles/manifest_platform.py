"""Which platform a dependency manifest serves, from the project's own files: a name that says
another platform or a CUDA release (``requirements-rocm.txt`` beside ``requirements-cu121.txt``),
a file only NVIDIA images read (``COPY`` into ``FROM nvidia/cuda``), a file the project's ROCm
build swaps out (``mv pyproject_other.toml pyproject.toml`` in its ROCm Dockerfile).  The rules
(``rules/dependencies.py``) silence or keep a manifest's findings by these answers."""

from __future__ import annotations

import os
import re
from typing import List, Tuple

from rocm_lint.discovery import read_bounded
from rocm_lint.workspace import Workspace, memoized


# -- which install a file serves ------------------------------------------------------------------
_ROCM_TOKEN = re.compile(r"(?:rocm|hip)\d*(?:\.\d+)*$|amd(?:gpu)?$")  # not amd64 (an architecture)
_OTHER_PLATFORMS = frozenset(
    {
        "npu",
        "xpu",
        "ipex",
        "intel",
        "ascend",
        "tpu",
        "hpu",
        "gaudi",
        "habana",
        "neuron",
        "inferentia",
        "trainium",
        "mps",
        "metal",
        "apple",
        "macos",
        "mac",
        "darwin",
        "osx",
        "cpu",
        "musa",
        "mlu",
        "camb",
        "cambricon",
        "maca",
        "jetson",
        "tegra",
        "openvino",
        "vulkan",
    }
)


def _tokens(name: str) -> Tuple[str, ...]:
    return tuple(t for t in re.split(r"[^a-z0-9]+", name.lower()) if t)


def names_other_platform(path: str) -> bool:
    """A file (or its folder) named for a platform that is not ROCm: another vendor
    (``requirements/npu.txt``, ``requirements_intel.txt``, ``docker/xpu/Dockerfile``) or a CUDA
    release (``requirements_cuda131.txt``, ``env-cu12x.yml``; ``cuda``/``cu121`` alone are
    ``ConfigUnit.nvidia_only_file``'s)."""
    parts = re.split(r"[\\/]", path.lower())[-2:]
    tokens = set(_tokens(" ".join(parts)))
    if any(_ROCM_TOKEN.match(t) for t in tokens):
        return False
    return bool(tokens & _OTHER_PLATFORMS) or any(_CUDA_RELEASE_NAME.fullmatch(t) for t in tokens)


_CUDA_RELEASE_NAME = re.compile(r"cuda\d+[a-z]?|cu\d{2,3}[a-z]")


def nvidia_variant(ws: Workspace, path: str) -> bool:
    """A file with a ROCm twin beside it (``requirements.txt`` next to ``requirements_amd.txt``,
    ``requirements_linux.txt`` next to ``requirements_linux_rocm.txt``, ``Dockerfile`` next to
    ``Dockerfile_amd``) serves the other (NVIDIA) installs, unless the twin includes it (``-r``)."""
    directory, name = os.path.split(os.path.abspath(path))
    mine = _tokens(name)
    if any(_ROCM_TOKEN.match(t) for t in mine):
        return False
    stem, dot, ext = name.partition(".")
    for sep in "_-.":  # the usual twins' names are cache dependencies even while absent
        for tag in ("rocm", "amd"):
            ws.note_read(os.path.join(directory, f"{stem}{sep}{tag}{dot}{ext}"))
    for twin in _twins(ws, directory, name):
        twin_path = os.path.join(directory, twin)
        ws.note_read(twin_path)
        if name not in _includes_of(ws, twin_path):
            return True
    return False


def _listing(ws: Workspace, directory: str) -> Tuple[str, ...]:
    """The names in ``directory`` (at most 2000), cached while its modification time stays."""
    try:
        stamp = os.stat(directory).st_mtime_ns
    except OSError:
        return ()
    return _listing_at(ws, directory, stamp)


@memoized(maxsize=256)
def _listing_at(ws: Workspace, directory: str, stamp: int) -> Tuple[str, ...]:
    try:
        with os.scandir(directory) as it:
            names = []
            for entry in it:
                names.append(entry.name)
                if len(names) >= 2000:
                    break
            return tuple(names)
    except OSError:
        return ()


def _twins(ws: Workspace, directory: str, name: str) -> List[str]:
    mine = _tokens(name)
    out = []
    for other in _listing(ws, directory):
        theirs = _tokens(other)
        rocm = [t for t in theirs if _ROCM_TOKEN.match(t)]
        if rocm and other != name and tuple(t for t in theirs if not _ROCM_TOKEN.match(t)) == mine:
            out.append(other)
    return out


@memoized(maxsize=256)
def _includes_of(ws: Workspace, path: str) -> Tuple[str, ...]:
    try:
        data = ws.read_bounded(path, 1 << 20)
    except OSError:
        return ()
    if not isinstance(data, bytes):
        return ()
    text = data.decode("utf-8", "replace")
    return tuple(
        os.path.basename(m.group(1))
        for m in re.finditer(r"(?m)^[ \t]*(?:-r|-c|--requirement|--constraint)[ \t=]*(\S+)", text)
    )


# -- files only NVIDIA images read -----------------------------------------------------------------
_IMAGE_WORDS = frozenset({"docker", "dockerfile", "container", "containers", "image", "images"})
_FROM = re.compile(r"(?im)^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(\S+)")
_ARG = re.compile(r"(?im)^[ \t]*ARG[ \t]+([A-Za-z_]\w*)=(\S+)")


def only_nvidia_images_use(ws: Workspace, path: str) -> bool:
    """A file kept for container builds (named for Docker, or in a ``docker/`` folder) that only
    NVIDIA images use: every Dockerfile beside it or one folder up that names it starts from NVIDIA
    images (``requirements_docker.txt`` copied into ``FROM nvidia/cuda``, ``docker/install.sh`` run
    by a CUDA image) and at least one does."""
    parts = re.split(r"[\\/]", os.path.abspath(path).lower())
    if not set(_tokens(" ".join(parts[-2:]))) & _IMAGE_WORDS:
        return False
    directory, name = os.path.split(os.path.abspath(path))
    users = 0
    for folder in (directory, os.path.dirname(directory)):
        for other in _listing(ws, folder):
            low = other.lower()
            if not (
                low.startswith(("dockerfile", "containerfile"))
                or low.endswith((".dockerfile", ".containerfile"))
            ):
                continue
            text = _text_of(os.path.join(folder, other))
            if name not in text:
                continue
            if not _nvidia_image_file(text):
                return False
            users += 1
    return users > 0


# -- files the ROCm build swaps out ------------------------------------------------------------------
_BUILD_FOLDERS = frozenset(
    {"docker", "dockerfiles", "container", "containers", "scripts", "ci", ".ci", "build"}
)
_MOVE = re.compile(r"(?<![\w-])(?:mv|cp|ln)(?:[ \t]+-[A-Za-z-]+)*[ \t]+([^\s;&|]+)[ \t]+([^\s;&|]+)")


def replaced_by_rocm_build(ws: Workspace, path: str) -> bool:
    """A manifest the project's own ROCm build swaps out: a ROCm Dockerfile or script (named for
    ROCm, or starting from a ROCm image) beside it, one folder up or in a ``docker/``-like folder
    of either, that moves or copies another file over it installs from that file, not this one
    (sglang's ``docker/rocm.Dockerfile``: ``rm -rf python/pyproject.toml && mv
    python/pyproject_other.toml python/pyproject.toml``).  The other file must sit beside the
    manifest, and a folder the command names must be the manifest's own."""
    directory, name = os.path.split(os.path.abspath(path))
    siblings = set(_listing(ws, directory))
    folders = [directory, os.path.dirname(directory)]
    for folder in list(folders):
        folders += [
            os.path.join(folder, sub) for sub in _listing(ws, folder) if sub.lower() in _BUILD_FOLDERS
        ]
    for folder in dict.fromkeys(folders):
        for other in _listing(ws, folder):
            low = other.lower()
            dockerfile = low.startswith(("dockerfile", "containerfile")) or low.endswith(
                (".dockerfile", ".containerfile")
            )
            if not (dockerfile or low.endswith(".sh")):
                continue
            full = os.path.join(folder, other)
            ws.note_read(full)
            text = _text_of(full)
            if name not in text:
                continue
            if not any(_ROCM_TOKEN.match(t) for t in _tokens(other)) and not (
                dockerfile and _rocm_image_file(text)
            ):
                continue
            for m in _MOVE.finditer(text):
                src, dst = (g.strip("\"'") for g in m.groups())
                if (
                    os.path.basename(dst) != name
                    or os.path.basename(src) in ("", name)
                    or os.path.basename(src) not in siblings
                ):
                    continue
                dst_dir = os.path.dirname(dst).rstrip("/")
                if dst_dir not in ("", ".") and os.path.basename(dst_dir) != os.path.basename(directory):
                    continue
                return True
    return False


def _rocm_image_file(text: str) -> bool:
    from rocm_lint.configfiles.dockerfile import is_rocm_image

    return any(is_rocm_image(m.group(1)) for m in _FROM.finditer(text))


def _text_of(path: str) -> str:
    try:
        data = read_bounded(path, 1 << 20)
    except OSError:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else ""


def _nvidia_image_file(text: str) -> bool:
    """Some stage starts from an NVIDIA image and none from a ROCm one (``ARG`` defaults substituted)."""
    from rocm_lint.configfiles.dockerfile import is_nvidia_image, is_rocm_image

    args = dict(_ARG.findall(text))
    images = [
        re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), m.group(1).strip("\"'"))
        for m in _FROM.finditer(text)
    ]
    return any(is_nvidia_image(i) for i in images) and not any(is_rocm_image(i) for i in images)
