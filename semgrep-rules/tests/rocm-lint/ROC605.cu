// Semgrep fixture for rocm-lint.ROC605: wave size 64 assumed on the ROCm side.
#ifdef USE_ROCM
// ruleid: rocm-lint.ROC605
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif

#if defined(__HIP_PLATFORM_AMD__)
// ruleid: rocm-lint.ROC605
constexpr int kWaveSize = 64;
__device__ int wave_id() {
  // ruleid: rocm-lint.ROC605
  return threadIdx.x / 64;
}
#endif

#if defined(USE_ROCM) && defined(__GFX9__)
// ok: rocm-lint.ROC605
#define CDNA_WAVE 64
#endif

// ok: rocm-lint.ROC605
constexpr int kTile = 64;
