"""Gate analysis on its own: many real-world spellings of "are we on ROCm?".

Each case is a module where ``HAZARD`` stands for an ungated TF32 switch; the
test asserts whether the analyser reports it.  GATED cases are silent because the
code runs only on NVIDIA, or only on ROCm (code written for ROCm on purpose is
"explicitly handled", docs/architecture.md).  Idioms marked with a project
name are the shapes those projects use.
"""

import textwrap

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_python_source

HAZARD = "torch.backends.cuda.matmul.allow_tf32 = True"

GATED = {
    "env FORCE_CUDA (xformers)": """
        import os
        if torch.version.cuda is not None or os.getenv("FORCE_CUDA", "0") == "1":
            HAZARD
    """,
    "env CUDA_VERSION or torch.version.cuda (AutoAWQ)": """
        import os
        CUDA_VERSION = os.getenv("CUDA_VERSION", None) or torch.version.cuda
        if CUDA_VERSION:
            HAZARD
    """,
    "os.environ TORCH_CUDA_ARCH_LIST set": """
        import os
        if os.environ.get("TORCH_CUDA_ARCH_LIST", "") != "":
            HAZARD
    """,
    "CUDA_HOME early exit (SageAttention)": """
        from torch.utils.cpp_extension import CUDA_HOME
        if CUDA_HOME is None:
            raise RuntimeError("CUDA must be available")
        HAZARD
    """,
    "backend string 'hip'": """
        def setup(backend):
            if backend == "hip":
                return
            HAZARD
    """,
    "platform name returned by a function (unsloth)": """
        def get_device_type():
            if torch.version.hip:
                return "hip"
            return "cuda"
        DEVICE_TYPE = get_device_type()
        if DEVICE_TYPE == "cuda":
            HAZARD
    """,
    "platform name membership (unsloth)": """
        def get_device_type():
            if torch.version.hip:
                return "hip"
            return "cuda"
        DEVICE_TYPE = get_device_type()
        def setup():
            if DEVICE_TYPE in ("xpu", "hip"):
                return
            HAZARD
    """,
    "boolean function named for ROCm (TransformerEngine build_tools)": """
        import os
        def rocm_build() -> bool:
            if os.getenv("NVTE_USE_ROCM", "0") == "1":
                return True
            return os.path.exists("/opt/rocm/bin/hipcc")
        if rocm_build():
            pass
        else:
            HAZARD
    """,
    "private helper called only from a CUDA branch": """
        def _enable():
            HAZARD
        if torch.version.cuda is not None:
            _enable()
    """,
    "skipIf-on-cuda (ROCm-only: explicitly handled)": """
        import unittest
        @unittest.skipIf(torch.version.cuda is not None, "ROCm only")
        def test_x():
            HAZARD
    """,
    "return-in-rocm-false-branch (ROCm-only: explicitly handled)": """
        def setup():
            if not is_rocm:
                return
            HAZARD
    """,
    "cuda-else-branch (ROCm-only: explicitly handled)": """
        if torch.version.cuda:
            pass
        else:
            HAZARD
    """,
    "rocm-branch (ROCm-only: explicitly handled)": """
        if torch.version.hip is not None:
            HAZARD
    """,
    "if-not-hip": """
        if not torch.version.hip:
            HAZARD
    """,
    "if-hip-is-none": """
        if torch.version.hip is None:
            HAZARD
    """,
    "if-hip-eq-none": """
        if torch.version.hip == None:
            HAZARD
    """,
    "else-of-hip-is-not-none": """
        if torch.version.hip is not None:
            pass
        else:
            HAZARD
    """,
    "if-cuda": """
        if torch.version.cuda:
            HAZARD
    """,
    "if-cuda-is-not-none": """
        if torch.version.cuda is not None:
            HAZARD
    """,
    "getattr-hip": """
        if getattr(torch.version, "hip", None) is None:
            HAZARD
    """,
    "getattr-cuda": """
        if getattr(torch.version, "cuda", None):
            HAZARD
    """,
    "hasattr-and-hip": """
        if hasattr(torch.version, "hip") and torch.version.hip:
            pass
        else:
            HAZARD
    """,
    "hasattr-false (a torch that predates ROCm)": """
        if hasattr(torch.version, "hip"):
            pass
        else:
            HAZARD
    """,
    "bool-of-hip": """
        if not bool(torch.version.hip):
            HAZARD
    """,
    "version-string": """
        if "rocm" not in torch.__version__:
            HAZARD
    """,
    "cuda-version-compare (transformers)": """
        if torch.version.cuda and torch.version.cuda >= "11.0":
            HAZARD
    """,
    "bound-name": """
        is_rocm = torch.version.hip is not None
        if not is_rocm:
            HAZARD
    """,
    "bound-name-after-use": """
        def setup():
            if not _IS_AMD:
                HAZARD
        _IS_AMD = bool(torch.version.hip)
    """,
    "bound-name-chain": """
        IS_ROCM_BUILD = torch.version.hip is not None
        USE_TF32 = not IS_ROCM_BUILD
        if USE_TF32:
            HAZARD
    """,
    "annotated-binding": """
        on_amd: bool = torch.version.hip is not None
        if not on_amd:
            HAZARD
    """,
    "alias-import": """
        import torch as th
        if th.version.cuda is not None:
            HAZARD
    """,
    "from-torch-import-version": """
        from torch import version
        if version.hip is None:
            HAZARD
    """,
    "vllm-current-platform": """
        from vllm.platforms import current_platform
        if not current_platform.is_rocm():
            HAZARD
    """,
    "vllm-is-cuda": """
        from vllm.platforms import current_platform
        if current_platform.is_cuda():
            HAZARD
    """,
    "deepspeed-is-rocm-pytorch": """
        if not OpBuilder.is_rocm_pytorch():
            HAZARD
    """,
    "cpp-extension-IS_HIP_EXTENSION": """
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        if not IS_HIP_EXTENSION:
            HAZARD
    """,
    "bitsandbytes-HIP_ENVIRONMENT": """
        from bitsandbytes.cextension import HIP_ENVIRONMENT
        if not HIP_ENVIRONMENT:
            HAZARD
    """,
    "torch-testing-TEST_WITH_ROCM": """
        from torch.testing._internal.common_utils import TEST_WITH_ROCM
        if not TEST_WITH_ROCM:
            HAZARD
    """,
    "helper-function": """
        def is_hip() -> bool:
            \"\"\"True on ROCm.\"\"\"
            return torch.version.hip is not None
        def setup():
            if is_hip():
                return
            HAZARD
    """,
    "method-helper": """
        class Runner:
            def _on_rocm(self):
                return torch.version.hip is not None
            def setup(self):
                if not self._on_rocm():
                    HAZARD
    """,
    "instance-attribute": """
        class Runner:
            def __init__(self):
                self.use_rocm = torch.version.hip is not None
            def setup(self):
                if not self.use_rocm:
                    HAZARD
    """,
    "elif-chain": """
        if torch.version.hip:
            pass
        elif torch.cuda.is_available():
            HAZARD
    """,
    "nested-gate": """
        if torch.cuda.is_available():
            if not is_rocm:
                HAZARD
    """,
    "and-with-other-test": """
        if torch.cuda.is_available() and not is_rocm:
            HAZARD
    """,
    "or-early-return": """
        def setup(args):
            if args.cpu or is_rocm:
                return
            HAZARD
    """,
    "early-raise": """
        def setup():
            if torch.version.hip is not None:
                raise RuntimeError("NVIDIA only")
            HAZARD
    """,
    "early-continue": """
        for dev in range(4):
            if is_rocm:
                continue
            HAZARD
    """,
    "early-exit-sys-exit": """
        import sys
        if is_rocm:
            sys.exit("unsupported")
        HAZARD
    """,
    "else-early-return": """
        def setup():
            if torch.version.cuda:
                pass
            else:
                return
            HAZARD
    """,
    "module-level-raise": """
        if torch.version.hip:
            raise ImportError("this module is NVIDIA-only")
        HAZARD
    """,
    "assert": """
        assert not is_rocm
        HAZARD
    """,
    "pytest-skip": """
        import pytest
        def test_tf32():
            if torch.version.hip:
                pytest.skip("NVIDIA only")
            HAZARD
    """,
    "skipIfRocm": """
        from torch.testing._internal.common_utils import skipIfRocm
        @skipIfRocm
        def test_tf32():
            HAZARD
    """,
    "unittest-skipIf": """
        import unittest
        class T(unittest.TestCase):
            @unittest.skipIf(torch.version.hip is not None, "NVIDIA only")
            def test_tf32(self):
                HAZARD
    """,
    "pytest-mark-skipif": """
        import pytest
        @pytest.mark.skipif(torch.version.hip is not None, reason="NVIDIA only")
        def test_tf32():
            HAZARD
    """,
    "skipUnless-cuda": """
        import unittest
        @unittest.skipUnless(torch.version.cuda, "NVIDIA only")
        def test_tf32():
            HAZARD
    """,
    "unconditional-skip (never runs)": """
        import unittest
        class T(unittest.TestCase):
            @unittest.skip("flaky")
            def test_tf32(self):
                HAZARD
    """,
    "pytest-mark-skip": """
        import pytest
        @pytest.mark.skip(reason="later")
        def test_tf32():
            HAZARD
    """,
    "torchao-is_ROCM (any case)": """
        def is_ROCM():
            return torch.cuda.is_available() and torch.version.hip is not None
        if not is_ROCM():
            HAZARD
    """,
    "torchao-is_sm_at_least_90 (checks torch.version.cuda)": """
        from torchao.utils import is_sm_at_least_90
        if is_sm_at_least_90():
            HAZARD
    """,
    "pytestmark-module-skip": """
        import pytest
        from torchao.utils import is_sm_at_least_100
        pytestmark = [pytest.mark.skipif(not is_sm_at_least_100(), reason="SM100+")]
        def test_x():
            HAZARD
    """,
    "self-skipTest": """
        import unittest
        class T(unittest.TestCase):
            def test_tf32(self):
                if torch.version.hip:
                    self.skipTest("NVIDIA only")
                HAZARD
    """,
    "class-level-gate": """
        class Settings:
            if not is_rocm:
                HAZARD
    """,
    "with-block-inside-gate": """
        import contextlib
        if not is_rocm:
            with contextlib.suppress(Exception):
                HAZARD
    """,
    "try-inside-gate": """
        if torch.version.cuda is not None:
            try:
                HAZARD
            except AttributeError:
                pass
    """,
    "walrus": """
        if (hip := torch.version.hip) is None:
            HAZARD
    """,
    "double-negation": """
        if not not torch.version.cuda:
            HAZARD
    """,
    "compare-with-false": """
        if is_rocm == False:
            HAZARD
    """,
    # -- a project's own predicates in any shape (issue 25) --------------------------------
    "predicate binding a local (xDiT, sglang)": """
        def _is_hip():
            has_rocm = torch.version.hip is not None
            return has_rocm
        if not _is_hip():
            HAZARD
    """,
    "predicate over several statements": """
        def _vendor_probe():
            v = getattr(torch.version, "hip", None)
            found = v is not None
            return found
        def setup():
            if _vendor_probe():
                return
            HAZARD
    """,
    "predicate returning constants per branch (LMCache setup.py)": """
        def _gpu_probe():
            if torch.cuda.is_available() and torch.version.hip:
                return True
            else:
                return False
        if not _gpu_probe():
            HAZARD
    """,
    "predicate with an early exit that combines tests": """
        def _nvidia_gpu():
            if not torch.cuda.is_available() or _probe():
                return False
            return True
        def _probe():
            hip = torch.version.hip
            return hip is not None
        if _nvidia_gpu():
            HAZARD
    """,
    "predicate that falls off its end on NVIDIA": """
        def _probe():
            if torch.version.hip:
                return True
        def setup():
            if _probe():
                return
            HAZARD
    """,
    "predicate returning a ternary": """
        def _probe():
            return True if torch.version.hip else False
        if not _probe():
            HAZARD
    """,
    "predicate with try fallbacks, its true side (mamba)": """
        def _probe():
            try:
                import torch
                if hasattr(torch.version, "hip") and torch.version.hip is not None:
                    return True
            except ImportError:
                pass
            try:
                return triton.runtime.driver.active.get_current_target().backend == "hip"
            except Exception:
                return False
        if _probe():
            HAZARD
    """,
    "return bool(...)": """
        def _probe():
            return bool(torch.version.hip)
        if not _probe():
            HAZARD
    """,
    "conjunction with a ROCm test": """
        def _probe():
            return torch.version.hip is not None and torch.cuda.is_available()
        def setup():
            if _probe():
                return
            HAZARD
    """,
    "property on a class (self.x)": """
        class Runner:
            @property
            def on_vendor(self):
                hip = torch.version.hip
                return hip is not None
            def setup(self):
                if not self.on_vendor:
                    HAZARD
    """,
    "property on a class (an instance's attribute)": """
        class Platform:
            @property
            def amd(self) -> bool:
                return torch.version.hip is not None
        platform = Platform()
        if not platform.amd:
            HAZARD
    """,
    "functools.cache'd predicate": """
        import functools
        @functools.cache
        def _probe():
            v = torch.version.hip
            return v is not None
        if not _probe():
            HAZARD
    """,
    "lru_cache(maxsize=None)'d predicate": """
        from functools import lru_cache
        @lru_cache(maxsize=None)
        def _probe():
            v = torch.version.hip
            return v is not None
        if not _probe():
            HAZARD
    """,
    "cache'd staticmethod": """
        from functools import cache
        class Env:
            @staticmethod
            @cache
            def probe():
                v = torch.version.hip
                return v is not None
            def setup(self):
                if not Env.probe():
                    HAZARD
    """,
    "combined early exit (or) with a predicate": """
        def _is_hip():
            hip = torch.version.hip is not None
            return hip
        def setup():
            if not torch.cuda.is_available() or _is_hip():
                return False
            HAZARD
    """,
    "combined early raise": """
        def _probe():
            v = torch.version.hip
            return v is not None
        def setup(x):
            if _probe() or x:
                raise RuntimeError("NVIDIA only")
            HAZARD
    """,
    "combined early continue": """
        def _probe():
            v = torch.version.hip
            return v is not None
        for dev in range(4):
            if dev < 0 or _probe():
                continue
            HAZARD
    """,
    "combined early break": """
        def _probe():
            v = torch.version.hip
            return v is not None
        while True:
            if _probe() or not torch.cuda.is_available():
                break
            HAZARD
    """,
    "wrapper of a predicate, no platform word in it": """
        def _probe():
            hip = torch.version.hip
            return hip is not None
        def _fast_path_ok():
            ok = not _probe()
            return ok
        if _fast_path_ok():
            HAZARD
    """,
    "global cache of the probe": """
        _HIP = None
        def _probe():
            global _HIP
            if _HIP is None:
                _HIP = torch.version.hip is not None
            return _HIP
        if not _probe():
            HAZARD
    """,
    "noqa": """
        HAZARD  # noqa: ROC101
    """,
    "noqa-prefix": """
        HAZARD  # noqa: ROC1
    """,
    # -- module flags only a platform branch turns on (sglang torch_symm_mem) ---------------
    "flag set True only under an NVIDIA predicate, early exit on it": """
        _is_cuda = torch.version.cuda is not None
        available = False
        if _is_cuda:
            available = True
        def setup():
            if not available:
                return
            HAZARD
    """,
    "a flag named for ROCm keeps its name's meaning (flash-attention setup.py)": """
        import os
        BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
        if BUILD_TARGET == "auto":
            if IS_HIP_EXTENSION:
                IS_ROCM = True
            else:
                IS_ROCM = False
        else:
            if BUILD_TARGET == "cuda":
                IS_ROCM = False
            elif BUILD_TARGET == "rocm":
                IS_ROCM = True
        if not IS_ROCM:
            HAZARD
    """,
    "flag set in try under an NVIDIA test, reset in the handler": """
        try:
            import fancy_kernels
            FAST = False
            if torch.version.hip is None:
                FAST = True
        except ImportError:
            FAST = None
        if FAST:
            HAZARD
    """,
}

