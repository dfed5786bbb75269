// Semgrep fixture for rocm-lint.ROC703: CUDA version guards with no ROCm term.
// ruleid: rocm-lint.ROC703-false-on-rocm
#if CUDA_VERSION >= 11000 && !defined(USE_ROCM)
#define HAS_BF16 1
#endif

// ruleid: rocm-lint.ROC703-false-on-rocm
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12000 && !defined(USE_ROCM)
#define HAS_FP8 1
#endif

// ok: rocm-lint.ROC703, rocm-lint.ROC703-false-on-rocm, rocm-lint.ROC703-true-on-rocm
#if defined(USE_ROCM) || CUDA_VERSION >= 11000
#define HAS_BF16_ANYWHERE 1
#endif

#ifndef USE_ROCM
// ok: rocm-lint.ROC703, rocm-lint.ROC703-false-on-rocm, rocm-lint.ROC703-true-on-rocm
#if CUDA_VERSION >= 12080
#define HAS_FP4 1
#endif
#endif

// A comparison true on ROCm (the macro is 0 there): reported, fixed with `|| defined(USE_ROCM)`.
// ruleid: rocm-lint.ROC703-true-on-rocm
#if CUDART_VERSION < 11080   || defined(USE_ROCM)// old toolkits
#define OLD_TOOLKIT 1
#endif
// (An #elif after that #if would never be evaluated on ROCm, where the #if is taken: the
// built-in scanner leaves such an #elif alone, Semgrep cannot tell; a separate #if here.)
// ruleid: rocm-lint.ROC703-true-on-rocm
#if !defined(CUDA_VERSION) || CUDA_VERSION != 12000 || defined(USE_ROCM)
#define NOT_12 1
#endif

// Mixed `&&`/`||`: reported, no Semgrep fix (the built-in scanner parenthesises).
// ruleid: rocm-lint.ROC703
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12000 || __CUDACC_VER_MAJOR__ >= 12
#define NEW 1
#endif

// No comparison: not a version guard.
// ok: rocm-lint.ROC703, rocm-lint.ROC703-false-on-rocm, rocm-lint.ROC703-true-on-rocm
#if defined(CUDA_VERSION)
#define HAS_CUDA_H 1
#endif
