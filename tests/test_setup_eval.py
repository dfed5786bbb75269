"""The build-script interpreter (``rocm_lint.build.setup_eval``): sources and macros per platform
scenario, through helper functions, predicates bound blocks above, globs, nested ``elif`` chains;
an undecided condition gives "maybe", never a fact.  And ``build.importers``: a module that builds
an extension runs only where its importers import it."""

import ast
import textwrap

from rocm_lint.build.context import CUDA, ROCM, file_platform, macro_facts
from rocm_lint.build.importers import EVERYWHERE, NVIDIA_ONLY, ROCM_ONLY, import_gate
from rocm_lint.build.setup_eval import evaluate
from rocm_lint.workspace import Workspace
from test_build_context import _codes
from test_cpp_project import _project

NV, AMD, CPU = 0, 1, 2
PTX = '__global__ void k(unsigned* o) {\n  asm volatile("mov.u32 %0, %%laneid;" : "=r"(o[0]));\n}\n'


def _eval(text, path=None):
    result = evaluate(ast.parse(textwrap.dedent(text)), path)
    assert result is not None
    return result


def _macro(result, name):
    found = [where for (n, _), where in result.macros.items() if n == name]
    assert len(found) == 1, (name, result.macros)
    return found[0]


FLAG_HELPERS = """
from setuptools import setup
from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension

def _arch_flags():
    if IS_HIP_EXTENSION:
        return ["-O3", "-DQK_ON_AMD=1"]
    return ["-O3", "--use_fast_math", "-DQK_NV_MMA"]

def nvcc_flags(extra):
    flags = _arch_flags()
    flags += extra
    return flags

def make(name):
    return CUDAExtension(name, ["k.cu"], extra_compile_args={"cxx": ["-DQK_COMMON"], "nvcc": nvcc_flags(["-lineinfo"])})

setup(name="qk", ext_modules=[make("qk._C")])
"""


def test_flags_from_a_helper_of_a_helper():
    r = _eval(FLAG_HELPERS)
    assert _macro(r, "QK_ON_AMD") == (False, True, False)
    assert _macro(r, "QK_NV_MMA") == (True, False, True)
    assert _macro(r, "QK_COMMON") == (True, True, True)
    assert r.sources[("k.cu",)] == (True, True, True)


PREDICATE_ABOVE = """
import os
import sys
import torch
from setuptools import setup
from torch.utils.cpp_extension import ROCM_HOME, CUDAExtension

is_rocm = torch.version.hip is not None and ROCM_HOME is not None
define_macros = []
sources = ["csrc/api.cpp"]

if sys.platform == "win32":
    define_macros.append(("WIN", None))

for name in ["a", "b"]:
    sources.append(os.path.join("csrc", name + ".cu"))

if os.environ.get("VERBOSE"):
    print("building")

if is_rocm:
    define_macros += [("X_WITH_HIP", None)]
    sources += ["csrc/amd/mfma.hip"]
else:
    sources += ["csrc/nv/wgmma.cu"]

setup(ext_modules=[CUDAExtension("x", sources, define_macros=define_macros)])
"""


def test_a_predicate_bound_three_blocks_above():
    r = _eval(PREDICATE_ABOVE)
    assert _macro(r, "X_WITH_HIP") == (False, True, False)
    assert _macro(r, "WIN") == (None, None, None)  # undecided: maybe, everywhere
    assert r.sources[("csrc", "amd", "mfma.hip")] == (False, True, False)
    assert r.sources[("csrc", "nv", "wgmma.cu")] == (True, False, True)
    assert r.sources[("csrc", "a.cu")] == r.sources[("csrc", "b.cu")] == (True, True, True)


