// Semgrep fixture for rocm-lint.ROC703: CUDA version guards with no ROCm term.
// ruleid: rocm-lint.ROC703
#if CUDA_VERSION >= 11000
#define HAS_BF16 1
#endif

// ruleid: rocm-lint.ROC703
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12000
#define HAS_FP8 1
#endif

// ok: rocm-lint.ROC703
#if defined(USE_ROCM) || CUDA_VERSION >= 11000
#define HAS_BF16_ANYWHERE 1
#endif

#ifndef USE_ROCM
// ok: rocm-lint.ROC703
#if CUDA_VERSION >= 12080
#define HAS_FP4 1
#endif
#endif
