// Semgrep fixture for rocm-lint.ROC707: libcu++ (one include per library: the built-in scanner
// reports each library once per file).
// ruleid: rocm-lint.ROC707
#include <cuda/std/atomic>
// ok: rocm-lint.ROC707
#include <cuda/std/type_traits>
// ok: rocm-lint.ROC707
#include "my_cutlass_helpers.h"

#ifndef USE_ROCM
// ok: rocm-lint.ROC707
#include <cutlass/cutlass.h>
#endif
