// Semgrep fixture for rocm-lint.ROC603: warp size 32 hard-coded.
// ruleid: rocm-lint.ROC603
#define WARP_SIZE 32
// ruleid: rocm-lint.ROC603
constexpr int kWarpSize = 32;

__device__ int lane_of() {
  // ruleid: rocm-lint.ROC603
  return threadIdx.x & 31;
}

__device__ int warp_of() {
  // ruleid: rocm-lint.ROC603
  return threadIdx.x / 32;
}

// ok: rocm-lint.ROC603
constexpr int kTileRows = 32;

#if defined(USE_ROCM) && defined(__GFX11__)
// ok: rocm-lint.ROC603
#define RDNA_WAVE 32
#endif

#ifndef USE_ROCM
// ok: rocm-lint.ROC603
constexpr int kNvWarp = 32;
#endif

// An enum member, a shuffle of width 32 and a shuffle reduction that starts at offset 16.
struct Traits {
  // ruleid: rocm-lint.ROC603
  enum { THREADS_PER_WARP = 32 };
  // ok: rocm-lint.ROC603
  enum { ROWS = 32 };
};

__device__ float reduce(float v) {
  // ruleid: rocm-lint.ROC603
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(__activemask(), v, offset);
  }
  // ruleid: rocm-lint.ROC603
  v += __shfl_down_sync(__activemask(), v, 1, 32);
  // ok: rocm-lint.ROC603
  v += __shfl_down_sync(__activemask(), v, 1, warpSize);
  return v + threadIdx.x % warpSize;
}
