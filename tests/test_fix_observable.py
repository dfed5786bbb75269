"""Issue 27, part 1: a fix adds no module-level name that code can observe.

* a module that reads its own namespace (nanoGPT's ``config_keys`` from ``globals()``) gets the
  inline test, not a flag;
* a module a project module star-imports (and that has no ``__all__``) gets the inline test;
* a predicate the module binds is reused only when nothing can rebind it after its definition;
* the independent NVIDIA-path checker refuses each of these bad fixes on its own.
"""

import ast
import sys
import textwrap
import types

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_python_source
from rocm_lint.fix.engine import fix_source
from rocm_lint.fix.nvidia_path import check_nvidia_path


def fix(text, path="m.py"):
    findings = check_python_source(str(path), text, Config())
    assert isinstance(findings, list), findings
    return fix_source(str(path), text, findings)


def top_names(text):
    """The module-level names ``text`` binds (imports, assignments, defs)."""
    names = set()
    for stmt in ast.parse(text).body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            names.add(stmt.name)
    return names


class _Any:
    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self


class _Backend:
    """Records the TF32 settings a module makes."""

    def __init__(self):
        object.__setattr__(self, "set", {})

    def __getattr__(self, name):
        return self

    def __setattr__(self, name, value):
        self.set[name] = value


def fake_torch(hip=None):
    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip=hip, cuda=None if hip else "12.8")
    torch.backends = _Backend()
    torch.compile = lambda model=None, **kw: ("compiled", kw.get("mode"))
    torch.nn = _Any()
    return torch


def nvidia_namespace(text, hip=None):
    """Run ``text`` as a module under a fake torch: its namespace (dunder names left out) and
    the settings it made."""
    torch = fake_torch(hip)
    saved = sys.modules.get("torch")
    sys.modules["torch"] = torch
    ns = {"__name__": "m_observed"}
    module = types.ModuleType("m_observed")
    sys.modules["m_observed"] = module
    try:
        exec(compile(text, "m_observed.py", "exec"), module.__dict__)
    finally:
        sys.modules.pop("m_observed", None)
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved
    ns = {k: v for k, v in module.__dict__.items() if not k.startswith("__")}
    return ns, dict(torch.backends.set)


def simple(ns):
    """Values as code sees them: plain values, and a namespace copy by its names."""
    return {
        k: sorted(v) if isinstance(v, dict) else v
        for k, v in ns.items()
        if isinstance(v, (int, float, bool, str, list, dict, tuple))
    }


# -- 1. a module that reads its own namespace --------------------------------------------------------
NANOGPT = """\
import torch

batch_size = 12
compile = True
config_keys = [k for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
torch.backends.cuda.matmul.allow_tf32 = True
model = torch.compile(None, mode="reduce-overhead")
"""

INTROSPECTING = {
    "globals_items": NANOGPT,
    "dir_at_module_level": "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nNAMES = dir()\n",
    "vars_at_module_level": "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nSNAPSHOT = dict(vars())\n",
    "locals_at_module_level": "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nSEEN = sorted(locals())\n",
    "computed_all": (
        "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        "__all__ = [n for n in dir() if not n.startswith('_')]\n"
    ),
    "module_dict": (
        "import sys\n\nimport torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        "OPTIONS = sorted(sys.modules[__name__].__dict__)\n"
    ),
    "globals_in_a_function": (
        "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n\n"
        "def settings():\n    return {k: v for k, v in globals().items() if k.isupper()}\n"
    ),
    "exec_of_a_config_file": (
        "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nexec('N_LAYER = 2')\n"
    ),
}


@pytest.mark.parametrize("name", sorted(INTROSPECTING))
def test_introspecting_module_gets_no_new_name(name):
    text = INTROSPECTING[name]
    result = fix(text)
    assert result.applied, result.dropped
    assert top_names(result.text) == top_names(text)
    assert "torch.version.hip is None" in result.text and "is_rocm" not in result.text
    assert check_nvidia_path(text, result.text) is None
    before, set_before = nvidia_namespace(text)
    after, set_after = nvidia_namespace(result.text)
    assert simple(after) == simple(before) and sorted(after) == sorted(before)
    assert set_after == set_before
    _, rocm = nvidia_namespace(result.text, hip="6.2")
    assert rocm == {}  # ROCm: TF32 left alone


