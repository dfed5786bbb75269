"""ROC5 in shell, Dockerfile, YAML, .env and CMake files: hard-coded GPU archs (ROC502, ROC503).

The rules and their messages are defined with the Python checks in :mod:`rocm_lint.rules.build`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

from rocm_lint.domain import NVIDIA
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import SETTINGS_LANGUAGES, Hit
from rocm_lint.rules.gpu_arch import (
    AMD_ARCH_SETTINGS,
    AMD_ARCH_VARS,
    NVIDIA_ARCH_VARS,
    ROC502,
    ROC503,
    ROCM_COUNTERPART,
)

if TYPE_CHECKING:
    from rocm_lint.configfiles.unit import ConfigUnit

_CONFIG_NVIDIA_ARCH_VARS = NVIDIA_ARCH_VARS | {"CUDA_ARCHITECTURES"}  # + the CMake target property
_CONFIG_AMD_ARCH_VARS = AMD_ARCH_SETTINGS | {"HIP_ARCHITECTURES"}
# NVIDIA arch flags in a command line or a flags variable (words joined by blanks; CMake lists by `;`).
_NVIDIA_ARCH_WORD = LazyPattern(
    r"(?<![\w-])(?:(?:-gencode|--generate-code)[=\s;]+)?arch=compute_\d+[a-z]?(?:,\s*code=\[?(?:sm|compute|lto)_\d+[a-z]?"
    r"(?:,(?:sm|compute|lto)_\d+[a-z]?)*\]?)?"
    r"|(?<![\w-])(?:-arch|--gpu-architecture|--gpu-code|-code|--cuda-gpu-arch)[=\s;]+(?:sm|compute)_\d+[a-z]?"
)
_AMD_ARCH_WORD = LazyPattern(
    r"(?<![\w-])(?:--offload-arch|--amdgpu-target|--cuda-gpu-arch|-mcpu)=gfx[0-9a-f]+[\w:+-]*"
    r"(?:,gfx[0-9a-f]+[\w:+-]*)*"
)
# The file deals with ROCm: an AMD arch setting, a gfx name, or ROCm/HIP named at all (a platform
# switch, a ROCm install path, hipify).  Its NVIDIA arch list is then one side of a split.
_ROCM_AWARE = LazyPattern(
    ROCM_COUNTERPART.pattern + r"|(?i:rocm(?!-lint)|(?<![a-z])hip(?![a-z])|hipcc|hipify|amdgpu)"
)
# A recipe for NVIDIA machines: it points at the CUDA toolkit or an NVIDIA image or wheel.
_NVIDIA_RECIPE = LazyPattern(
    r"/usr/local/cuda|\bCUDA_HOME\b|\bCUDA_PATH\b|\bnvcc\b|nvidia/cuda|nvcr\.io|nvidia-smi"
    r"|/whl/cu1\d|\+cu1\d{1,2}\b|cuda-toolkit"
)
# The AMD arch comes from the user or the GPU: literal archs in the file are fallbacks.
_CONFIG_AMD_ARCH_SOURCE = LazyPattern(
    r"rocm_agent_enumerator|amdgpu-arch|rocminfo|gcnArchName|offload-arch=native"
    r"|(?:\$ENV\{|DEFINED\s+ENV\{)(?:%s)\}|\$\{(?:%s):?[-=]" % (("|".join(sorted(AMD_ARCH_VARS)),) * 2)
)

# Both checkers are silent on values computed from variables (``${ARCH}``, ``$(...)``, ``$ENV{...}``),
# on defaults the user overrides (Dockerfile ``ARG``, CMake ``CACHE`` without ``FORCE``, a branch that
# tests the same variable first, or an ``if``/``else`` whose other branch takes it from a variable), on
# code that never runs on ROCm, and in CI definitions (``.github/``, ``.gitlab-ci.yml`` ...).


def _ci_build(unit: ConfigUnit) -> bool:
    """CI jobs and their scripts build for the GPUs of their own runners."""
    return unit.ci_config and unit.language in ("yaml", "shell")


@ROC502.source_checker(*SETTINGS_LANGUAGES)
def nvidia_arch_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    """NVIDIA arch settings and flags written out in a file that does not deal with ROCm at all."""
    if (
        _ci_build(unit)
        or unit.matches("rocm_aware", _ROCM_AWARE)
        or _ROCM_AWARE.search(re.split(r"[\\/]", unit.path)[-1])
        or unit.nvidia_only_file
        or unit.language != "cmake"
        and unit.matches("nvidia_recipe", _NVIDIA_RECIPE)
    ):
        return
    for s in unit.settings_of(_CONFIG_NVIDIA_ARCH_VARS):
        if (
            not (s.computed or s.default or s.gate == NVIDIA)
            and re.search(r"\d", s.value)
            and "gfx" not in s.value.lower()
        ):
            what = f"{s.name}={' '.join(s.value.split())}"
            yield ROC502.hit(unit.anchor(s), s.value_end, ROC502.message(what=what))
    for start, end, flag, gate in unit.flag_matches(_NVIDIA_ARCH_WORD):
        if gate != NVIDIA:
            yield ROC502.hit(start, end, ROC502.message(what=" ".join(flag.split())))


@ROC503.source_checker(*SETTINGS_LANGUAGES)
def amd_arch_in_config(unit: ConfigUnit) -> Iterator[Hit]:
    """A gfx arch written out (ROCm-side code included: that is where it lives)."""
    if _ci_build(unit) or unit.nvidia_only_file or unit.matches("amd_arch_source", _CONFIG_AMD_ARCH_SOURCE):
        return
    for s in unit.settings_of(_CONFIG_AMD_ARCH_VARS):
        if not (s.computed or s.default or s.gate == NVIDIA) and re.search(r"gfx\d", s.value):
            yield ROC503.hit(unit.anchor(s), s.value_end, ROC503.message(what=f"{s.name}={s.value.strip()}"))
    for start, end, flag, gate in unit.flag_matches(_AMD_ARCH_WORD):
        if gate != NVIDIA:
            yield ROC503.hit(start, end, ROC503.message(what=flag))
