"""rocm-lint: find NVIDIA-only code that breaks on AMD ROCm GPUs."""

__version__ = "0.1.0"
