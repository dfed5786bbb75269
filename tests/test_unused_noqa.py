"""ROC001: unused suppressions (ruff's RUF100), off by default, through the real CLI.

fixtures/unused_noqa/: `X` holds `expect: ROC001` markers, `X_ok` none, `X.fixed` is what `--fix`
makes of `X` (Python, C++ and a shell file: the same rule in each syntax)."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, expected_findings, run_cli

UNUSED = FIXTURES / "unused_noqa"
POSITIVE = sorted(p for p in UNUSED.glob("unused.*") if p.suffix != ".fixed")
NEGATIVE = sorted(UNUSED.glob("unused_ok.*"))


def findings(*args, cwd=None):
    proc = run_cli("check", "--no-cache", "--output-format", "json", *map(str, args), cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def roc001(paths, *options, cwd=None):
    return sorted(
        (f["filename"], f["location"]["row"])
        for f in findings(*options, *paths, cwd=cwd)
        if f["code"] == "ROC001"
    )


def test_fixtures_cover_every_syntax():
    assert {p.suffix for p in POSITIVE} == {".py", ".cu", ".sh"} == {p.suffix for p in NEGATIVE}


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.name)
def test_markers(path):
    expected = sorted(
        (str(path), line) for (line, code), n in expected_findings(path).items() if code == "ROC001"
    )
    assert expected
    assert roc001([path], "--extend-select", "ROC001") == expected


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.name)
def test_negatives(path):
    assert roc001([path], "--extend-select", "ROC001") == []


def test_off_by_default_and_turned_on_by_select():
    assert roc001(POSITIVE) == []  # select = ["ROC"] (the default) does not turn it on
    assert roc001(POSITIVE, "--select", "ROC") == []
    on = roc001(POSITIVE, "--extend-select", "ROC001")
    assert on and roc001(POSITIVE, "--extend-select", "ROC0") == on
    # `--select ROC001` alone: the codes of rules switched off are not judged, unknown ones are.
    only = roc001(POSITIVE, "--select", "ROC001")
    assert only == [(str(UNUSED / "unused.py"), 6)]  # the ROC999 noqa comment
    assert roc001(POSITIVE, "--extend-select", "ROC001", "--ignore", "ROC001") == []


def test_config_file_turns_it_on(tmp_path):
    shutil.copy(UNUSED / "unused.py", tmp_path / "unused.py")
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nextend-select = ["ROC001"]\n')
    assert [line for _, line in roc001(["unused.py"], cwd=tmp_path)] == [4, 5, 6, 7, 8]


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.name)
def test_fix(path, tmp_path):
    """--fix gives the .fixed file (other tools' codes kept, the line kept), and a second run
    finds nothing left."""
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    proc = run_cli("check", "--no-cache", "--extend-select", "ROC001", "--fix", copy)
    assert proc.returncode in (0, 1), proc.stderr
    assert copy.read_text() == (UNUSED / f"{path.name}.fixed").read_text()
    assert len(copy.read_text().splitlines()) == len(path.read_text().splitlines())
    assert roc001([copy], "--extend-select", "ROC001") == []

    # the fix touched only the suppressions: the other findings are the same
    def others(p):
        return sorted((f["location"]["row"], f["code"]) for f in findings(p) if f["code"] != "ROC001")

    assert others(copy) == others(path)


def test_whole_comment_goes_and_fix_with_other_fixes(tmp_path):
    """A comment that held only the suppression goes with the blanks before it; ROC001's edits
    come after the Python rules' own fixes in the same run."""
    src = tmp_path / "t.py"
    src.write_text("import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nx = 1  # noqa: ROC101\n")
    proc = run_cli("check", "--no-cache", "--extend-select", "ROC001", "--fix", src)
    assert proc.returncode in (0, 1), proc.stderr
    text = src.read_text()
    assert "x = 1\n" in text and "noqa" not in text
    assert (
        "allow_tf32" in text
        and text != "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nx = 1\n"
    )


def test_suppressions_the_rule_names_are_kept(tmp_path):
    """`# noqa: ROC001` on the line keeps its stale codes; a file skipped whole gets nothing."""
    (tmp_path / "a.py").write_text("import torch\nx = 1  # noqa: ROC101, ROC001\n")
    (tmp_path / "b.py").write_text("# flake8: noqa\nimport torch\nx = 1  # noqa: ROC101\n")
    assert roc001([tmp_path / "a.py", tmp_path / "b.py"], "--extend-select", "ROC001") == []


def test_prefix_and_per_file_ignores(tmp_path):
    (tmp_path / "k.cu").write_text(
        "__device__ float f(float v) {\n"
        "  return __shfl_xor_sync(0xffffffff, v, 1);  // NOLINT(ROC6)\n}\n"
        "__device__ float g(float v) { return v; }  // NOLINT(ROC6)\n"
    )
    assert [line for _, line in roc001([tmp_path / "k.cu"], "--extend-select", "ROC001")] == [4]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nextend-select = ["ROC001"]\n[tool.rocm-lint.per-file-ignores]\n"k.cu" = ["ROC6"]\n'
    )
    assert roc001(["k.cu"], cwd=tmp_path) == []  # ROC6 is off for the file: its codes are not judged


def test_rule_page_and_registry():
    proc = run_cli("rule", "ROC001")
    assert proc.returncode == 0, proc.stderr
    assert "unused-suppression" in proc.stdout and "Off by default" in proc.stdout
    from rocm_lint.docgen import render_rule
    from rocm_lint.registry import all_rules

    (rule,) = [r for r in all_rules() if r.code == "ROC001"]
    assert rule.fix is not None and rule.fix.value == "safe"
    assert (ROOT / "docs" / "rules" / "ROC001.md").read_text("utf-8") == render_rule(rule)


def test_flake8_never_reports_it(tmp_path):
    """ROC001 is the CLI's and the language server's: flake8 applies noqa itself (and has
    flake8-noqa for unused ones), so the plugin never reports it, even when selected."""
    shutil.copy(UNUSED / "unused.py", tmp_path / "unused.py")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "ROC",
            "--extend-select",
            "ROC001",
            str(tmp_path / "unused.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "ROC001" not in proc.stdout
