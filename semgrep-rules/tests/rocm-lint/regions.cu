// Semgrep fixture: NVIDIA-only regions with nested conditionals (rocm-lint.* rules share them).

#ifndef USE_ROCM
#if defined(HAS_EXTRA)
#include <cuda_fp16.h>  // (NVIDIA-only: no ROC702)
#else
__device__ int nvidia_only_lane() { return threadIdx.x & 31; }
#endif
// After the nested block: still the NVIDIA branch.
// ok: rocm-lint.ROC701
__device__ void fence() { asm volatile("membar.gl;"); }
#endif

#if defined(USE_ROCM)
#if HIP_FP8_TYPE_OCP
typedef int fp8_kind;
#else  // a nested #else is not the #else of USE_ROCM
typedef long fp8_kind;
#endif
// Still the ROCm branch: reported.
// ruleid: rocm-lint.ROC701
__device__ void rocm_fence() { asm volatile("membar.gl;"); }
#else
#ifndef __HALF2_TO_UI
#define __HALF2_TO_UI(var) *(reinterpret_cast<unsigned int*>(&(var)))
#endif
// ok: rocm-lint.ROC701
__device__ void nvidia_fence() { asm volatile("membar.gl;"); }
#endif

// ruleid: rocm-lint.ROC703-false-on-rocm
#if defined(CUDA_VERSION) && (CUDA_VERSION >= 12080)
// An arch gate inside a CUDA-only branch: NVIDIA-only too (no ROC705).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
__device__ void blackwell() {}
#else
__device__ void older() {}
#endif
// ok: rocm-lint.ROC701
__device__ float rcp(float a) { float b; asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(b) : "f"(a)); return b; }
#endif

// `||` makes a branch that ROCm can take: not an NVIDIA-only region.
#if !defined(USE_ROCM) || defined(FORCE_PTX)
// ruleid: rocm-lint.ROC701
__device__ void maybe_rocm() { asm volatile("membar.gl;"); }
#endif

// A condition that is ROCm and more: its #else can be ROCm too.
#if defined(USE_ROCM) && HIP_VERSION >= 60000
__device__ void new_rocm() {}
#else
// ruleid: rocm-lint.ROC701
__device__ void old_rocm_or_nvidia() { asm volatile("membar.gl;"); }
#endif