def test_the_predicates_macro_gates_the_kernels(tmp_path):
    kernel = (
        "__global__ void k(unsigned* o) {\n#ifndef X_WITH_HIP\n" + PTX.split("{\n", 1)[1].rsplit("}", 1)[0]
    )
    kernel += "#endif\n}\n"
    root = _project(tmp_path, {"setup.py": PREDICATE_ABOVE, "csrc/a.cu": kernel, "csrc/nv/wgmma.cu": PTX})
    [fact] = macro_facts(Workspace(), str(root / "csrc/a.cu"))
    assert fact[0] == "X_WITH_HIP" and fact[1] == (False, None) and fact[2][0] is True
    assert _codes(root / "csrc/a.cu") == []
    assert file_platform(Workspace(), str(root / "csrc/nv/wgmma.cu")) == CUDA
    assert _codes(root / "csrc/nv/wgmma.cu") == []
    # the same macro for every platform: no fact, the PTX is reported
    plain = PREDICATE_ABOVE.replace("define_macros = []", "define_macros = [('X_WITH_HIP', None)]")
    root2 = _project(tmp_path / "b", {"setup.py": plain, "csrc/a.cu": kernel})
    assert macro_facts(Workspace(), str(root2 / "csrc/a.cu")) == ()
    assert [code for _, code in _codes(root2 / "csrc/a.cu")] == ["ROC701"]


GLOBS = """
import glob
import os
from pathlib import Path
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CUDAExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))

def get_extensions():
    root = os.path.join(HERE, "src", "ops")
    sources = glob.glob(os.path.join(root, "*.cpp"))
    gpu = []
    if torch.cuda.is_available() and CUDA_HOME is not None:
        gpu = glob.glob(os.path.join(root, "cuda", "**", "*.cu"), recursive=True)
        gpu = [s for s in gpu if "legacy" not in s]
    elif torch.version.hip and ROCM_HOME:
        gpu = [str(p) for p in (Path(HERE) / "src" / "ops" / "hip").glob("*.hip")]
    if not gpu:
        return [CppExtension("ops._C", sources)]
    return [CUDAExtension("ops._C", sources + gpu)]

setup(ext_modules=get_extensions())
"""
GLOB_TREE = {
    "src/ops/api.cpp": "",
    "src/ops/cuda/gemm.cu": PTX,
    "src/ops/cuda/deep/er/scan.cu": PTX,
    "src/ops/cuda/legacy/old.cu": PTX,
    "src/ops/hip/gemm.hip": PTX,
}


def test_globs_are_evaluated_against_the_tree(tmp_path):
    root = _project(tmp_path, {"setup.py": GLOBS, **GLOB_TREE})
    r = _eval(GLOBS, str(root / "setup.py"))
    assert r.sources[("src", "ops", "cuda", "gemm.cu")] == (True, False, False)
    assert r.sources[("src", "ops", "cuda", "deep", "er", "scan.cu")] == (True, False, False)
    assert ("src", "ops", "cuda", "legacy", "old.cu") not in r.sources or r.sources[
        ("src", "ops", "cuda", "legacy", "old.cu")
    ] == (False, False, False)
    assert r.sources[("src", "ops", "hip", "gemm.hip")] == (False, True, False)
    assert r.sources[("src", "ops", "api.cpp")] == (True, True, True)
    ws = Workspace()
    assert file_platform(ws, str(root / "src/ops/cuda/deep/er/scan.cu")) == CUDA
    assert file_platform(ws, str(root / "src/ops/hip/gemm.hip")) == ROCM
    assert file_platform(ws, str(root / "src/ops/cuda/legacy/old.cu")) is None  # compiled nowhere


ELIF_CHAINS = """
import os
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, IS_HIP_EXTENSION, CUDAExtension

def backend():
    if os.environ.get("FORCE_CPU"):
        return "cpu"
    if torch.version.cuda:
        if CUDA_HOME is not None:
            if torch.cuda.is_available():
                return "cuda"
            return "cuda-nogpu"
        return "cpu"
    elif torch.version.hip:
        if not ROCM_HOME:
            raise RuntimeError("ROCm without ROCM_HOME")
        return "rocm"
    return "cpu"

def sources_for(kind):
    if kind == "cuda" or kind == "cuda-nogpu":
        return ["k/nv.cu"]
    elif kind == "rocm":
        return ["k/amd.hip"]
    else:
        return ["k/cpu.cpp"]

macros = []
kind = backend()
if kind.startswith("cuda"):
    macros.append(("K_NV", None))
elif IS_HIP_EXTENSION:
    macros.append(("K_AMD", "2"))
setup(ext_modules=[CUDAExtension("k", ["k/api.cpp"] + sources_for(kind), define_macros=macros)])
"""


