"""Differential test of the Python fix: import each module and its fixed copy under a stub torch
in a sandboxed subprocess, and compare what NVIDIA sees.

The stub ``torch`` records every setting a module makes (``torch.backends...``, Inductor config,
``torch.compile`` modes and options, ``set_float32_matmul_precision``); the runner also records
the environment variables the import set and the module's namespace (names, and the values of
simple ones).  With ``version.hip = None`` (NVIDIA) the fixed module must give exactly the
original's record, except the names the fix added (its flag; ``torch``, bound to the module
torch is).  With ``version.hip = "6.2"`` the ROCm side must change.

Run as a script for repository-scale numbers::

    python tests/test_fix_differential.py /tmp/real/DeepSpeed [...]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # the integration tier: make test / --all-tiers

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "fixtures" / "fixes" / "differential"

STUB_TORCH = r'''
"""A stub torch: records every setting, returns its argument from compile."""
import importlib.abc
import importlib.machinery
import os
import sys
import types

HIP = os.environ.get("STUB_TORCH_HIP") or None
RECORD = {}


def _note(key, value):
    RECORD[key] = value


def _shown(value):
    """A stable description (no addresses)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return type(value).__name__ + " " + str(getattr(value, "__qualname__", ""))


import abc


class _Meta(abc.ABCMeta):  # (ABCMeta: a subclass that is also an ABC, as nn.Module subclasses often are)
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub(cls.__name__ + "." + name)

    def __or__(cls, other):  # `torch.Tensor | None` in an annotation evaluated at import
        return cls

    __ror__ = __or__


