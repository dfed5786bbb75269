"""Issue 15: the Python fix keeps the NVIDIA program on real-world module shapes, and the
NVIDIA-path check is independent of the fixer (it rejects what the old fixer wrote)."""

import ast
import json

import pytest

from conftest import run_cli
from rocm_lint.config import Config
from rocm_lint.engine import check_python_source
from rocm_lint.fix.engine import fix_source
from rocm_lint.fix.nvidia_path import check_nvidia_path


def fix(text, path="m.py", unsafe=False):
    findings = check_python_source(path, text, Config())
    assert isinstance(findings, list), findings
    return fix_source(path, text, findings, unsafe=unsafe)


def nvidia_run(text):
    """Execute ``text`` with a tiny fake torch (hip None): NameError and friends surface here."""
    import types

    class Any:
        def __getattr__(self, name):
            return self

        def __call__(self, *args, **kwargs):
            return self

    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip=None, cuda="12.8")
    torch.backends = Any()
    ns = {"__name__": "m"}
    import sys

    saved = sys.modules.get("torch")
    sys.modules["torch"] = torch
    try:
        exec(compile(text, "m.py", "exec"), ns)
    finally:
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved
    return ns


# -- 1. the flag is bound where torch is bound, before its first use ------------------------------------
CODE_BEFORE_IMPORT = [
    'import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"]="max_split_size_mb:128"\nimport torch\n',
    'import os\nimport sys\nsys.path.insert(0, "..")\nimport torch\nos.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"\n',
    "import argparse\np = argparse.ArgumentParser()\nargs = p.parse_args([])\nimport torch\n"
    "torch.backends.cuda.matmul.allow_tf32 = True\n",
    "from __future__ import annotations\nimport os\nX = 1\nimport torch\ntorch.backends.cudnn.allow_tf32 = True\n",
]


@pytest.mark.parametrize("text", CODE_BEFORE_IMPORT)
def test_flag_never_read_before_torch_is_bound(text):
    result = fix(text)
    new = result.text
    if result.applied:
        tree = ast.parse(new)
        first_torch = min(
            i for i, s in enumerate(tree.body) if isinstance(s, ast.Import) and s.names[0].name == "torch"
        )
        flag_at = [
            i
            for i, s in enumerate(tree.body)
            if isinstance(s, ast.Assign) and ast.unparse(s.value).endswith("version.hip is not None")
        ]
        assert flag_at and flag_at[0] > first_torch
    # never an import added or moved
    assert new.count("import torch") == text.count("import torch")
    nvidia_run(new)  # no NameError
    assert check_nvidia_path(text, new) is None


def test_issue_reproducer_alloc_conf_before_import_is_reported_without_fix(tmp_path):
    src = tmp_path / "a.py"
    src.write_text('import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"]="max_split_size_mb:128"\nimport torch\n')
    proc = run_cli("check", "--fix", src)
    assert "not fixed: torch is not imported unconditionally" in proc.stderr
    assert src.read_text().count("import torch") == 1 and "is_rocm" not in src.read_text()


# -- 2. the flag name never collides ---------------------------------------------------------------------
def test_parameter_named_is_rocm_is_not_the_flag():
    text = "import torch\n\n\ndef setup(model, is_rocm=True):\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    new = fix(text).text
    assert "if not is_rocm" not in new and "if not _is_rocm:" in new
    assert check_nvidia_path(text, new) is None


def test_later_def_is_rocm_is_not_replaced():
    text = (
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n\ndef is_rocm():\n    return False\n"
    )
    new = fix(text).text
    assert "\nis_rocm =" not in new
    ns = nvidia_run(new)
    assert callable(ns["is_rocm"])


