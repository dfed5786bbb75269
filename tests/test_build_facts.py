"""What the project's own build teaches the gate model (``rocm_lint.build``): macros defined per
platform (CMake, setup.py), the project's own platform options, and source lists chosen per
platform.  Each fact has a positive case (the build decides: the finding goes) and a negative one
(no fact: the finding stays)."""

import ast
import os

import pytest

from rocm_lint.build.cmake import cmake_facts, learn_options
from rocm_lint.build.context import CUDA, file_platform, macro_facts
from rocm_lint.workspace import Workspace
from rocm_lint.build.logic import ROCM_ATOM, negate
from rocm_lint.build.setup_py import setup_file_facts
from rocm_lint.config import Config
from rocm_lint.engine import check_file
from test_build_context import _codes
from test_cpp_project import _project  # a repository (.git) holding ``files``

NOT_ROCM = negate(ROCM_ATOM)  # an else(): the NVIDIA and the CPU-only build


# A kernel whose PTX sits behind the project's own macro: NVIDIA-only when the build defines
# FASTOPS_ON_AMD for ROCm only, a hazard otherwise.
GATED_KERNEL = """#include <cstdint>
__global__ void k(unsigned* out) {
#ifndef FASTOPS_ON_AMD
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(out[0]));
#endif
}
"""
VALUE_KERNEL = """__global__ void k(unsigned* out) {
#if FASTOPS_ON_AMD
  out[0] = 0;
#else
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(out[0]));
#endif
}
"""

CMAKE_OPTION = """cmake_minimum_required(VERSION 3.21)
project(fastops LANGUAGES CXX)
option(FASTOPS_ENABLE_ROCM "AMD" OFF)
if(FASTOPS_ENABLE_ROCM)
  enable_language(HIP)
  add_compile_definitions(FASTOPS_ON_AMD=1)
else()
  enable_language(CUDA)
endif()
add_subdirectory(kernels)
"""


def test_a_project_option_that_turns_hip_on_is_learned():
    assert learn_options(CMAKE_OPTION) == ({"FASTOPS_ENABLE_ROCM"}, set())
    # the mirror image: the option turns CUDA on, its else HIP
    mirror = "if(NOT BUILD_NV)\n find_package(hip)\nelse()\n enable_language(CUDA)\nendif()\n"
    assert learn_options(mirror) == (set(), {"BUILD_NV"})
    # a branch that turns HIP on with no CUDA on the other side teaches nothing
    assert learn_options("if(EXTRA)\n enable_language(HIP)\nendif()\n") == (set(), set())
    # nor does a compound condition or an elseif chain
    assert learn_options("if(A AND B)\n enable_language(HIP)\nelse()\n enable_language(CUDA)\nendif()\n") == (
        set(),
        set(),
    )
    # an elseif chain whose branches both turn HIP on names no single ROCm option
    assert learn_options(
        "if(A)\n enable_language(CUDA)\nelseif(B)\n enable_language(HIP)\nelseif(C)\n"
        " find_package(hip)\nendif()\n"
    ) == (set(), {"A"})


def test_cmake_definitions_per_platform():
    facts_ = cmake_facts(CMAKE_OPTION, learn_options(CMAKE_OPTION))
    [(where, value)] = facts_.macros["FASTOPS_ON_AMD"]
    assert where == ROCM_ATOM and value == "1"
    text = """if(USE_ROCM)
  add_definitions(-DLIB_HIP -DLIB_WAVE=64)
  set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -DHIP_FLAG")
  target_compile_definitions(lib PRIVATE LIB_TARGET=2)
else()
  list(APPEND GPU_FLAGS "-DLIB_NV")
  string(APPEND CMAKE_CUDA_FLAGS " -DLIB_CUDA_FLAG=1")
endif()
execute_process(COMMAND cmake -DNOT_A_MACRO=1)
"""
    macros = cmake_facts(text).macros
    assert {k: v[0] for k, v in macros.items()} == {
        "LIB_HIP": (ROCM_ATOM, "1"),
        "LIB_WAVE": (ROCM_ATOM, "64"),
        "HIP_FLAG": (ROCM_ATOM, "1"),
        "LIB_TARGET": (ROCM_ATOM, "2"),
        "LIB_NV": (NOT_ROCM, "1"),
        "LIB_CUDA_FLAG": (NOT_ROCM, "1"),
    }


