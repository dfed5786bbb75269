// Semgrep fixture for rocm-lint.ROC711: dynamic shared memory above the 64 KiB of LDS.

__global__ void attend(float* x) { extern __shared__ float t[]; t[0] = x[0]; }

void launch(float* y, int d, cudaStream_t stream) {
  // ruleid: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, 102400);
  // ruleid: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);
  // ok: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  // ok: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);
  // ok: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, d * 1024);
#ifndef USE_ROCM
  // ok: rocm-lint.ROC711
  cudaFuncSetAttribute(attend, cudaFuncAttributeMaxDynamicSharedMemorySize, 163840);
#endif
  attend<<<1, 256, 0, stream>>>(y);
}
