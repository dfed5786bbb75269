"""ROC4: dependency manifests that make pip replace or break a ROCm install of PyTorch.

Requirements files, ``pyproject.toml``, ``setup.cfg``, conda environment files and ``pip install``
commands (shell, Dockerfile, YAML) are read by ``configfiles/manifests.py``; ``setup.py`` literals
by the Python checker below (``ast``, never run).  The rules decide:

* ROC405: a CUDA package index or find-links page (``download.pytorch.org/whl/cu121``), or a
  CUDA build asked for by its local version (``torch==2.4.0+cu121``, ``...%2Bcu118-...whl``);
* ROC406: a distribution that only exists as a CUDA build (``nvidia-*-cu12``, ``cupy-cuda12x``,
  ``jax[cuda12]``, ``onnxruntime-gpu``, TensorRT, DALI, PyCUDA);
* ROC407: an exact ``torch``/``torchvision``/``torchaudio`` pin (``==2.4.0``, ``===2.4.0``): PEP 440
  lets ``==2.4.0`` match ``2.4.0+rocm6.1``, so it replaces every other ROCm release.

Silent where the ROCm install never goes: an NVIDIA branch, stage or job; a file named for CUDA
or for another platform (NPU, XPU, CPU, macOS ...) or with a ROCm twin beside it
(``requirements.txt`` next to ``requirements_amd.txt``); an extra, group or source named for CUDA;
a marker that excludes Linux; a CI definition that names no ROCm job.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import deque
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple

from rocm_lint.domain import NVIDIA
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.rules.distributions import distribution
from rocm_lint.requirements import Parsed, clauses, marker_false_on_linux, parse_requirement
from rocm_lint.rule import Hit, PyHit, Rule

if TYPE_CHECKING:
    from rocm_lint.configfiles.unit import ConfigUnit

_LANGUAGES = ("manifest", "shell", "dockerfile", "yaml", "dotenv", "python")

ROC405 = Rule(
    "ROC405",
    "cuda-build-in-dependencies",
    "dependency manifest or `pip install` takes a CUDA build (a CUDA package index, a `+cu121` local "
    "version or wheel): pip replaces a ROCm torch with it",
    triggers=("+cu1", "+cuda", "%2Bcu1", "%2bcu1", "/cu1"),
    languages=_LANGUAGES,
    messages={
        "index": "`{url}` is a CUDA package index: torch (and what else it hosts) comes from it as a CUDA "
        "build, replacing a ROCm torch (torch.version.hip becomes None); on ROCm install from "
        "https://download.pytorch.org/whl/rocmX.Y, or keep this index where only NVIDIA installs read it",
        "local": "`{req}` asks for a CUDA build (local version `{local}`): pip installs it over a ROCm "
        "torch, or a CUDA-only binary that cannot load on AMD GPUs; pin the `+rocm` build from the "
        "ROCm index on AMD, or keep this line where only NVIDIA installs read it",
    },
)
ROC406 = Rule(
    "ROC406",
    "cuda-only-distribution",
    "dependency manifest or `pip install` names a distribution that only exists as a CUDA build "
    "(`nvidia-*-cu12`, `cupy-cuda12x`, `jax[cuda12]`, `onnxruntime-gpu`, TensorRT, DALI, PyCUDA, vLLM's and "
    "FlashInfer's PyPI wheels, `sgl-kernel`, `cuda-python`)",
    # distribution names as manifests write them (with `-`): the `_` spellings are Python module names
    # (`jax_cuda12_plugin`), and would send every JAX source file to the parser
    triggers=(
        "nvidia-",
        "cupy-cuda",
        "onnxruntime-gpu",
        "tensorrt",
        "jax-cuda",
        "pycuda",
        "-cu1",
        "-cuda1",
        "[cuda1",
        "[cuda]",
        "[cuda-",
        "[cuda_",
        "[cu1",
        ",cuda1",
        # single distributions of rules/distributions.py with no ROCm wheel on PyPI
        "vllm",
        "flashinfer",
        "sgl-kernel",
        "cuda-python",
        "cuda-bindings",
        "cuda-core",
        "cuda-toolkit",
    ),
    # The table's names are ordinary words in prose and module names (a `vllm` import, a comment
    # naming `cuda-python`): they count where a requirement is written, at the start of a line
    # (requirements files, TOML arrays, YAML lists), after a quote, or after `install` on its line.
    precheck=r"nvidia-|cupy-cuda|onnxruntime-gpu|tensorrt|jax-cuda|pycuda|-cu1|-cuda1|\[cu|,cuda1"
    r"|(?m:(?:^[ \t\-]*|[\"']|\binstall\b[^\n]*\s)(?:vllm|flashinfer|sgl-kernel|cuda-(?:python|bindings|core|toolkit))\b)",
    languages=_LANGUAGES,
    messages={
        "default": "`{name}` only exists as a CUDA build ({what}): on an AMD host it installs "
        "CUDA libraries that cannot run there; use {instead} on ROCm, or move it to "
        "an extra, marker or file only NVIDIA installs use"
    },
)
ROC407 = Rule(
    "ROC407",
    "exact-torch-pin",
    "exact `torch`/`torchvision`/`torchaudio` pin (`==2.4.0`, or a range only one release meets) in a "
    "dependency manifest or `pip install`: any other ROCm release is replaced by PyPI's CUDA wheel",
    triggers=(
        "torch==",
        "torch ==",
        "torchvision==",
        "torchvision ==",
        "torchaudio==",
        "torchaudio ==",
        "torch = ",
        "torchvision = ",
        "torchaudio = ",
        "torch>=",
        "torch >=",
        "torchvision>=",
        "torchvision >=",
        "torchaudio>=",
        "torchaudio >=",
        "triton==",
        "triton ==",
        "triton = ",
    ),
    # a pin, not `torch = None` in a Python try/except ImportError; a range with an upper bound
    precheck=r"(?:torch(?:vision|audio)?|triton)\s*(?:===?\s*\d|=\s*[\"'{])|torch(?:vision|audio)?\s*>=\s*[\d.]+\s*,\s*<",
    languages=_LANGUAGES,
    messages={
        "default": "`{req}` pins one release of {name}: PEP 440 lets `=={version}` match "
        "`{version}+rocmX.Y`, but a ROCm {name} of any other release is replaced by PyPI's "
        "CUDA wheel (torch.version.hip becomes None); give a range (`>={version}`) or pin "
        "per platform",
        "arbitrary": "`{req}` pins {name} by arbitrary equality: `==={version}` is a string comparison "
        "that no ROCm build (`{version}+rocmX.Y`) matches, so pip always replaces a ROCm "
        "{name} with PyPI's CUDA wheel (torch.version.hip becomes None); give a range "
        "(`>={version}`) or pin per platform",
        "range": "`{req}` admits one release of {name} only ({version}), so it acts as `=={version}`: a ROCm "
        "{name} of any other release is replaced by PyPI's CUDA wheel (torch.version.hip becomes None); "
        "widen the range or pin per platform",
        "shadow": "`{req}` pins {name} exactly: {what}, so pip does not see it installed and puts PyPI's "
        "{name} {version} over it: two distributions own one `triton` package, at a release the ROCm "
        "torch was not built against (Inductor's kernels fail to compile, and uninstalling either breaks "
        "the other); use {instead}",
    },
)

# -- what a requirement asks for --------------------------------------------------------------------
_CUDA_LOCAL = LazyPattern(r"(?:\+|%2[Bb])(cu(?:da)?\d[\w.]*)")
# a path segment or file-name word named for CUDA: /whl/cu121, /whl/nightly/cu128, jax_cuda_releases.html,
# torch-2.4.0+cu121.html, ...%2Bcu118-cp310...whl (the host is not read: developer.download.nvidia.com)
_CUDA_URL = LazyPattern(r"[/_.+-]cu(?:da)?\d*(?=[/_.+?#-]|$)|%2[Bb]cu(?:da)?\d", re.I)
_ROCM_URL = LazyPattern(r"rocm", re.I)


# ROC406: what each CUDA-only family is, and what ROCm has instead
_CUDA_ONLY = (
    (
        r"nvidia-(?:cuda-\S*|cublas\S*|cudnn\S*|cufft\S*|cufile\S*|curand\S*|cusolver\S*|cusparse\S*|nccl\S*"
        r"|nvjitlink\S*|nvtx\S*|nvshmem\S*|npp\S*|nvjpeg\S*)",
        "the CUDA runtime libraries torch's CUDA wheels depend on",
        "the ROCm libraries (a ROCm torch brings its own)",
    ),
    (r"cupy-cuda\w*", "CuPy's CUDA wheel", "cupy-rocm-* or CuPy built with CUPY_INSTALL_USE_HIP=1"),
    (r"jax-cuda\d+-\S*", "JAX's CUDA plugin", "jax[rocm] / jax-rocm7-plugin"),
    (
        r"onnxruntime-gpu",
        "ONNX Runtime's CUDA execution provider",
        "onnxruntime-rocm or onnxruntime-migraphx",
    ),
    (r"(?:torch-)?tensorrt(?:-\S+)?|nvidia-tensorrt", "NVIDIA TensorRT", "MIGraphX (torch-migraphx)"),
    (r"nvidia-dali\S*", "NVIDIA DALI", "rocAL or a CPU data loader"),
    (r"pycuda", "PyCUDA (builds against the CUDA driver API)", "HIP Python (hip-python)"),
)
_CUDA_ONLY_RE = LazyPattern("|".join(f"({p})" for p, _, _ in _CUDA_ONLY) + "$")
_CUDA_TOKEN = LazyPattern(r"cu\d{2,3}|cuda\d+x?")
_CUDA_EXTRA = LazyPattern(r"(?:cuda\d*|cu\d{2,3})(?:[-_.]|$)")


def cuda_only(p: Parsed) -> Optional[Tuple[str, str]]:
    """(what, instead) for a distribution that has no ROCm build."""
    row = distribution(p.name)
    if row is not None and not row.rocm_wheel_on_pypi:
        # a requirement that names a ROCm build (`vllm==0.6.3+rocm631`, a ROCm wheel URL) is one
        if _ROCM_URL.search(p.spec) or _ROCM_URL.search(p.url):
            return None
        return row.what, row.instead
    cuda_extra = next((e for e in p.extras if _CUDA_EXTRA.match(e)), None)
    if cuda_extra and p.name == "jax":
        return "JAX's CUDA plugin and CUDA wheels", "jax[rocm] / jax-rocm7-plugin"
    if cuda_extra:
        return (
            f"its `{cuda_extra}` extra installs the CUDA build",
            f"its ROCm extra or build ({p.name}[rocm], if it has one)",
        )
    m = _CUDA_ONLY_RE.match(p.name)
    if m:
        k = next(i for i, g in enumerate(m.groups()) if g is not None)
        return _CUDA_ONLY[k][1], _CUDA_ONLY[k][2]
    tokens = p.name.split("-")
    if any(_CUDA_TOKEN.fullmatch(t) for t in tokens) and not any("rocm" in t for t in tokens):
        return "its name says which CUDA release it is built for", "its ROCm build, if the project has one"
    return None


def cuda_local(p: Parsed) -> Optional[str]:
    """The CUDA local label a requirement asks for (``+cu121``), from its version or URL."""
    for text in (p.spec, p.url):
        m = _CUDA_LOCAL.search(text)
        if m:
            return "+" + m.group(1)
    return None


_TORCH = ("torch", "torchvision", "torchaudio")
_RELEASE = LazyPattern(r"\d+(?:\.\d+)*$")


def exact_pin(p: Parsed) -> Optional[Tuple[str, str]]:
    """(operator, version) of an exact pin (no wildcard, no local label) of torch/torchvision/torchaudio
    or of a package a ROCm torch brings under another name (``triton``); ``("range", version)`` for a
    torch range that only one release meets (``>=2.7.0,<2.7.1``: PEP 440 admits 2.7.0, its
    post-releases and local builds, as ``==2.7.0`` does)."""
    row = distribution(p.name)
    if (p.name not in _TORCH and (row is None or not row.rocm_torch_brings)) or p.url:
        return None
    found = clauses(p.spec)
    for op, version in found:
        if op in ("==", "===") and "*" not in version and "+" not in version:
            return op, version
    if p.name in _TORCH:
        one = one_release(found)
        if one is not None:
            return "range", one
    return None


def one_release(found: List[Tuple[str, str]]) -> Optional[str]:
    """The one release ``>=A,<B`` (or ``>=A,<=A``) admits, when B is A with its last component
    (at B's length) plus one; None where the range holds more, or a clause is not a plain release
    (a pre-release, a wildcard, a local label: then PEP 440's rules differ and the answer is left open)."""
    lows = [v for op, v in found if op == ">="]
    highs = [(op, v) for op, v in found if op in ("<", "<=")]
    if len(lows) != 1 or len(highs) != 1 or len(found) != 2:
        return None
    low, (op, high) = lows[0], highs[0]
    if not (_RELEASE.match(low) and _RELEASE.match(high)):
        return None
    lo, hi = [int(x) for x in low.split(".")], [int(x) for x in high.split(".")]
    if op == "<=":
        n = max(len(lo), len(hi))
        return low if lo + [0] * (n - len(lo)) == hi + [0] * (n - len(hi)) else None
    if len(lo) > len(hi) and any(lo[len(hi) :]):
        return None  # >=2.7.1,<2.8 holds 2.7.1, 2.7.2 ...
    lo = (lo + [0] * len(hi))[: len(hi)]
    if len(hi) < 3 or lo[:-1] != hi[:-1] or hi[-1] != lo[-1] + 1:
        return None  # `<2.8` or `<3` bounds a series of releases, never one
    return ".".join(map(str, lo))


def cuda_index(url: str) -> bool:
    """An index or find-links page of CUDA builds (named for CUDA in its path, not for ROCm)."""
    path = url.split("://", 1)[-1]
    path = path[path.find("/") :] if "/" in path else ""
    return bool(_CUDA_URL.search(path)) and not _ROCM_URL.search(url)


# -- where a requirement is installed -----------------------------------------------------------------
_NVIDIA_NAME = LazyPattern(r"cu(?:da)?\d|cuda|nvidia|tensorrt|trtllm", re.I)
_NVIDIA_WORD = LazyPattern(r"nv|nvcc|cudnn|trt")
# (Colab's and Kaggle's accelerators are NVIDIA GPUs and TPUs)
_OTHER_WORD = LazyPattern(
    r"npu|xpu|ipex|intel\w*|ascend|tpu|hpu|gaudi|habana|neuron|mps|metal|apple|macos|mac"
    r"|darwin|cpu|musa|mlu|jetson|openvino|colab|kaggle"
)


def not_for_rocm_section(section: str) -> bool:
    """An extra, group or source named for NVIDIA or for another platform (``cu121``, ``cuda12_pip``,
    ``with-cuda``, ``flashattention-cu12x``, ``trtllm``, ``npu``, ``intel-gpu-torch260``)."""
    if not section:
        return False
    tokens = [t for t in re.split(r"[^a-z0-9]+", section.lower()) if t]
    return bool(_NVIDIA_NAME.search(section)) or any(
        _NVIDIA_WORD.fullmatch(t) or _OTHER_WORD.fullmatch(t) for t in tokens
    )


def marker_excludes_rocm(marker: str) -> bool:
    """Is the marker false on a Linux x86-64 ROCm host (whatever the Python version, for every extra
    not named for another platform)?"""
    return marker_false_on_linux(marker, not_for_rocm_section)


# -- config files and manifests ----------------------------------------------------------------------
_ROCM_JOB = LazyPattern(r"rocm|\bgfx\d|\bmi[123]\d\d|amd\.com/gpu|/dev/kfd", re.I)


# the NVIDIA Container Toolkit's variables: only an image meant for nvidia-container-runtime sets them
_NVIDIA_IMAGE = LazyPattern(r"\bNVIDIA_(?:VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_CUDA)\b")
_ROCM_WORD = LazyPattern(r"rocm|\bhip\b|\bamd\b|\bgfx\d", re.I)


def _silent_file(unit: ConfigUnit) -> bool:
    """Files the ROCm install never reads: named for CUDA or for another platform, with a ROCm twin
    beside them, a CI definition that names no ROCm job, an image for the NVIDIA container runtime,
    a container-build file only NVIDIA images use, a manifest the project's ROCm build swaps out."""
    from rocm_lint.configfiles.manifest_platform import (
        names_other_platform,
        nvidia_variant,
        only_nvidia_images_use,
        replaced_by_rocm_build,
    )

    cached = unit.memo.get("deps.silent")
    if cached is None:
        cached = (
            unit.nvidia_only_file
            or names_other_platform(unit.path)
            or (unit.ci_config and not unit.matches("deps.rocm_job", _ROCM_JOB))
            or (
                unit.language == "dockerfile"
                and unit.matches("deps.nvidia_image", _NVIDIA_IMAGE)
                and not unit.matches("deps.rocm_word", _ROCM_WORD)
            )
            or nvidia_variant(unit.workspace, unit.path)
            or only_nvidia_images_use(unit.workspace, unit.path)
            or (unit.language == "manifest" and replaced_by_rocm_build(unit.workspace, unit.path))
        )
        unit.memo["deps.silent"] = cached
    return cached  # type: ignore[return-value]


def _findings(unit: ConfigUnit) -> List[Tuple[str, int, int, str]]:
    """(code, start, end, message) of every dependency hazard in the unit, computed once."""
    from rocm_lint.configfiles.manifests import read_manifest

    cached = unit.memo.get("deps.findings")
    if cached is not None:
        return cached  # type: ignore[return-value]
    out: List[Tuple[str, int, int, str]] = []
    if not _silent_file(unit):
        m = read_manifest(unit)
        for r in m.requirements:
            if r.gate == NVIDIA or r.computed or not_for_rocm_section(r.section):
                continue
            for code, message in requirement_hazards(r.text, r.indexes):
                out.append((code, r.start, r.end, message))
        for i in m.indexes:
            if i.gate == NVIDIA or not i.used or not_for_rocm_section(i.section) or "$" in i.url:
                continue
            if cuda_index(i.url) and not marker_excludes_rocm(i.marker):
                out.append(("ROC405", i.start, i.end, ROC405.message("index", url=i.url)))
    unit.memo["deps.findings"] = out
    return out


def requirement_hazards(text: str, indexes: Tuple[str, ...] = ()) -> Iterator[Tuple[str, str]]:
    """(code, message) of what one requirement does to a ROCm install."""
    p = parse_requirement(text)
    if p is None or marker_excludes_rocm(p.marker):
        return
    shown = text.split(";")[0].strip()
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    local = cuda_local(p)
    if local:
        yield "ROC405", ROC405.message("local", req=shown, local=local)
    if p.url and cuda_index(p.url) and not local:
        yield "ROC405", ROC405.message("index", url=p.url)
    only = cuda_only(p) if p.name else None
    if only and distribution(p.name) is not None and any(_ROCM_URL.search(u) for u in indexes):
        only = None  # a single project's ROCm builds from its own index (wheels.vllm.ai/rocm)
    if only:
        yield (
            "ROC406",
            ROC406.message(
                name=p.name + (f"[{','.join(p.extras)}]" if p.extras else ""), what=only[0], instead=only[1]
            ),
        )
    pin = exact_pin(p)
    if pin and not local and not any(_ROCM_URL.search(u) for u in indexes):
        row = distribution(p.name)
        if row is not None and row.rocm_torch_brings:
            message = ROC407.message(
                "shadow", req=shown, name=p.name, version=pin[1], what=row.what, instead=row.instead
            )
        else:
            key = {"==": "default", "===": "arbitrary"}.get(pin[0], pin[0])
            message = ROC407.message(key, req=shown, name=p.name, version=pin[1])
        yield "ROC407", message


def _config_hits(rule: Rule, unit: ConfigUnit) -> Iterator[Hit]:
    for code, start, end, message in _findings(unit):
        if code == rule.code:
            yield rule.hit(start, end, message)


_CONFIG = ("manifest", "shell", "dockerfile", "yaml", "dotenv")


@ROC405.source_checker(*_CONFIG)
def cuda_build_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    yield from _config_hits(ROC405, unit)


@ROC406.source_checker(*_CONFIG)
def cuda_only_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    yield from _config_hits(ROC406, unit)


@ROC407.source_checker(*_CONFIG)
def exact_pin_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    yield from _config_hits(ROC407, unit)


# -- setup.py: install_requires / extras_require literals ------------------------------------------------
_REQUIRES = ("install_requires", "setup_requires", "tests_require")
_SETUP = frozenset({"setuptools.setup", "distutils.core.setup"})


def _setup_lists(ctx: ModuleContext) -> Dict[int, str]:
    """id() of each list literal that ``setuptools.setup()`` takes as dependencies -> its extra
    ("" = always): the keyword's own literal, or the module-level assignments of the name it passes
    (``install_requires=REQUIRES``, ``extras_require={"x": X_REQUIRES}``, ``extra_deps["x"] = [...]``)."""

    def compute() -> Dict[int, str]:
        out: Dict[int, str] = {}
        # ``setuptools.setup``/``distutils.core.setup`` is named through an import (or spelled out):
        # a module whose text names neither calls neither
        if "setuptools" not in ctx.text and "distutils" not in ctx.text:
            return out
        calls = [
            n
            for n in _walk_naming(ctx, _setup_roots(ctx))
            if isinstance(n, ast.Call) and ctx.qualname(n.func) in _SETUP
        ]
        if not calls:
            return out
        values: Dict[str, List[ast.AST]] = {}
        entries: Dict[str, List[Tuple[str, ast.AST]]] = {}
        for stmt in ctx.tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    if isinstance(target, ast.Name):
                        values.setdefault(target.id, []).append(stmt.value)
                    elif (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        entries.setdefault(target.value.id, []).append((target.slice.value, stmt.value))

        def lists(node: ast.AST, section: str, depth: int = 0) -> None:
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                out.setdefault(id(node), section)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                lists(node.left, section, depth)
                lists(node.right, section, depth)
            elif isinstance(node, ast.Name) and depth < 3:
                for value in values.get(node.id, []):
                    lists(value, section, depth + 1)

        def extras(node: ast.AST, depth: int = 0) -> None:
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        lists(value, key.value)
            elif isinstance(node, ast.Name) and depth < 3:
                for value in values.get(node.id, []):
                    extras(value, depth + 1)
                for key, value in entries.get(node.id, []):
                    lists(value, key)

        for node in calls:
            for kw in node.keywords:
                if kw.arg in _REQUIRES:
                    lists(kw.value, "")
                elif kw.arg == "extras_require":
                    extras(kw.value)
        return out

    return ctx.memo("deps.setup_lists", compute)


# What a call's root name must resolve to for its qualname to be one of ``_SETUP``: a dotted prefix.
_SETUP_PREFIXES = frozenset(".".join(q.split(".")[:i]) for q in _SETUP for i in range(1, q.count(".") + 2))


def _setup_roots(ctx: ModuleContext) -> List[str]:
    """The names a ``setup()`` call of ``_SETUP`` can start with: ``ctx.qualname`` maps a call's root
    name through the imports (an unimported name stands for itself), then appends the attributes."""
    names = ctx.imports.names
    return sorted(
        {r for r, q in names.items() if q in _SETUP_PREFIXES}
        | {r for r in _SETUP_PREFIXES if "." not in r and r not in names}
    )


def _walk_naming(ctx: ModuleContext, words: List[str]) -> Iterator[ast.AST]:
    """``ast.walk`` of the module, less the subtrees whose lines hold none of ``words`` as a whole
    word nor a non-ASCII character (an identifier in letters NFKC folds to one of ``words``).
    A call whose name starts with one of ``words`` is on such a line, and so are its ancestors
    (a node's lines hold its children's, a decorator's are its definition's); the nodes come in
    ``ast.walk``'s order (breadth first: dropping subtrees keeps the others' order)."""
    text = ctx.text
    if not text:
        yield from ast.walk(ctx.tree)
        return
    if "\r" in text:  # the parser's line count
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    offsets = [m.start() for m in _NON_ASCII.finditer(text)] if not text.isascii() else []
    for word in words:
        pos = text.find(word)
        while pos != -1:
            end = pos + len(word)
            if not (pos and (text[pos - 1].isalnum() or text[pos - 1] == "_")) and not (
                end < len(text) and (text[end].isalnum() or text[end] == "_")
            ):
                offsets.append(pos)
            pos = text.find(word, end)
    if not offsets:
        return
    offsets.sort()
    lines: List[int] = []
    line, last = 1, 0
    for pos in offsets:
        line += text.count("\n", last, pos)
        last = pos
        lines.append(line)
    todo = deque([ctx.tree])
    while todo:
        node = todo.popleft()
        for child in ast.iter_child_nodes(node):
            lo = getattr(child, "lineno", None)
            if lo is not None:
                decorators = getattr(child, "decorator_list", None)
                if decorators:
                    lo = min(lo, *(d.lineno for d in decorators))
                i = bisect.bisect_left(lines, lo)
                if i == len(lines) or lines[i] > (getattr(child, "end_lineno", None) or lo):
                    continue
            todo.append(child)
        yield node


_NON_ASCII = LazyPattern(r"[^\x00-\x7f]")


def _setup_hits(rule: Rule, node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    section = _setup_lists(ctx).get(id(node))
    if section is None or not_for_rocm_section(section):
        return
    for element in getattr(node, "elts", ()):
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            for code, message in requirement_hazards(element.value):
                if code == rule.code:
                    yield PyHit(element, message)


@ROC405.checker(ast.List, ast.Tuple, ast.Set)
def cuda_build_in_setup(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    yield from _setup_hits(ROC405, node, ctx)


@ROC406.checker(ast.List, ast.Tuple, ast.Set)
def cuda_only_in_setup(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    yield from _setup_hits(ROC406, node, ctx)


@ROC407.checker(ast.List, ast.Tuple, ast.Set)
def exact_pin_in_setup(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    yield from _setup_hits(ROC407, node, ctx)
