// Semgrep fixture for rocm-lint.ROC704: runtime versions compared with CUDA numbers.
bool graphs_supported() {
  int version = 0;
  cudaRuntimeGetVersion(&version);
  // ruleid: rocm-lint.ROC704
  if (version >= 11000) {
    return true;
  }
  return false;
}

bool old_driver() {
  int v = 0;
  cudaDriverGetVersion(&v);
  // ruleid: rocm-lint.ROC704
  return 10020 > v;
}

int printed() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  // ok: rocm-lint.ROC704
  return v;
}

int elsewhere(int version) {
  // ok: rocm-lint.ROC704
  return version >= 11000;  // not the one cudaRuntimeGetVersion wrote
}

bool two_numbers() {
  int v = 0, n = 0;
  cudaRuntimeGetVersion(&v);
  // ok: rocm-lint.ROC704
  if (n >= 3) {
    // ruleid: rocm-lint.ROC704
    return v / 1000 >= 12;
  }
  return false;
}
