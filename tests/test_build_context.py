"""The platform a directory gets from the project's build (``rocm_lint.build.context``):
CMake subdirectories chosen by a ROCm/CUDA test, CMake projects that stop a ROCm build, setup.py
source lists chosen by a ROCm test; the C++ scanner reads a ROCm-only file as if every line were
under ``#ifdef USE_ROCM`` and a file the ROCm build never compiles as NVIDIA-only code."""

import os

import pytest

from rocm_lint.config import Config
from rocm_lint.build import context as build_context
from rocm_lint.build.context import CUDA, ROCM, file_platform
from rocm_lint.engine import check_file
from rocm_lint.workspace import Workspace
from test_cpp_project import _project  # a repository (.git) holding ``files``


def _codes(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [(f.line, f.code) for f in result]


KERNEL = """#define WARP_SIZE 64
__global__ void k(float* x) {
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(x[0]));
}
"""
CMAKE_SPLIT = """cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX)
option(USE_ROCM "Build for AMD GPUs" OFF)
if(USE_ROCM)
  add_subdirectory(csrc/rocm)
else()
  add_subdirectory(csrc/cuda)
endif()
add_subdirectory(csrc/common)
"""


def test_cmake_if_else_subdirectories(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE_SPLIT,
            "csrc/rocm/k.cu": KERNEL,
            "csrc/cuda/k.cu": KERNEL,
            "csrc/common/k.cu": KERNEL,
            "csrc/rocm/sub/deep.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "csrc/rocm/k.cu")) == ROCM
    assert file_platform(Workspace(), str(root / "csrc/rocm/sub/deep.cu")) == ROCM
    assert file_platform(Workspace(), str(root / "csrc/cuda/k.cu")) == CUDA
    assert file_platform(Workspace(), str(root / "csrc/common/k.cu")) is None
    # unconstrained: inline PTX reported, the 64 is no ROCm-side fact
    assert _codes(root / "csrc/common/k.cu") == [(3, "ROC701")]
    # never built for ROCm: silent
    assert _codes(root / "csrc/cuda/k.cu") == []
    # ROCm-only: read as under #ifdef USE_ROCM, so the hard-coded 64 is ROC605 (wrong on RDNA);
    # inline PTX is reported there as it is under #ifdef USE_ROCM (it cannot build for AMD)
    assert _codes(root / "csrc/rocm/k.cu") == [(1, "ROC605"), (3, "ROC701")]


def test_rocm_only_file_is_read_as_under_ifdef_use_rocm(tmp_path):
    """The directory platform goes through the #if model: a file of a ROCm-only directory gets
    exactly the findings the same code gets inside #ifdef USE_ROCM."""
    body = (
        "#define WARP_SIZE 32\n#define WAVE_SIZE 64\n__global__ void k(float* x) {\n"
        "  unsigned m = __ballot_sync(0xffffffff, x[0] > 0);\n"
        "  x[0] = __shfl_xor_sync(0xffffffffffffffffull, x[0], 1, 32) + m;\n}\n"
    )
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE_SPLIT,
            "csrc/rocm/k.cu": body,
            "gated/k.cu": "#ifdef USE_ROCM\n" + body + "#endif\n",
        },
    )
    in_dir = _codes(root / "csrc/rocm/k.cu")
    gated = [(line - 1, code) for line, code in _codes(root / "gated/k.cu")]
    assert in_dir == gated and in_dir
    assert (2, "ROC605") in in_dir
    assert not any(
        code == "ROC603" and line == 5 for line, code in in_dir
    )  # an explicit width on the ROCm side


@pytest.mark.parametrize(
    "condition, rocm_dir, cuda_dir",
    [
        ("USE_ROCM", "a", "b"),
        ("NOT USE_ROCM", "b", "a"),
        ("${USE_HIP}", "a", "b"),
        ('GPU_LANG STREQUAL "HIP"', "a", "b"),
        ("HIP_FOUND AND NOT SKIP_KERNELS", "a", None),
        ("USE_CUDA", None, "a"),  # `else` of a CUDA test may be a CPU build: no fact
        ("CMAKE_CUDA_COMPILER", None, "a"),
        ("SOME_OPTION", None, None),
        ("USE_ROCM OR SOME_OPTION", None, "b"),  # the else is never the ROCm build
        ("(USE_ROCM)", None, None),  # groups are not read
    ],
)
def test_cmake_conditions(tmp_path, condition, rocm_dir, cuda_dir):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": f"if({condition})\n  add_subdirectory(a)\nelse()\n  add_subdirectory(b)\nendif()\n"
            "# builds for ROCm too: USE_ROCM\nif(USE_ROCM)\nendif()\n",
            "a/k.cu": KERNEL,
            "b/k.cu": KERNEL,
        },
    )
    got = {d: file_platform(Workspace(), str(root / d / "k.cu")) for d in "ab"}
    want = {d: (ROCM if d == rocm_dir else CUDA if d == cuda_dir else None) for d in "ab"}
    assert got == want


