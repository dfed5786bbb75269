"""A project whose HIP backend compiles the CUDA backend's sources (ggml: ggml-hip/CMakeLists.txt
globs ``../ggml-cuda/*.cu``, defines GGML_USE_HIP, and the shared header picks a vendor header
that redefines the *_sync shuffles without their mask).  The CUDA directory is no NVIDIA-only
source tree (rocm_lint.build.context: source facts named beside), its sources get the HIP build's
macros on the ROCm side, the headers they include are read with them (cpp.includes), and a 32-bit
mask handed to a *_sync function the HIP vendor header redefines without its mask is silent
(cpp.facts.mask_free_sync_macros, ROC602)."""

from rocm_lint.config import Config
from rocm_lint.engine import check_file
from test_cpp_project import _project as write_project  # noqa: E402 (the C++ project writer)

ROOT_CMAKE = """cmake_minimum_required(VERSION 3.18)
project(mylib CXX)
option(MYLIB_CUDA "CUDA backend" OFF)
option(MYLIB_HIP "HIP backend" OFF)
if (MYLIB_CUDA)
  add_subdirectory(lib-cuda)
endif()
if (MYLIB_HIP)
  add_subdirectory(lib-hip)
endif()
"""
CUDA_CMAKE = """find_package(CUDAToolkit)
if (CUDAToolkit_FOUND)
  enable_language(CUDA)
  file(GLOB MYLIB_SOURCES_CUDA "*.cu")
  add_library(mylib-cuda ${MYLIB_SOURCES_CUDA})
else()
  message(FATAL_ERROR "CUDA Toolkit not found")
endif()
"""
HIP_CMAKE = """find_package(hip REQUIRED)
file(GLOB MYLIB_SOURCES_ROCM "../lib-cuda/*.cu")
add_library(mylib-hip ${MYLIB_SOURCES_ROCM})
add_compile_definitions(MYLIB_USE_HIP)
set_source_files_properties(${MYLIB_SOURCES_ROCM} PROPERTIES LANGUAGE HIP)
"""
COMMON = """#pragma once
#if defined(MYLIB_USE_HIP)
#include "vendors/hip.h"
#else
#include "vendors/cuda.h"
#endif
#if !defined(MYLIB_USE_HIP) && __CUDA_ARCH__ >= 800
#define MYLIB_CP_ASYNC
#endif
template <int width = 32>
__device__ float warp_sum(float x) {
  for (int o = width / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffff, x, o, width);
  return x;
}
"""
HIP_VENDOR = """#pragma once
#include <hip/hip_runtime.h>
#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)
"""
CUDA_VENDOR = """#pragma once
#include <cuda_runtime.h>
"""
KERNEL = """#include "common.cuh"
__global__ void k(float* x) {
  float v = warp_sum(x[threadIdx.x]);
  unsigned long long b = __ballot_sync(0xffffffff, v > 0);
#ifdef MYLIB_CP_ASYNC
  asm volatile("cp.async.wait_all;");
#endif
  __nanosleep(100);
  x[threadIdx.x] = v + b;
}
"""


def _project(tmp_path, hip_cmake=HIP_CMAKE):
    return write_project(
        tmp_path,
        {
            "CMakeLists.txt": ROOT_CMAKE,
            "lib-cuda/CMakeLists.txt": CUDA_CMAKE,
            "lib-hip/CMakeLists.txt": hip_cmake,
            "lib-cuda/common.cuh": COMMON,
            "lib-cuda/vendors/hip.h": HIP_VENDOR,
            "lib-cuda/vendors/cuda.h": CUDA_VENDOR,
            "lib-cuda/kernel.cu": KERNEL,
        },
    )


def _found(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [(f.line, f.code) for f in result]


def test_the_hip_backend_compiles_the_cuda_sources_with_its_own_macro(tmp_path):
    root = _project(tmp_path)
    # analysed as ROCm compiles it: the ballot's 32-bit mask and __nanosleep are hazards; the
    # shuffle's mask never reaches HIP (vendors/hip.h drops it); MYLIB_CP_ASYNC is NVIDIA-only
    assert _found(root / "lib-cuda" / "kernel.cu") == [(4, "ROC602"), (8, "ROC708")]
    assert _found(root / "lib-cuda" / "common.cuh") == []


def test_without_the_glob_beside_the_cuda_directory_is_nvidia_only(tmp_path):
    root = _project(tmp_path, HIP_CMAKE.replace('"../lib-cuda/*.cu"', '"*.hip"'))
    assert _found(root / "lib-cuda" / "kernel.cu") == []


def test_a_mask_dropping_macro_outside_a_hip_header_is_no_fact(tmp_path):
    # the same #define in a header that includes no HIP header (a MUSA vendor header, say) does
    # not tell what ROCm compiles: the mask is reported
    root = _project(tmp_path)
    (root / "lib-cuda" / "vendors" / "hip.h").write_text(
        HIP_VENDOR.replace("#include <hip/hip_runtime.h>\n", "")
    )
    assert (12, "ROC602") in _found(root / "lib-cuda" / "common.cuh")
