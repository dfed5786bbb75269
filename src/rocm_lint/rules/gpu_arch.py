"""ROC502/ROC503: hard-coded GPU architectures (NVIDIA arch lists and flags with no ROCm counterpart,
AMD gfx targets pinned) in Python build code."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional, Set

from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.patterns import env_settings
from rocm_lint.rule import SETTINGS_LANGUAGES, PyHit, Rule
from rocm_lint.rules.build import BUILD_FACTS, is_bare_string


# -- ROC502 / ROC503: hard-coded GPU architectures ----------------------------------------
ROC502 = Rule(
    "ROC502",
    "nvidia-arch-list-without-rocm",
    "hard-coded NVIDIA arch list (TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES) "
    "in a file that names no ROCm arch: ignored by ROCm builds",
    triggers=(
        "TORCH_CUDA_ARCH_LIST",
        "CUDAARCHS",
        "CMAKE_CUDA_ARCHITECTURES",
        "CUDA_ARCHITECTURES",
        "arch=",
        "gpu-architecture",
    ),
    languages=("python", *SETTINGS_LANGUAGES),
    facts=(BUILD_FACTS,),
    messages={
        "default": "hard-coded NVIDIA arch `{what}` in a file that names no ROCm arch: ROCm builds ignore "
        "it and build for whatever PyTorch defaults to; add the ROCm counterpart "
        "(PYTORCH_ROCM_ARCH / `--offload-arch`, or detect with `gcnArchName`)"
    },
)
ROC503 = Rule(
    "ROC503",
    "hard-coded-amd-arch",
    "hard-coded AMD GPU arch (--offload-arch=gfx942, PYTORCH_ROCM_ARCH=gfx90a): wrong on every other GPU",
    triggers=(
        "offload-arch",
        "amdgpu-target",
        "cuda-gpu-arch",
        "mcpu=gfx",
        "PYTORCH_ROCM_ARCH",
        "HIP_ARCHITECTURES",
        "GPU_TARGETS",
        "HCC_AMDGPU_TARGET",
        "GPU_ARCH",
        "NVTE_ROCM_ARCH",
        "TORCH_CUDA_ARCH_LIST",
    ),
    # every finding writes a gfx arch out (TORCH_CUDA_ARCH_LIST only counts when it holds one)
    precheck=r"gfx[0-9a-f]",
    rocm_side=True,  # a hard-coded gfx arch is always on the ROCm side
    languages=("python", *SETTINGS_LANGUAGES),
    facts=(BUILD_FACTS,),
    messages={
        "default": "hard-coded AMD arch `{what}`: no code is built for any other GPU, which then fails "
        "with `invalid device function`/`hipErrorNoBinaryForGpu`; honour PYTORCH_ROCM_ARCH "
        "from the environment or detect the arch at build time (`gcnArchName`)"
    },
)

NVIDIA_ARCH_VARS = {"TORCH_CUDA_ARCH_LIST", "CUDAARCHS", "CMAKE_CUDA_ARCHITECTURES"}
# AMD arch settings: PyTorch's and CMake's, and those ROCm projects define for themselves
# (flash-attention's and vLLM's ROCm builds: GPU_ARCHS; TransformerEngine: NVTE_ROCM_ARCH;
# composable_kernel scripts: GPU_ARCH; rocm-cmake: ROCM_AMDGPU_TARGETS).
AMD_ARCH_VARS = {
    "PYTORCH_ROCM_ARCH",
    "HCC_AMDGPU_TARGET",
    "AMDGPU_TARGETS",
    "GPU_TARGETS",
    "CMAKE_HIP_ARCHITECTURES",
    "GPU_ARCHS",
    "GPU_ARCH",
    "NVTE_ROCM_ARCH",
    "ROCM_AMDGPU_TARGETS",
}
# The settings ROC503 reads: the AMD ones, and TORCH_CUDA_ARCH_LIST given gfx archs (ROCm forks that
# reuse the CUDA variable); a file that reads TORCH_CUDA_ARCH_LIST does not take its AMD arch from it.
AMD_ARCH_SETTINGS = AMD_ARCH_VARS | {"TORCH_CUDA_ARCH_LIST"}
# A flag string that names an NVIDIA arch: the whole string starts with the flag.
_NVIDIA_ARCH_FLAG = LazyPattern(
    r"\s*(?:(?:-gencode|--generate-code)[=\s]*)?(?:arch|code)=(?:sm|compute|lto)_\d"
    r"|\s*(?:-arch|--gpu-architecture|--gpu-code|-code)[=\s]+(?:sm|compute)_\d"
    r"|\s*-DCMAKE_CUDA_ARCHITECTURES=\"?\d"
)
# Strings that ROC501 already reports when they reach nvcc (the -gencode spelling).
_ROC501_ARCH_FLAG = LazyPattern(
    r"\s*(?:-gencode|--generate-code|--gpu-architecture|--gpu-code|-code|arch=|code=)"
)
# An AMD arch flag (no string starts with both this and an NVIDIA arch flag).
_AMD_ARCH_FLAG = LazyPattern(
    r"\s*(?:--offload-arch|--amdgpu-target|--cuda-gpu-arch|-mcpu|-D(?:CMAKE_HIP_ARCHITECTURES|AMDGPU_TARGETS"
    r"|GPU_TARGETS|GPU_ARCHS|ROCM_AMDGPU_TARGETS))=\"?gfx\d"
)
# The file also builds for ROCm: names an AMD arch setting or detects the GPU.
ROCM_COUNTERPART = LazyPattern(
    r"PYTORCH_ROCM_ARCH|offload-arch|amdgpu-target|HIP_ARCHITECTURES|GPU_TARGETS|gcnArchName"
    r"|rocm_agent_enumerator|amdgpu-arch|\bgfx\d"
)
# The file takes the AMD arch from the environment or from the GPU: literal archs are fallbacks.
_AMD_ARCH_SOURCE = LazyPattern(
    r"(?:getenv|environ\.get)\(\s*[\"'](?:%s)[\"']|[\"'](?:%s)[\"']\s+(?:not\s+)?in\s+"
    r"(?:os\.)?environ|gcnArchName|rocm_agent_enumerator|amdgpu-arch|rocminfo|_get_rocm_arch_flags"
    % ("|".join(sorted(AMD_ARCH_VARS)), "|".join(sorted(AMD_ARCH_VARS)))
)


def _non_settings(ctx: ModuleContext) -> Set[int]:
    """Ids of the string constants seen so far that set nothing (see :func:`remember_non_settings`)."""
    return ctx.memo("ROC5.non_settings", set)


def _file_matches(ctx: ModuleContext, what: str, pattern: "re.Pattern[str]") -> bool:
    return ctx.memo("ROC5." + what, lambda: bool(pattern.search(ctx.text or "")))


def _literal(value: ast.AST, ctx: ModuleContext) -> Optional[str]:
    """The value's text when it is a plain literal (no f-string holes), else None."""
    text = ctx.string_text(value)
    if text is None or "{}" in text or not text.strip():
        return None
    return text