def test_cmake_elseif_chain(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_CUDA)\n add_subdirectory(nv)\nelseif(USE_ROCM)\n add_subdirectory(amd)\n"
            "else()\n add_subdirectory(cpu)\nendif()\n",
            "nv/k.cu": KERNEL,
            "amd/k.cu": KERNEL,
            "cpu/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "nv/k.cu")) == CUDA
    assert file_platform(Workspace(), str(root / "amd/k.cu")) == ROCM
    assert (
        file_platform(Workspace(), str(root / "cpu/k.cu")) is None
    )  # a CPU-only build: neither NVIDIA nor ROCm


def test_a_subdirectory_on_both_branches_gives_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_ROCM)\n add_subdirectory(kernels)\nelse()\n add_subdirectory(kernels)\nendif()\n",
            "kernels/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "kernels/k.cu")) is None
    assert _codes(root / "kernels/k.cu") == [(3, "ROC701")]


def test_add_subdirectory_in_a_function_is_not_read(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "function(f)\n if(USE_ROCM)\n  add_subdirectory(a)\n endif()\nendfunction()\n",
            "a/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "a/k.cu")) is None


CUDA_SUBPROJECT = """cmake_minimum_required(VERSION 3.18)
project(nvonly LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES 80 90)
add_library(k k.cu)
"""


def test_a_cuda_subproject_of_a_rocm_aware_project_is_silent(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_ROCM)\n  add_subdirectory(csrc)\nendif()\n",
            "csrc/k.cu": KERNEL,
            "contrib/nv/CMakeLists.txt": CUDA_SUBPROJECT,
            "contrib/nv/k.cu": KERNEL,
            "contrib/fatal/CMakeLists.txt": 'if(NOT CMAKE_CUDA_COMPILER)\n  message(FATAL_ERROR "needs nvcc")\n'
            "endif()\nset(CMAKE_CUDA_ARCHITECTURES 80)\n",
            "contrib/fatal/k.cu": KERNEL,
        },
    )
    for d in ("contrib/nv", "contrib/fatal"):
        assert file_platform(Workspace(), str(root / d / "k.cu")) == CUDA, d
        assert _codes(root / d / "k.cu") == []
        assert _codes(root / d / "CMakeLists.txt") == []  # its NVIDIA arch list: never a ROCm build
    assert file_platform(Workspace(), str(root / "csrc/k.cu")) == ROCM


def test_a_project_that_never_builds_for_rocm_is_not_silenced(tmp_path):
    """A project that never builds for ROCm is the one to port: nothing in it goes silent."""
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CUDA_SUBPROJECT,
            "k.cu": KERNEL,
            "sub/CMakeLists.txt": "if(USE_CUDA)\nadd_subdirectory(x)\nendif()\n",
            "sub/x/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "k.cu")) is None
    assert file_platform(Workspace(), str(root / "sub/x/k.cu")) is None
    assert _codes(root / "k.cu") == [(3, "ROC701")]
    assert [code for _, code in _codes(root / "CMakeLists.txt")] == ["ROC502"]


def test_project_languages_cuda_with_hip_in_the_file_is_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": "if(USE_ROCM)\nadd_subdirectory(a)\nendif()\n",
            "b/CMakeLists.txt": 'project(x LANGUAGES CXX CUDA)\nif(GPU_LANG STREQUAL "HIP")\nendif()\n',
            "b/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "b/k.cu")) is None


SETUP = """import glob
import os
from setuptools import setup
from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension

common = ["csrc/common/api.cpp"]
if IS_HIP_EXTENSION:
    sources = common + glob.glob("csrc/hip/*.cu") + ["csrc/shared/both.cu"]
else:
    sources = common + glob.glob("csrc/cuda/**/*.cu", recursive=True) + ["csrc/shared/both.cu",
                                                                          "csrc/shared/nv_only.cu"]
extra = os.path.join("csrc", "computed.cu")
setup(ext_modules=[CUDAExtension("demo", sources)])
"""