def _instance_attr(self, name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Stub(type(self).__name__ + "()." + name)


def _cls(name):
    return _Meta(name, (), {"__init__": lambda self, *a, **k: None, "__getattr__": _instance_attr,
                            "__call__": lambda self, *a, **k: Stub(name + "()()"),
                            "__class_getitem__": classmethod(lambda cls, key: cls)})


class Stub:
    def __init__(self, path):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name[:1].isupper():
            value = _cls(name)
        else:
            value = Stub(self._path + "." + name)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        _note(self._path + "." + name, value)
        object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        _note("call " + self._path, [_shown(a) for a in args[:3]] + sorted(kwargs))
        return Stub(self._path + "()")

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __getitem__(self, key):
        return Stub(self._path + "[]")

    def __mro_entries__(self, bases):
        return (object,)

    # numbers and unions an import may take of a stub (`int(torch.cuda.device_count())`,
    # `int | torch.dtype`): fixed values, so both sides of a comparison see the same
    def __or__(self, other):
        return self

    __ror__ = __or__

    def __int__(self):
        return 0

    __index__ = __int__

    def __float__(self):
        return 0.0

    def __len__(self):
        return 0


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = Stub(self.__name__ + "." + name) if not name[:1].isupper() else _cls(name)
        types.ModuleType.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        if not name.startswith("__") and not isinstance(value, types.ModuleType):
            _note(self.__name__ + "." + name, value)
        types.ModuleType.__setattr__(self, name, value)


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("torch."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        if module.__name__ == "torch.utils.cpp_extension":
            types.ModuleType.__setattr__(module, "IS_HIP_EXTENSION", HIP is not None)
            types.ModuleType.__setattr__(module, "CUDA_HOME", None if HIP else "/usr/local/cuda")
            types.ModuleType.__setattr__(module, "ROCM_HOME", "/opt/rocm" if HIP else None)


sys.meta_path.insert(0, Finder())
__path__ = []
version = types.SimpleNamespace(hip=HIP, cuda=None if HIP else "12.8", __version__="2.8.0")
__version__ = "2.8.0"
float32 = "float32"
bfloat16 = "bfloat16"
float16 = "float16"


class _Tensor:
    pass


Tensor = _Tensor


def compile(model=None, **kwargs):
    _note("torch.compile", sorted((k, repr(v)) for k, v in kwargs.items()))
    if model is None:
        return lambda fn: fn
    return model


def set_float32_matmul_precision(value):
    _note("torch.set_float32_matmul_precision", value)


def __getattr__(name):
    value = Stub("torch." + name)
    globals()[name] = value
    return value


class _Cuda(StubModule):
    def get_device_capability(self, *a):
        return (9, 4) if HIP else (9, 0)

    def is_available(self):
        return True


cuda = _Cuda("torch.cuda")
cuda.__path__ = []  # a package: `torch.cuda.amp` and the like import
sys.modules["torch.cuda"] = cuda
for _name in ("backends", "backends.cuda", "backends.cuda.matmul", "backends.cudnn", "_inductor",
              "_inductor.config", "_dynamo", "_dynamo.config"):
    _mod = StubModule("torch." + _name)
    _mod.__path__ = []
    sys.modules["torch." + _name] = _mod
    _parent, _, _leaf = ("torch." + _name).rpartition(".")
    types.ModuleType.__setattr__(sys.modules.get(_parent) or sys.modules["torch"], _leaf, _mod)
for _name in ("backends.cuda.matmul.allow_tf32", "backends.cudnn.allow_tf32", "backends.cudnn.benchmark"):
    _path, _, _leaf = ("torch." + _name).rpartition(".")
    types.ModuleType.__setattr__(sys.modules[_path], _leaf, False)
'''

RUNNER = r"""
import importlib
import json
import os
import sys
import types

stubs, root, dotted, catch_all = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
sys.argv[:] = [dotted]  # a script that reads its arguments (argparse, nanoGPT's configurator) gets none
sys.path[:0] = [stubs, root]
if catch_all:  # every third-party module the import needs and the machine lacks: a stub
    import importlib.abc
    import importlib.machinery
    import importlib.util

    class Missing(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            if frame is None or not os.path.abspath(frame.f_code.co_filename).startswith(os.path.abspath(root)):
                return None  # only what the repository's own code imports
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or os.path.exists(os.path.join(root, top)) \
                    or os.path.exists(os.path.join(root, top + ".py")):
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                if finder.find_spec(name, path, target) is not None:
                    return None
            return importlib.machinery.ModuleSpec(name, self, is_package=True)

        def create_module(self, spec):
            import torch
            module = torch.StubModule(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.append(Missing())
import io

env_before = dict(os.environ)
out = {"error": None}
printed, real_stdout = io.StringIO(), sys.stdout
sys.stdout = printed
try:
    module = importlib.import_module(dotted)
except BaseException as exc:  # skipped tests, SystemExit, anything
    out["error"] = type(exc).__name__ + ": " + str(exc)[:200]
    module = None
finally:
    sys.stdout = real_stdout
out["stdout"] = printed.getvalue()[-4000:].replace(os.path.abspath(root), "<root>")


ROOT = os.path.abspath(root)


def simple(value, depth=0):
    if isinstance(value, str):  # a path under the copy compared (original/ or fixed/) is the same path
        return repr(value.replace(ROOT, "<root>"))
    if value is None or isinstance(value, (bool, int, float, bytes)):
        return repr(value)
    if isinstance(value, (tuple, list)) and depth < 2 and len(value) < 50:
        return type(value).__name__ + "[" + ",".join(simple(v, depth + 1) for v in value) + "]"
    if isinstance(value, types.ModuleType):
        return "module " + value.__name__
    return type(value).__name__


torch = sys.modules.get("torch")
record = getattr(torch, "RECORD", {})
out["settings"] = {k: simple(v) for k, v in record.items()}
out["environ"] = {k: v for k, v in os.environ.items() if env_before.get(k) != v}
out["namespace"] = {k: simple(v) for k, v in vars(module).items() if not k.startswith("__")} if module else {}
print(json.dumps(out, sort_keys=True))
"""


def _write_stubs(where: Path) -> Path:
    stubs = where / "stubs"
    (stubs / "torch").mkdir(parents=True, exist_ok=True)
    (stubs / "torch" / "__init__.py").write_text(STUB_TORCH)
    extra = SAMPLES / "_stubs"
    for item in extra.iterdir():
        if item.is_dir():
            shutil.copytree(item, stubs / item.name, dirs_exist_ok=True)
    (where / "runner.py").write_text(RUNNER)
    return stubs


def import_record(work: Path, root: Path, dotted: str, hip=None, catch_all=False, timeout=30):
    """Import ``dotted`` from ``root`` in a fresh interpreter under the stub torch: its record."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(work),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if hip:
        env["STUB_TORCH_HIP"] = hip
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S" if False else "-B",
            str(work / "runner.py"),
            str(work / "stubs"),
            str(root),
            dotted,
            "1" if catch_all else "0",
        ],
        cwd=str(root),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"error": f"runner exit {proc.returncode}: {proc.stderr[-300:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fix_tree(root: Path) -> dict:
    """``--fix --unsafe-fixes`` on every .py file under ``root``, in-process: {path: (old, new)}."""
    sys.path.insert(0, str(HERE.parent / "src"))
    from rocm_lint.config import Config
    from rocm_lint.fix.api import fix_text

    changed = {}
    for path in sorted(root.rglob("*.py")):
        if "_stubs" in path.parts:
            continue
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        result = fix_text(str(path), text, Config(), unsafe=True)
        if getattr(result, "applied", None) and result.text != text:
            changed[path] = (text, result.text)
    return changed


def star_importers(root: Path, dotted: set) -> set:
    """The modules under ``root`` that ``from X import *`` one of ``dotted`` (relative imports
    resolved from their package)."""
    import re

    found = set()
    for path in root.rglob("*.py"):
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        me = dotted_name(root, path)
        package = me.split(".")[:-1] if path.name != "__init__.py" else me.split(".")
        for m in re.finditer(r"(?m)^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]*\*", text):
            name = m.group(1)
            if name.startswith("."):
                level = len(name) - len(name.lstrip("."))
                base = package[: len(package) - (level - 1)] if level > 1 else package
                name = ".".join(base + [p for p in name.lstrip(".").split(".") if p])
            if name in dotted:
                found.add(me)
    return found


def dotted_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def added_names_ok(original: dict, fixed: dict) -> bool:
    """The fixed namespace is the original's plus the fix's own names (a ROCm flag False on
    NVIDIA; ``torch``, the torch module)."""
    extra = set(fixed) - set(original)
    if set(original) - set(fixed):
        return False
    for name in extra:
        if fixed[name] == "module torch":
            continue
        if "rocm" in name.lower() and fixed[name] == "False":
            continue
        return False
    return all(original[k] == fixed[k] for k in original)


def compare(original_root: Path, fixed_root: Path, modules, work: Path, catch_all=False):
    """{dotted: status}: identical / different: why / skipped: why; and the ROCm-side changes."""
    statuses, rocm_changed = {}, 0
    for dotted in modules:
        a = import_record(work, original_root, dotted, catch_all=catch_all)
        if a.get("error"):
            statuses[dotted] = "skipped: " + a["error"].splitlines()[0][:120]
            continue
        b = import_record(work, fixed_root, dotted, catch_all=catch_all)
        if b.get("error"):
            statuses[dotted] = "different: the fixed module fails: " + b["error"]
            continue
        problems = [k for k in ("settings", "environ", "stdout") if a.get(k) != b.get(k)]
        if not added_names_ok(a["namespace"], b["namespace"]):
            problems.append("namespace")
        statuses[dotted] = "identical" if not problems else "different: " + ", ".join(problems)
        ra = import_record(work, original_root, dotted, hip="6.2", catch_all=catch_all)
        rb = import_record(work, fixed_root, dotted, hip="6.2", catch_all=catch_all)
        if (
            not ra.get("error")
            and not rb.get("error")
            and (ra["settings"], ra["environ"]) != (rb["settings"], rb["environ"])
        ):
            rocm_changed += 1
    return statuses, rocm_changed


def differential(source: Path, work: Path, catch_all=False, limit=None):
    original = work / "original"
    fixed = work / "fixed"
    shutil.copytree(source, original, ignore=shutil.ignore_patterns(".git", "_stubs", "__pycache__"))
    shutil.copytree(original, fixed)
    _write_stubs(work)
    changed = fix_tree(fixed)
    for path, (_, new) in changed.items():
        path.write_text(new, "utf-8")
    modules = sorted(dotted_name(fixed, p) for p in changed)
    # and the modules that star-import a fixed one: a name the fix added would reach them
    modules += sorted(star_importers(fixed, set(modules)) - set(modules))
    if limit:
        modules = modules[:limit]
    statuses, rocm_changed = compare(original, fixed, modules, work, catch_all)
    return changed, statuses, rocm_changed


# -- the test ------------------------------------------------------------------------------------
def test_differential_on_the_vendored_sample(tmp_path):
    changed, statuses, rocm_changed = differential(SAMPLES, tmp_path)
    assert statuses, "nothing was fixed"
    assert all(s == "identical" for s in statuses.values()), statuses
    # every sample with a fix that could be placed was fixed and compared
    assert {
        "train_argparse",
        "test_kernels",
        "setup_params",
        "shop.train",
        "future_code",
        "dotenv_app",
        "lazy_torch",
        "config_train",
        "lab.train",
        "lab_main",
        "shop",
        "arch_guards",
    } <= set(statuses), sorted(statuses)
    # the ROCm side changed where a flag or inline test was used
    assert rocm_changed >= 5, rocm_changed


def test_differential_catches_a_fix_that_changes_nvidia(tmp_path):
    """The harness is not blind: the old fixer's output for a parameter named is_rocm differs."""
    (tmp_path / "src").mkdir()
    original = "import torch\n\ndef setup(is_rocm=True):\n    torch.backends.cuda.matmul.allow_tf32 = True\n\nsetup()\n"
    broken = (
        "import torch\nis_rocm = torch.version.hip is not None\n\ndef setup(is_rocm=True):\n"
        "    if not is_rocm:\n        torch.backends.cuda.matmul.allow_tf32 = True\n\nsetup()\n"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "m.py").write_text(original)
    (tmp_path / "b" / "m.py").write_text(broken)
    _write_stubs(tmp_path)
    statuses, _ = compare(tmp_path / "a", tmp_path / "b", ["m"], tmp_path)
    assert statuses["m"].startswith("different"), statuses


def test_differential_catches_a_new_name_code_can_see(tmp_path):
    """The harness sees what issue 27 is about: a flag in nanoGPT's config, and one that reaches
    a star importer and replaces its is_rocm()."""
    sample = SAMPLES / "config_train.py"
    original = sample.read_text("utf-8")
    broken = original.replace(
        "import torch\n", "import torch\n\nis_rocm = torch.version.hip is not None\n", 1
    )
    for side, text in (("a", original), ("b", broken)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "config_train.py").write_text(text)
        shutil.copytree(SAMPLES / "lab", tmp_path / side / "lab")
        shutil.copy(SAMPLES / "lab_main.py", tmp_path / side / "lab_main.py")
    train = tmp_path / "b" / "lab" / "train.py"
    train.write_text("import torch\n\nis_rocm = torch.version.hip is not None\n" + train.read_text())
    _write_stubs(tmp_path)
    statuses, _ = compare(tmp_path / "a", tmp_path / "b", ["config_train", "lab_main"], tmp_path)
    assert statuses["config_train"].startswith("different") and "namespace" in statuses["config_train"]
    assert statuses["lab_main"].startswith("different: the fixed module fails"), statuses


def test_rocm_record_is_what_the_rule_page_says(tmp_path):
    """The ROCm half: the fixed module imported with ``torch.version.hip`` set (an MI300 reporting
    capability (9, 4)) gives the record ROC106's page asks for, written here from the page: AMD
    GPUs count as lacking the NVIDIA architecture, so a guard that requires it refuses them and an
    optional path falls back. The original sends them down every NVIDIA path."""
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        shutil.copy(SAMPLES / "arch_guards.py", tmp_path / side / "arch_guards.py")
    _write_stubs(tmp_path)
    changed = fix_tree(tmp_path / "b")
    assert list(changed) == [tmp_path / "b" / "arch_guards.py"]
    for path, (_, new) in changed.items():
        path.write_text(new, "utf-8")
    statuses, _ = compare(tmp_path / "a", tmp_path / "b", ["arch_guards"], tmp_path)
    assert statuses == {"arch_guards": "identical"}, statuses  # NVIDIA: the same program
    rocm = import_record(tmp_path, tmp_path / "b", "arch_guards", hip="6.2")["namespace"]
    expected = {"GEMM": "'refused'", "BLACKWELL": "None", "TMA": "'refused'", "ATTENTION": "'sdpa'"}
    assert {k: rocm[k] for k in expected} == expected, rocm
    original = import_record(tmp_path, tmp_path / "a", "arch_guards", hip="6.2")["namespace"]
    assert {k: original[k] for k in expected} != expected  # (the hazard is real under the stub)


if __name__ == "__main__":
    total = {}
    for repo in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            changed, statuses, rocm_changed = differential(Path(repo), Path(tmp), catch_all=True)
            counts = {}
            for s in statuses.values():
                counts[s.split(":")[0]] = counts.get(s.split(":")[0], 0) + 1
            print(
                json.dumps(
                    {
                        "repo": repo,
                        "fixed_modules": len(changed),
                        "compared": len(statuses),
                        "counts": counts,
                        "rocm_side_changed": rocm_changed,
                        "details": {k: v for k, v in statuses.items() if v != "identical"},
                    },
                    indent=1,
                )
            )
