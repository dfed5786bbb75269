"""Macros that a file's own headers define for NVIDIA only.

Projects name their feature tests: DeepSpeed's ``ds_kernel_utils.h`` says
``#if __CUDA_ARCH__ >= 530`` / ``#define PTX_AVAILABLE``, and the kernels test
``#ifdef PTX_AVAILABLE`` around their PTX.  Such a macro is never defined on ROCm, so the
code it guards is NVIDIA-only.  This module follows a file's quoted includes (``#include
"x.h"``) into the project, analyses each header once with the same two-platform
preprocessor model, and returns the macros whose every definition sits in code that ROCm
never compiles.  Angle-bracket (system and library) headers are not followed.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import FrozenSet, Tuple

_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
_SEARCH_SUBDIRS = ("", "include", "includes")
MAX_DEPTH = 4
MAX_HEADER_BYTES = 2 * 1024 * 1024


def _resolve(name: str, directory: str) -> str:
    here = directory
    for _ in range(4):
        for sub in _SEARCH_SUBDIRS:
            candidate = os.path.join(here, sub, name)
            if os.path.isfile(candidate):
                return os.path.realpath(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return ""


def included_cuda_only_macros(path: str, text: str) -> FrozenSet[str]:
    """Macros defined only for NVIDIA by the headers ``text`` includes with quotes."""
    if '"' not in text or "include" not in text:
        return frozenset()
    directory = os.path.dirname(os.path.abspath(path))
    out: set = set()
    for name in _QUOTED_INCLUDE.findall(text):
        header = _resolve(name, directory)
        if header and header != os.path.realpath(path):
            out |= _header_facts(header, 0)
    return frozenset(out)


@lru_cache(maxsize=2048)
def _header_facts(header: str, depth: int) -> FrozenSet[str]:
    from rocm_lint.cpp.preproc import analyse

    try:
        if os.path.getsize(header) > MAX_HEADER_BYTES:
            return frozenset()
        with open(header, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return frozenset()
    inherited: set = set()
    if depth < MAX_DEPTH:
        directory = os.path.dirname(header)
        for name in _QUOTED_INCLUDE.findall(text):
            sub = _resolve(name, directory)
            if sub and sub != header:
                inherited |= _header_facts(sub, depth + 1)
    if "define" not in text:
        return frozenset(inherited)
    try:
        pre = analyse(text, cuda_macros=inherited)
    except RecursionError:
        return frozenset(inherited)
    cuda_only = set(inherited)
    for name, defs in pre.macros.items():
        if all(d.rocm is False for d in defs):
            cuda_only.add(name)
        else:
            cuda_only.discard(name)
    return frozenset(cuda_only)


def cache_clear() -> None:
    _header_facts.cache_clear()


__all__: Tuple[str, ...] = ("included_cuda_only_macros", "cache_clear")