NOT_GATED = {
    "device.type == 'cuda' (True on ROCm)": """
        def setup(x):
            if x.device.type == "cuda":
                HAZARD
    """,
    "env CUDA_VISIBLE_DEVICES (HIP honours it)": """
        import os
        if os.getenv("CUDA_VISIBLE_DEVICES"):
            HAZARD
    """,
    "public helper called only from a CUDA branch (importers may call it)": """
        def enable():
            HAZARD
        if torch.version.cuda is not None:
            enable()
    """,
    "private helper also called ungated": """
        def _enable():
            HAZARD
        if torch.version.cuda is not None:
            _enable()
        _enable()
    """,
    "rocm-named function that returns a path": """
        def rocm_path():
            return "/opt/rocm"
        if rocm_path():
            pass
        else:
            HAZARD
    """,
    "hasattr-true-is-not-a-gate": """
        if hasattr(torch.version, "hip"):
            pass
        HAZARD
    """,
    "bare": """
        HAZARD
    """,
    "cuda-is-available (True on ROCm)": """
        if torch.cuda.is_available():
            HAZARD
    """,
    "tensor-is_cuda (True on ROCm)": """
        def f(x):
            if x.is_cuda:
                HAZARD
    """,
    "device-type-cuda (also ROCm)": """
        def f(device):
            if device.type == "cuda":
                HAZARD
    """,
    "or-does-not-gate-body": """
        if not is_rocm or torch.cuda.is_available():
            HAZARD
    """,
    "and-false-branch-unknown": """
        if torch.version.hip and torch.cuda.device_count() > 1:
            pass
        else:
            HAZARD
    """,
    "gate-ends-before": """
        if not is_rocm:
            pass
        HAZARD
    """,
    "early-return-without-exit": """
        def setup():
            if torch.version.hip:
                print("rocm")
            HAZARD
    """,
    "gate-in-other-function": """
        def a():
            if is_rocm:
                return
        def b():
            HAZARD
    """,
    "unrelated-is-available": """
        if not torch.backends.cudnn.is_available():
            HAZARD
    """,
    "noqa-other-code": """
        HAZARD  # noqa: ROC201
    """,
    # -- shapes that are no ROCm fact ------------------------------------------------------
    "disjunction with a ROCm test (true on NVIDIA too)": """
        def _probe():
            return torch.version.hip is not None or torch.cuda.is_available()
        if _probe():
            HAZARD
    """,
    "and in an exit test (after it, either may be false)": """
        def _probe():
            v = torch.version.hip
            return v is not None
        def setup(x):
            if _probe() and x:
                return
            HAZARD
    """,
    "local bound twice": """
        def _probe():
            v = torch.version.hip is not None
            v = v or torch.cuda.is_available()
            return v
        if _probe():
            HAZARD
    """,
    "local rebound by a walrus": """
        def _probe():
            v = torch.version.hip is not None
            if (v := torch.cuda.is_available()):
                pass
            return v
        if _probe():
            HAZARD
    """,
    "local bound in a loop": """
        def _probe(names):
            for name in names:
                v = getattr(torch.version, name, None)
            return v is not None
        if _probe():
            HAZARD
    """,
    "parameter named like a predicate": """
        def _probe(is_rocm=False):
            return is_rocm
        if not _probe():
            HAZARD
    """,
    "predicate-named function that is constant": """
        def is_hip():
            return False
        if not is_hip():
            HAZARD
    """,
    "try fallback's false side (mamba)": """
        def _probe():
            try:
                if torch.version.hip is not None:
                    return True
            except ImportError:
                pass
            try:
                return triton.runtime.driver.active.get_current_target().backend == "hip"
            except Exception:
                return False
        if not _probe():
            HAZARD
    """,
    "async predicate (a coroutine is always true)": """
        async def _probe():
            return torch.version.hip is not None
        if not _probe():
            HAZARD
    """,
    "generator (always true)": """
        def _probe():
            yield torch.version.hip is not None
        if not _probe():
            HAZARD
    """,
    "unknown decorator may replace the function": """
        @registry.register
        def _probe():
            v = torch.version.hip
            return v is not None
        if not _probe():
            HAZARD
    """,
    "property with a setter": """
        class Runner:
            @property
            def on_vendor(self):
                return torch.version.hip is not None
            @on_vendor.setter
            def on_vendor(self, value):
                self._v = value
            def setup(self):
                if not self.on_vendor:
                    HAZARD
    """,
    "same name defined twice, differently": """
        class A:
            def probe(self):
                return torch.version.hip is not None
        class B:
            def probe(self):
                return self.flag
        def setup(x):
            if not x.probe():
                HAZARD
    """,
    "predicate that falls off its end": """
        def _probe():
            if torch.version.cuda is not None:
                return False
        if not _probe():
            HAZARD
    """,
    "is_cuda_alike (vllm: ROCm too)": """
        from vllm.platforms import current_platform
        if current_platform.is_cuda_alike():
            HAZARD
    """,
    "flag also turned on outside the platform branch": """
        available = False
        if torch.version.cuda is not None:
            available = True
        if os.environ.get("FORCE"):
            available = True
        if available:
            HAZARD
    """,
    "flag a function may turn on (global)": """
        available = False
        if torch.version.cuda is not None:
            available = True
        def enable():
            global available
            available = True
        if available:
            HAZARD
    """,
    "flag turned on under a test true on ROCm": """
        available = False
        if torch.cuda.is_available():
            available = True
        if available:
            HAZARD
    """,
    "flag bound to something else than a constant": """
        available = False
        if torch.version.cuda is not None:
            available = probe()
        if available:
            HAZARD
    """,
}


