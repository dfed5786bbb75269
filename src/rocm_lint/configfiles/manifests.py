"""Dependency manifests: what pip (or uv, Poetry, PDM, conda) is asked to install, and from where.

:class:`Requirement` and :class:`IndexUse` records with offsets (``rules/dependencies.py`` decides
what is a hazard) from: requirements files (requirement lines, ``-r``/``-c`` includes, ``-i``/
``--index-url``/``--extra-index-url``/``-f``/``--find-links``, also after a requirement on its line);
``pyproject.toml`` (``configfiles/pyproject.py``); ``setup.cfg`` (``install_requires``,
``setup_requires``, ``[options.extras_require]``); the ``- pip:`` section of a conda environment
(YAML with a top-level ``dependencies:``); ``pip``/``pip3``/``python -m pip``/``uv pip`` ``install``
commands of scripts, Dockerfile ``RUN`` and YAML ``run:``/``script:`` (the shell reader's commands,
with their branch's gate), ``pip config set global.index-url`` and ``PIP_INDEX_URL``/``UV_INDEX``...
settings.  A requirement's ``section`` is its extra or group (``""``: always installed).
``setup.py`` literals are read by the rules' Python checker (``ast``)."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import List, Optional, Tuple

from rocm_lint.configfiles.shell import NVIDIA, Word
from rocm_lint.configfiles.unit import ConfigUnit, IndexUse, Manifest, Requirement
from rocm_lint.discovery import read_bounded
from rocm_lint.workspace import Workspace, memoized


# -- which files ------------------------------------------------------------------------------------
def manifest_kind(path: str) -> Optional[str]:
    """``requirements``, ``pyproject``, ``setup.cfg`` for the manifest files discovery hands over."""
    name = os.path.basename(path).lower()
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setup.cfg"
    return "requirements"


_CONDA_ENV = re.compile(r"(?m)^dependencies[ \t]*:[ \t]*(?:#.*)?$")
_CONDA_PIP = re.compile(r"(?m)^([ \t]*)-[ \t]+pip[ \t]*:[ \t]*(?:#.*)?$")


def read_manifest(unit: ConfigUnit) -> Manifest:
    """The unit's dependencies (once per unit)."""
    cached = unit.memo.get("manifest")
    if cached is None:
        cached = unit.memo["manifest"] = _read(unit)
    return cached  # type: ignore[return-value]


def _read(unit: ConfigUnit) -> Manifest:
    m = Manifest()
    if unit.language == "manifest":
        kind = manifest_kind(unit.path)
        if kind == "pyproject":
            from rocm_lint.configfiles.pyproject import read_pyproject

            return read_pyproject(unit.code)
        if kind == "setup.cfg":
            _read_setup_cfg(unit.code, m)
        else:
            _read_requirements(unit.code, 0, len(unit.code), m)
        return _with_indexes(m, 0)
    if unit.language == "yaml" and _CONDA_ENV.search(unit.code):
        _read_conda_pip(unit.code, m)
        _with_indexes(m, 0)
    for cmd in unit.commands:
        before = len(m.requirements), len(m.indexes)
        # `if [[ $CUDA_VERSION == cu13* ]]; then ... else ... fi`: both arms pick between CUDA releases
        gate = NVIDIA if any(_CUDA_RELEASE_TEST.search(c) for c in cmd.conditions) else cmd.gate
        _read_command(cmd.words, gate, m)
        _with_indexes(m, *before)
    for s in unit.settings:
        if s.name in _INDEX_SETTINGS and s.value and not s.computed:
            for url in s.value.split():
                at = unit.code.find(url, s.value_start, max(s.value_end, s.value_start + len(url)))
                a = at if at >= 0 else s.value_start
                m.indexes.append(IndexUse(url, a, a + len(url) if at >= 0 else s.value_end, s.gate, "setting"))
    return m


_CUDA_RELEASE_TEST = re.compile(r"\bcu1\d{1,2}\b|\bCUDA_VERSION\w*|\bCUDA_MAJOR\w*", re.I)
_INDEX_SETTINGS = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL",
                             "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"})


