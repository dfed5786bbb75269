"""ROC409: NVIDIA's runtime libraries reached by name from Python: NVML calls (``pynvml.nvmlInit()``),
``ctypes`` loading ``libcudart``/``libcuda``/``libnvrtc``, and an extension linked against them
(``libraries=["cuda", "nvrtc"]``, ``-lcuda``).  ROC401 sees only ``import pynvml``; none of these
libraries exists on an AMD host, whatever the Python package installs."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.rule import PyHit, Rule
from rocm_lint.rules.package_gates import under_if_naming

ROC409 = Rule(
    "ROC409",
    "nvidia-runtime-by-name",
    "NVIDIA runtime library reached by name with no AMD path: an NVML call (`pynvml.nvmlInit()`), `ctypes` "
    "loading `libcudart`/`libcuda`/`libnvrtc`, or an extension linked with `libraries=['cuda', 'nvrtc']`: "
    "none of them exists on an AMD host",
    triggers=("nvml", "CDLL", "LoadLibrary", "cdll", "find_library", "libraries", "-lcu", "-lnvrtc"),
    # an NVML call; a loader or a link list in a file that names one of the CUDA libraries (two
    # anchored look-aheads: one pass each over the text)
    precheck=r"nvml[A-Z]|-l(?:cu|nvrtc)|(?s:\A(?=.*?(?:CDLL|LoadLibrary|cdll|find_library|libraries\s*=|link_args|ldflags))"
    r"(?=.*?(?:lib(?:cuda|cudart|nvrtc|nvidia-ml|cublas|cudnn|cufft|curand|cusparse|cusolver|nvjitlink)|cudart64|nvrtc64"
    r"|[\"'](?:cuda|cudart|nvrtc|nvidia-ml|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nvJitLink)[\"'])))",
    messages={
        "nvml": "`{call}()` starts NVML, NVIDIA's management library, and nothing in this module reads an AMD "
        "GPU another way: on an AMD host it raises `NVMLError_LibraryNotFound`; catch `pynvml.NVMLError` and "
        "use amdsmi (`amdsmi_init()`) or `torch.cuda` queries when `torch.version.hip` is set",
        "ctypes": "`{call}` loads `{lib}`, {what}: AMD hosts have no such library, so this raises "
        "`OSError` (or, through `find_library`, loads the running program in its place); load {instead} "
        "when `torch.version.hip` is set, or catch OSError",
        "link": "the extension links `{lib}` ({what}): a ROCm build has no such library and fails at link "
        "time (`cannot find -l{lib}`) or at import; link {instead} when building for ROCm "
        "(`IS_HIP_EXTENSION`, `torch.version.hip`)",
    },
)

# library name (as `-l` takes it, and as `lib<name>.so` is spelled) -> (what it is, ROCm's counterpart)
_LIBRARIES = {
    "cuda": ("the CUDA driver API", "`libamdhip64` (HIP's driver and runtime API)"),
    "cudart": ("the CUDA runtime", "`libamdhip64`"),
    "nvrtc": ("CUDA's runtime compiler", "`libhiprtc`"),
    "nvidia-ml": ("NVML", "`libamd_smi`"),
    "cublas": ("cuBLAS", "`libhipblas` (or `librocblas`)"),
    "cublaslt": ("cuBLASLt", "`libhipblaslt`"),
    "cudnn": ("cuDNN", "`libMIOpen`"),
    "cufft": ("cuFFT", "`libhipfft`"),
    "curand": ("cuRAND", "`libhiprand`"),
    "cusparse": ("cuSPARSE", "`libhipsparse`"),
    "cusolver": ("cuSOLVER", "`libhipsolver`"),
    "nvjitlink": ("nvJitLink", "the ROCm code-object linker (comgr)"),
}
# `libcudart.so.12`, `libcuda.so.1`, `cudart64_12.dll`, `nvrtc64_120_0.dll`, a bare `cudart`
_LIB_FILE = LazyPattern(
    r"(?:^|[/\\])(?:lib)?(cuda|cudart|nvrtc|nvidia-ml|cublas|cublaslt|cudnn|cufft|curand|cusparse|cusolver"
    r"|nvjitlink)(?:64)?(?:_\d+)*(?:\.so(?:\.[\d.]+)?|\.dll|\.dylib)?$",
    re.I,
)
_LOADERS = (
    "ctypes.CDLL",
    "ctypes.cdll.LoadLibrary",
    "ctypes.WinDLL",
    "ctypes.PyDLL",
    "ctypes.windll.LoadLibrary",
)
_FIND = ("ctypes.util.find_library",)
_EXTENSIONS = ("Extension", "CUDAExtension", "CppExtension", "load", "load_inline")
# A module that names ROCm's own libraries or tools has chosen per platform: an AMD path exists.
_AMD_PATH = LazyPattern(
    r"amdsmi|amd_smi|rocm_smi|rocm-smi|pyrsmi|amdhip64|hiprtc|\bhip_python\b|\bhip\.hip\b"
)
_NVIDIA_HELPER = LazyPattern(r"cuda|nvml|nvidia|nvrtc|cudart|\bnv_|_nv\b|^nv", re.I)
_MISSING = {"OSError", "EnvironmentError", "Exception", "BaseException", "ImportError", "RuntimeError"}
_NVML_ERRORS = {"NVMLError", "NVMLError_LibraryNotFound", "Exception", "BaseException", "RuntimeError"}


def _amd_path(ctx: ModuleContext) -> bool:
    return ctx.memo("ROC409.amd_path", lambda: bool(_AMD_PATH.search(ctx.text or "")))


def _quiet(ctx: ModuleContext, errors, keys) -> bool:
    """The places that have chosen already: a handler for the failure, an `if` naming the library
    or NVIDIA, a helper named for NVIDIA (called from the NVIDIA side of a split), a module with an
    AMD path."""
    stmt = ctx.statement  # (set while the walk visits a statement)
    caught = stmt is not None and ctx.caught(stmt, errors)
    if caught or under_if_naming(ctx, ctx.statement, keys, env_opt_in=False):
        return True
    fn = ctx.function
    if fn is not None and _NVIDIA_HELPER.search(fn.name):
        return True
    return _amd_path(ctx)


def _library(text: Optional[str]) -> Optional[str]:
    if not text or "{}" in text:
        return None
    m = _LIB_FILE.search(text.strip())
    return m.group(1).lower() if m else None


# -- NVML ------------------------------------------------------------------------------------------
def _nvml_call(node: ast.Call, ctx: ModuleContext) -> Optional[str]:
    qual = ctx.qualname(node.func) or ""
    if qual.startswith("pynvml.") and qual.rsplit(".", 1)[-1].startswith("nvml"):
        return qual.rsplit(".", 1)[-1]
    return None


def _initialises_here(ctx: ModuleContext) -> bool:
    """Does the module call ``nvmlInit`` itself (then that call is the one reported)?"""
    return ctx.memo("ROC409.inits", lambda: bool(re.search(r"\bnvmlInit\w*\s*\(", ctx.text or "")))


@ROC409.checker(ast.Call)
def nvidia_runtime_by_name(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    if ctx.state.rocm_only:
        return
    name = _nvml_call(node, ctx)
    if name is not None:
        # nvmlInit is where an AMD host fails; a module that never initialises NVML reports its
        # first device query instead (once per module)
        first = name.startswith("nvmlInit") or (
            not _initialises_here(ctx)
            and name.startswith("nvmlDeviceGet")
            and ctx.memo("ROC409.first_query", lambda: id(node)) == id(node)
        )
        if first and not _quiet(ctx, _NVML_ERRORS, ("nvml", "nvidia", "cuda")):
            yield PyHit(node, ROC409.message("nvml", call=ctx.snippet(node.func, name, 40)))
        return
    qual = ctx.qualname(node.func) or ""
    if qual in _LOADERS and node.args:
        arg = node.args[0]
        inner = ctx.resolve(arg)
        if isinstance(inner, ast.Call) and (ctx.qualname(inner.func) or "") in _FIND and inner.args:
            lib = _library(ctx.string_text(inner.args[0]))
        else:
            lib = _library(ctx.string_text(arg))
        if lib is not None and not _quiet(ctx, _MISSING, ("cuda", "nvidia", "nvrtc", lib)):
            what, instead = _LIBRARIES[lib]
            call = ctx.snippet(node, qual.rsplit(".", 1)[-1], 60)
            yield PyHit(
                node, ROC409.message("ctypes", call=call, lib=f"lib{lib}", what=what, instead=instead)
            )
        return
    if qual.rsplit(".", 1)[-1] in _EXTENSIONS:
        yield from _linked(node, ctx)


# -- extensions linked against NVIDIA libraries ----------------------------------------------------
def _rocm_value(node: ast.AST, ctx: ModuleContext) -> Optional[ast.AST]:
    """The list a keyword holds on ROCm (a name bound once, the ROCm arm of a gated ternary), or
    None where a platform test decides it and ROCm takes no list of ours."""
    node = ctx.resolve(node)
    if isinstance(node, ast.IfExp):
        t, f = ctx.gates.facts(node.test)
        if t in (NVIDIA, ROCM) or f in (NVIDIA, ROCM):
            return None  # resolve() would have picked the ROCm arm; a one-sided fact: undecided
    return node


def _linked(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    if _amd_path(ctx) or (ctx.function is not None and _NVIDIA_HELPER.search(ctx.function.name)):
        return
    for kw in node.keywords:
        if kw.arg not in ("libraries", "extra_link_args", "extra_ldflags"):
            continue
        value = _rocm_value(kw.value, ctx)
        if not isinstance(value, (ast.List, ast.Tuple)):
            continue
        for element in value.elts:
            text = ctx.string_text(element)
            if text is None:
                continue
            if kw.arg != "libraries":
                if not text.startswith("-l"):
                    continue
                text = text[2:]
            lib = text.strip().lower()
            if lib in _LIBRARIES:
                what, instead = _LIBRARIES[lib]
                yield PyHit(element, ROC409.message("link", lib=lib, what=what, instead=instead))