def test_setup_py_source_lists(tmp_path):
    root = _project(tmp_path, {"setup.py": SETUP})
    expect = {
        "csrc/hip/k.cu": ROCM,
        "csrc/hip/sub/k.cu": None,
        "csrc/cuda/k.cu": CUDA,
        "csrc/cuda/deep/er/k.cu": CUDA,
        "csrc/shared/both.cu": None,
        "csrc/shared/nv_only.cu": CUDA,
        "csrc/common/api.cpp": None,
        "csrc/computed.cu": None,
        "elsewhere/k.cu": None,
    }
    for name in expect:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(KERNEL)
    assert {name: file_platform(Workspace(), str(root / name)) for name in expect} == expect
    assert _codes(root / "csrc/hip/k.cu") == [(1, "ROC605"), (3, "ROC701")]
    assert _codes(root / "csrc/cuda/k.cu") == []
    assert _codes(root / "csrc/shared/both.cu") == [(3, "ROC701")]


@pytest.mark.parametrize(
    "test, platform",
    [
        ("torch.version.hip", ROCM),
        ("torch.version.hip is not None", ROCM),
        ("torch.version.hip is None", CUDA),
        ("IS_ROCM and not FAST", ROCM),
        ("not SKIP_CUDA_BUILD and not IS_ROCM", CUDA),
        ("torch.version.cuda is not None", CUDA),
        ("SKIP_ROCM_BUILD", None),  # named for ROCm, but not a ROCm test
        ("torch.cuda.is_available()", None),  # True on ROCm too
        ("IS_ROCM or FAST", None),
    ],
)
def test_setup_py_tests(tmp_path, test, platform):
    root = _project(
        tmp_path,
        {
            "setup.py": f"import torch\nIS_ROCM = torch.version.hip is not None\nif {test}:\n"
            "    srcs = ['kernels/k.cu']\nelse:\n    srcs = []\n"
            "hip = ['x.cu'] if IS_ROCM else ['y.cu']\n",
            "kernels/k.cu": KERNEL,
            "x.cu": KERNEL,
            "y.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "kernels/k.cu")) == platform
    assert (
        file_platform(Workspace(), str(root / "x.cu")),
        file_platform(Workspace(), str(root / "y.cu")),
    ) == (ROCM, CUDA)


@pytest.mark.parametrize(
    "content",
    [
        b"if IS_HIP_EXTENSION:\n    s = ['k.cu'\n",  # syntax error
        b"\xff\xfe\x00 binary \x00",
        b"if IS_HIP_EXTENSION:\n    s = " + b"[" * 400 + b"'k.cu'" + b"]" * 400 + b"\n",  # deep nesting
        b"x = 1\n" + b"#" * (build_context.MAX_BUILD_FILE_BYTES + 10),  # too large
    ],
)
def test_a_hostile_setup_py_gives_no_fact(tmp_path, content):
    root = _project(tmp_path, {"k.cu": KERNEL})
    (root / "setup.py").write_bytes(content)
    assert file_platform(Workspace(), str(root / "k.cu")) is None
    assert _codes(root / "k.cu") == [(3, "ROC701")]


@pytest.mark.parametrize(
    "content",
    [
        "if(USE_ROCM\n add_subdirectory(a)\n",  # unterminated
        "#[[ if(USE_ROCM) add_subdirectory(a) endif() ]]\n",  # a bracket comment
        "if(USE_ROCM)\n" * 5000 + "add_subdirectory(a)\n",  # never closed
        'if(USE_ROCM)\n add_subdirectory("${X}/a")\nendif()\n',  # computed
    ],
)
def test_cmake_files_that_give_no_fact(tmp_path, content):
    root = _project(tmp_path, {"CMakeLists.txt": content, "a/k.cu": KERNEL})
    got = file_platform(Workspace(), str(root / "a/k.cu"))
    assert got in (None, ROCM)
    if "#[[" in content or "${X}" in content:
        assert got is None


def test_nothing_above_the_repository_root_is_read(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("if(USE_ROCM)\n add_subdirectory(repo)\nendif()\n")
    root = _project(tmp_path / "repo", {"k.cu": KERNEL})
    assert file_platform(Workspace(), str(root / "k.cu")) is None


def test_build_files_are_read_once_and_noted(tmp_path, monkeypatch):
    root = _project(
        tmp_path, {"CMakeLists.txt": CMAKE_SPLIT, "csrc/rocm/a.cu": KERNEL, "csrc/rocm/b.cu": KERNEL}
    )
    reads = []
    workspace = Workspace()
    real = workspace.read_bounded

    def spy(path, limit, note=True):
        reads.append(path)
        return real(path, limit, note)

    monkeypatch.setattr(workspace, "read_bounded", spy)
    for name in ("a.cu", "b.cu"):
        with workspace.recording_reads() as noted:
            assert file_platform(workspace, str(root / "csrc/rocm" / name)) == ROCM
        assert str(root / "CMakeLists.txt") in noted
        assert str(root / "csrc" / "rocm" / "CMakeLists.txt") in noted  # absent: its creation matters too
    assert reads.count(str(root / "CMakeLists.txt")) == 1
    assert len(reads) == len(set(reads))
    assert all(os.path.commonpath([str(root), p]) == str(root) for p in reads)


def test_a_directory_whose_sources_another_build_file_names_gets_no_fact(tmp_path):
    """ggml: ggml-cuda/CMakeLists.txt requires CUDA, but ggml-hip/CMakeLists.txt builds
    ../ggml-cuda/*.cu for HIP.  The CUDA directory is compiled by the ROCm build after all."""
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": 'option(GGML_HIP "HIP" OFF)\nif(GGML_HIP)\nendif()\n',
            "src/ggml-cuda/CMakeLists.txt": "enable_language(CUDA)\nadd_library(c k.cu)\n",
            "src/ggml-cuda/k.cu": KERNEL,
            "src/ggml-hip/CMakeLists.txt": 'file(GLOB SRCS "../ggml-cuda/*.cu")\nadd_library(h ${SRCS})\n',
            "src/other/CMakeLists.txt": "enable_language(CUDA)\n",
            "src/other/k.cu": KERNEL,
        },
    )
    assert file_platform(Workspace(), str(root / "src/ggml-cuda/k.cu")) is None
    assert file_platform(Workspace(), str(root / "src/other/k.cu")) == CUDA
    (root / "src/ggml-hip/CMakeLists.txt").write_text("add_library(h hip.cu)\n")
    assert file_platform(Workspace(), str(root / "src/ggml-cuda/k.cu")) == CUDA


def test_fixes_in_a_rocm_only_directory_keep_the_nvidia_program(tmp_path):
    """The fix check compares the NVIDIA view of the file itself: in a file only the build makes
    ROCm-only, a fix gates its edit (#ifdef USE_ROCM ... #else original) as anywhere else."""
    from conftest import run_cli

    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE_SPLIT,
            "csrc/rocm/k.cu": "__global__ void k(float* x) {\n"
            "  unsigned m = __ballot_sync(0xffffffffffffffffull, x[threadIdx.x] > 0);\n"
            "  x[0] = __popc(m);\n}\n",
        },
    )
    proc = run_cli("check", "--no-cache", "--unsafe-fixes", "--diff", root / "csrc/rocm/k.cu")
    assert "+#ifdef USE_ROCM\n+  unsigned long long m" in proc.stdout, proc.stdout + proc.stderr
    assert "not fixed" not in proc.stderr