def _with_indexes(m: Manifest, first: int, first_index: int = 0) -> Manifest:
    """Give the requirements from ``first`` on the index URLs read from ``first_index`` on."""
    urls = tuple(i.url for i in m.indexes[first_index:])
    if urls:
        m.requirements[first:] = [replace(r, indexes=r.indexes + urls) for r in m.requirements[first:]]
    return m


# -- requirements files -----------------------------------------------------------------------------
_INDEX_OPTIONS = {"-i": "index-url", "--index-url": "index-url", "--extra-index-url": "extra-index-url",
                  "-f": "find-links", "--find-links": "find-links", "--index": "index-url",
                  "--default-index": "index-url"}
_INCLUDE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "--requirements", "--constraints"})
# requirements-file options that take a value (the value is not a requirement)
_VALUE_OPTIONS = frozenset({"-e", "--editable", "--no-binary", "--only-binary", "--trusted-host",
                            "--use-feature", "--hash", "--global-option", "--config-settings", "-C",
                            "--install-option", "--progress-bar", "--upgrade-strategy", "-t", "--target",
                            "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi",
                            "--src", "--log", "--cache-dir", "--proxy", "--retries", "--timeout",
                            "--exists-action", "--python", "-p", "--extra", "--group", "--report",
                            "--index-strategy", "--keyring-provider", "--resolution", "--prerelease",
                            "--exclude-newer", "--link-mode", "-P", "--upgrade-package", "--no-build-isolation-package",
                            "--override", "--excludes", "--torch-backend"})
_WORD = re.compile(r"\S+")


def _read_requirements(code: str, start: int, end: int, m: Manifest, gate: Optional[str] = None,
                       section: str = "") -> None:
    pos = start
    while pos < end:
        nl = code.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        _requirements_line(code, pos, line_end, m, gate, section)
        pos = line_end + 1


def _requirements_line(code: str, a: int, b: int, m: Manifest, gate: Optional[str], section: str) -> None:
    line = code[a:b]
    hash_at = re.search(r"(?:^|[ \t])#", line)
    if hash_at:
        line = line[:hash_at.start()]
    if line.rstrip().endswith("\\"):
        line = line.rstrip()[:-1]
    words = [(w.group(0), a + w.start()) for w in _WORD.finditer(line)]
    _read_words(words, m, gate, section, requirements_file=True)


def _read_words(words: List[Tuple[str, int]], m: Manifest, gate: Optional[str], section: str,
                requirements_file: bool = False, computed: Tuple[bool, ...] = ()) -> None:
    """Options and requirements of a requirements-file line or of ``pip install``'s arguments:
    (word, offset) pairs."""
    k = 0
    pending: List[Tuple[str, int, int]] = []  # a requirement line's words up to its first option
    in_requirement = requirements_file
    while k < len(words):
        w, at = words[k]
        is_computed = bool(computed and computed[k])
        if w.startswith("-") and not is_computed:
            in_requirement = False
            name, eq, value = w.partition("=")
            if len(w) > 2 and w[1] in "ifrce" and not eq:
                name, eq, value = w[:2], "=", w[2:]  # -ihttps://... / -rfile.txt
                v_at = at + 2
            if name in _INDEX_OPTIONS or name in _INCLUDE_OPTIONS or name in _VALUE_OPTIONS:
                if eq:
                    v_at = at + len(w) - len(value)
                elif k + 1 < len(words):
                    k += 1
                    value, v_at = words[k]
                    if computed and computed[k]:
                        k += 1
                        continue
                else:
                    break
                if name in _INDEX_OPTIONS:
                    m.indexes.append(IndexUse(value, v_at, v_at + len(value), gate, _INDEX_OPTIONS[name], section))
                elif name in _INCLUDE_OPTIONS:
                    m.includes.append(value)
            k += 1
            continue
        if requirements_file and in_requirement:
            pending.append((w, at, at + len(w)))
        elif not requirements_file:
            m.requirements.append(Requirement(w, at, at + len(w), gate, section, is_computed))
        k += 1
    if pending:
        text = " ".join(p[0] for p in pending)
        m.requirements.append(Requirement(text, pending[0][1], pending[-1][2], gate, section))


