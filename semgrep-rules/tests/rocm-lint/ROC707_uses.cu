// Semgrep fixture for rocm-lint.ROC707: CUTLASS used through a project header (no CUTLASS
// include here; a comment naming cute::Tensor comes first and does not count).
#include "kernel_traits.h"

template <typename T>
// ruleid: rocm-lint.ROC707
__global__ void run(cute::Tensor<T> t) {}

// ok: rocm-lint.ROC707
__device__ void other(cutlass::half_t h) {}
