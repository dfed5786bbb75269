"""What the dependency rules (ROC406, ROC407; ``rules/dependencies.py``) know about single
distributions, written as data: one row per PyPI name (PEP 503 normalised), with the property the
rules decide from and the reason for it.

* ``rocm_wheel_on_pypi=False``: PyPI holds only a CUDA build under this name (or a package that
  only drives NVIDIA's libraries): a requirement on it installs something that cannot run on an AMD
  GPU, whatever the version (ROC406), unless the requirement itself names a ROCm build (a ``+rocm``
  local label, a URL or index naming ROCm).
* ``rocm_torch_brings``: a ROCm torch depends on the same import package under another
  distribution name; pip does not see it as installed, so an exact pin installs PyPI's build of
  the pinned release over it (ROC407).

The CUDA runtime families (``nvidia-*-cu12``, ``cupy-cuda12x``, a ``[cuda12]`` extra ...) are
patterns, not rows: ``rules/dependencies.py`` keeps them.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional


class Distribution(NamedTuple):
    what: str  # what PyPI's wheels are (the reason for the property)
    instead: str  # what a ROCm install uses
    rocm_wheel_on_pypi: bool = True
    rocm_torch_brings: str = ""  # the distribution a ROCm torch installs the same package with


_VLLM = Distribution(
    "vLLM's PyPI wheels are CUDA builds; ROCm's vLLM is built from source "
    "(`VLLM_TARGET_DEVICE=rocm`) or comes in the `rocm/vllm` images",
    "vLLM built for ROCm (the `rocm/vllm` image, or a source build)",
    rocm_wheel_on_pypi=False,
)
_FLASHINFER = Distribution(
    "FlashInfer's kernels are CUDA only (its wheels and JIT cache are compiled with nvcc)",
    "the ROCm attention backends of the serving stack (aiter, Triton, CK flash attention)",
    rocm_wheel_on_pypi=False,
)
_CUDA_PYTHON = Distribution(
    "NVIDIA's CUDA Python bindings, which load `libcuda`/`libcudart`/`libnvrtc` at run time",
    "HIP Python (`hip-python`; `hip-python-as-cuda` keeps the `cuda` module names)",
    rocm_wheel_on_pypi=False,
)

DISTRIBUTIONS: Dict[str, Distribution] = {
    "vllm": _VLLM,
    "flashinfer-python": _FLASHINFER,
    "flashinfer-cubin": _FLASHINFER,
    "flashinfer-jit-cache": _FLASHINFER,
    "sgl-kernel": Distribution(
        "SGLang's kernel wheels on PyPI are CUDA builds; on ROCm sgl-kernel is built from source "
        "(`setup_rocm.py`)",
        "sgl-kernel built from source for ROCm, or the `lmsysorg/sglang` ROCm images",
        rocm_wheel_on_pypi=False,
    ),
    "cuda-python": _CUDA_PYTHON,
    "cuda-bindings": _CUDA_PYTHON,
    "cuda-core": _CUDA_PYTHON,
    "cuda-toolkit": Distribution(
        "NVIDIA's CUDA Toolkit metapackage: its extras (`[cublas,curand,...]`) install the `nvidia-*` "
        "CUDA runtime wheels",
        "the ROCm libraries (a ROCm torch brings its own; `rocm` wheels for the rest)",
        rocm_wheel_on_pypi=False,
    ),
    "nvidia-cudnn-frontend": Distribution(
        "cuDNN's Python frontend, which needs cuDNN",
        "torch's own convolution and attention (MIOpen on ROCm)",
        rocm_wheel_on_pypi=False,
    ),
    # No row for `triton`: an exact `triton==` pin is no ROCm hazard by itself, since PyPI's triton
    # wheels carry the AMD backend (readers of the accuracy corpus label such pins, in ROCm
    # requirement files too, as harmless); a ROCm torch's `pytorch-triton-rocm` is replaced by
    # the same package built for both vendors.
}


def distribution(name: str) -> Optional[Distribution]:
    """The row of a PEP 503-normalised distribution name, if the table has one."""
    return DISTRIBUTIONS.get(name)
