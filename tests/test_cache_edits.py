"""JSON and SARIF carry each fix's verified edits: they are computed once and kept with the file's
findings in the content cache, then reused on a warm run while nothing the fix read changed (the
file, a module it imports, the settings, the formatter settings above it, the project's Python
files); the output is the same either way."""

from __future__ import annotations

import json
import os
import time

import pytest

from rocm_lint import cli
from rocm_lint.fix import api

TRAIN = """\
import torch

from pkg.helpers import SIZE

torch.backends.cuda.matmul.allow_tf32 = True
print(SIZE)
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text("SIZE = 4\n")
    (root / "pkg" / "train.py").write_text(TRAIN)
    return root


@pytest.fixture
def computed(monkeypatch):
    """The files whose edits were computed (not answered by the cache), per run."""
    seen = []
    real = api.edits_by_finding

    def spy(path, text, findings, config):
        seen.append(os.path.basename(path))
        return real(path, text, findings, config)

    monkeypatch.setattr(api, "edits_by_finding", spy)
    return seen


def _run(project, capsys, seen, *extra):
    seen.clear()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        code = cli.main(["check", ".", "--exit-zero", "--output-format", "json", "-q", *extra])
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out), list(seen)


def _touch(path, text):
    path.write_text(text)
    later = time.time() + 5  # another modification time, whatever the file system's granularity
    os.utime(path, (later, later))


def _edits(report):
    return [f["fix"]["edits"] for f in report if f.get("fix")]


def test_warm_run_reuses_the_verified_edits(project, capsys, computed):
    cold, first = _run(project, capsys, computed)
    warm, second = _run(project, capsys, computed)
    assert first == ["train.py"] and second == []
    assert warm == cold and _edits(cold)
    uncached, third = _run(project, capsys, computed, "--no-cache")
    assert third == ["train.py"] and uncached == cold


def test_an_edit_of_the_file_recomputes(project, capsys, computed):
    _run(project, capsys, computed)
    _touch(project / "pkg" / "train.py", TRAIN.replace("print(SIZE)", "print(SIZE, 1)"))
    report, seen = _run(project, capsys, computed)
    assert seen == ["train.py"] and _edits(report)


def test_an_edit_of_an_imported_module_recomputes(project, capsys, computed):
    _run(project, capsys, computed)
    _touch(project / "pkg" / "helpers.py", "SIZE = 8\nIS_HIP = False\n")
    _, seen = _run(project, capsys, computed)
    assert seen == ["train.py"]


def test_a_change_of_the_settings_recomputes(project, capsys, computed):
    _run(project, capsys, computed)
    _touch(project / "pyproject.toml", "[project]\nname = 'p'\n\n[tool.rocm-lint]\nignore = ['ROC401']\n")
    _, seen = _run(project, capsys, computed)
    assert seen == ["train.py"]
    # the formatter's settings are the fix's too (it wraps what it makes too long)
    _touch(
        project / "pyproject.toml",
        "[project]\nname = 'p'\n\n[tool.rocm-lint]\nignore = ['ROC401']\n\n[tool.ruff]\nline-length = 60\n",
    )
    _, seen = _run(project, capsys, computed)
    assert seen == ["train.py"]
    _, seen = _run(project, capsys, computed)
    assert seen == []


def test_a_new_module_that_star_imports_the_file_recomputes(project, capsys, computed):
    # a module that star-imports train.py would see a new flag: the fix must be worked out again
    _run(project, capsys, computed)
    _touch(project / "main.py", "from pkg.train import *\n")
    _, seen = _run(project, capsys, computed)
    assert seen == ["train.py"]


def test_a_file_changed_after_its_check_is_not_kept(project, capsys, computed, monkeypatch):
    # the edits are worked out from the text the check hashed, or not kept at all
    real = api._cached_edits

    def racing(cache, path, wanted, config, workspace=None):
        _touch(project / "pkg" / "train.py", TRAIN + "x = 1\n")
        return real(cache, path, wanted, config, workspace)

    monkeypatch.setattr(api, "_cached_edits", racing)
    _run(project, capsys, computed)
    monkeypatch.setattr(api, "_cached_edits", real)
    _, seen = _run(project, capsys, computed)
    assert seen == ["train.py"]


def test_sarif_uses_the_same_cached_edits(project, capsys, computed):
    _run(project, capsys, computed)
    computed.clear()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        assert cli.main(["check", ".", "--exit-zero", "--output-format", "sarif", "-q"]) == 0
    finally:
        os.chdir(cwd)
    sarif = json.loads(capsys.readouterr().out)
    assert computed == [] and sarif["runs"][0]["results"][0]["fixes"]
