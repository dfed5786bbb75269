// Semgrep fixture for rocm-lint.ROC702: CUDA-only headers.
// ruleid: rocm-lint.ROC702-hip-runtime
#include <cuda_runtime.h>
// ruleid: rocm-lint.ROC702-hipblas
#include "cublas_v2.h"
// ruleid: rocm-lint.ROC702-hipcub
#include <cub/block/block_reduce.cuh>
// ok: rocm-lint.ROC702, rocm-lint.ROC702-hip-runtime, rocm-lint.ROC702-hipblas, rocm-lint.ROC702-hipcub
#include <vector>

#ifdef USE_ROCM
// ok: rocm-lint.ROC702, rocm-lint.ROC702-hip-runtime, rocm-lint.ROC702-hipblas, rocm-lint.ROC702-hipcub
#include <hip/hip_fp16.h>
#else
// ok: rocm-lint.ROC702, rocm-lint.ROC702-hip-runtime, rocm-lint.ROC702-hipblas, rocm-lint.ROC702-hipcub
#include <cuda_fp16.h>
#endif

/* ok: rocm-lint.ROC702, rocm-lint.ROC702-hip-runtime, rocm-lint.ROC702-hipblas, rocm-lint.ROC702-hipcub */
/* #include <cudnn.h> */

// No drop-in HIP header: reported, not fixed.
// ruleid: rocm-lint.ROC702
#include <cudnn.h>
// ruleid: rocm-lint.ROC702
#include <nvtx3/nvToolsExt.h>
// ruleid: rocm-lint.ROC702
#include <cuda_gl_interop.h>
