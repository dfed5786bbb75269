"""The CMake interpreter (``rocm_lint.build.cmake_eval``): differential against real ``cmake -P``
on generated scripts (same value or unknown, never a wrong one), CMake's condition rules, and
project shapes run per platform scenario through ``build.context`` (``file_platform``,
``macro_facts``): a platform branch three ``if``s deep, a ROCm macro defined by a function in an
``include()``d file, sources a ROCm branch removes, a generator expression on an option, and
conditions no scenario decides (no fact)."""

import os
import random
import shutil
import subprocess

import pytest

from cmake_script_gen import INPUTS, PRINTED, Gen
from rocm_lint.build import cmake_eval
from rocm_lint.build.cmake_eval import DEFINITE, MAYBE, NEVER, Interpreter, evaluate_project
from rocm_lint.build.context import CUDA, ROCM, file_platform, macro_facts
from rocm_lint.workspace import Workspace
from test_cpp_project import _project

CMAKE = shutil.which("cmake")


def _script(tmp_path, text, unknown=()):
    path = tmp_path / "s.cmake"
    path.write_text(text)
    interp = Interpreter(
        str(tmp_path), lambda p: open(p).read(), project=False, cache={n: None for n in unknown}
    )
    return interp.run_file(str(path))


def _read(p):
    return open(p).read() if os.path.isfile(p) else None


# -- against the reference --------------------------------------------------------------------------
@pytest.mark.skipif(CMAKE is None, reason="needs cmake (the test extra installs it)")
def test_generated_scripts_agree_with_cmake(tmp_path):
    wrong, decided, total, ran = [], 0, 0, 0
    for seed in range(80):
        text = Gen(seed).script()
        directory = tmp_path / str(seed)
        directory.mkdir()
        path = directory / "s.cmake"
        path.write_text(text)
        rr = random.Random(seed)
        defines = [f"-D{n}={rr.choice(['a', 'ON', '0', '', 'b'])}" for n in INPUTS]
        res = subprocess.run([CMAKE, *defines, "-P", str(path)], capture_output=True, text=True, timeout=60)
        if res.returncode != 0:
            continue  # the script stops with an error: nothing to compare
        ran += 1
        real = {}
        for line in res.stderr.splitlines():
            for name in PRINTED:
                if line == f"{name} UNDEF":
                    real[name] = None
                elif line.startswith(f"{name}=[") and line.endswith("]"):
                    real[name] = line[len(name) + 2 : -1]
        interp = Interpreter(str(directory), _read, project=False, cache={n: None for n in INPUTS})
        st = interp.run_file(str(path))
        for name in PRINTED:
            total += 1
            value = st.get(name) if st is not None else None
            if value is None:
                continue  # unknown: allowed
            if real[name] not in value:
                wrong.append((seed, name, real[name], sorted(map(str, value))))
            elif len(value) == 1:
                decided += 1
    assert not wrong
    assert ran >= 60
    assert decided >= total * 0.6  # most values are decided, not "unknown"


@pytest.mark.parametrize(
    "condition, expected",
    [
        ("TRUE OR TRUE AND FALSE", False),  # AND and OR: one precedence, from the left
        ("FALSE AND TRUE OR TRUE", True),
        ("FALSE OR FALSE AND FALSE OR TRUE", False),  # (F OR F) AND (F OR T), as CMake pairs them
        ("NOT FALSE AND FALSE", False),
        ("A STREQUAL A AND NOT B STREQUAL A", True),
        ('"" EQUAL ""', False),
        ("1abc EQUAL 1", True),  # sscanf reads a prefix
        ("X", True),  # a name: its value
        ('"X"', False),  # quoted: not dereferenced (CMP0054)
        ("Q", False),  # an undefined name
        ("Y", True),  # a constant, not a name
        ("NOT (X AND (Q OR Z))", True),
        ("2.10 VERSION_GREATER 2.9", True),
        ('X MATCHES "^o+n$"', True),
        ('X MATCHES "^n"', False),
        ("UNKNOWN_VALUE EQUAL 8 OR TRUE", True),  # Kleene: an unknown operand of a decided OR
        ('X MATCHES "^o"', True),
        ('"a" IN_LIST L', True),
        ("DEFINED L AND NOT DEFINED Y", True),
    ],
)
def test_conditions(tmp_path, condition, expected):
    st = _script(
        tmp_path,
        f"cmake_minimum_required(VERSION 3.25)\nset(X on)\nset(L a b)\nif({condition})\n"
        "set(R 1)\nelse()\nset(R 0)\nendif()\n",
    )
    assert st.get("R") == frozenset({"1" if expected else "0"})
    if CMAKE:
        path = tmp_path / "c.cmake"
        path.write_text(
            f'cmake_minimum_required(VERSION 3.25)\nset(X on)\nset(L a b)\nif({condition})\nmessage("T")\n'
            'else()\nmessage("F")\nendif()\n'
        )
        res = subprocess.run([CMAKE, "-P", str(path)], capture_output=True, text=True, timeout=60)
        assert res.stderr.strip() == ("T" if expected else "F")


