// Semgrep fixture for rocm-lint.ROC710: a file that asks whether managed memory migrates.
__global__ void saxpy(float* x, int n) {}

void run(int n, int dev) {
  int concurrent = 0;
  cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev);
  float* x;
  if (concurrent) {
    // ok: rocm-lint.ROC710
    cudaMallocManaged(&x, n * sizeof(float));
  }
}
