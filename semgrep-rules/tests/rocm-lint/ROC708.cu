// Semgrep fixture for rocm-lint.ROC708: NVIDIA-only sync and async-copy primitives.
__device__ void wait_for(int* flag) {
  // ruleid: rocm-lint.ROC708
  while (atomicAdd(flag, 0) == 0) __nanosleep(100);
}

__device__ void stage(float* smem, const float* gmem) {
  // ruleid: rocm-lint.ROC708
  __pipeline_memcpy_async(smem, gmem, 16);
  // ruleid: rocm-lint.ROC708
  __pipeline_commit();
  // ruleid: rocm-lint.ROC708
  __syncwarp(0x0000ffff);
  // ok: rocm-lint.ROC708
  __syncwarp();
}

#ifdef USE_ROCM
__device__ void backoff() { __builtin_amdgcn_s_sleep(2); }
#else
// ok: rocm-lint.ROC708
__device__ void backoff() { __nanosleep(64); }
#endif

// ok: rocm-lint.ROC708
const char* doc = "__pipeline_commit()";

__global__ void consumer(const float* in, float* out) {
  // ruleid: rocm-lint.ROC708
  cudaGridDependencySynchronize();
  out[threadIdx.x] = in[threadIdx.x];
  // ruleid: rocm-lint.ROC708
  cudaTriggerProgrammaticLaunchCompletion();
}

void set_pdl(cudaLaunchAttribute* attrs) {
  // ruleid: rocm-lint.ROC708
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
}

#ifndef USE_ROCM
__global__ void consumer_nv(float* out) {
  // ok: rocm-lint.ROC708
  cudaGridDependencySynchronize();
  out[0] = 0.f;
}
#endif