def test_a_macro_the_build_defines_for_rocm_gates_the_kernels(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE_OPTION,
            "kernels/CMakeLists.txt": "add_library(k k.cu)\n",
            "kernels/k.cu": GATED_KERNEL,
            "kernels/v.cu": VALUE_KERNEL,
        },
    )
    [fact] = macro_facts(Workspace(), str(root / "kernels/k.cu"))
    assert fact[0] == "FASTOPS_ON_AMD" and fact[1] == (False, None) and fact[2][0] is True
    assert _codes(root / "kernels/k.cu") == []
    assert _codes(root / "kernels/v.cu") == []  # `#if FASTOPS_ON_AMD`: 1 on ROCm, undefined (0) on NVIDIA


@pytest.mark.parametrize(
    "cmake",
    [
        # not tied to a platform: an ordinary option
        'option(FASTOPS_FAST "" ON)\nif(FASTOPS_FAST)\n add_compile_definitions(FASTOPS_ON_AMD=1)\nendif()\n',
        # also defined for every platform
        CMAKE_OPTION + "add_compile_definitions(FASTOPS_ON_AMD=1)\n",
        # defined on both sides with the same value
        "if(USE_ROCM)\n add_definitions(-DFASTOPS_ON_AMD)\nelse()\n add_definitions(-DFASTOPS_ON_AMD)\nendif()\n",
    ],
)
def test_no_macro_fact_without_a_platform_difference(tmp_path, cmake):
    root = _project(tmp_path, {"CMakeLists.txt": cmake, "kernels/k.cu": GATED_KERNEL})
    assert macro_facts(Workspace(), str(root / "kernels/k.cu")) == ()
    assert _codes(root / "kernels/k.cu") == [(4, "ROC701")]


def test_build_systems_that_disagree_give_no_macro_fact(tmp_path):
    setup = (
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION\n"
        "setup(name='x', extra_compile_args=['-DROCM_EXT'] if IS_HIP_EXTENSION else [])\n"
    )
    root = _project(
        tmp_path, {"CMakeLists.txt": CMAKE_OPTION, "setup.py": setup, "kernels/k.cu": GATED_KERNEL}
    )
    assert macro_facts(Workspace(), str(root / "kernels/k.cu")) == ()
    assert _codes(root / "kernels/k.cu") == [(4, "ROC701")]


SETUP = """import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, BuildExtension

is_rocm_pytorch = torch.version.hip is not None and torch.cuda.is_available()
define_macros = []
extra = {"cxx": ["-O3"], "nvcc": ["-O3"]}
if is_rocm_pytorch:
    define_macros += [("FASTOPS_ON_AMD", None)]
    extra["nvcc"].append("-DHIP_ONLY=1")
else:
    extra["nvcc"] += ["-DNV_ONLY"]
setup(name="x", ext_modules=[CUDAExtension("x", ["csrc/k.cu"], define_macros=define_macros,
      extra_compile_args=extra)], cmdclass={"build_ext": BuildExtension})
"""


def test_setup_py_macros_per_branch():
    _, evidence, macros = setup_file_facts(ast.parse(SETUP))
    assert evidence
    assert {k: v[0][1] for k, v in macros.items()} == {"FASTOPS_ON_AMD": "1", "HIP_ONLY": "1", "NV_ONLY": "1"}
    assert macros["FASTOPS_ON_AMD"][0][0][1] is True and macros["FASTOPS_ON_AMD"][0][0][0] is False
    assert macros["NV_ONLY"][0][0][1] is False


def test_setup_py_macro_gates_the_extension_sources(tmp_path):
    root = _project(tmp_path, {"setup.py": SETUP, "csrc/k.cu": GATED_KERNEL})
    assert _codes(root / "csrc/k.cu") == []
    # an unconditional define_macros entry is no platform fact
    plain = SETUP.replace("define_macros = []", "define_macros = [('FASTOPS_ON_AMD', None)]")
    root2 = _project(tmp_path / "b", {"setup.py": plain, "csrc/k.cu": GATED_KERNEL})
    assert _codes(root2 / "csrc/k.cu") == [(4, "ROC701")]


CMAKE_SOURCES = """cmake_minimum_required(VERSION 3.21)
project(ext LANGUAGES CXX)
set(EXT_SRC "csrc/common.cu")
set(MARLIN_SRC "csrc/marlin/marlin.cu" "${CMAKE_CURRENT_SOURCE_DIR}/csrc/cutlass_mm.cu")
if(GPU_LANG STREQUAL "CUDA")
  list(APPEND EXT_SRC ${MARLIN_SRC} "csrc/nv_only.cu")
elseif(GPU_LANG STREQUAL "HIP")
  list(APPEND EXT_SRC "csrc/rocm/skinny.cu")
endif()
add_library(ext ${EXT_SRC})
"""
PTX = '__global__ void k(unsigned* o) {\n  asm volatile("mov.u32 %0, %%laneid;" : "=r"(o[0]));\n}\n'


