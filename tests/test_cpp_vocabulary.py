"""A file's own platform macros, learned from what it includes under them (cpp.vocabulary), and
an #elif no ROCm build evaluates (ROC703)."""

from rocm_lint.config import Config
from rocm_lint.cpp.preproc import analyse
from rocm_lint.cpp.vocabulary import learned_macros
from rocm_lint.engine import check_file

TAUGHT = """#ifndef MYLIB_HIP
#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>
#else
#include <hip/hip_runtime.h>
#endif

#if !defined(MYLIB_HIP)
#include <curand_kernel.h>
#endif

#if MYLIB_HIP
#else
#if CUDA_VERSION >= 11000
#define X 1
#endif
#endif
"""


def _codes(tmp_path, text, name="k.cu"):
    path = tmp_path / name
    path.write_text(text)
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [(f.line, f.code) for f in result]


def test_a_macro_whose_branches_include_hip_and_cuda_headers_is_a_platform_gate(tmp_path):
    assert learned_macros(analyse(TAUGHT)) == ({"MYLIB_HIP"}, set())
    assert _codes(tmp_path, TAUGHT) == []
    mirror = TAUGHT.replace("#ifndef MYLIB_HIP", "#ifdef MYLIB_NV").replace(
        "!defined(MYLIB_HIP)", "defined(MYLIB_NV)"
    )
    mirror = mirror.replace("#if MYLIB_HIP\n#else\n", "#if !MYLIB_NV\n#else\n")
    assert learned_macros(analyse(mirror)) == (set(), {"MYLIB_NV"})
    assert _codes(tmp_path, mirror) == []


def test_no_lesson_without_evidence_or_with_contradictions(tmp_path):
    # nothing HIP-specific on either side: the macro is no platform test
    plain = TAUGHT.replace("#include <hip/hip_runtime.h>\n", "#include <vector>\n")
    assert learned_macros(analyse(plain)) == (set(), set())
    assert [c for _, c in _codes(tmp_path, plain)] == ["ROC702", "ROC702", "ROC702", "ROC703"]
    # a HIP header on both sides of the macro teaches nothing
    both = TAUGHT + "#ifdef MYLIB_HIP\n#else\n#include <hip/hip_fp16.h>\n#endif\n"
    assert learned_macros(analyse(both)) == (set(), set())
    # an #elif chain teaches only as a vendor chain (test_a_vendor_chain_...): a CUDA branch
    # before the HIP-only one; with no HIP-only branch it teaches nothing
    chain = "#ifdef A\n#include <cuda_runtime.h>\n#elif defined(B)\n#include <hip/hip_runtime.h>\n#endif\n"
    assert learned_macros(analyse(chain)) == ({"B"}, {"A"})
    chain = "#ifdef A\n#include <cuda_runtime.h>\n#elif defined(B)\n#include <vector>\n#endif\n"
    assert learned_macros(analyse(chain)) == (set(), set())


def test_an_elif_after_a_branch_every_rocm_build_takes_is_not_roc703(tmp_path):
    text = """void f() {
#if defined(__HIP_PLATFORM_AMD__)
  g(0);
#elif !defined(CUDART_VERSION)
  g(1);
#elif CUDART_VERSION < 11000
  g(2);
#endif
#if defined(SOMETHING)
  g(3);
#elif CUDART_VERSION < 11000
  g(4);
#endif
}
"""
    assert _codes(tmp_path, text) == [(11, "ROC703")]


def test_a_macro_the_file_defines_only_in_nvidia_code_is_undefined_on_rocm(tmp_path):
    text = """#if (__CUDACC_VER_MAJOR__ >= 11)
#define MYLIB_CP_ASYNC_ENABLED
#endif
__device__ void copy(void* s, const void* g) {
#ifdef MYLIB_CP_ASYNC_ENABLED
  asm volatile("cp.async.commit_group;\\n" ::);
#else
  *(int*)s = *(const int*)g;
#endif
}
"""
    # the version guard itself is ROC703's; the PTX behind the macro is NVIDIA-only
    assert _codes(tmp_path, text) == [(1, "ROC703")]
    # defined for every platform too: the PTX is reported
    both = "#define MYLIB_CP_ASYNC_ENABLED\n" + text
    assert (7, "ROC701") in _codes(tmp_path, both, "b.cu")


