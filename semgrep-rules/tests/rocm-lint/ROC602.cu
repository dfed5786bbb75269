// Semgrep fixture for rocm-lint.ROC602: 32-bit full masks in *_sync calls.
__device__ float reduce(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) {
    // ruleid: rocm-lint.ROC602
    v += __shfl_down_sync(0xffffffff, v, o);
  }
  // ruleid: rocm-lint.ROC602
  bool all = __all_sync(0xFFFFFFFFu, v > 0.f);
  // ruleid: rocm-lint.ROC602
  __syncwarp(0xffffffff);
  // ok: rocm-lint.ROC602
  float w = __shfl_sync(__activemask(), v, 0);
  // ok: rocm-lint.ROC602
  float z = __shfl_xor_sync(0xffffffffffffffffull, v, 1);
  return all ? v + w + z : 0.f;
}

#ifdef USE_ROCM
__device__ float bcast(float v) { return __shfl(v, 0); }
#else
// ok: rocm-lint.ROC602
__device__ float bcast(float v) { return __shfl_sync(0xffffffff, v, 0); }
#endif

// The other spellings of a 32-bit full mask, and a mask macro the file defines.
#define FINAL_MASK 0xffffffff
#define HALF_MASK 0x0000ffff
__device__ float spellings(float v) {
  // ruleid: rocm-lint.ROC602
  v += __shfl_xor_sync(uint32_t(-1), v, 1);
  // ruleid: rocm-lint.ROC602
  v += __shfl_down_sync((unsigned)-1, v, 1);
  // ruleid: rocm-lint.ROC602
  v += __shfl_xor_sync(FINAL_MASK, v, 2);
  // ok: rocm-lint.ROC602
  v += __shfl_xor_sync(HALF_MASK, v, 4);
  return v;
}
