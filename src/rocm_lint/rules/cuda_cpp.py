"""ROC7: other CUDA C++ portability hazards (inline PTX, CUDA-only headers and libraries,
NVIDIA-only primitives; the version and arch guards are ``rocm_lint.rules.cuda_versions``)."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple, cast

from rocm_lint.cpp.asm import is_amd_assembly, ptx_instruction
from rocm_lint.finding import Applicability
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, FixAvailability, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.preproc import Directive
    from rocm_lint.cpp.scanner import CppUnit

ROC701 = Rule(
    "ROC701",
    "inline-ptx",
    "inline PTX assembly (C++ asm/asm volatile, Triton `tl.inline_asm_elementwise`, with PTX text): "
    "cannot be compiled for AMD GPUs",
    # `asm` as a word (C++ `asm`, `__asm__`) or Triton's call: `asm` alone is part of ordinary words.
    # Literal-led (the search skips to each `asm`; a leading `\b` was tried at every position of
    # the text, 4.5 ms on torch/_inductor/config.py): `\b(?:__)?asm(?:__)?\b|inline_asm_elementwise`
    # with the boundaries as look-arounds of `asm`; the same files match (tests/test_registry_index.py).
    triggers=("asm",),
    precheck=r"asm(?:(?:(?<=(?<!\w)asm)|(?<=(?<!\w)__asm))(?:__)?(?!\w)|(?<=inline_asm)_elementwise)",
    languages=(*CPP_LANGUAGES, "python"),  # the Python checker: the end of this module
    messages={
        "default": "inline PTX (`{instr}`): PTX is NVIDIA's virtual ISA and cannot be compiled for AMD "
        "GPUs; keep it under `#ifndef USE_ROCM` and give ROCm a portable or builtin version",
        "triton": "inline PTX in `{call}` (`{instr}`): on ROCm Triton hands the asm string to LLVM's "
        "AMDGPU backend, which cannot assemble PTX or allocate its register constraints "
        "(`couldn't allocate output register for constraint 'f'`); use a `tl`/libdevice "
        "builtin, or give ROCm its own AMDGCN asm behind `torch.version.hip`",
    },
)

_HEADER = (
    "`{header}` is a CUDA-only header: a HIP build does not find it{instead} "
    "(or keep this include in an NVIDIA-only branch)"
)
ROC702 = Rule(
    "ROC702",
    "cuda-only-header",
    "CUDA-only header (cuda_runtime.h, cuda_fp16.h, cublas_v2.h ...) included outside an NVIDIA-only "
    "branch: not found by a HIP build",
    triggers=("include",),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    languages=CPP_LANGUAGES,
    messages={
        "hip": _HEADER.replace("{instead}", "; on ROCm include <{hip}>"),
        "no_hip": _HEADER.replace("{instead}", " and has no drop-in HIP header"),
    },
)

ROC706 = Rule(
    "ROC706",
    "wmma",
    "nvcuda::wmma / <mma.h> tensor-core API: no HIP equivalent (rocWMMA differs)",
    triggers=("nvcuda", "mma.h"),
    languages=CPP_LANGUAGES,
    messages={
        "header": "`<mma.h>` is CUDA's WMMA tensor-core API: HIP has no `nvcuda::wmma`; port to rocWMMA "
        "(different API) or to MFMA/WMMA builtins via Composable Kernel",
        "namespace": "`nvcuda::wmma` is CUDA's tensor-core API with no HIP equivalent; port to rocWMMA "
        "(different API) or MFMA builtins, behind `#ifdef USE_ROCM`",
    },
)


def _cutlass_bound(unit: CppUnit) -> bool:
    """A CUTLASS/CuTe kernel cannot be built for AMD at all (the port is a rewrite): ROC707's
    findings replace the file's line-level ones, which are noise."""
    return unit.cutlass_bound