def test_reexported_is_rocm_in_package_init(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .utils import is_rocm\nfrom .train import *\n")
    text = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    (pkg / "train.py").write_text(text)
    result = fix(text, path=str(pkg / "train.py"))
    # issue 27: a star-imported module gets no new name at all: the test is made in place
    assert result.applied and "is_rocm" not in result.text
    assert "if torch.version.hip is None:" in result.text
    # the checker refuses a public flag the package star-imports
    public = text.replace(
        "torch.backends", "is_rocm = torch.version.hip is not None\nif not is_rocm:\n    torch.backends"
    )
    assert "package" in check_nvidia_path(text, public, path=str(pkg / "train.py"))


def test_init_module_defining_is_rocm_function():
    text = (
        "import torch\n\n\ndef is_rocm():\n    return torch.version.hip is not None\n\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    new = fix(text, path="pkg/__init__.py").text
    assert "def is_rocm():" in new and "if not is_rocm:" not in new
    assert callable(nvidia_run(new)["is_rocm"])


def test_module_level_predicate_shadowed_by_a_local_is_not_reused():
    text = (
        "import torch\nIS_HIP = torch.version.hip is not None\n\n\ndef f(IS_HIP=True):\n"
        "    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    new = fix(text).text
    assert "if not IS_HIP" not in new
    assert check_nvidia_path(text, new) is None


# -- 3. no module-level import of torch where the module imports it lazily -------------------------------
LAZY = {
    "try_except": "try:\n    import torch\nexcept ImportError:\n    torch = None\n\n\ndef f():\n"
    "    torch.backends.cuda.matmul.allow_tf32 = True\n",
    "platform": "import sys\nif sys.platform == 'linux':\n    import torch\n    torch.backends.cudnn.allow_tf32 = True\n",
    "dotenv": "from dotenv import load_dotenv\nload_dotenv(override=True)\nimport os\n"
    "os.environ['TORCHINDUCTOR_MAX_AUTOTUNE'] = '1'\nimport torch\n",
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_no_import_added_where_torch_is_lazy(name):
    text = LAZY[name]
    result = fix(text)
    assert result.text.count("import torch") == text.count("import torch")
    assert result.text == text or check_nvidia_path(text, result.text) is None
    assert all("torch is not imported" in why for _, why in result.dropped)


def test_lazy_import_in_function_gates_inline():
    text = "def main():\n    import torch\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    new = fix(text).text
    assert new == (
        "def main():\n    import torch\n    if torch.version.hip is None:\n"
        "        torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    assert check_nvidia_path(text, new) is None


def test_importorskip_binds_torch():
    text = (
        'import pytest\ntorch = pytest.importorskip("torch")\ntorch.backends.cuda.matmul.allow_tf32 = True\n'
    )
    new = fix(text).text
    assert new.count("import") == text.count("import")
    assert new.index("is_rocm = torch.version.hip") > new.index("importorskip")
    assert check_nvidia_path(text, new) is None


# -- 4. the independent checker rejects what the old fixer wrote -----------------------------------------
OLD_FIXER_OUTPUTS = [
    # flag before `import torch` (NameError on NVIDIA)
    (
        'import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"]="max_split_size_mb:128"\nimport torch\n',
        "import os\nimport torch\nis_rocm = torch.version.hip is not None\nif not is_rocm:\n"
        '    os.environ["PYTORCH_CUDA_ALLOC_CONF"]="max_split_size_mb:128"\nimport torch\n',
    ),
    (
        'import os\nos.environ["X"] = "1"\nimport torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n',
        'import os\nis_rocm = torch.version.hip is not None\nos.environ["X"] = "1"\nimport torch\n'
        "if not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
    ),
    # the parameter is read by the inserted test
    (
        "import torch\ndef setup(model, is_rocm=True):\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
        "import torch\nis_rocm = torch.version.hip is not None\ndef setup(model, is_rocm=True):\n"
        "    if not is_rocm:\n        torch.backends.cuda.matmul.allow_tf32 = True\n",
    ),
    # a later def replaces the flag
    (
        "import torch\ndef f():\n    torch.backends.cuda.matmul.allow_tf32 = True\ndef is_rocm():\n    return 0\n",
        "import torch\nis_rocm = torch.version.hip is not None\ndef f():\n    if not is_rocm:\n"
        "        torch.backends.cuda.matmul.allow_tf32 = True\ndef is_rocm():\n    return 0\n",
    ),
    # a module-level import of torch added to a lazily importing module
    (
        "def f():\n    import torch\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
        "import torch\nis_rocm = torch.version.hip is not None\ndef f():\n    import torch\n    if not is_rocm:\n"
        "        torch.backends.cuda.matmul.allow_tf32 = True\n",
    ),
    # an import moved above load_dotenv
    (
        "from dotenv import load_dotenv\nload_dotenv(override=True)\nimport torch\ntorch.backends.cudnn.allow_tf32 = True\n",
        "from dotenv import load_dotenv\nimport torch\nis_rocm = torch.version.hip is not None\nload_dotenv(override=True)\n"
        "import torch\nif not is_rocm:\n    torch.backends.cudnn.allow_tf32 = True\n",
    ),
    # inline test where torch is a fallback None
    (
        "try:\n    import torch\nexcept ImportError:\n    torch = None\ndef f():\n    torch.backends.cudnn.allow_tf32 = True\n",
        "try:\n    import torch\nexcept ImportError:\n    torch = None\ndef f():\n    if torch.version.hip is None:\n"
        "        torch.backends.cudnn.allow_tf32 = True\n",
    ),
]


@pytest.mark.parametrize("original,fixed", OLD_FIXER_OUTPUTS)
def test_checker_rejects_unsafe_fixes(original, fixed):
    assert check_nvidia_path(original, fixed) is not None


def test_checker_accepts_the_right_fix_and_keeps_inserted_lines():
    original = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    right = "import torch\nis_rocm = torch.version.hip is not None\nif not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    assert check_nvidia_path(original, right) is None
    # the inserted line is compared, not dropped on trust: a flag that is True on NVIDIA fails
    assert check_nvidia_path(original, right.replace("is not None", "is None")) is not None
    assert check_nvidia_path(original, right.replace("is_rocm = torch", "is_rocm = 0 or torch")) is not None


# -- 5. LibCST never sees what crashes it -----------------------------------------------------------------
@pytest.fixture
def huge_or(tmp_path):
    src = tmp_path / "big.py"
    src.write_text(
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\nx = "
        + " or ".join(f"a{i}" for i in range(10000))
        + "\n"
    )
    return src


@pytest.mark.parametrize(
    "args", [("--fix",), ("--diff",), ("--output-format", "json"), ("--output-format", "sarif")]
)
def test_huge_or_chain_does_not_crash_the_run(huge_or, tmp_path, args):
    other = tmp_path / "z.py"
    other.write_text("import torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    before = huge_or.read_text()
    proc = run_cli("check", *args, huge_or, other)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    assert huge_or.read_text() == before
    if args == ("--fix",):
        assert "more than 1000 operands" in proc.stderr
        assert "if not is_rocm" in other.read_text()  # the run went on
    if args[-1] == "json":
        items = json.loads(proc.stdout)
        assert {i["filename"].rsplit("/", 1)[-1] for i in items} == {"big.py", "z.py"}
        assert next(i for i in items if i["filename"].endswith("big.py"))["fix"] is None or not next(
            i for i in items if i["filename"].endswith("big.py")
        )["fix"].get("edits")


def test_deep_nesting_is_refused_not_crashed():
    from rocm_lint.fix.scopes import too_complex_for_libcst

    deep = "x = " + "[" * 180 + "]" * 180 + "\n"
    assert too_complex_for_libcst(ast.parse(deep))
    assert too_complex_for_libcst(ast.parse("x = 1 + 2\n")) is None
