// Semgrep fixture for rocm-lint.ROC601: ballots kept in 32 bits.
#include <hip/hip_runtime.h>

__device__ int votes(bool p) {
  // ruleid: rocm-lint.ROC601
  unsigned int m = __ballot_sync(__activemask(), p);
  // ruleid: rocm-lint.ROC601
  uint32_t alive = __activemask();
  // ruleid: rocm-lint.ROC601
  int n = __popc(__ballot(p));
  // ok: rocm-lint.ROC601
  uint64_t wide = __ballot(p);
  // ok: rocm-lint.ROC601
  unsigned long long all = __ballot_sync(__activemask(), p);
  // ok: rocm-lint.ROC601
  auto any = __ballot(p);
  return n + __popcll(wide) + __popcll(all) + __popcll(any) + __popc(m) + __popc(alive);
}

#ifndef USE_ROCM
__device__ int nvidia_only(bool p) {
  // ok: rocm-lint.ROC601
  unsigned m = __ballot_sync(0xffffffff, p);
  return __popc(m);
}
#endif

// ok: rocm-lint.ROC601
// unsigned m = __ballot(p); in a comment
// ok: rocm-lint.ROC601
const char* doc = "unsigned m = __ballot(p);";
