"""ROC6: warp and wavefront width in CUDA C++ (AMD CDNA wavefronts are 64 lanes wide).

The family's rules live one concern a module: ROC601 (a ballot kept in 32 bits) in
``lane_masks``, ROC602 (a 32-bit full mask) in ``full_masks``, ROC603 (warp size 32 hard-coded,
and the search for hard-coded wave sizes ROC605 shares) in ``warp_size``, ROC604 (``warpSize`` as
a compile-time constant) in ``warp_size_constant``, ROC605 (wave size 64 on the ROCm side) in
``wave64_rocm``.  This module holds what they share.

Every checker reads ``unit.code`` (comments and literals blanked), so text in comments
and strings never fires; the scanner drops hits in code that is never compiled on ROCm.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, FrozenSet, Tuple

from rocm_lint.lazy import LazyPattern

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

IDENTS = LazyPattern(r"[A-Za-z_]\w*")  # an identifier


@lru_cache(maxsize=256)
def names_pattern(names: FrozenSet[str]) -> "re.Pattern[str]":
    """A literal alternation of ``names`` (longest first), ending at a word boundary."""
    return re.compile("(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")


def defined_at(unit: CppUnit, where: Tuple[str, int]) -> str:
    """``common.cuh:12`` for a project header (its path from this file's directory when that
    stays short), ``line 12`` for this file."""
    path, line = where
    if not path or os.path.realpath(path) == os.path.realpath(os.path.abspath(unit.path)):
        return f"line {line}"
    rel = os.path.relpath(path, os.path.dirname(os.path.abspath(unit.path)))
    return f"{os.path.basename(path) if rel.startswith('..' + os.sep + '..') else rel}:{line}"