# -- setup.cfg --------------------------------------------------------------------------------------
_CFG_SECTION = re.compile(r"[ \t]*\[([^\]\n]+)\][ \t]*$")
_CFG_KEY = re.compile(r"([A-Za-z0-9_.-]+)[ \t]*[=:][ \t]*(.*)$")


def _read_setup_cfg(code: str, m: Manifest) -> None:
    section, key = "", None
    pos = 0
    for line in code.split("\n"):
        a, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        head = _CFG_SECTION.match(line)
        if head:
            section, key = head.group(1).strip().lower(), None
            continue
        if line[0] in " \t":
            if key is not None:
                _cfg_value(line, a, m, key)
            continue
        kv = _CFG_KEY.match(line)
        key = None
        if kv is None:
            continue
        name = kv.group(1).lower().replace("-", "_")
        if section == "options" and name in ("install_requires", "setup_requires", "tests_require"):
            key = ""
        elif section == "options.extras_require":
            key = kv.group(1)
        elif section == "options" and name == "dependency_links":
            key = "\0links"
        if key is not None and kv.group(2).strip():
            _cfg_value(line, a, m, key, a + kv.start(2))


def _cfg_value(line: str, a: int, m: Manifest, key: str, at: Optional[int] = None) -> None:
    start = at if at is not None else a + len(line) - len(line.lstrip())
    text = line[start - a:]
    cut = re.search(r"(?:^|[ \t])[#;]", text)
    if cut:
        text = text[:cut.start()]
    for part in re.finditer(r"[^,]+" if key == "\0links" else r".+", text):
        item = part.group(0).strip()
        if not item:
            continue
        s = start + part.start() + part.group(0).find(item)
        if key == "\0links":
            m.indexes.append(IndexUse(item, s, s + len(item), None, "find-links"))
        else:
            m.requirements.append(Requirement(item, s, s + len(item), None, key))


# -- conda environment files ------------------------------------------------------------------------
def _read_conda_pip(code: str, m: Manifest) -> None:
    for head in _CONDA_PIP.finditer(code):
        indent = len(head.group(1).expandtabs())
        pos = head.end() + 1
        while pos < len(code):
            nl = code.find("\n", pos)
            line_end = len(code) if nl < 0 else nl
            line = code[pos:line_end]
            body = line.strip()
            if body and not body.startswith("#"):
                if len(line) - len(line.lstrip()) <= indent or not body.startswith("- "):
                    break
                item = body[2:].strip()
                item_at = pos + line.find(body) + 2 + (len(body[2:]) - len(body[2:].lstrip()))
                if item[:1] in "\"'" and item.find(item[0], 1) > 0:  # a quoted scalar, then maybe a comment
                    item, item_at = item[1:item.find(item[0], 1)], item_at + 1
                shifted = Manifest()
                _requirements_line(item, 0, len(item), shifted, None, "")
                _shift(shifted, item_at, m)
            pos = line_end + 1


def _shift(part: Manifest, by: int, into: Manifest) -> None:
    for r in part.requirements:
        into.requirements.append(Requirement(r.text, r.start + by, r.end + by, r.gate, r.section, r.computed))
    for i in part.indexes:
        into.indexes.append(IndexUse(i.url, i.start + by, i.end + by, i.gate, i.how, i.section, i.used, i.marker))
    into.includes.extend(part.includes)


# -- pip commands ----------------------------------------------------------------------------------
_PIP = re.compile(r"pip(?:3(?:\.\d+)?)?$")
_PYTHON = re.compile(r"python(?:\d(?:\.\d+)?)?$")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SKIP_HEADS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "eatmydata"})


