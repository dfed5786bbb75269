"""What the C++ scanner runs, and on what: a .cpp/.h file only when it holds device code
(:func:`holds_device_code`) or uses the CUDA host API (:func:`holds_cuda_host_code`: then only the
rules that read host code, :data:`HOST_CODE_RULES`), and the C++ checkers narrowed by their trigger words (as the Python
side narrows its rules): a rule of :data:`WORD_BOUND_RULES` runs on a file only where the trigger
search found one of its words.  The proofs are below, one per rule; ``tests/test_cpp_narrowing.py``
holds the findings equal with and without the narrowing."""

from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Sequence

# A .cpp/.h file is scanned only if it holds one of these words, or inline assembly that is PTX
# or AMD GCN: a CPU backend's SIMD kernels (RISC-V V, ARM SVE, LoongArch LASX, POWER VSX asm) are
# not device code (rocm_lint.cpp.asm).
DEVICE_WORDS = (
    "__global__",
    "__device__",
    "__shared__",
    "__syncthreads",
    "__shfl",
    "__ballot",
    "__activemask",
    "__syncwarp",
    "threadIdx",
    "blockIdx",
    "warpSize",
    "__CUDA_ARCH__",
    "<<<",
)
ASM_WORDS = ("__asm__", "asm(", "asm volatile")

# A .cpp/.h file without device code is still part of the GPU program when it uses the CUDA host
# API: it includes CUDA's headers or calls the runtime.  Version macros alone do not make one: a
# portable header asks `defined(__CUDACC__) && __CUDACC_VER_MAJOR__ <= 11` of whatever compiler
# builds it, and a CPU build never reaches the CUDA side.  A HIP build
# compiles such a file with hipcc (or hipified), so what breaks there is the host half of a port:
# a CUDA-only header (ROC702), a version test ROCm drops (ROC703), runtime version numbers
# (ROC704), CUTLASS/libcu++ headers (ROC707), a kernel's shared memory raised past the LDS (ROC711).  The device-code rules (warp width, masks, PTX)
# do not run on it: a CPU file's `% 32` or SIMD asm is not a wavefront's.
CUDA_HOST_WORDS = (
    "cuda_runtime",
    "cuda.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_fp8.h",
    "cublas",
    "cudnn",
    "curand",
    "cufft",
    "cusparse",
    "cusolver",
    "nvToolsExt",
    "nvrtc.h",
    "cudaRuntimeGetVersion",
    "cudaDriverGetVersion",
    "cudaFuncSetAttribute",
    "cutlass/",
    "cute/",
    "cuda/std/",
    "cuda/pipeline",
    "cuda/barrier",
    "cuda/atomic",
    "cuda/memory_resource",
)
HOST_CODE_RULES = frozenset({"ROC702", "ROC703", "ROC704", "ROC707", "ROC711"})


def holds_device_code(text: str) -> bool:
    """Does ``text`` hold one of :data:`DEVICE_WORDS`, or GPU assembly?"""
    if _holds_device_word(text):
        return True
    if not any(w in text for w in ASM_WORDS):
        return False
    from rocm_lint.cpp.asm import holds_gpu_assembly

    return holds_gpu_assembly(text)


def holds_cuda_host_code(text: str) -> bool:
    """Does ``text`` (a file without device code) use the CUDA host API (:data:`CUDA_HOST_WORDS`)?"""
    return any(w in text for w in CUDA_HOST_WORDS)


def host_checkers(checkers: Sequence) -> list:
    """The checkers of ``checkers`` that read host code (:data:`HOST_CODE_RULES`)."""
    return [c for c in checkers if c.rule.code in HOST_CODE_RULES]


def _holds_device_word(text: str) -> bool:
    """One pass of the words' Aho-Corasick DFA (``in`` per word scanned a host file 13 times);
    ``in`` per word without the package, or for a text the DFA cannot take (a lone surrogate)."""
    automaton = _device_automaton() if len(text) > 1024 else None
    if automaton is not None:
        try:
            return bool(automaton.find_matches_as_indexes(text))
        except UnicodeEncodeError:
            pass
    return any(w in text for w in DEVICE_WORDS)


@lru_cache(maxsize=1)  # pure: of DEVICE_WORDS
def _device_automaton():
    from rocm_lint.words import automaton_of

    return automaton_of(tuple(DEVICE_WORDS))


# The rules whose every hit is proven to need one of the rule's own trigger words in the file's
# text: the engine runs them only where ``present_words`` found one (as the Python side narrows).
# The proofs (each hit is made at a match in ``unit.code``, a literal's text or an include of
# ``unit.text``; none of these words holds a blank, a CR or a byte-order mark, so a word found in
# them is in the original text):
#   ROC701 (asm): hits come from ``asm_blocks``, which are empty unless ``asm`` is in the code.
#   ROC702 (include): hits come from ``#include``/``#include_next`` directives (``include``).
#   ROC704 (cudaRuntimeGetVersion, cudaDriverGetVersion): its pattern starts with one of them.
#   ROC706 (nvcuda, mma.h): an include whose header is ``mma.h`` (``./`` stripped), or ``nvcuda``
#     in the code.
#   ROC707 (cutlass, cute, cuda/): an include whose header starts with ``cutlass/``, ``cute/`` or
#     ``cuda/``, or ``cute``/``cutlass`` in the code.  (Its ``supersedes`` runs regardless.)
#   ROC708 (__nanosleep, __syncwarp, __pipeline_, memcpy_async, cp.async): each of its three
#     searches is guarded by one of these words in the code, or ``cp.async`` in an asm literal.
#   ROC709 (<<<, cudaDeviceSynchronize, cudaLaunchDevice, cudaGetParameterBuffer): ``<<<`` or a
#     call of one of the three functions.
#   ROC710 (cudaMallocManaged, __managed__, cudaMemPrefetchAsync, cudaMemAdvise): returns unless
#     one is in the code.
# Not narrowed: ROC601-ROC605 read values, wrappers and widths from the project's headers (a
# file may hold none of their words: ``#define W MY_WARP`` with ``MY_WARP`` 32 in a header), and
# ROC703/ROC705 read conditions whose macros may come from headers.
WORD_BOUND_RULES = frozenset({"ROC701", "ROC702", "ROC704", "ROC706", "ROC707", "ROC708", "ROC709", "ROC710"})


def narrowed_checkers(checkers: Sequence, found: FrozenSet[str]) -> list:
    """``checkers`` (the registry's tuple for the file's language and codes) less those of
    :data:`WORD_BOUND_RULES` whose trigger words ``found`` (the trigger words present in the
    file: ``engine.present_words``) holds none of."""
    return [
        c
        for c, words in _bound_words(checkers, WORD_BOUND_RULES)
        if words is None or not words.isdisjoint(found)
    ]


@lru_cache(maxsize=16)  # pure: of the registry's checkers
def _bound_words(checkers: tuple, bound: FrozenSet[str]) -> tuple:
    """(checker, its rule's trigger words, or None where the rule is not narrowed)."""
    return tuple((c, frozenset(c.rule.triggers) if c.rule.code in bound else None) for c in checkers)