def test_an_undecided_condition_joins_both_branches(tmp_path):
    st = _script(
        tmp_path,
        "cmake_minimum_required(VERSION 3.25)\nset(A 1)\nif(IN0)\n  set(A 2)\n  set(B x)\nendif()\n"
        "if(A EQUAL 3)\n  set(C never)\nendif()\n",
        unknown=["IN0"],
    )
    assert st.get("A") == frozenset({"1", "2"})
    assert st.get("B") == frozenset({"x", None})  # maybe defined
    assert st.get("C") == frozenset({None})  # decided on both paths


def test_functions_macros_and_scopes(tmp_path):
    st = _script(
        tmp_path,
        """cmake_minimum_required(VERSION 3.25)
function(outer out)
  inner(tmp ${ARGN})
  set(${out} "${tmp}!" PARENT_SCOPE)
  set(LOCAL 1)
endfunction()
function(inner out)
  list(LENGTH ARGN n)
  set(${out} "${ARGV1}:${n}" PARENT_SCOPE)
endfunction()
macro(twice v)
  set(${v} "${${v}}${${v}}")
endmacro()
function(fact n out)
  if(n LESS 2)
    set(${out} 1 PARENT_SCOPE)
    return()
  endif()
  math(EXPR m "${n} - 1")
  fact(${m} sub)
  math(EXPR r "${n} * ${sub}")
  set(${out} ${r} PARENT_SCOPE)
endfunction()
outer(R a b c)
set(W ab)
twice(W)
fact(5 F)
""",
    )
    assert st.get("R") == frozenset({"a:3!"})
    assert st.get("LOCAL") == frozenset({None})
    assert st.get("W") == frozenset({"abab"})
    assert st.get("F") == frozenset({"120"})


def test_unbounded_recursion_and_loops_are_bounded(tmp_path):
    st = _script(
        tmp_path,
        'function(f)\n  f()\nendfunction()\nf()\nset(i 0)\nwhile(TRUE)\n  math(EXPR i "${i}+1")\nendwhile()\n',
    )
    assert st is None or st.get("i") is None  # never a wrong value; the run ends


def test_execute_process_and_outside_files_are_unknown(tmp_path):
    st = _script(
        tmp_path,
        "execute_process(COMMAND uname OUTPUT_VARIABLE OS)\ninclude(/etc/hostname OPTIONAL)\n"
        'file(READ /etc/hostname H)\nset(X "$ENV{HOME}")\n',
    )
    assert st.get("OS") is None and st.get("H") is None and st.get("X") is None


# -- project shapes ---------------------------------------------------------------------------------
KERNEL = "__global__ void k(float* x) { x[0] = 1; }\n"


def _facts(root):
    return evaluate_project(str(root), str(root / "CMakeLists.txt"), _read)


def _macro(ws, path, name):
    for fact in macro_facts(ws, str(path)):
        if fact[0] == name:
            return fact[1][0], fact[2][0]  # (defined on NVIDIA, defined on ROCm)
    return None


DEEP = """cmake_minimum_required(VERSION 3.21)
project(deep LANGUAGES CXX)
option(DEEP_WITH_GPU "gpu" ON)
option(DEEP_BACKEND_AMD "amd" OFF)
set(SOURCES core.cpp)
if(DEEP_WITH_GPU)
  if(NOT WIN32)
    if(CMAKE_SIZEOF_VOID_P EQUAL 8 OR TRUE)
      if(DEEP_BACKEND_AMD)
        enable_language(HIP)
        list(APPEND SOURCES amd/ops.hip)
      else()
        enable_language(CUDA)
        list(APPEND SOURCES nv/ops.cu)
      endif()
    endif()
  endif()
endif()
add_library(deep ${SOURCES})
"""


def test_a_platform_branch_three_ifs_deep(tmp_path):
    root = _project(
        tmp_path, {"CMakeLists.txt": DEEP, "core.cpp": "", "amd/ops.hip": KERNEL, "nv/ops.cu": KERNEL}
    )
    facts = _facts(root)
    assert facts.switches.rocm == {"DEEP_BACKEND_AMD"}
    assert facts.compiled(CUDA, root / "nv/ops.cu") == DEFINITE
    assert facts.compiled(ROCM, root / "nv/ops.cu") == NEVER
    assert facts.compiled(ROCM, root / "amd/ops.hip") == DEFINITE
    ws = Workspace()
    assert file_platform(ws, str(root / "nv/ops.cu")) == CUDA
    assert file_platform(ws, str(root / "amd/ops.hip")) == ROCM
    assert file_platform(ws, str(root / "core.cpp")) is None