ROC707 = Rule(
    "ROC707",
    "cutlass-cute-libcudacxx",
    "CUTLASS or CuTe (no HIP port) or libcu++ (<cuda/std/...>: needs AMD's libhipcxx; <cuda/pipeline>: none) "
    "included",
    triggers=("cutlass", "cute", "cuda/"),
    languages=CPP_LANGUAGES,
    supersedes=_cutlass_bound,
    messages={
        "no_port": "`{header}` is {lib}, which has no HIP port: this file cannot build for AMD GPUs; keep it "
        "NVIDIA-only and provide a ROCm path (Composable Kernel, hipBLASLt, hipCUB/rocPRIM)",
        "no_libhipcxx": "`<{header}>` is libcu++ with no ROCm counterpart (AMD's libhipcxx lacks pipeline, "
        "barrier, latch, semaphore, annotated_ptr and ptx): keep this code NVIDIA-only and give "
        "ROCm its own path (ordinary loads and `__syncthreads()`)",
        "libhipcxx": "`<{header}>` is libcu++: a ROCm build needs AMD's libhipcxx (same paths and `cuda::std` "
        "namespace, a preview package not installed with ROCm); depend on it explicitly or use the "
        "`std::`/HIP equivalent under `#ifdef USE_ROCM`",
        "usage": "this file builds on {lib} (`{usage}`), which has no HIP port: it cannot build for "
        "AMD GPUs; keep it NVIDIA-only and provide a ROCm path (Composable Kernel)",
    },
)
ROC708 = Rule(
    "ROC708",
    "nvidia-only-sync-primitive",
    "NVIDIA-only synchronisation/async-copy primitive (__nanosleep, __syncwarp with a partial mask, "
    "__pipeline_*, cuda::memcpy_async, cp.async, programmatic dependent launch): missing or different under HIP",
    triggers=(
        "__nanosleep",
        "__syncwarp",
        "__pipeline_",
        "memcpy_async",
        "cp.async",
        "cudaGridDependencySynchronize",
        "cudaTriggerProgrammaticLaunchCompletion",
        "ProgrammaticStreamSerialization",
        "ProgrammaticEvent",
        "ATTRIBUTE_PROGRAMMATIC",
    ),
    languages=CPP_LANGUAGES,
    messages={
        "primitive": "`{name}` is NVIDIA-only (sm_70+/sm_80+ hardware): HIP has no equivalent with the same "
        "semantics; give ROCm its own path under `#ifdef USE_ROCM`",
        "syncwarp": "`__syncwarp(mask)` with a mask other than all lanes: AMD wavefronts have no independent "
        "thread scheduling, HIP requires every active lane in the mask (a run-time trap otherwise) "
        "and the mask is 64-bit; restructure the sub-warp sync for ROCm under `#ifdef USE_ROCM`",
        "cp_async": "`cp.async` (asynchronous global-to-shared copy, sm_80+) has no HIP equivalent; use "
        "ordinary loads on ROCm",
        "pdl": "`{name}` is CUDA's programmatic dependent launch (sm_90+: a kernel starts before the one "
        "it depends on has finished): HIP has neither the device calls nor the launch attribute, so "
        "this does not compile for ROCm; keep it under `#ifndef USE_ROCM` (on ROCm the kernels simply "
        "run in stream order)",
    },
)


# -- includes ------------------------------------------------------------------------------------
# CUDA header -> the HIP header that replaces it (None: no drop-in; display only).
CUDA_HEADERS: Dict[str, Optional[str]] = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h",
    "cuda.h": "hip/hip_runtime.h",
    "device_launch_parameters.h": "hip/hip_runtime.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "cuda_fp8.h": "hip/hip_fp8.h",
    "cuComplex.h": "hip/hip_complex.h",
    "cooperative_groups.h": "hip/hip_cooperative_groups.h",
    "cublas_v2.h": "hipblas/hipblas.h",
    "cublas.h": "hipblas/hipblas.h",
    "cublas_api.h": "hipblas/hipblas.h",
    "cublasLt.h": "hipblaslt/hipblaslt.h",
    "curand.h": "hiprand/hiprand.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h",
    "cusparse.h": "hipsparse/hipsparse.h",
    "cufft.h": "hipfft/hipfft.h",
    "cusolverDn.h": "hipsolver/hipsolver.h",
    "nccl.h": "rccl/rccl.h",
    "cub/cub.cuh": "hipcub/hipcub.hpp",
    "cudnn.h": None,
    "nvToolsExt.h": None,
    "nvtx3/nvToolsExt.h": None,
    "nvml.h": None,
    "cuda_profiler_api.h": None,
    "cuda_pipeline.h": None,
    "cuda_awbarrier.h": None,
    "cuda_fp4.h": None,
    "cuda_fp6.h": None,
    "cuda_gl_interop.h": None,
    "cuda_occupancy.h": None,
    "cufile.h": None,
    "nvrtc.h": None,
}
_INCLUDE = LazyPattern(r"\s*[<\"]([^>\"]+)[>\"]")


