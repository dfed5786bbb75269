// Semgrep fixture for rocm-lint.ROC702: a PyTorch extension source, which hipify rewrites for
// ROCm: its CUDA headers with a HIP twin are left alone; one with no HIP twin is still reported.
#include <torch/extension.h>
// ok: rocm-lint.ROC702
#include <cuda_runtime.h>
// ok: rocm-lint.ROC702
#include <cub/cub.cuh>
// ruleid: rocm-lint.ROC702
#include <cudnn.h>

__global__ void k(float* x) { x[0] = 1.f; }