def _is_setdefault(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"
    )


_READ_METHODS = {"startswith", "endswith", "find", "index", "count", "remove", "discard", "replace", "split"}


@ROC502.observer(ast.JoinedStr, ast.Compare, ast.Call)
@ROC503.observer(ast.JoinedStr, ast.Compare, ast.Call)
def remember_non_settings(node: ast.AST, ctx: ModuleContext) -> None:
    """Strings that set nothing: f-string pieces (``f"--offload-arch={arch}"`` is not
    hard-coded), and strings compared or searched for (``"-gencode=..." in flags``,
    ``assert args == ["-gencode=..."]``, ``flag.startswith("-arch=sm_")``).  The walk reaches
    these nodes before the strings inside them."""
    parts = _non_settings(ctx)
    if isinstance(node, ast.JoinedStr):
        parts.update(id(value) for value in node.values)
    elif isinstance(node, ast.Compare):
        for operand in [node.left, *node.comparators]:
            parts.update(id(n) for n in ast.walk(operand) if isinstance(n, ast.Constant))
    elif isinstance(node.func, ast.Attribute) and node.func.attr in _READ_METHODS:
        for arg in node.args:
            parts.update(id(n) for n in ast.walk(arg) if isinstance(n, ast.Constant))


def _is_test_file(ctx: ModuleContext) -> bool:
    """Test modules hold expected values for the CUDA arch logic they test, not build settings."""
    name = re.split(r"[\\/]", ctx.path or "")[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


@ROC502.checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict)
def nvidia_arch_env_setting(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    if _is_test_file(ctx):
        return
    for where, name, value in env_settings(node, ctx):
        if name in NVIDIA_ARCH_VARS:
            text = _literal(value, ctx)
            if (
                text is not None
                and re.search(r"\d", text)
                and not _file_matches(ctx, "rocm_counterpart", ROCM_COUNTERPART)
            ):
                yield PyHit(where, ROC502.message(what=f"{name}={text.strip()}"))


@ROC503.checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict)
def amd_arch_env_setting(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    if _is_test_file(ctx) or _is_setdefault(node):
        return
    for where, name, value in env_settings(node, ctx):
        if name in AMD_ARCH_SETTINGS:
            text = _literal(value, ctx)
            if (
                text is not None
                and re.search(r"gfx\d", text)
                and not _file_matches(ctx, "amd_arch_source", _AMD_ARCH_SOURCE)
            ):
                yield PyHit(where, ROC503.message(what=f"{name}={text.strip()}"))


def _flag_text(node: ast.Constant, ctx: ModuleContext) -> Optional[str]:
    """The string when it may be a flag that sets something, else None."""
    if (
        not isinstance(node.value, str)
        or is_bare_string(node, ctx)
        or id(node) in _non_settings(ctx)
        or _is_test_file(ctx)
    ):
        return None
    return node.value


@ROC502.checker(ast.Constant)
def nvidia_arch_flag(node: ast.Constant, ctx: ModuleContext) -> Iterator[PyHit]:
    text = _flag_text(node, ctx)
    if (
        text is not None
        and _NVIDIA_ARCH_FLAG.match(text)
        and not _file_matches(ctx, "rocm_counterpart", ROCM_COUNTERPART)
    ):
        # Passed to nvcc unguarded, the -gencode spelling is ROC501's finding already.
        if not (
            _ROC501_ARCH_FLAG.match(text)
            and ctx.config.is_enabled("ROC501")
            and id(node) in ctx.facts(BUILD_FACTS).nvcc_constants
        ):
            yield PyHit(node, ROC502.message(what=text.strip()))


@ROC503.checker(ast.Constant)
def amd_arch_flag(node: ast.Constant, ctx: ModuleContext) -> Iterator[PyHit]:
    text = _flag_text(node, ctx)
    if (
        text is not None
        and _AMD_ARCH_FLAG.match(text)
        and not _file_matches(ctx, "amd_arch_source", _AMD_ARCH_SOURCE)
        and (text.lstrip().startswith("-D") or id(node) in ctx.facts(BUILD_FACTS).sink_constants)
    ):
        yield PyHit(node, ROC503.message(what=text.strip()))