def includes(unit: CppUnit) -> List[Tuple[Directive, str, int, int]]:
    """(directive, header, start, end) of every ``#include`` with a literal header name."""
    cached = cast(Optional[List[Tuple["Directive", str, int, int]]], unit.memo.get("includes"))
    if cached is None:
        cached = []
        for d in unit.pre.directives:
            if d.name in ("include", "include_next"):
                m = _INCLUDE.match(unit.text, d.arg_start, d.end)
                if m:
                    cached.append((d, m.group(1).strip().lstrip("./"), m.start(1), m.end(1)))
        unit.memo["includes"] = cached
    return cached


def _cuda_header(header: str) -> Tuple[bool, Optional[str]]:
    if header in CUDA_HEADERS:
        return True, CUDA_HEADERS[header]
    if header.startswith("cub/"):
        return True, "hipcub/hipcub.hpp"
    if header.startswith("nvtx3/"):
        return True, None
    return False, None


@ROC702.source_checker()
def find_cuda_only_headers(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.gates import enclosing_groups, gate_edits, newline_of, rocm_if

    found = []
    for d, header, start, end in includes(unit):
        is_cuda, hip = _cuda_header(header)
        if hip is not None and unit.hipified:
            continue  # PyTorch's hipify rewrites this include for the ROCm build
        if is_cuda and not unit.pre.nvidia_only(d.line):
            found.append((d, header, hip, start, end))
    # Consecutive fixable includes share one #ifdef block (each finding carries the same edit).
    runs: List[List[tuple]] = []
    for item in found:
        d, header, hip = item[0], item[1], item[2]
        fixable = hip is not None and d.line == d.end_line and not unit.pre.rocm_branch(d.line)
        if fixable and runs and runs[-1][-1][0].line == d.line - 1 and runs[-1][-1][5]:
            runs[-1].append(item + (fixable,))
        else:
            runs.append([item + (fixable,)])
    # One include of each HIP header per file: `cuda.h` and `cuda_runtime.h` both stand for
    # `hip/hip_runtime.h`; a later one is left out of the ROCm side where an earlier one of the
    # fix is compiled whenever it is (in the same block, or outside every conditional).
    emitted: set = set()
    for run in runs:
        edits: Tuple[Tuple[int, int, str], ...] = ()
        if run[0][5]:
            first, last = run[0][0], run[-1][0]
            rocm_lines = []
            mine: set = set()
            for d, header, hip, start, end, _ in run:
                if hip in mine or hip in emitted:
                    continue
                mine.add(hip)
                la, lb = unit.line_span(d.line)
                line = unit.text[la:lb]
                rocm_lines.append(line[: start - la] + hip + line[end - la :])
            if not enclosing_groups(unit, first.line, last.line):
                emitted |= mine
            edits = gate_edits(unit, first.line, last.line, newline_of(unit).join(rocm_lines))
        for d, header, hip, start, end, _ in run:
            if hip:
                yield ROC702.hit(
                    start,
                    end,
                    ROC702.message("hip", header=header, hip=hip),
                    edits=edits,
                    fix_message=f"include <{hip}> under `{rocm_if(unit)}`",
                    no_fix=_why_no_header_fix(unit, d),
                )
            else:
                yield ROC702.hit(
                    start,
                    end,
                    ROC702.message("no_hip", header=header),
                    no_fix=f"no HIP header stands in for <{header}>: the code that uses it needs "
                    "porting by hand",
                )


def _why_no_header_fix(unit: CppUnit, d) -> str:
    """Why an include with a HIP counterpart gets no edit."""
    if d.line != d.end_line:
        return "the #include directive continues over several lines (a backslash): shown, not rewritten"
    if unit.pre.rocm_branch(d.line):
        return (
            "the #include is in a branch the ROCm build compiles: it needs its HIP header there, "
            "not a ROCm gate"
        )
    return (
        "the NVIDIA line numbers here cannot be known (an earlier #line directive, or a line the "
        "#if model cannot place), so no gated block with #line directives is written"
    )


# -- NVIDIA-only libraries and APIs ---------------------------------------------------------------
_LIBCUDACXX = LazyPattern(r"^(?:cutlass|cute)/|^cuda/(?!.*\.h$)|^cuda/std/")
# libcu++ headers AMD's libhipcxx does not provide (its documented limitations).
_NOT_IN_LIBHIPCXX = LazyPattern(r"^cuda/(?:std/)?(?:pipeline|barrier|latch|semaphore|annotated_ptr|ptx)\b")


def _library_message(header: str, lib: str) -> str:
    if lib != "libcu++":
        return ROC707.message("no_port", header=header, lib=lib)
    if _NOT_IN_LIBHIPCXX.match(header):
        return ROC707.message("no_libhipcxx", header=header)
    return ROC707.message("libhipcxx", header=header)


@ROC707.source_checker()
def find_nvidia_only_libraries(unit: CppUnit) -> Iterator[Hit]:
    for d, header, start, end in includes(unit):
        if _LIBCUDACXX.search(header) and not unit.pre.nvidia_only(d.line):
            lib = (
                "CUTLASS"
                if header.startswith("cutlass/")
                else "CuTe"
                if header.startswith("cute/")
                else "libcu++"
            )
            # once per file, at the first offending include: the whole file depends on the
            # library, and one port decision (keep it NVIDIA-only, or rewrite it) answers them all
            yield ROC707.hit(start, end, _library_message(header, lib))
            return
    code = unit.code
    if "cute" in code or "cutlass" in code:
        m = next(
            (m for m in re.finditer(r"\b(cute|cutlass)\s*::", code) if not unit.nvidia_only(m.start())), None
        )
        if m:
            lib = "CuTe" if m.group(1) == "cute" else "CUTLASS"
            yield ROC707.hit(m.start(), m.end(), ROC707.message("usage", lib=lib, usage=m.group(0)))


@ROC706.source_checker()
def find_wmma(unit: CppUnit) -> Iterator[Hit]:
    for d, header, start, end in includes(unit):
        if header == "mma.h":
            yield ROC706.hit(start, end, ROC706.message("header"))
    code = unit.code
    if "nvcuda" in code:
        lines = set()
        for m in re.finditer(r"\bnvcuda\s*::|\bnamespace\s+nvcuda\b", code):
            line = unit.line_of(m.start())
            if line in lines:
                continue
            lines.add(line)
            yield ROC706.hit(m.start(), m.end(), ROC706.message("namespace"))


# -- inline PTX ------------------------------------------------------------------------------------
_ASM = LazyPattern(r"(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__|goto|inline))*")
# Which assembly is PTX, which AMD GCN, which a CPU's: rocm_lint.cpp.asm.


def asm_blocks(unit: CppUnit) -> List[Tuple[int, int, str]]:
    """(start, end, assembly text) of every asm statement."""
    from rocm_lint.cpp.scanner import calls

    cached = cast(Optional[List[Tuple[int, int, str]]], unit.memo.get("asm"))
    if cached is None:
        cached = []
        if "asm" not in unit.code:
            unit.memo["asm"] = cached
            return cached
        strings = unit.lexed.strings
        starts = [s for s, _ in strings]
        for m, paren in calls(unit, _ASM):
            end = unit.matching(paren)
            i = bisect_left(starts, paren)
            parts = []
            while i < len(strings) and strings[i][0] < end:
                # the template is the strings before the first ':' (operands follow)
                if ":" in unit.code[paren : strings[i][0]]:
                    break
                parts.append(unit.lexed.string_value(*strings[i]))
                i += 1
            cached.append((m.start(), end, "".join(parts)))
        unit.memo["asm"] = cached
    return cached


@ROC701.source_checker()
def find_inline_ptx(unit: CppUnit) -> Iterator[Hit]:
    for start, end, text in asm_blocks(unit):
        m = ptx_instruction(text)
        if m and not is_amd_assembly(text):
            instr = " ".join(m.group(0).replace("\\n", " ").replace("\\t", " ").split())
            yield ROC701.hit(start, end, ROC701.message(instr=instr))


# -- NVIDIA-only primitives ------------------------------------------------------------------------
_PRIMITIVES = LazyPattern(
    r"\b(__nanosleep|__pipeline_memcpy_async|__pipeline_commit|__pipeline_wait_prior|__pipeline_arrive_on"
    r"|cuda\s*::\s*memcpy_async)\s*\("
)
# Programmatic dependent launch: the device calls, and the launch attribute and its enum values.
_PDL = LazyPattern(
    r"(cudaGridDependencySynchronize|cudaTriggerProgrammaticLaunchCompletion)\s*\("
    r"|(cudaLaunchAttributeProgrammatic(?:StreamSerialization|Event)|CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_"
    r"(?:STREAM_SERIALIZATION|EVENT))\b"
)
# Masks that name every lane: a 64-bit all-ones, or -1.  (A 32-bit all-ones is ROC602's finding,
# not reported twice.)
_ALL_LANES = {0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF, -1}


@ROC708.source_checker()
def find_nvidia_only_primitives(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.scanner import calls
    from rocm_lint.cpp.values import literal_value

    code = unit.code
    for m in (
        _PRIMITIVES.finditer(code)
        if "__nanosleep" in code or "__pipeline_" in code or "memcpy_async" in code
        else ()
    ):
        name = re.sub(r"\s+", "", m.group(1))
        yield ROC708.hit(m.start(), m.end() - 1, ROC708.message("primitive", name=name))
    for m, paren in calls(unit, re.compile(r"__syncwarp\b")) if "__syncwarp" in code else ():
        args = unit.args(paren)
        if not args or args[0][0] >= args[0][1]:
            continue
        mask = unit.expand(code[args[0][0] : args[0][1]], args[0][0]).strip()
        if literal_value(mask) in _ALL_LANES or re.fullmatch(r"__activemask\s*\(\s*\)", mask):
            continue  # every lane: fine under HIP (ROC602 reports a 32-bit all-ones)
        yield ROC708.hit(m.start(), unit.matching(paren), ROC708.message("syncwarp"))
    for start, end, text in asm_blocks(unit):
        if re.search(r"\bcp\.async\b", text):
            yield ROC708.hit(start, end, ROC708.message("cp_async"))
    if "rogrammatic" in code or "PROGRAMMATIC" in code or "cudaGridDependencySynchronize" in code:
        for m in _PDL.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            name = m.group(1) or m.group(2)
            yield ROC708.hit(m.start(), m.start() + len(name), ROC708.message("pdl", name=name))


# -- ROC701 in Python: inline PTX handed to Triton -------------------------------------------------------
# Self-contained (the C++ checkers above do not depend on it): ``tl.inline_asm_elementwise(asm, ...)``
# (also ``triton.language.``, ``core.``, and torch's ``inline_asm_elementwise`` operator with
# ``asm_str=``) whose assembly text, literal or bound to a name in the module, is PTX by the same
# test as C++ asm blocks (dotted mnemonics: AMD GCN's are underscored, ``v_mov_b32``).  Gated code is
# left out by the Python walk (``if torch.version.hip is None:``, ``if not is_hip():``).
import ast  # noqa: E402

from rocm_lint.rule import PyHit  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover - Python's reader loads with a Python file, not with a C++ one
    from rocm_lint.python.context import ModuleContext

_TRITON_ASM_CALL = "inline_asm_elementwise"
# Files and folders of NVIDIA-only code (Triton's own `language/extra/cuda`, Hopper/Blackwell kernels).
_NVIDIA_ONLY_PATH = LazyPattern(
    r"(?<![a-z0-9])(?:cuda|nvidia|ptx|hopper|blackwell|sm_?90a?|sm_?100a?|multimem|nvls"
    r"|nvshmem)(?![a-z0-9])"
)


# A test that picks the code per platform in words the gate analysis does not know (Triton's
# `get_current_target().backend == "cuda"`, `if USE_PTX:`): either branch is one side of a split.
_PLATFORM_TEST = LazyPattern(r"\b(?:cuda|nvidia|ptx|hip|rocm|amd|is_nv\w*|is_amd\w*)\b", re.I)


def _under_platform_test(ctx: ModuleContext) -> bool:
    for child, parent in ctx.ancestors(ctx.node):
        test = getattr(parent, "test", None)
        if isinstance(parent, (ast.If, ast.IfExp)) and test is not None and child is not test:
            text = ctx.segment(test)
            if text and _PLATFORM_TEST.search(text):
                return True
    return False


def _asm_argument(node: ast.Call) -> Optional[ast.AST]:
    for kw in node.keywords:
        if kw.arg in ("asm", "asm_str"):
            return kw.value
    return node.args[0] if node.args else None


@ROC701.checker(ast.Call)
def triton_inline_ptx(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    from rocm_lint.python.patterns import uses_nvidia_interconnect

    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != _TRITON_ASM_CALL:
        return
    arg = _asm_argument(node)
    text = ctx.string_text(arg) if arg is not None else None
    if not text:
        return
    m = ptx_instruction(text)
    if m is None:
        return
    parts = re.split(r"[\\/]", (ctx.path or "").lower())
    if (
        any(_NVIDIA_ONLY_PATH.search(part) for part in parts[-3:])
        or _under_platform_test(ctx)
        or uses_nvidia_interconnect(ctx)
    ):
        return
    instr = " ".join(m.group(0).replace("\\n", " ").replace("\\t", " ").split()).lstrip(";{} ")
    call = ctx.segment(func) or name
    yield PyHit(node, ROC701.message("triton", call=call, instr=instr))
