"""The project model (rocm_lint.python.project): facts that live in another module.

fixtures/project/ is a small package whose hazards and gates cross module boundaries (a platform
module with predicates and a capability wrapper, nvcc flag helpers, options kept on ``self``).
Its ``# expect:`` markers must be reported exactly, whichever way the files reach the linter:
the whole tree, one changed file at a time (pre-commit), flake8, and the language server's
entry point; ``--diff`` reuses the imported predicate instead of binding a new flag.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, expected_findings, run_cli

PROJECT = ROOT / "fixtures" / "project"
FILES = sorted(p for p in PROJECT.rglob("*.py"))


def _found(stdout: str, base: Path) -> Counter:
    out: Counter = Counter()
    for line in stdout.splitlines():
        path, line_no, _col, rest = line.split(":", 3)
        where = Path(path) if Path(path).is_absolute() else base / path
        out[(str(where.resolve().relative_to(base.resolve())), int(line_no), rest.split()[0])] += 1
    return out


def _expected() -> Counter:
    out: Counter = Counter()
    for path in FILES:
        for (line, code), n in expected_findings(path).items():
            out[(str(path.relative_to(PROJECT)), line, code)] += n
    return out


def test_whole_tree_reports_exactly_the_markers():
    proc = run_cli("check", "--output-format", "concise", "--quiet", PROJECT)
    assert proc.returncode == 1, proc.stderr
    assert _found(proc.stdout, PROJECT) == _expected()


def test_whole_tree_in_worker_processes_reports_the_same(tmp_path):
    # 200 files or more go to worker processes: the pre-pass is spread over them too.
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    for i in range(210):
        (copy / "acme" / f"filler_{i}.py").write_text(f"VALUE_{i} = {i}\n")
    proc = run_cli("check", "--output-format", "concise", "--quiet", "--jobs", "2", copy)
    assert proc.returncode == 1, proc.stderr
    assert _found(proc.stdout, copy) == _expected()


@pytest.mark.parametrize("name", [str(p.relative_to(PROJECT)) for p in FILES])
def test_one_changed_file_reports_its_markers(name):
    """pre-commit hands over the changed files only: the wrapper's module is read anyway."""
    proc = run_cli("check", "--output-format", "concise", "--quiet", name, cwd=PROJECT)
    assert proc.returncode in (0, 1), proc.stderr
    want = Counter({k: n for k, n in _expected().items() if k[0] == name})
    assert _found(proc.stdout, PROJECT) == want


def test_flake8_reports_the_same():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "ROC",
            "--format",
            "%(path)s:%(row)d:%(col)d: %(code)s %(text)s",
            *[str(p.relative_to(PROJECT)) for p in FILES],
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert _found(proc.stdout, PROJECT) == _expected()


def test_language_server_entry_point_reports_the_same():
    from rocm_lint.config import Config
    from rocm_lint.engine import check_source

    path = PROJECT / "acme" / "model.py"
    findings = check_source(str(path), path.read_text("utf-8"), Config())
    assert Counter((f.line, f.code) for f in findings) == expected_findings(path)


