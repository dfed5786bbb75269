"""Names from PyTorch, ROCm and CUDA that several parts of rocm-lint look for, in one place.

Static rules (``rocm_lint.rules``), the config-file scanner and the runtime doctor
(``rocm_lint.runtime``) read the same tables, so a new spelling is added once.
"""

from __future__ import annotations

# The caching allocator's settings, by every name PyTorch reads them under (the HIP and the
# device-generic spellings included).  Order: what the doctor reports first.
ALLOC_CONF_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")

# Environment variables that turn Inductor's max-autotune on for every compile of a process.
AUTOTUNE_ENV = (
    "TORCHINDUCTOR_MAX_AUTOTUNE",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM",
    "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE",
)

# Where code does or does not run, as the gate analyses of every language say it.
NVIDIA = "nvidia"  # never on ROCm (an NVIDIA-only branch, or the not-ROCm side of a ROCm test)
ROCM = "rocm"  # only on ROCm

# Python modules whose import only succeeds on NVIDIA: their distributions ship CUDA binaries
# and no ROCm build (the packages ROC402 and ROC406 know to have none: TensorRT and its
# PyTorch/LLM front ends, PyCUDA's driver bindings, DALI), and the extensions built against
# CUDA libraries only (the cuDNN frontend, ``nvidia-cudnn-frontend``, imported as ``cudnn``;
# nvFuser, ``nvfuser-cu*``).  An import of one that completes proves the process runs on
# NVIDIA (``python/values.py``; packages that import anywhere, such as ``nvtx`` or PyCUDA's
# top package, are not listed).
NVIDIA_ONLY_IMPORTS = (
    "tensorrt",
    "tensorrt_llm",
    "torch_tensorrt",
    "pycuda.driver",
    "pycuda.autoinit",
    "pycuda.gpuarray",
    "pycuda.compiler",
    "nvidia.dali",
    "cudnn",
    "nvfuser",
)