REMOVING = """cmake_minimum_required(VERSION 3.21)
project(rm LANGUAGES CXX)
option(RM_USE_HIP "hip" OFF)
file(GLOB KERNELS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.cu)
set(EXTRA extra/tc_gemm.cu)
if(RM_USE_HIP)
  find_package(hip REQUIRED)
  list(REMOVE_ITEM KERNELS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/fp8_mma.cu)
  list(FILTER KERNELS EXCLUDE REGEX "wgmma_[a-z0-9]+\\\\.cu$")
  list(REMOVE_AT EXTRA 0)
else()
  find_package(CUDAToolkit REQUIRED)
endif()
add_library(rm ${KERNELS} ${EXTRA})
"""


def test_sources_a_rocm_branch_removes_are_nvidia_only(tmp_path):
    files = {"CMakeLists.txt": REMOVING}
    for name in ("kernels/common.cu", "kernels/fp8_mma.cu", "kernels/wgmma_sm90.cu", "extra/tc_gemm.cu"):
        files[name] = KERNEL
    root = _project(tmp_path, files)
    ws = Workspace()
    for name in ("kernels/fp8_mma.cu", "kernels/wgmma_sm90.cu", "extra/tc_gemm.cu"):
        assert file_platform(ws, str(root / name)) == CUDA, name
    assert file_platform(ws, str(root / "kernels/common.cu")) is None


PLATFORM_CMAKE = """function(inc_platform_definitions target)
  if(INC_ENABLE_ROCM)
    target_compile_definitions(${target} PRIVATE INC_ON_AMD=1 INC_WARP=64)
  else()
    target_compile_definitions(${target} PRIVATE INC_WARP=32)
  endif()
endfunction()
"""
INCLUDED = """cmake_minimum_required(VERSION 3.21)
project(inc LANGUAGES CXX)
option(INC_ENABLE_ROCM "rocm" OFF)
list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/cmake)
include(IncPlatform)
if(INC_ENABLE_ROCM)
  enable_language(HIP)
else()
  enable_language(CUDA)
endif()
add_subdirectory(src)
"""


def test_a_rocm_macro_defined_by_a_function_in_an_included_file(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": INCLUDED,
            "cmake/IncPlatform.cmake": PLATFORM_CMAKE,
            "src/CMakeLists.txt": "add_library(inc ops.cu)\ninc_platform_definitions(inc)\n",
            "src/ops.cu": KERNEL,
            "src/other.cu": KERNEL,
        },
    )
    ws = Workspace()
    assert _macro(ws, root / "src/ops.cu", "INC_ON_AMD") == (False, True)
    warp = [f for f in macro_facts(ws, str(root / "src/ops.cu")) if f[0] == "INC_WARP"]
    assert len(warp) == 1 and warp[0][1][0] and warp[0][2][0]  # defined on both, with other values
    # a source no target compiles: the interpreter gives it nothing
    assert _macro(ws, root / "src/other.cu", "INC_ON_AMD") is None


GENEX = """cmake_minimum_required(VERSION 3.21)
project(gx LANGUAGES CXX)
option(GX_ENABLE_HIP "hip" OFF)
if(GX_ENABLE_HIP)
  enable_language(HIP)
else()
  enable_language(CUDA)
endif()
add_library(gx ops.cu)
target_compile_definitions(gx PRIVATE $<$<BOOL:${GX_ENABLE_HIP}>:GX_USE_HIP>)
target_compile_options(gx PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-DGX_HIP_LANG>)
"""


def test_a_generator_expression_on_an_option(tmp_path):
    root = _project(tmp_path, {"CMakeLists.txt": GENEX, "ops.cu": KERNEL})
    ws = Workspace()
    assert _macro(ws, root / "ops.cu", "GX_USE_HIP") == (False, True)
    # COMPILE_LANGUAGE:HIP on a .cu file the ROCm build may compile as CUDA or HIP: maybe
    assert _macro(ws, root / "ops.cu", "GX_HIP_LANG") == (False, None)