def test_nested_elif_chains_through_a_returned_name():
    r = _eval(ELIF_CHAINS)
    # FORCE_CPU is undecided: the GPU sources are maybe on their platform, never on the other
    assert r.sources[("k", "nv.cu")] == (None, False, False)
    assert r.sources[("k", "amd.hip")] == (False, None, False)
    assert r.sources[("k", "cpu.cpp")] == (None, None, True)
    assert r.sources[("k", "api.cpp")] == (True, True, True)
    assert r.macros[("K_NV", "1")] == (None, False, False)
    assert r.macros[("K_AMD", "2")] == (False, True, False)  # kind is never "cuda..." on ROCm


def test_undecidable_conditions_give_no_fact(tmp_path):
    text = """
import os
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

use_hip = os.environ.get("USE_HIP") == "1"      # the user's switch, not the platform
flags = ["-DK_HIP"] if use_hip else []
sources = ["k/common.cu"]
if use_hip:
    sources.append("k/amd.cu")
if IS_HIP_EXTENSION or use_hip:
    sources.append("k/either.cu")
setup(ext_modules=[CUDAExtension("k", sources, extra_compile_args={"nvcc": flags})])
"""
    root = _project(tmp_path, {"setup.py": text, "k/amd.cu": PTX, "k/either.cu": PTX, "k/common.cu": PTX})
    r = _eval(text, str(root / "setup.py"))
    assert r.sources[("k", "amd.cu")] == (None, None, None)
    assert r.sources[("k", "either.cu")] == (None, True, None)
    assert r.macros[("K_HIP", "1")] == (None, None, None)
    for name in ("amd.cu", "either.cu", "common.cu"):
        assert file_platform(Workspace(), str(root / "k" / name)) is None, name
    assert macro_facts(Workspace(), str(root / "k/amd.cu")) == ()


def test_unknown_values_and_recursion_give_maybe_never_a_wrong_never():
    text = """
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
from .helpers import more_sources

def walk(n):
    return walk(n - 1) + ["k/deep.cu"] if n else []

srcs = ["k/a.cu"] + more_sources()
if torch.version.hip:
    srcs += walk(3)
else:
    srcs += ["k/nv.cu"]
setup(ext_modules=[CUDAExtension("k", srcs)])
"""
    r = _eval(text)
    # the list is open (an imported helper): what the script writes counts as maybe
    assert r.sources[("k", "deep.cu")][AMD] is not False
    assert r.sources[("k", "nv.cu")] == (True, False, True)
    assert r.sources[("k", "a.cu")][NV] is True


def test_a_list_added_on_both_sides_and_an_unknown_flag_list():
    r = _eval(
        """
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
common = ["k/both.cu"]
if torch.version.hip:
    srcs = common + ["k/amd.cu"]
else:
    srcs = list(common)
setup(ext_modules=[CUDAExtension("k", srcs, extra_compile_args=get_flags())])
"""
    )
    assert r.sources[("k", "both.cu")] == (True, True, True)
    assert r.sources[("k", "amd.cu")] == (False, True, False)


def test_extensions_built_but_not_passed_to_setup_are_not_compiled():
    r = _eval(
        """
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
nv = CUDAExtension("nv", ["k/nv.cu"])
amd = CUDAExtension("amd", ["k/amd.hip"])
setup(ext_modules=[amd] if torch.version.hip else [nv])
"""
    )
    assert r.sources[("k", "nv.cu")] == (True, False, True)
    assert r.sources[("k", "amd.hip")] == (False, True, False)