def test_nanogpt_config_keys_are_unchanged():
    result = fix(NANOGPT)
    before, _ = nvidia_namespace(NANOGPT)
    after, _ = nvidia_namespace(result.text)
    assert after["config_keys"] == before["config_keys"] == ["batch_size", "compile"]
    assert after["model"] == ("compiled", "reduce-overhead")


@pytest.mark.parametrize(
    "text",
    [
        # a namespace that is not the module's: the default form (the `is_rocm` flag) stays
        "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n\ndef f(x):\n    return vars(x), dir(x), locals()\n",
        "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n\n\nclass C:\n    names = dir()\n",
    ],
)
def test_other_namespaces_keep_the_default_flag(text):
    result = fix(text)
    assert "is_rocm = torch.version.hip is not None" in result.text
    assert "if not is_rocm:" in result.text


def test_introspecting_module_reuses_an_existing_predicate():
    text = (
        "import torch\n\nIS_HIP = torch.version.hip is not None\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\nKEYS = list(globals())\n"
    )
    result = fix(text)
    assert "if not IS_HIP:" in result.text and top_names(result.text) == top_names(text)


def test_introspecting_module_gets_no_import_torch():
    """``from torch import nn`` only: the usual fix adds ``import torch``, a new name here."""
    text = (
        "from torch import backends\n\nbackends.cuda.matmul.allow_tf32 = True\n"
        "KEYS = [k for k in globals() if not k.startswith('_')]\n"
    )
    result = fix(text)
    assert result.text == text or top_names(result.text) == top_names(text)
    assert "import torch\n" not in result.text


# -- 2. a module another project module star-imports ---------------------------------------------------
def _project(
    tmp_path, train_text, main="from pkg.utils import *\nfrom pkg.train import *\n\nON_AMD = is_rocm()\n"
):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(
        "import torch\n\n\ndef is_rocm():\n    return torch.version.hip is not None\n"
    )
    (pkg / "train.py").write_text(train_text)
    (tmp_path / "main.py").write_text(main)
    return pkg / "train.py"


TRAIN = "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nSTEPS = 10\n"


def _run_main(root, hip=None):
    """Import main.py of the project at ``root`` under a fake torch: its namespace."""
    torch = fake_torch(hip)
    saved = {
        k: sys.modules.pop(k) for k in list(sys.modules) if k in ("torch", "main") or k.startswith("pkg")
    }
    sys.modules["torch"] = torch
    sys.path.insert(0, str(root))
    try:
        import importlib

        module = importlib.import_module("main")
        return dict(vars(module)), dict(torch.backends.set)
    finally:
        sys.path.remove(str(root))
        for k in list(sys.modules):
            if k in ("torch", "main") or k.startswith("pkg"):
                sys.modules.pop(k)
        sys.modules.update(saved)


def test_star_imported_module_gets_no_new_name(tmp_path):
    path = _project(tmp_path, TRAIN)
    result = fix(TRAIN, path=path)
    assert result.applied and top_names(result.text) == top_names(TRAIN)
    assert "if torch.version.hip is None:" in result.text
    assert check_nvidia_path(TRAIN, result.text, path=str(path)) is None
    path.write_text(result.text)
    ns, settings = _run_main(tmp_path)
    assert ns["ON_AMD"] is False and settings == {"allow_tf32": True}


def test_star_import_from_a_module_outside_the_package(tmp_path):
    """The importer lives in another directory of the project (resolved from the project root)."""
    path = _project(tmp_path, TRAIN, main="")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("from pkg.train import *\n")
    result = fix(TRAIN, path=path)
    assert "is_rocm" not in result.text and "if torch.version.hip is None:" in result.text


