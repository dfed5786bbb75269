// Semgrep fixture for rocm-lint.ROC706: WMMA.
// ruleid: rocm-lint.ROC706
#include <mma.h>

__global__ void gemm_tile(const half* a) {
  // ruleid: rocm-lint.ROC706
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> fa;
  // ruleid: rocm-lint.ROC706
  nvcuda::wmma::load_matrix_sync(fa, a, 16);
}

#ifdef USE_ROCM
// ok: rocm-lint.ROC706
#include <rocwmma/rocwmma.hpp>
#endif