def test_a_helper_that_extends_its_argument_in_place():
    r = _eval(
        """
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
def add_platform(args):
    if IS_HIP_EXTENSION:
        args["nvcc"].append("-DK_ROCM")
    else:
        args["nvcc"].extend(["-DK_CUDA=1"])
extra = {"cxx": [], "nvcc": ["-O3"]}
add_platform(extra)
setup(ext_modules=[CUDAExtension("k", ["k.cu"], extra_compile_args=extra)])
"""
    )
    assert r.macros[("K_ROCM", "1")] == (False, True, False)
    assert r.macros[("K_CUDA", "1")] == (True, False, True)


def test_load_at_run_time_in_an_uncalled_function():
    r = _eval(
        """
import os
import torch
from torch.utils import cpp_extension

_dir = os.path.dirname(os.path.abspath(__file__))

def _build():
    flags = ["-O3"]
    if torch.version.hip is not None:
        flags.append("-DRT_HIP")
        src = "rt_hip.cpp"
    else:
        src = "rt_cuda.cu"
    return cpp_extension.load("rt", [os.path.join(_dir, "csrc", src)], extra_cuda_cflags=flags)
""",
        "/proj/pkg/ops.py",
    )
    assert r.sources[("csrc", "rt_cuda.cu")] == (None, False, None)
    assert r.sources[("csrc", "rt_hip.cpp")] == (False, None, False)
    assert r.macros[("RT_HIP", "1")] == (False, None, False)


def test_loops_are_bounded_and_a_script_too_long_gives_no_fact(monkeypatch):
    from rocm_lint.build import setup_eval

    text = "import torch\nx = 0\nwhile True:\n    x = x + 1\nfor i in range(10):\n    pass\n"
    assert evaluate(ast.parse(text)) is not None  # loops of unknown length: run twice, as maybe
    monkeypatch.setattr(setup_eval, "MAX_STEPS", 500)
    long = "import torch\nsrcs = ['k/a.cu'] if torch.version.hip else []\n" + "srcs = srcs + []\n" * 400
    assert evaluate(ast.parse(long)) is None


# -- a module imported only under a platform branch -------------------------------------------------
def _ext_package(cuda_import="if torch.version.cuda:\n    from .cuda import *\n"):
    return {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "pkg/__init__.py": "",
        "pkg/ext/__init__.py": "import torch\n\n"
        + cuda_import
        + "if torch.version.hip is not None:\n    from .hip import *\n",
        "pkg/ext/cuda/__init__.py": (
            "import glob, os\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "_here = os.path.dirname(os.path.abspath(__file__))\n"
            "ext = CUDAExtension('pkg._cu', sorted(glob.glob(os.path.join(_here, '*.cu'))))\n"
        ),
        "pkg/ext/cuda/gemm.cu": PTX,
        "pkg/ext/hip/__init__.py": (
            "import os\nfrom torch.utils.cpp_extension import CppExtension\n"
            "_here = os.path.dirname(__file__)\n"
            "ext = CppExtension('pkg._hip', [os.path.join(_here, n) for n in ['gemm.hip']])\n"
        ),
        "pkg/ext/hip/gemm.hip": PTX,
    }


def test_an_extension_declared_in_a_module_imported_only_on_nvidia(tmp_path):
    root = _project(tmp_path, _ext_package())
    ws = Workspace()
    gate, importers = import_gate(ws, str(root / "pkg/ext/cuda/__init__.py"), str(root))
    assert gate == NVIDIA_ONLY and importers == (str(root / "pkg/ext/__init__.py"),)
    assert import_gate(ws, str(root / "pkg/ext/hip/__init__.py"), str(root))[0] == ROCM_ONLY
    assert file_platform(ws, str(root / "pkg/ext/cuda/gemm.cu")) == CUDA
    assert file_platform(ws, str(root / "pkg/ext/hip/gemm.hip")) == ROCM
    assert _codes(root / "pkg/ext/cuda/gemm.cu") == []