def test_star_import_of_a_src_layout_package_from_tests(tmp_path):
    """``src/pkg/train.py`` star-imported by ``tests/test_train.py`` (no configuration file of
    rocm-lint: the project's root is the directory holding pyproject.toml)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    src = tmp_path / "src"
    src.mkdir()
    path = _project(src, TRAIN, main="")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text("from pkg.train import *\n")
    result = fix(TRAIN, path=path)
    assert "is_rocm" not in result.text and "if torch.version.hip is None:" in result.text
    why = check_nvidia_path(TRAIN, _with_flag(TRAIN), path=str(path))
    assert why is not None and "test_train.py" in why, why


def test_star_imported_module_with_all_keeps_the_flag(tmp_path):
    text = "import torch\n\n__all__ = ['STEPS']\ntorch.backends.cuda.matmul.allow_tf32 = True\nSTEPS = 10\n"
    path = _project(tmp_path, text)
    result = fix(text, path=path)
    assert "is_rocm = torch.version.hip is not None" in result.text
    path.write_text(result.text)
    ns, _ = _run_main(tmp_path)
    assert ns["ON_AMD"] is False  # main's is_rocm() is still pkg.utils' function


def test_module_nobody_star_imports_keeps_the_flag(tmp_path):
    path = _project(tmp_path, TRAIN, main="from pkg.utils import *\nimport pkg.train\n")
    result = fix(TRAIN, path=path)
    assert "is_rocm = torch.version.hip is not None" in result.text


# -- 3. a predicate that may be rebound after its definition -------------------------------------------
def test_predicate_rebound_by_a_later_star_import_is_not_reused(tmp_path):
    (tmp_path / "helpers.py").write_text("IS_HIP = True\n")
    text = (
        "import torch\n\nIS_HIP = torch.version.hip is not None\n\nfrom helpers import *  # noqa\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    path = tmp_path / "train.py"
    path.write_text(text)
    result = fix(text, path=path)
    assert result.applied and "if not IS_HIP:" not in result.text
    assert check_nvidia_path(text, result.text, path=str(path)) is None
    sys.path.insert(0, str(tmp_path))
    try:
        _, settings = nvidia_namespace(result.text)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helpers", None)
    assert settings == {"allow_tf32": True}  # TF32 still set on NVIDIA


def test_star_import_before_the_predicate_does_not_prevent_reuse(tmp_path):
    (tmp_path / "helpers.py").write_text("IS_HIP = True\n")
    text = (
        "import torch\nfrom helpers import *  # noqa\n\nIS_HIP = torch.version.hip is not None\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    result = fix(text, path=tmp_path / "train.py")
    assert "if not IS_HIP:" in result.text


def test_new_flag_is_never_a_name_a_star_import_may_bind(tmp_path):
    (tmp_path / "helpers.py").write_text("def is_rocm():\n    return False\n")
    text = "import torch\nfrom helpers import *  # noqa\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    result = fix(text, path=tmp_path / "train.py")
    assert "\nis_rocm =" not in result.text and "_is_rocm = torch.version.hip is not None" in result.text
    # a source that cannot be read may bind anything: no flag at all
    third_party = text.replace("from helpers import", "from somewhere_else import")
    result = fix(third_party, path=tmp_path / "other.py")
    assert "is_rocm" not in result.text and "if torch.version.hip is None:" in result.text


@pytest.mark.parametrize(
    "write",
    [
        'globals()["IS_HIP"] = True',
        'setattr(sys.modules[__name__], "IS_HIP", True)',
        'exec("IS_HIP = True", globals())',
        "globals().update(IS_HIP=True)",
    ],
)
def test_predicate_with_a_dynamic_namespace_write_is_not_reused(write):
    text = (
        f"import sys\n\nimport torch\n\nIS_HIP = torch.version.hip is not None\n{write}\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    result = fix(text)
    assert result.applied and "if not IS_HIP:" not in result.text
    _, settings = nvidia_namespace(result.text)
    assert settings == {"allow_tf32": True}


# -- 4. the independent checker refuses each bad fix on its own ----------------------------------------
def _with_flag(text, gate_line="torch.backends.cuda.matmul.allow_tf32 = True"):
    """``text`` fixed the old way: a new ``is_rocm`` flag after ``import torch``, the line gated."""
    out = text.replace("import torch\n", "import torch\n\nis_rocm = torch.version.hip is not None\n", 1)
    return out.replace(gate_line, "if not is_rocm:\n    " + gate_line)


@pytest.mark.parametrize("name", sorted(INTROSPECTING))
def test_checker_rejects_a_flag_in_an_introspecting_module(name):
    text = INTROSPECTING[name]
    why = check_nvidia_path(text, _with_flag(text))
    assert why is not None and "reads its own namespace" in why, why


def test_checker_rejects_import_torch_in_an_introspecting_module():
    text = "from torch import nn\n\nKEYS = list(globals())\nnn.Module\n"
    bad = "import torch\nfrom torch import nn\n\nKEYS = list(globals())\nnn.Module\n"
    assert "reads its own namespace" in check_nvidia_path(text, bad)


def test_checker_rejects_a_flag_in_a_star_imported_module(tmp_path):
    path = _project(tmp_path, TRAIN)
    why = check_nvidia_path(TRAIN, _with_flag(TRAIN), path=str(path))
    assert why is not None and "star-imports" in why and "main.py" in why, why
    # a private flag is refused too (the module adds no name at all), and so is ``import torch``
    private = _with_flag(TRAIN).replace("is_rocm", "_is_rocm")
    assert "star-imports" in check_nvidia_path(TRAIN, private, path=str(path))
    # with an __all__ that leaves the flag out, the star import does not take it
    listed = "__all__ = ['STEPS']\n" + TRAIN
    assert check_nvidia_path(listed, _with_flag(listed), path=str(path)) is None


def test_checker_rejects_a_flag_a_star_import_of_the_module_may_bind(tmp_path):
    (tmp_path / "helpers.py").write_text("def is_rocm():\n    return False\n")
    text = "import torch\nfrom helpers import *  # noqa\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    bad = text.replace("# noqa\n", "# noqa\n\nis_rocm = torch.version.hip is not None\n").replace(
        "torch.backends", "if not is_rocm:\n    torch.backends"
    )
    why = check_nvidia_path(text, bad, path=str(tmp_path / "train.py"))
    assert why is not None and "may bind `is_rocm`" in why, why


@pytest.mark.parametrize(
    "rebind",
    [
        "from helpers import *  # noqa",
        'globals()["IS_HIP"] = True',
        'setattr(sys.modules[__name__], "IS_HIP", True)',
        'exec("IS_HIP = True", globals())',
    ],
)
def test_checker_rejects_reuse_of_a_rebindable_predicate(tmp_path, rebind):
    (tmp_path / "helpers.py").write_text("IS_HIP = True\n")
    text = (
        f"import sys\n\nimport torch\n\nIS_HIP = torch.version.hip is not None\n{rebind}\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    bad = text.replace("torch.backends", "if not IS_HIP:\n    torch.backends")
    why = check_nvidia_path(text, bad, path=str(tmp_path / "train.py"))
    assert why is not None and "may be rebound" in why, why
    good = text.replace("torch.backends", "if torch.version.hip is None:\n    torch.backends")
    assert check_nvidia_path(text, good, path=str(tmp_path / "train.py")) is None


def test_checker_still_accepts_reuse_of_a_predicate_nothing_rebinds(tmp_path):
    text = textwrap.dedent("""\
        import torch
        from helpers import *  # noqa

        IS_HIP = torch.version.hip is not None
        torch.backends.cuda.matmul.allow_tf32 = True
        """)
    (tmp_path / "helpers.py").write_text("IS_HIP = True\n")
    good = text.replace("torch.backends", "if not IS_HIP:\n    torch.backends")
    assert check_nvidia_path(text, good, path=str(tmp_path / "train.py")) is None


@pytest.mark.parametrize(
    "helpers",
    [
        "STEPS = 10\n",  # never mentions it
        "__all__ = ['STEPS']\nSTEPS = 10\nIS_HIP = True\n",  # binds it, but its __all__ leaves it out
    ],
)
def test_later_star_import_that_cannot_bind_the_predicate_keeps_the_reuse(tmp_path, helpers):
    (tmp_path / "helpers.py").write_text(helpers)
    text = (
        "import torch\n\nIS_HIP = torch.version.hip is not None\n\nfrom helpers import *  # noqa\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    path = tmp_path / "train.py"
    result = fix(text, path=path)
    assert "if not IS_HIP:" in result.text
    assert check_nvidia_path(text, result.text, path=str(path)) is None