def _read_command(words: List[Word], gate: Optional[str], m: Manifest) -> None:
    """``[sudo] [env X=1] (pip|pip3|python -m pip|uv pip) [global options] install ARGS``."""
    k = 0
    n = len(words)
    while k < n and (_ASSIGNMENT.match(words[k].value) or words[k].value in _SKIP_HEADS
                     or (k and words[k - 1].value in ("sudo", "env") and words[k].value.startswith("-"))):
        k += 1
    if k >= n or words[k].computed:
        return
    head = words[k].value.replace("\\", "/").rsplit("/", 1)[-1]
    if _PYTHON.match(head):
        while k + 1 < n and words[k + 1].value.startswith("-") and words[k + 1].value != "-m":
            k += 1
        if k + 2 < n and words[k + 1].value == "-m" and _PIP.match(words[k + 2].value):
            k += 2
        else:
            return
    elif head == "uv" and k + 1 < n and words[k + 1].value == "pip":
        k += 1
    elif not _PIP.match(head):
        return
    k += 1
    while k < n and words[k].value.startswith("-") and words[k].value not in ("install",):
        k += 1  # pip's global options (`pip -q install`, `pip --no-cache-dir install`)
    if k < n and words[k].value == "config" and k + 3 < n and words[k + 1].value == "set":
        key, url = words[k + 2], words[k + 3]
        if key.value.endswith(("index-url", "find-links")) and not url.computed:
            m.indexes.append(IndexUse(url.value, url.start, url.end, gate, "setting"))
        return
    if k >= n or words[k].value != "install":
        return
    rest = words[k + 1:]
    _read_words([(w.value, w.start) for w in rest], m, gate, "", computed=tuple(w.computed for w in rest))


# -- which install a file serves ------------------------------------------------------------------
_ROCM_TOKEN = re.compile(r"(?:rocm|hip)\d*(?:\.\d+)*$|amd(?:gpu)?$")  # not amd64 (an architecture)
_OTHER_PLATFORMS = frozenset({
    "npu", "xpu", "ipex", "intel", "ascend", "tpu", "hpu", "gaudi", "habana", "neuron", "inferentia",
    "trainium", "mps", "metal", "apple", "macos", "mac", "darwin", "osx", "cpu", "musa", "mlu", "camb",
    "cambricon", "maca", "jetson", "tegra", "openvino", "vulkan"})


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
    return tuple(os.path.basename(m.group(1)) for m in re.finditer(
        r"(?m)^[ \t]*(?:-r|-c|--requirement|--constraint)[ \t=]*(\S+)", text))


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
            if not (low.startswith(("dockerfile", "containerfile")) or low.endswith((".dockerfile", ".containerfile"))):
                continue
            text = _text_of(os.path.join(folder, other))
            if name not in text:
                continue
            if not _nvidia_image_file(text):
                return False
            users += 1
    return users > 0


# -- files the ROCm build swaps out ------------------------------------------------------------------
_BUILD_FOLDERS = frozenset({"docker", "dockerfiles", "container", "containers", "scripts", "ci", ".ci", "build"})
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
        folders += [os.path.join(folder, sub) for sub in _listing(ws, folder) if sub.lower() in _BUILD_FOLDERS]
    for folder in dict.fromkeys(folders):
        for other in _listing(ws, folder):
            low = other.lower()
            dockerfile = low.startswith(("dockerfile", "containerfile")) or low.endswith((".dockerfile", ".containerfile"))
            if not (dockerfile or low.endswith(".sh")):
                continue
            full = os.path.join(folder, other)
            ws.note_read(full)
            text = _text_of(full)
            if name not in text:
                continue
            if not any(_ROCM_TOKEN.match(t) for t in _tokens(other)) and not (dockerfile and _rocm_image_file(text)):
                continue
            for m in _MOVE.finditer(text):
                src, dst = (g.strip("\"'") for g in m.groups())
                if os.path.basename(dst) != name or os.path.basename(src) in ("", name) \
                        or os.path.basename(src) not in siblings:
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
    images = [re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), m.group(1).strip("\"'"))
              for m in _FROM.finditer(text)]
    return any(is_nvidia_image(i) for i in images) and not any(is_rocm_image(i) for i in images)


__all__ = ["IndexUse", "Manifest", "NVIDIA", "Requirement", "manifest_kind", "names_other_platform",
           "nvidia_variant", "only_nvidia_images_use", "read_manifest", "replaced_by_rocm_build"]