def test_cmake_source_lists_chosen_per_platform(tmp_path):
    files = {"CMakeLists.txt": CMAKE_SOURCES}
    for name in ("common", "marlin/marlin", "cutlass_mm", "nv_only", "rocm/skinny"):
        files[f"csrc/{name}.cu"] = PTX
    root = _project(tmp_path, files)
    assert file_platform(Workspace(), str(root / "csrc/common.cu")) is None
    for name in ("marlin/marlin", "cutlass_mm", "nv_only"):  # through ${MARLIN_SRC} too
        assert file_platform(Workspace(), str(root / f"csrc/{name}.cu")) == CUDA, name
        assert _codes(root / f"csrc/{name}.cu") == []
    assert file_platform(Workspace(), str(root / "csrc/rocm/skinny.cu")) == "rocm"
    assert _codes(root / "csrc/common.cu") == [(2, "ROC701")]


def test_a_source_listed_for_both_platforms_keeps_its_findings(tmp_path):
    cmake = CMAKE_SOURCES.replace('"csrc/rocm/skinny.cu"', '"csrc/rocm/skinny.cu" "csrc/nv_only.cu"')
    root = _project(tmp_path, {"CMakeLists.txt": cmake, "csrc/nv_only.cu": PTX})
    assert file_platform(Workspace(), str(root / "csrc/nv_only.cu")) is None
    assert _codes(root / "csrc/nv_only.cu") == [(2, "ROC701")]


def test_a_pure_cuda_project_keeps_its_cuda_only_sources(tmp_path):
    cmake = "project(p LANGUAGES CXX CUDA)\nif(WITH_CUDA)\n  add_library(k nv_only.cu)\nendif()\n"
    root = _project(tmp_path, {"CMakeLists.txt": cmake, "nv_only.cu": PTX})
    assert file_platform(Workspace(), str(root / "nv_only.cu")) is None
    assert _codes(root / "nv_only.cu") == [(2, "ROC701")]


def test_editing_the_cmakelists_re_checks_the_kernels(tmp_path):
    """The build files are dependencies of the check (the content cache re-checks on an edit)."""
    root = _project(tmp_path, {"CMakeLists.txt": CMAKE_OPTION, "kernels/k.cu": GATED_KERNEL})
    workspace = Workspace()
    with workspace.recording_reads() as reads:
        check_file(str(root / "kernels/k.cu"), Config(), workspace=workspace)
    assert str(root / "CMakeLists.txt") in {str(p) for p in reads}


JIT = """import os
import torch
from torch.utils.cpp_extension import load

_here = os.path.dirname(os.path.abspath(__file__))
flags = ["-O3", "-DFASTOPS_ON_AMD"] if torch.version.hip else ["-O3"]
_ext = load(name="fastops", sources=[os.path.join(_here, "csrc", "k.cu")], extra_cuda_cflags=flags)
"""