def test_a_hazard_per_directory_platform(tmp_path):
    """An explicit shuffle width of 32 next to the hardware width: ROC603 where both platforms
    build the file, silent where only ROCm does (a deliberate 32-lane logical warp there, as
    under #ifdef USE_ROCM) and where ROCm never does."""
    body = "__global__ void k(float* x) {\n  x[0] = __shfl_xor(x[0], 1, 32);\n  x[1] = warpSize;\n}\n"
    root = _project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE_SPLIT,
            "csrc/rocm/k.cu": body,
            "csrc/cuda/k.cu": body,
            "csrc/common/k.cu": body,
        },
    )
    assert _codes(root / "csrc/common/k.cu") == [(2, "ROC603")]
    assert _codes(root / "csrc/rocm/k.cu") == []
    assert _codes(root / "csrc/cuda/k.cu") == []


SETUP_JOINED = """import os
import torch
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME

this_dir = os.path.dirname(os.path.abspath(__file__))
kernels = os.path.join(this_dir, "csrc", "kernels")


def get_extensions():
    use_cuda = torch.version.cuda and CUDA_HOME is not None
    use_rocm = torch.version.hip and ROCM_HOME is not None
    sources = [os.path.join(kernels, "common.cu")]
    if use_cuda:
        sources += [os.path.join(kernels, "nv", "mma.cu")]
    elif use_rocm:
        sources += [os.path.join(kernels, "amd", "mfma.cu")]
    return sources
"""


def test_setup_py_paths_joined_from_names_and_tests_through_names(tmp_path):
    """``os.path.join(this_dir, ...)`` with names bound once, and ``if use_cuda:`` where
    ``use_cuda = torch.version.cuda and CUDA_HOME is not None`` (torchao's setup.py shape)."""
    root = _project(tmp_path, {"setup.py": SETUP_JOINED})
    assert file_platform(Workspace(), str(root / "csrc/kernels/nv/mma.cu")) == CUDA
    assert file_platform(Workspace(), str(root / "csrc/kernels/amd/mfma.cu")) == ROCM
    assert file_platform(Workspace(), str(root / "csrc/kernels/common.cu")) is None