def test_roc703_leaves_a_guard_another_term_drops_on_rocm(tmp_path):
    text = """#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600 || CUDA_VERSION < 8000)
#define OLD_ATOMICS 1
#endif
#if defined(MYLIB_FAST) && CUDA_VERSION < 8000
#define OLD 1
#endif
"""
    assert _codes(tmp_path, text) == [(4, "ROC703")]


def test_a_guard_naming_the_files_own_platform_macro_is_not_roc703(tmp_path):
    text = TAUGHT + "#if !MYLIB_HIP && CUDA_VERSION >= 11000\n#define Y 1\n#endif\n"
    assert _codes(tmp_path, text) == []


def test_a_version_guard_whose_chain_names_rocm_later_is_not_roc703(tmp_path):
    text = """#if (__CUDACC_VER_MAJOR__ > 9) && (__CUDA_ARCH__ >= 530 || !defined(__CUDA_ARCH__))
#include <cuda_fp16.h>
#elif defined(__HIPCC__)
#include <hip/hip_fp16.h>
#endif
#if CUDA_VERSION >= 12000
#define NEW 1
#elif defined(OTHER)
#define OTHER_ONE 1
#endif
"""
    assert _codes(tmp_path, text) == [(6, "ROC703")]


def test_a_version_guard_after_the_function_stops_on_rocm_is_not_roc703(tmp_path):
    text = """void spmm(int algo) {
#if defined(__HIP_PLATFORM_AMD__)
  TORCH_CHECK(false, "spmm is not supported on HIP");
#endif
#if defined(CUDART_VERSION) && CUDART_VERSION < 11000
  old_path(algo);
#endif
}
void other(int algo) {
#if defined(__HIP_PLATFORM_AMD__)
  if (algo > 2) {
    TORCH_CHECK(false, "only some algorithms on HIP");
  }
#endif
#if defined(CUDART_VERSION) && CUDART_VERSION < 11000
  old_path(algo);
#endif
}
"""
    # the first function never runs past its check on ROCm; the second stops only sometimes
    assert _codes(tmp_path, text) == [(15, "ROC703")]


VENDOR_CHAIN = """#if defined(LIB_DECL_C)
#include <stdint.h>
#elif defined(LIB_DECL_CUDA)
#if defined(LIB_DECL_MUSA)
#include <musa_fp16.h>
#else
#include <cuda_fp16.h>
#endif
#elif defined(LIB_DECL_HIP)
#include <hip/hip_fp16.h>
#elif defined(LIB_DECL_SYCL)
#include <sycl/half_type.hpp>
#endif
__device__ int f();
"""


def test_a_vendor_chain_names_its_hip_branch_and_the_cuda_branch_before_it(tmp_path):
    # ggml's ggml-common.h: the CUDA branch comes before the HIP one, so a ROCm build never takes it
    assert learned_macros(analyse(VENDOR_CHAIN)) == ({"LIB_DECL_HIP"}, {"LIB_DECL_CUDA"})
    assert _codes(tmp_path, VENDOR_CHAIN, "common.h") == []


def test_a_vendor_chain_without_a_hip_only_branch_teaches_nothing(tmp_path):
    no_hip = VENDOR_CHAIN.replace("#include <hip/hip_fp16.h>\n", "")
    assert learned_macros(analyse(no_hip)) == (set(), set())
    assert _codes(tmp_path, no_hip, "common.h") == [(7, "ROC702")]
    # a HIP branch that also includes a CUDA-only header is no vendor split
    mixed = VENDOR_CHAIN.replace(
        "#include <hip/hip_fp16.h>\n", "#include <hip/hip_fp16.h>\n#include <cub/cub.cuh>\n"
    )
    assert learned_macros(analyse(mixed)) == (set(), set())
    # a CUDA branch after the HIP one is not learned as NVIDIA's (the macro may be defined on
    # ROCm too: only its place before the HIP branch says it is not); the HIP one, first, is
    after = """#if defined(X_HIP)
#include <hip/hip_runtime.h>
#elif defined(X_CUDA)
#include <cuda_runtime.h>
#endif
"""
    assert learned_macros(analyse(after)) == ({"X_HIP"}, set())
