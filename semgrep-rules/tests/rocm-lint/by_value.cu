// Semgrep fixture: a file that tests USE_ROCM by value (built for NVIDIA with -DUSE_ROCM=0).
// `#ifdef USE_ROCM` would be true in that build, so ROC702/ROC703 are reported without a fix
// (rocm-lint.ROC702-by-value, rocm-lint.ROC703-by-value).
// ruleid: rocm-lint.ROC702-by-value
#include <cuda_runtime.h>
// ruleid: rocm-lint.ROC702-by-value
#include <cuda_fp16.h>
// ruleid: rocm-lint.ROC702
#include <cudnn.h>

#if USE_ROCM
#include <hip/hip_bf16.h>
#else
// ok: rocm-lint.ROC702, rocm-lint.ROC702-by-value
#include <cuda_bf16.h>
#endif

// ruleid: rocm-lint.ROC703-by-value
#if CUDA_VERSION >= 11000
__device__ float fast(float x) { return x * 2.f; }
#endif

// ruleid: rocm-lint.ROC703-by-value
#if CUDA_VERSION < 11080
__device__ float slow(float x) { return x + 1.f; }
#endif