def _module(body: str) -> str:
    header = "import torch\nis_rocm = torch.version.hip is not None\n"
    return header + textwrap.dedent(body).replace("HAZARD", HAZARD)


def _flagged(src: str) -> bool:
    result = check_python_source("case.py", src, Config())
    assert isinstance(result, list), result
    return any(f.code == "ROC101" for f in result)


@pytest.mark.parametrize("name", sorted(GATED))
def test_gated_code_is_silent(name):
    assert not _flagged(_module(GATED[name])), name


@pytest.mark.parametrize("name", sorted(NOT_GATED))
def test_ungated_code_is_flagged(name):
    assert _flagged(_module(NOT_GATED[name])), name


def test_configured_predicate():
    src = _module("""
        if not platform_is_amd():
            HAZARD
    """)
    assert _flagged(src)
    cfg = Config(rocm_predicates=Config().rocm_predicates + ("platform_is_amd",))
    assert check_python_source("case.py", src, cfg) == []


def test_configured_dotted_predicate_needs_its_owner():
    cfg = Config(cuda_predicates=("accel.is_nvidia",))
    assert (
        check_python_source(
            "case.py",
            _module("""
        if accel.is_nvidia():
            HAZARD
    """),
            cfg,
        )
        == []
    )
    assert (
        check_python_source(
            "case.py",
            _module("""
        if other.is_nvidia():
            HAZARD
    """),
            cfg,
        )
        != []
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_bindings_are_learned_on_the_right_lines_whatever_the_line_ends(newline):
    """The module context finds the lines that may bind a platform test by one search per word
    over the lowered text: with CR or CRLF line ends (ast counts a lone CR as a line end) the
    lines still line up, and a name bound from an earlier binding is learned too."""
    import ast

    from rocm_lint.python.context import ModuleContext

    src = newline.join(
        [
            "import torch",
            "x = 1",
            "IS_HIP = torch.version.hip is not None",
            "values = [",
            "    1,",
            "]",
            "ON_AMD = IS_HIP",
            "def helper():",
            "    return 2",
            "",
        ]
    )
    ctx = ModuleContext("m.py", ast.parse(src), Config(), src)
    assert {"IS_HIP", "ON_AMD"} <= set(ctx.gates.bound_names)
    assert "x" not in ctx.gates.bound_names and "values" not in ctx.gates.bound_names
