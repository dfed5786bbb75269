// Semgrep fixture for rocm-lint.ROC702: CUDA-only headers.
// ruleid: rocm-lint.ROC702-hip-runtime
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif
// ruleid: rocm-lint.ROC702-hipblas
#ifdef USE_ROCM
#include "hipblas/hipblas.h"
#else
#include "cublas_v2.h"
#endif
// ruleid: rocm-lint.ROC702-hipcub
#ifdef USE_ROCM
#include <hipcub/hipcub.hpp>
#else
#include <cub/block/block_reduce.cuh>
#endif
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
