// Semgrep fixture for rocm-lint.ROC701: inline PTX.
__device__ unsigned lane_id() {
  unsigned id;
  // ruleid: rocm-lint.ROC701
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

// ruleid: rocm-lint.ROC701
__device__ void stop() { __asm__ __volatile__("trap;"); }

// ok: rocm-lint.ROC701
__device__ void compiler_fence() { asm volatile("" ::: "memory"); }

#ifdef USE_ROCM
// ok: rocm-lint.ROC701
__device__ void wait_loads() { asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); }
#else
// ok: rocm-lint.ROC701
__device__ void wait_loads() { asm volatile("membar.gl;" ::: "memory"); }
#endif

// ok: rocm-lint.ROC701
const char* doc = "asm(\"trap;\")";

// ok: rocm-lint.ROC701
__device__ bool is_shared(const void* p) asm("llvm.amdgcn.is.shared");
