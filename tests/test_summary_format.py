"""`--output-format summary` (the Markdown job summary the Action writes to $GITHUB_STEP_SUMMARY)
and `--extra-output FORMAT=FILE` (more formats from one run)."""

import io
import json

import pytest

from conftest import run_cli
from rocm_lint.finding import Applicability, FileError, Finding, Fix
from rocm_lint.output.summary import HOTTEST, render_summary

SAFE = Fix(Applicability.SAFE, "gate it")
UNSAFE = Fix(Applicability.UNSAFE, "rewrite it")


def _summary(findings, **kw):
    out = io.StringIO()
    render_summary(findings, out, root="/repo", **kw)
    return out.getvalue()


def test_counts_by_family_fixable_and_the_hottest_files():
    findings = [Finding("/repo/csrc/a.cu", i, 0, "ROC601", "m") for i in range(1, 4)] + [
        Finding("/repo/csrc/a.cu", 9, 0, "ROC702", "m", fix=SAFE),
        Finding("/repo/train.py", 2, 0, "ROC101", "m", fix=SAFE),
        Finding("/repo/x|y.py", 1, 0, "ROC101", "m", fix=UNSAFE),
    ]
    text = _summary(findings, files_checked=7)
    assert text.splitlines()[:3] == [
        "## rocm-lint",
        "",
        "**6 findings** in 3 files (7 files checked); 2 fixable with `rocm-lint check --fix`, "
        "1 more with `--unsafe-fixes`.",
    ]
    rows = [line for line in text.splitlines() if line.startswith("| ROC")]
    assert rows == [
        "| ROC6 Warp and wavefront width | 3 | ROC601 (3) |",  # most findings first
        "| ROC1 NVIDIA-only PyTorch switches and APIs | 2 | ROC101 (2) |",
        "| ROC7 CUDA C++ portability | 1 | ROC702 (1) |",
    ]
    files = [line for line in text.splitlines() if line.startswith("| <code>")]
    assert files == [
        "| <code>csrc/a.cu</code> | 4 |",
        "| <code>train.py</code> | 1 |",
        "| <code>x&#124;y.py</code> | 1 |",
    ]  # a `|` in a name does not split the row


def test_many_files_are_cut_and_errors_are_listed():
    findings = [Finding(f"/repo/f{i:02}.py", 1, 0, "ROC101", "m") for i in range(HOTTEST + 3)]
    text = _summary(findings, errors=[FileError("/repo/big.bin", "binary <file>")])
    assert text.count("| <code>f") == HOTTEST
    assert "| 3 more files | 3 |" in text
    assert "**1 file could not be analysed.**" in text
    assert "| <code>big.bin</code> | binary &lt;file&gt; |" in text


def test_no_findings():
    assert _summary([], files_checked=1) == "## rocm-lint\n\nNo findings (1 file checked).\n"


@pytest.mark.integration  # runs the CLI
def test_extra_outputs_come_from_the_same_run(tmp_path):
    (tmp_path / "train.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    proc = run_cli(
        "check",
        "--output-format",
        "github",
        "--extra-output",
        "sarif=out.sarif",
        "--extra-output",
        "summary=sub.md",
        "--extra-output",
        "json=out.json",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("::error title=rocm-lint (ROC101),file=train.py,line=2,")
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["ROC101"]
    assert [f["code"] for f in json.loads((tmp_path / "out.json").read_text())] == ["ROC101"]
    assert "**1 finding** in 1 file (1 file checked); 1 fixable" in (tmp_path / "sub.md").read_text()
    # --output-format summary on stdout: Markdown, no summary line on stderr (a machine format)
    proc = run_cli("check", "--output-format", "summary", cwd=tmp_path)
    assert proc.stdout.startswith("## rocm-lint\n") and "Found" not in proc.stderr
    # usage errors
    for args, message in [
        (["--extra-output", "sarif"], "expected FORMAT=FILE"),
        (["--extra-output", "yaml=x"], "expected FORMAT=FILE"),
        (["--extra-output", "sarif=no/such/dir/x.sarif"], "no such directory"),
        (["--extra-output", "sarif=x.sarif", "--statistics"], "cannot be combined"),
    ]:
        proc = run_cli("check", *args, cwd=tmp_path)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