def test_diff_reuses_the_imported_predicate(tmp_path):
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "platform.py").write_text("import torch\nON_AMD = torch.version.hip is not None\n")
    (pkg / "train.py").write_text(
        "import torch\nfrom .platform import ON_AMD\n\n\ndef setup():\n"
        "    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    proc = run_cli("check", "--fix", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = (pkg / "train.py").read_text()
    assert "    if not ON_AMD:\n        torch.backends.cuda.matmul.allow_tf32 = True\n" in fixed
    assert "version.hip" not in fixed  # no second flag
    ast.parse(fixed)


def test_an_imported_name_that_is_no_predicate_is_not_reused(tmp_path):
    """The fix's checker verifies an imported flag by reading its module itself: a name the
    module rebinds is not a flag, so the fix binds its own."""
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "platform.py").write_text(
        "import torch\nON_AMD = torch.version.hip is not None\n\n\ndef force(v):\n"
        "    global ON_AMD\n    ON_AMD = v\n"
    )
    (pkg / "train.py").write_text(
        "import torch\nfrom .platform import ON_AMD\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    proc = run_cli("check", "--fix", tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # the fix ran (2: an error)
    fixed = (pkg / "train.py").read_text()
    assert "if not ON_AMD:" not in fixed, fixed


def test_nothing_outside_the_roots_is_read(tmp_path, monkeypatch):
    """Third-party and standard modules are never resolved: only files under the project."""
    from rocm_lint.config import Config
    from rocm_lint.python.project import PREDICATES, Project

    (tmp_path / "m.py").write_text("import os\n")
    project = Project(Config(), [str(tmp_path)])
    assert project.lookup(str(tmp_path / "m.py"), "os.path.join", PREDICATES) is None
    assert project.lookup(str(tmp_path / "m.py"), "torch.version.hip", PREDICATES) is None
    assert project.find_module(str(tmp_path / "m.py"), "json") is None


def test_import_cycles_and_deep_reexports_terminate(tmp_path):
    from rocm_lint.config import Config
    from rocm_lint.python.project import PREDICATES, Project

    for i in range(6):  # a.m0 re-exports from m1, ... m5 defines it
        body = (
            f"from .m{i + 1} import FLAG\n"
            if i < 5
            else "import torch\nFLAG = torch.version.hip is not None\n"
        )
        (tmp_path / f"m{i}.py").write_text(body)
    (tmp_path / "x.py").write_text("from .y import FLAG\n")
    (tmp_path / "y.py").write_text("from .x import FLAG\n")
    (tmp_path / "__init__.py").write_text("")
    project = Project(Config(), [str(tmp_path)])
    importer = str(tmp_path / "user.py")
    assert project.lookup(importer, ".m4.FLAG", PREDICATES) is not None  # within the depth bound
    assert project.lookup(importer, ".m0.FLAG", PREDICATES) is None  # beyond it
    assert project.lookup(importer, ".x.FLAG", PREDICATES) is None  # a cycle


def test_candidates_are_definitions_and_their_callers_only():
    """The pre-pass's text-only candidates: a list of names, a logger line followed by a class,
    or a string that mentions a wrapper exports nothing (they made every file of a large tree
    look interesting); a function calling a wrapper is one."""
    from rocm_lint.rules.capability import CAPABILITY_EXPORTS

    text = (
        "import logging\nimport torch\n"
        "__all__ = ['get_cc', 'wrap']\n"
        "log = logging.getLogger(__name__)\n"
        "class Helper:\n    def cc(self):\n        return torch.cuda.get_device_capability()\n"
        "def get_cc():\n    return torch.cuda.get_device_capability()\n"
        "def wrap():\n    return get_cc()\n"
        "DOC = 'see get_cc'\n"
    )
    assert sorted(CAPABILITY_EXPORTS.candidates(text)) == ["get_cc", "wrap"]


@pytest.mark.parametrize(
    "text, reached",
    [
        ("from .platform import get_cc\nif get_cc() >= (9, 0): pass\n", ["get_cc"]),
        ("from .platform import (\n    ON_AMD,\n    get_cc as cc,  # the wrapper\n)\n", ["get_cc"]),
        ("from acme import platform\nplatform.get_cc()\n", ["get_cc"]),
        ("import acme.platform as plat\nplat.get_cc()\n", ["get_cc"]),
        ("def get_cc():\n    return 1\nget_cc()\n", ["get_cc"]),
        # mentioned only: a method of another object, a string, a local name, torch's own module
        ("x = obj.get_cc()\ns = 'get_cc'\n", []),
        ("def f():\n    get_cc = 1\n    return get_cc\n", []),
        ("import torch\ntorch.cuda.get_cc()\n", []),
    ],
)
def test_trigger_names_are_those_the_file_can_reach(text, reached):
    from rocm_lint.config import Config
    from rocm_lint.python.project import Project

    project = Project(Config(), [])
    project.trigger_words = frozenset({"get_cc", "unused_name"})
    project.prepassed = True
    assert project.mentioned_triggers(text) == reached