UNDECIDED = """cmake_minimum_required(VERSION 3.21)
project(un LANGUAGES CXX)
option(UN_USE_ROCM "rocm" OFF)
set(SRCS a.cu b.cu)
if(UN_USE_ROCM)
  enable_language(HIP)
  if(SOME_TOOLCHAIN_SETTING)
    list(REMOVE_ITEM SRCS b.cu)
    add_compile_definitions(UN_MAYBE=1)
  endif()
  add_compile_definitions(UN_ROCM=1)
endif()
add_library(un ${SRCS})
"""


def test_a_condition_no_scenario_decides_gives_no_fact(tmp_path):
    root = _project(tmp_path, {"CMakeLists.txt": UNDECIDED, "a.cu": KERNEL, "b.cu": KERNEL})
    facts = _facts(root)
    assert facts.compiled(ROCM, root / "b.cu") == MAYBE
    ws = Workspace()
    assert file_platform(ws, str(root / "b.cu")) is None
    assert _macro(ws, root / "b.cu", "UN_ROCM") == (False, True)
    assert _macro(ws, root / "b.cu", "UN_MAYBE") == (False, None)  # maybe: no "defined" fact


def test_a_project_that_never_builds_for_hip_gets_no_interpretation(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "project(p LANGUAGES CUDA)\nadd_library(p a.cu)\nadd_definitions(-DP_FAST)\n",
            "a.cu": "",
        },
    )
    assert _facts(root) is None


def test_sources_passed_to_an_unknown_command_are_maybe_compiled(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'option(X_USE_ROCM "" OFF)\nif(X_USE_ROCM)\n  enable_language(HIP)\nendif()\n'
            "if(NOT X_USE_ROCM)\n  add_library(x nv.cu)\nendif()\npybind11_add_module(m nv.cu)\n",
            "nv.cu": KERNEL,
        },
    )
    facts = _facts(root)
    assert facts.compiled(ROCM, root / "nv.cu") == MAYBE  # the module may compile it
    assert file_platform(Workspace(), str(root / "nv.cu")) is None


def test_an_unknown_source_list_makes_nothing_never(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'option(Y_USE_ROCM "" OFF)\nif(Y_USE_ROCM)\n  enable_language(HIP)\n'
            "  execute_process(COMMAND ./list.sh OUTPUT_VARIABLE LISTED)\n  add_library(y ${LISTED})\n"
            "else()\n  add_library(y nv.cu)\nendif()\n",
            "nv.cu": KERNEL,
        },
    )
    facts = _facts(root)
    assert facts.scenarios[ROCM].lost  # a list the program built, unknown: it may name nv.cu
    assert facts.compiled(ROCM, root / "nv.cu") == MAYBE  # no answer: the older reader decides


def test_a_value_from_outside_names_no_source_of_the_tree(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'option(Y_USE_ROCM "" OFF)\nif(Y_USE_ROCM)\n  enable_language(HIP)\n'
            "  add_library(y ${ROCM_PATH}/lib/stub.cpp)\nelse()\n  add_library(y nv.cu)\nendif()\n",
            "nv.cu": KERNEL,
        },
    )
    facts = _facts(root)
    assert not facts.scenarios[ROCM].lost
    assert facts.compiled(ROCM, root / "nv.cu") == NEVER


def test_a_fatal_error_on_rocm_makes_the_sources_nvidia_only(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'option(Z_ENABLE_HIP "" OFF)\nif(Z_ENABLE_HIP)\n  find_package(hip)\n'
            '  message(FATAL_ERROR "HIP is not supported yet")\nendif()\nadd_library(z k.cu)\n',
            "k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "k.cu")) == CUDA


def test_steps_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(cmake_eval, "MAX_STEPS", 50)
    body = "".join(f"set(V{k} {k})\n" for k in range(100))
    root = _project(tmp_path, {"CMakeLists.txt": 'option(B_USE_ROCM "" OFF)\n' + body, "k.cu": ""})
    assert _facts(root) is None  # a bound reached: no answer, never a partial one


def test_a_build_file_only_one_run_reads_takes_its_platform(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'cmake_minimum_required(VERSION 3.21)\noption(W_ENABLE_ROCM "" OFF)\n'
            "if(W_ENABLE_ROCM)\n  include(cmake/hip.cmake)\nelse()\n  include(cmake/cuda.cmake)\nendif()\n"
            "include(cmake/common.cmake)\n",
            "cmake/hip.cmake": "enable_language(HIP)\n",
            "cmake/cuda.cmake": "enable_language(CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80 90)\n",
            "cmake/common.cmake": "set(COMMON 1)\n",
        },
    )
    ws = Workspace()
    assert file_platform(ws, str(root / "cmake/cuda.cmake")) == CUDA
    assert file_platform(ws, str(root / "cmake/hip.cmake")) == ROCM
    assert file_platform(ws, str(root / "cmake/common.cmake")) is None
