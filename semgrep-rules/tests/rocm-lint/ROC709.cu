// Semgrep fixture for rocm-lint.ROC709: kernels launched from device code.
__global__ void child(int* data, int n) {}

__global__ void parent(int* data, int n) {
  if (threadIdx.x == 0) {
    // ruleid: rocm-lint.ROC709
    child<<<1, 32>>>(data, n);
    // ruleid: rocm-lint.ROC709
    cudaDeviceSynchronize();
  }
}

template <int N>
__global__ void __launch_bounds__(128) recursive(int* data, int depth) {
  if (depth < 8) {
    // ruleid: rocm-lint.ROC709
    recursive<N><<<1, 1>>>(data, depth + 1);
  }
}

__device__ void helper(int* data) {
  for (int i = 0; i < 2; ++i) {
    {
      // ruleid: rocm-lint.ROC709
      child<<<1, 1>>>(data, i);
    }
  }
}

__device__ int counter;
__device__ int table[2] = {1, 2};

__global__ void guarded(int* data) {
#ifndef USE_ROCM
  // ok: rocm-lint.ROC709
  child<<<1, 1>>>(data, 1);
#endif
}

void host(int* data) {
  // ok: rocm-lint.ROC709
  parent<<<1, 1>>>(data, 1);
  // ok: rocm-lint.ROC709
  cudaDeviceSynchronize();
}

__global__ void quiet(int* data) {
  // ok: rocm-lint.ROC709
  data[0] = 1 << 3;
}

// __device__ void commented_out(int* data) {
//   child<<<1, 1>>>(data, 1);

void host_after_comment(int* data) {
  // ok: rocm-lint.ROC709
  child<<<1, 1>>>(data, 1);
}

__global__ void brace_in_comment(int* data) {
  // if (data) {
  const char* s = "{";
  char c = '{';
}

void host_after_kernel(int* data) {
  // ok: rocm-lint.ROC709
  child<<<1, 1>>>(data, 1);
}

__host__ __device__ void either_pass(int* data) {
#ifndef __CUDA_ARCH__
  // ok: rocm-lint.ROC709
  child<<<1, 1>>>(data, 1);
#endif
}
