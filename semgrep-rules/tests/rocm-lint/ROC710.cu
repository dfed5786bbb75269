// Semgrep fixture for rocm-lint.ROC710: managed memory.
// ruleid: rocm-lint.ROC710
__managed__ float scale;

__global__ void saxpy(float* x, int n) {}

void run(int n, int dev) {
  float* x;
  // ruleid: rocm-lint.ROC710
  cudaMallocManaged(&x, n * sizeof(float));
  // ruleid: rocm-lint.ROC710
  cudaMemPrefetchAsync(x, n * sizeof(float), dev, 0);
  // ok: rocm-lint.ROC710
  cudaMalloc(&x, n * sizeof(float));
#ifndef USE_ROCM
  // ok: rocm-lint.ROC710
  cudaMemAdvise(x, n, cudaMemAdviseSetReadMostly, dev);
#endif
  // ok: rocm-lint.ROC710
  const char* name = "cudaMallocManaged(";
}
