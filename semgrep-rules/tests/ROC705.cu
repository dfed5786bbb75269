// Semgrep fixture for rocm-lint.ROC705: __CUDA_ARCH__ feature gates with no ROCm branch.
__device__ float twice(float x) {
// ruleid: rocm-lint.ROC705
#if __CUDA_ARCH__ >= 800
  return x * 2.f;
#else
  return x + x;
#endif
}

__device__ float portable(float x) {
// ok: rocm-lint.ROC705
#if __CUDA_ARCH__ >= 800 || defined(__HIP_DEVICE_COMPILE__)
  return x * 2.f;
#else
  return x + x;
#endif
}

__device__ float split(float x) {
// ok: rocm-lint.ROC705
#if __CUDA_ARCH__ >= 900
  return x * 3.f;
#elif defined(USE_ROCM)
  return x + x + x;
#else
  return 3.f * x;
#endif
}

__device__ float host_too(float x) {
// ok: rocm-lint.ROC705
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 530
  return x;
#else
  return -x;
#endif
}