def test_an_elif_chain_and_a_gate_through_the_importers_importer(tmp_path):
    files = _ext_package()
    files["pkg/ext/__init__.py"] = "from . import loader\n"
    files["pkg/ext/loader.py"] = (
        "import torch\nIS_CUDA = torch.version.cuda is not None\n\ndef _pick():\n    pass\n\n"
        "if not IS_CUDA:\n    if torch.version.hip:\n        from .hip import ext\n"
        "else:\n    from pkg.ext.cuda import ext\n"
    )
    root = _project(tmp_path, files)
    ws = Workspace()
    assert import_gate(ws, str(root / "pkg/ext/cuda/__init__.py"), str(root))[0] == NVIDIA_ONLY
    assert file_platform(ws, str(root / "pkg/ext/cuda/gemm.cu")) == CUDA
    assert file_platform(ws, str(root / "pkg/ext/hip/gemm.hip")) == ROCM


def test_a_module_also_imported_unconditionally_is_no_fact(tmp_path):
    files = _ext_package()
    files["tests/test_ext.py"] = "import pkg.ext.cuda\n"
    root = _project(tmp_path, files)
    ws = Workspace()
    assert import_gate(ws, str(root / "pkg/ext/cuda/__init__.py"), str(root))[0] == EVERYWHERE
    assert file_platform(ws, str(root / "pkg/ext/cuda/gemm.cu")) is None
    assert [code for _, code in _codes(root / "pkg/ext/cuda/gemm.cu")] == ["ROC701"]
    # an import inside try/except ImportError, or under an undecided test: no gate either
    files = _ext_package("try:\n    from .cuda import *\nexcept ImportError:\n    pass\n")
    root2 = _project(tmp_path / "b", files)
    assert import_gate(Workspace(), str(root2 / "pkg/ext/cuda/__init__.py"), str(root2))[0] == EVERYWHERE
    files = _ext_package("if torch.cuda.is_available():\n    from .cuda import *\n")
    root3 = _project(tmp_path / "c", files)
    assert file_platform(Workspace(), str(root3 / "pkg/ext/cuda/gemm.cu")) is None


def test_a_builder_nobody_imports_is_no_fact(tmp_path):
    files = _ext_package()
    files["pkg/ext/__init__.py"] = ""
    root = _project(tmp_path, files)
    assert import_gate(Workspace(), str(root / "pkg/ext/cuda/__init__.py"), str(root))[0] == EVERYWHERE
    assert file_platform(Workspace(), str(root / "pkg/ext/cuda/gemm.cu")) is None


def test_a_scenario_that_stops_before_building_defines_nothing_we_know():
    """``raise`` where nvcc is missing (CUDA_HOME is None on ROCm): the ROCm build never compiles
    the sources, and says nothing of the macros a compiler that never runs would see."""
    r = _eval(
        """
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

def require_nvcc():
    if CUDA_HOME is None:
        raise RuntimeError("nvcc not found")

require_nvcc()
setup(ext_modules=[CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": ["-DK_BF16"]})])
"""
    )
    assert r.sources[("k.cu",)] == (True, False, False)
    assert r.macros[("K_BF16", "1")] == (True, None, None)


def test_dict_getattr_slices_and_a_helper_we_do_not_follow():
    r = _eval(
        """
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
from build_helpers import add_more

srcs = ["k/a.cu"]
if torch.version.hip is None:
    srcs.append("k/nv.cu")
add_more(srcs)                      # may add anything: what it adds is maybe
args = dict(cxx=["-DX_CXX"], nvcc=[])
if getattr(torch.version, "hip", None):
    args["nvcc"].append("-DX_HIP")
setup(ext_modules=[CUDAExtension("k", srcs[:], extra_compile_args=args,
                                 define_macros=sorted([("X_M", None)], key=lambda m: m[0]))])
"""
    )
    assert r.sources[("k", "nv.cu")] == (True, False, True)  # written only where ROCm is not
    assert r.sources[("k", "a.cu")] == (True, True, True)
    assert r.macros[("X_M", "1")] == (True, True, True)
    assert r.macros[("X_HIP", "1")] == (False, True, False)
    assert r.macros[("X_CXX", "1")] == (True, True, True)
