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

__device__ float old_arch_slow_path(float x) {
// A `<` test: the #else (the fast path) is dropped under HIP, where __CUDA_ARCH__ is 0.
// ruleid: rocm-lint.ROC705
#if __CUDA_ARCH__ < 800
  return x + x;
#else
  return x * 2.f;
#endif
}

__device__ float old_arch_checked(float x) {
// `defined(__CUDA_ARCH__) &&` makes the test false under HIP: ROCm takes the #else.
// ok: rocm-lint.ROC705
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800 && __CUDA_VERSION__ < 12020
  return x + x;
#else
  return x * 2.f;
#endif
}

// An arch gate around a nested conditional (no ROCm branch in it).
__device__ void nested() {
// ruleid: rocm-lint.ROC705
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#ifdef DEBUG_MODE
  printf("sm80\n");
#endif
#endif
}
