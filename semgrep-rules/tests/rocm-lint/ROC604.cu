// Semgrep fixture for rocm-lint.ROC604: warpSize used at compile time.
#include <hip/hip_runtime.h>

__global__ void partials(float* out) {
  // ruleid: rocm-lint.ROC604
  __shared__ float partial[warpSize];
  // ruleid: rocm-lint.ROC604
  constexpr int kLanes = warpSize;
  // ok: rocm-lint.ROC604
  const int lanes = warpSize;
  partial[threadIdx.x % lanes] = 0.f;
  out[0] = partial[0] + kLanes;
}

// ruleid: rocm-lint.ROC604
static_assert(warpSize == 64, "wave64 only");

// ruleid: rocm-lint.ROC604
#if __AMDGCN_WAVEFRONT_SIZE == 64
#define WIDE 1
#endif

// ok: rocm-lint.ROC604
// constexpr int kLanes = warpSize; in a comment
