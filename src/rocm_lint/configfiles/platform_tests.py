"""Which platform a shell, CMake or YAML test names: ``NVIDIA_TEST``/``ROCM_TEST`` (``nvidia-smi``,
``/opt/rocm``, ``$GPU == cuda``...), the branch gates of a condition (``branch_gates``) and the
setting names the config rules read (``SETTING_NAMES``)."""

from __future__ import annotations

import re
from typing import Optional, Tuple

from rocm_lint.domain import NVIDIA, ROCM

# A test names NVIDIA when it mentions the driver, the toolkit or a "cuda" platform value;
# `torch.cuda`/`CUDA_VISIBLE_DEVICES` are not NVIDIA-only (ROCm builds answer to them too).
NVIDIA_TEST = re.compile(
    r"nvidia|\bnvcc\b|/usr/local/cuda|\b(?:USE|WITH|BUILD)_CUDA\b|\bCUDA_(?:HOME|PATH|VERSION)\b"
    r"|(?<![\w.])cuda(?![\w.(])|\bcu1\d{1,2}\b",
    re.I,
)
ROCM_TEST = re.compile(
    r"rocm|(?<![\w.])hip(?![\w.(])|\bhipcc\b|\bHIP_\w+|(?<![\w.])amd(?![\w.(])|\bgfx\d"
    r"|amd\.com/gpu|/dev/kfd",
    re.I,
)
# Variables that hold the settings the rules look at: a test of one is not a platform test.
# (Anchored at a word's start: `\w*` tried from every position of a long word was quadratic.)
SETTING_NAMES = re.compile(r"(?<!\w)\w*(?:ARCH_LIST|ARCHITECTURES|_ARCHS?|TARGETS?|ALLOC_CONF|CUDAARCHS)\b")
_NEGATIONS = re.compile(r"(?:^|\s)!(?=\s)|!=|\s-ne\s|\s-z\s|\bNOT\b")

# Gate values: where a piece of code can run.


def branch_gates(cond: str, negations: Optional[int] = None) -> Tuple[Optional[str], Optional[str]]:
    """(gate of the branch where ``cond`` holds, gate of the branch where it does not).

    ``[ -d /opt/rocm ]`` -> (ROCM, NVIDIA); ``command -v nvidia-smi`` -> (NVIDIA, None) (not
    NVIDIA may still be CPU or ROCm); a negated test swaps the two; a test that names both
    platforms, or neither, says nothing."""
    cond = SETTING_NAMES.sub(" ", cond)  # `[ -z "$PYTORCH_ROCM_ARCH" ]` tests a setting, not the platform
    nv = bool(NVIDIA_TEST.search(cond))
    ro = bool(ROCM_TEST.search(cond))
    if nv == ro:
        return None, None
    yes, no = (NVIDIA, None) if nv else (ROCM, NVIDIA)
    n = len(_NEGATIONS.findall(cond)) if negations is None else negations
    return (no, yes) if n % 2 else (yes, no)