def test_setup_py_names_bound_twice_or_parent_paths_give_no_fact(tmp_path):
    text = SETUP_JOINED.replace(
        "    use_cuda = torch.version.cuda and CUDA_HOME is not None\n",
        "    use_cuda = torch.version.cuda and CUDA_HOME is not None\n    use_cuda = False\n",
    )
    text = text.replace(
        'os.path.join(kernels, "amd", "mfma.cu")', 'os.path.join(os.path.dirname(this_dir), "amd", "mfma.cu")'
    )
    root = _project(tmp_path, {"setup.py": text})
    assert file_platform(Workspace(), str(root / "csrc/kernels/nv/mma.cu")) is None
    assert file_platform(Workspace(), str(root / "amd/mfma.cu")) is None


def test_source_globs_as_one_regex_match_part_by_part():
    """file_platform matches a build file's source globs as one regex per glob: the same answer
    as the part-by-part match (``*``/``?`` within a part, ``**`` any number of parts)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from rocm_lint.build.context import _matches, _pattern_regex

    part = st.text(alphabet="ab.*?", min_size=0, max_size=4)

    @settings(max_examples=500, deadline=None)
    @given(
        st.lists(st.one_of(st.just("**"), part), max_size=5),
        st.lists(st.text(alphabet="ab.\n", min_size=0, max_size=4), min_size=1, max_size=5),
    )
    def same(pattern, parts):
        regex = _pattern_regex(tuple(pattern))
        assert regex is not None
        assert bool(regex.match("/".join(parts) + "/")) == _matches(tuple(parts), tuple(pattern))

    same()
    assert _pattern_regex(("src", "[ab].cu")) is None  # matched part by part


SETUP_SOURCE_LISTS = """\
import glob
import os
import torch
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CUDAExtension

def get_extensions():
    use_cuda = torch.version.cuda and CUDA_HOME is not None
    use_rocm = torch.version.hip and ROCM_HOME is not None
    extensions_dir = os.path.join("pkg", "csrc")
    sources = list(glob.glob(os.path.join(extensions_dir, "**/*.cpp"), recursive=True))
    cuda_dir = os.path.join(extensions_dir, "cuda")
    cuda_sources = list(glob.glob(os.path.join(cuda_dir, "**/*.cu"), recursive=True))
    hip_sources = glob.glob(os.path.join(extensions_dir, "hip", "*.hip"))
    excluded = glob.glob(os.path.join(extensions_dir, "shared", "*.cu"))
    if use_cuda:
        sources += cuda_sources
    if use_rocm:
        sources.extend(hip_sources)
    sources = [s for s in sources if s not in excluded]
    return [CUDAExtension("pkg._C", sources)]
"""


SOURCE_TREE = {
    name: KERNEL
    for name in ("pkg/csrc/cuda/mx/k.cu", "pkg/csrc/hip/k.hip", "pkg/csrc/shared/s.cu", "pkg/csrc/ops.cpp")
}


def test_setup_py_source_lists_count_where_they_are_added(tmp_path):
    """A source list bound unconditionally and added only in one platform's branch is that
    platform's (torchao: ``if use_cuda: sources += cuda_sources``); a list used only to filter
    gives no fact.  The globs are evaluated against the tree: the sources are there."""
    root = _project(tmp_path, {"setup.py": SETUP_SOURCE_LISTS, **SOURCE_TREE})
    assert file_platform(Workspace(), str(root / "pkg/csrc/cuda/mx/k.cu")) == CUDA
    assert file_platform(Workspace(), str(root / "pkg/csrc/hip/k.hip")) == ROCM
    assert file_platform(Workspace(), str(root / "pkg/csrc/shared/s.cu")) is None
    assert file_platform(Workspace(), str(root / "pkg/csrc/ops.cpp")) is None


def test_setup_py_source_list_added_for_every_platform_gives_no_fact(tmp_path):
    text = SETUP_SOURCE_LISTS.replace(
        "    if use_cuda:\n        sources += cuda_sources\n", "    sources = sources + cuda_sources\n"
    )
    root = _project(tmp_path, {"setup.py": text, **SOURCE_TREE})
    assert file_platform(Workspace(), str(root / "pkg/csrc/cuda/mx/k.cu")) is None
