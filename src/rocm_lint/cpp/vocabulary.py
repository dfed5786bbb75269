"""Platform macros a C++ file teaches by what it includes under them.

A project names its own platform switch and shows what it means: ``#ifndef CUPY_USE_HIP``
``#include <cuda_runtime.h>`` ``#else`` ``#include <hip/hip_runtime.h>``.  A macro whose
defined side includes HIP/ROCm headers (``<hip/...>``, ``<hipcub/...>``, ``<hiprand/...>``,
``<rocprim/...>``, ``<rocblas...>``), while its undefined side includes no HIP header and its
defined side no CUDA-only one (``<cuda_runtime.h>``, ``<cub/...>``, ``<curand_kernel.h>`` ...),
is the file's ROCm macro; the mirror image is its NVIDIA macro.  CUDA headers alone teach
nothing: hipified code includes them on ROCm too.  Only
one-macro tests count (``#ifdef X``, ``#ifndef X``, ``#if X``, ``#if defined(X)``,
``#if !defined(X)`` and their ``#else``); an ``#elif`` ends what a group teaches.

A chain of one-macro branches that picks a vendor teaches too (ggml's ``ggml-common.h``:
``#elif defined(..._DECL_CUDA)`` ``#include <cuda_fp16.h>`` ... ``#elif defined(..._DECL_HIP)``
``#include <hip/hip_fp16.h>``): the branch whose includes are HIP's alone names the ROCm macro, and
a branch before it whose includes are CUDA-only ones names an NVIDIA macro: a ROCm build must
not take it, or it would never reach its own branch.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from rocm_lint.cpp.conditions import Node, is_cuda_macro, is_rocm_macro
from rocm_lint.cpp.preproc import Preprocessed

HIP_HEADER = re.compile(
    r"\s*[<\"](?:hip/|hipcub/|hiprand|rocprim/|rocrand|rocblas|hipblas|hipfft|hipsparse|hipsolver|"
    r"rocwmma/|rccl|hip_)"
)
CUDA_HEADER = re.compile(
    r"\s*[<\"](?:cuda_runtime|cuda\.h|cuda_fp16|cuda_bf16|cuda_fp8|cub/|curand|cublas|cufft|"
    r"cusparse|cusolver|nvrtc|nccl\.h|cudnn|mma\.h|cooperative_groups)"
)


def _single_macro(node: Optional[Node]) -> Optional[Tuple[str, bool]]:
    """(macro, polarity) of ``X``, ``defined(X)``, ``!X``, ``!defined(X)``; else None."""
    if node is None:
        return None
    if node.kind == "unary" and node.value == "!":
        inner = _single_macro(node.args[0])
        return (inner[0], not inner[1]) if inner else None
    if node.kind in ("name", "defined"):
        return str(node.value), True
    return None


def learned_macros(
    pre: Preprocessed, rocm_extra: FrozenSet[str] = frozenset(), cuda_extra: FrozenSet[str] = frozenset()
) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(ROCm macros, NVIDIA macros) the file's includes teach; macros the model already knows
    are left out."""
    # macro -> {(polarity of the branch, "hip"|"cuda")}
    seen: Dict[str, Set[Tuple[bool, str]]] = {}
    stack: List[Optional[Tuple[str, bool]]] = []
    # per open group, its branches: (macro of a positive one-macro test or None, header kinds)
    chains: List[List[Tuple[Optional[str], Set[str]]]] = []
    chain_rocm: Set[str] = set()
    chain_cuda: Set[str] = set()
    for d in pre.directives:
        name = d.name
        if name in ("if", "ifdef", "ifndef"):
            stack.append(_single_macro(d.condition))
            chains.append([(_positive_macro(stack[-1]), set())])
        elif name in ("elif", "elifdef", "elifndef") and stack:
            stack[-1] = None
            chains[-1].append(
                (_positive_macro(_single_macro(d.condition)) if name != "elifndef" else None, set())
            )
        elif name == "else" and stack:
            top = stack[-1]
            stack[-1] = (top[0], not top[1]) if top else None
            chains[-1].append((None, set()))
        elif name == "endif" and stack:
            stack.pop()
            _learn_from_chain(chains.pop(), rocm_extra, cuda_extra, chain_rocm, chain_cuda)
        elif name == "include" and stack:
            kind = "hip" if HIP_HEADER.match(d.arg) else "cuda" if CUDA_HEADER.match(d.arg) else None
            if kind:
                for chain in chains:  # a nested group's include is in its enclosing branches too
                    chain[-1][1].add(kind)
                if stack[-1] is not None:
                    macro, polarity = stack[-1]
                    seen.setdefault(macro, set()).add((polarity, kind))
    rocm: Set[str] = set(chain_rocm - chain_cuda)
    cuda: Set[str] = set(chain_cuda - chain_rocm)
    for macro, facts in seen.items():
        if is_rocm_macro(macro, rocm_extra) or is_cuda_macro(macro, cuda_extra):
            continue
        # a HIP header is the evidence; CUDA headers alone are not (``#ifndef MYLIB_NO_CUDA``
        # is no ROCm switch: hipified code takes the CUDA side on ROCm too)
        if (True, "hip") in facts and (False, "hip") not in facts and (True, "cuda") not in facts:
            rocm.add(macro)
        elif (False, "hip") in facts and (True, "hip") not in facts and (False, "cuda") not in facts:
            cuda.add(macro)
    return frozenset(rocm - cuda), frozenset(cuda - rocm)


def _positive_macro(test: Optional[Tuple[str, bool]]) -> Optional[str]:
    return test[0] if test is not None and test[1] else None


def _learn_from_chain(
    branches: List[Tuple[Optional[str], Set[str]]],
    rocm_extra: FrozenSet[str],
    cuda_extra: FrozenSet[str],
    rocm: Set[str],
    cuda: Set[str],
) -> None:
    """What an ``#if``/``#elif`` chain of vendor branches teaches (see the module's docstring)."""
    if len(branches) < 2 or all(macro is None for macro, _ in branches):
        return
    for i, (macro, kinds) in enumerate(branches):
        if macro is None:
            continue
        known_rocm = is_rocm_macro(macro, rocm_extra)
        if not known_rocm and (kinds != {"hip"} or is_cuda_macro(macro, cuda_extra) or i == 0):
            continue
        if not known_rocm:
            rocm.add(macro)
        for other, other_kinds in branches[:i]:
            if (
                other is not None
                and other_kinds == {"cuda"}
                and not is_rocm_macro(other, rocm_extra)
                and not is_cuda_macro(other, cuda_extra)
            ):
                cuda.add(other)
        return
