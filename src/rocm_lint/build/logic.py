"""Where a build step runs: three builds (NVIDIA, ROCm, CPU-only), each three-valued.

A condition of a build file (``if(USE_ROCM)``, ``if torch.version.hip:``) holds in some of the
three builds a project can be configured for; ``Worlds`` says which, with ``None`` for "cannot
tell".  The logic is Kleene's, the ``#if`` model's (``rocm_lint.cpp.conditions``): one definition
for every reader.
"""

from __future__ import annotations

from typing import Optional, Tuple

from rocm_lint.cpp.conditions import Tri
from rocm_lint.cpp.conditions import tri_and as t_and
from rocm_lint.cpp.conditions import tri_not as t_not
from rocm_lint.cpp.conditions import tri_or as t_or

ROCM, CUDA = "rocm", "cuda"

# (NVIDIA build, ROCm build, CPU-only build): does the code run there?  None: unknown.
Worlds = Tuple[Tri, Tri, Tri]
ALWAYS: Worlds = (True, True, True)
NEVER: Worlds = (False, False, False)
ROCM_ATOM: Worlds = (False, True, False)
CUDA_ATOM: Worlds = (True, False, False)
UNKNOWN: Worlds = (None, None, None)


def both(a: Worlds, b: Worlds) -> Worlds:
    return t_and(a[0], b[0]), t_and(a[1], b[1]), t_and(a[2], b[2])


def either(a: Worlds, b: Worlds) -> Worlds:
    return t_or(a[0], b[0]), t_or(a[1], b[1]), t_or(a[2], b[2])


def negate(a: Worlds) -> Worlds:
    return t_not(a[0]), t_not(a[1]), t_not(a[2])


def platform_of(state: Worlds) -> Optional[str]:
    """ROCM where neither the NVIDIA nor the CPU build runs the code and ROCm may; CUDA where
    the ROCm build never runs it and NVIDIA may; else None."""
    cuda, rocm, cpu = state
    if cuda is False and cpu is False and rocm is not False:
        return ROCM
    if rocm is False and cuda is not False:
        return CUDA
    return None