def test_cpp_extension_load_flags_per_branch(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": JIT, "pkg/csrc/k.cu": GATED_KERNEL})
    [fact] = macro_facts(Workspace(), str(root / "pkg/csrc/k.cu"))
    assert fact[0] == "FASTOPS_ON_AMD" and fact[1] == (False, None)
    assert _codes(root / "pkg/csrc/k.cu") == []
    # the same flag for both platforms: no fact, the PTX is reported
    root2 = _project(
        tmp_path / "b",
        {
            "pkg/ops.py": JIT.replace('["-O3"]\n', '["-O3", "-DFASTOPS_ON_AMD"]\n'),
            "pkg/csrc/k.cu": GATED_KERNEL,
        },
    )
    assert _codes(root2 / "pkg/csrc/k.cu") == [(4, "ROC701")]


def _db(entries):
    import json

    return json.dumps([{"directory": "/b", "file": f, "command": c} for f, c in entries])


def test_a_rocm_compile_database_lists_what_the_rocm_build_compiles(tmp_path):
    hipcc = "/opt/rocm/bin/hipcc -x hip --offload-arch=gfx942 -c {}"
    db = _db(
        [("/src/csrc/hip/common.hip", hipcc.format("common.hip")), ("/src/csrc/k_hip.cpp", hipcc.format("k"))]
    )
    files = {
        "build/compile_commands.json": db,
        "csrc/common.cu": PTX,
        "csrc/k.cu": PTX,
        "csrc/nv_only.cu": PTX,
        "csrc/lanes.cuh": PTX,
    }
    root = _project(tmp_path, files)
    assert file_platform(Workspace(), str(root / "csrc/common.cu")) is None  # hipified to common.hip
    assert file_platform(Workspace(), str(root / "csrc/k.cu")) is None  # k_hip.cpp
    assert file_platform(Workspace(), str(root / "csrc/nv_only.cu")) == CUDA
    assert _codes(root / "csrc/nv_only.cu") == []
    assert file_platform(Workspace(), str(root / "csrc/lanes.cuh")) is None  # headers are never listed
    assert _codes(root / "csrc/common.cu") == [(2, "ROC701")]


def test_an_nvidia_compile_database_says_nothing(tmp_path):
    db = _db([("/src/csrc/common.cu", "/usr/local/cuda/bin/nvcc -arch=sm_90 -c common.cu")])
    root = _project(tmp_path, {"compile_commands.json": db, "csrc/nv_only.cu": PTX})
    assert file_platform(Workspace(), str(root / "csrc/nv_only.cu")) is None
    assert _codes(root / "csrc/nv_only.cu") == [(2, "ROC701")]
    root2 = _project(tmp_path / "b", {"compile_commands.json": "{not json", "csrc/nv_only.cu": PTX})
    assert _codes(root2 / "csrc/nv_only.cu") == [(2, "ROC701")]


def test_project_prefixed_options_and_elseif_chains():
    chain = """if(MYLIB_USE_CUDA)
  enable_language(CUDA)
elseif(MYLIB_GPU_AMD)
  find_package(HIP REQUIRED)
  add_compile_definitions(MYLIB_ON_AMD=1)
elseif(MYLIB_USE_MUSA)
  set(MUSA_PATH /opt/musa)
endif()
"""
    assert learn_options(chain) == ({"MYLIB_GPU_AMD"}, {"MYLIB_USE_CUDA"})
    macros = cmake_facts(chain, learn_options(chain)).macros
    assert macros["MYLIB_ON_AMD"][0][0][0] is False  # never in the NVIDIA build
    # a project prefix before USE_ROCM names the platform by itself
    assert (
        cmake_facts("if(KT_USE_ROCM)\n add_compile_definitions(KT_ROCM=1)\nendif()\n").macros["KT_ROCM"][0][0]
        == ROCM_ATOM
    )


def test_cmake_options_passed_by_setup_py_are_not_macros():
    text = """import os
cmake_args = []
if os.environ.get("USE_ROCM") or IS_HIP_EXTENSION:
    cmake_args.append("-DKT_USE_ROCM=ON")
    flags = ["-DKT_REAL=1"]
"""
    _, _, macros = setup_file_facts(ast.parse(text))
    assert set(macros) == {"KT_REAL"}


def test_nvidia_only_sources_reported_apart_when_asked(tmp_path):
    """A team porting the whole codebase asks for the sources the ROCm build never compiles:
    their findings come back marked, counted apart in the summary and the JSON."""
    import json
    import subprocess
    import sys
    from dataclasses import replace

    files = {"CMakeLists.txt": CMAKE_SOURCES, "csrc/common.cu": PTX, "csrc/nv_only.cu": PTX}
    root = _project(tmp_path, files)
    config = replace(Config(), report_nvidia_only_sources=True)
    [finding] = check_file(str(root / "csrc/nv_only.cu"), config)
    assert finding.code == "ROC701" and finding.scope == "nvidia-only"
    [common] = check_file(str(root / "csrc/common.cu"), config)
    assert common.scope is None
    run = [sys.executable, "-m", "rocm_lint", "check", ".", "--no-cache"]
    plain = subprocess.run(run, cwd=root, capture_output=True, text=True)
    assert "nv_only.cu" not in plain.stdout and "Found 1 finding in 1 file" in plain.stdout + plain.stderr
    whole = subprocess.run(run + ["--report-nvidia-only-sources"], cwd=root, capture_output=True, text=True)
    assert "1 of them in sources the ROCm build never compiles" in whole.stdout + whole.stderr
    out = subprocess.run(
        run + ["--report-nvidia-only-sources", "--output-format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    marks = {os.path.basename(f["filename"]): f["nvidia_only_source"] for f in json.loads(out)}
    assert marks == {"common.cu": False, "nv_only.cu": True}
    # the same through the configuration file
    (root / "pyproject.toml").write_text("[tool.rocm-lint]\nreport-nvidia-only-sources = true\n")
    configured = subprocess.run(run, cwd=root, capture_output=True, text=True)
    assert "nv_only.cu" in configured.stdout
