"""No crash in the front ends (issue 15, item 6): the flake8 plugin survives a file nested too
deep to analyse, file names that are not UTF-8 or hold control characters reach every format
escaped, and JSON/SARIF compute a file's fix edits once per file (not once per finding)."""

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conftest import ROOT, run_cli
from rocm_lint.config import Config

HAZARD = "torch.backends.cuda.matmul.allow_tf32 = True"
SOURCE = f"import torch\n{HAZARD}\n"
STRICT = {"PYTHONIOENCODING": "utf-8:strict"}


# -- the flake8 plugin --------------------------------------------------------------------------
def test_flake8_goes_on_after_a_file_nested_too_deep(tmp_path):
    # (a hazard the pre-filter lets through, and an expression nested past what the analysis takes)
    (tmp_path / "deep.py").write_text(
        f"import torch\n{HAZARD}\nf = {'lambda: ' * 500}{HAZARD.split(' =')[0]}\n"
    )
    (tmp_path / "ok.py").write_text(SOURCE)
    import rocm_lint

    src = str(Path(rocm_lint.__file__).resolve().parent.parent)  # the rocm_lint these tests import
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROC", "deep.py", "ok.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "deep.py:1:1: ROC000 rocm-lint could not analyse this file: nesting too deep" in lines
    assert any(line.startswith("ok.py:2:1: ROC101 ") for line in lines)


# -- file names ---------------------------------------------------------------------------------
@pytest.fixture
def odd_names(tmp_path):
    """A file whose name is not UTF-8 (Latin-1 é) and one whose name holds ESC, CR and LF."""
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_text(SOURCE)
    (tmp_path / "a\x1b[31mred\rb\nc.py").write_text(SOURCE)
    return tmp_path


CAFE = "caf\\xe9.py"  # how every format shows the name's byte 0xE9
EVIL = "a\\x1b[31mred\\rb\\nc.py"


@pytest.mark.parametrize("fmt", ["concise", "full", "github", "junit", "json", "sarif"])
def test_odd_file_names_in_every_format(odd_names, fmt):
    result = run_cli("check", "--output-format", fmt, ".", cwd=odd_names, env=STRICT)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    out = result.stdout
    assert not any(ch in out for ch in "\x1b\r") and "\udce9" not in out
    if fmt == "json":
        names = sorted(Path(item["filename"]).name for item in json.loads(out))
        assert names == sorted(["a\x1b[31mred\rb\nc.py", CAFE])  # control characters: JSON escapes
        assert "\\udce9" not in out  # no lone surrogate
    elif fmt == "sarif":
        log = json.loads(out)
        uris = sorted(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        )
        assert uris == ["a%1B%5B31mred%0Db%0Ac.py", "caf%E9.py"]  # the name's bytes, %-encoded
    elif fmt == "junit":
        names = sorted(s.get("name") for s in ET.fromstring(out.split("\n", 1)[1]).iter("testsuite"))
        assert names == sorted([f"./{CAFE}", f"./{EVIL}"])
    else:
        assert CAFE in out and EVIL in out
    if fmt == "concise":
        assert len(out.splitlines()) == 2  # the LF in the name does not break a finding's line


def test_odd_file_names_in_diff_errors_and_baseline(odd_names):
    diff = run_cli("check", "--diff", ".", cwd=odd_names, env=STRICT)
    assert "Traceback" not in diff.stderr and diff.returncode == 1
    assert f"--- a/{CAFE}" in diff.stdout and f"+++ b/{EVIL}" in diff.stdout  # no `./`: git apply takes it
    assert "\x1b" not in diff.stdout
    (odd_names / "b\x1bad.py").write_bytes(b"import torch\n\xff\xfe\n")  # undecodable: an error line
    errors = run_cli("check", ".", cwd=odd_names, env=STRICT)
    assert "rocm-lint: error: ./b\\x1bad.py: cannot decode" in errors.stderr
    baseline = run_cli("check", "--write-baseline", "b.json", ".", cwd=odd_names, env=STRICT)
    assert "Traceback" not in baseline.stderr, baseline.stderr
    paths = sorted(e["path"] for e in json.loads((odd_names / "b.json").read_text("utf-8"))["findings"])
    assert paths == sorted(["a\x1b[31mred\rb\nc.py", CAFE])
    again = run_cli("check", "--baseline", "b.json", ".", cwd=odd_names, env=STRICT)
    assert "Found 0 findings" in again.stderr  # the keys read back


# -- JSON/SARIF fix edits: once per file -----------------------------------------------------------
def _module(n: int) -> str:
    return "import torch\n\n" + "".join(
        f"def f{i}():\n    x = {i}\n    {HAZARD}\n    return x\n\n" for i in range(n)
    )


def _whole_file_fixes(tmp_path: Path, n: int, monkeypatch) -> int:
    """How many times the JSON/SARIF edit step fixes a module with ``n`` fixable findings."""
    from rocm_lint.cli_report import _with_edits
    from rocm_lint.engine import check_file
    from rocm_lint.fix import engine

    calls = []
    real = engine.fix_source

    def counted(*args, **kwargs):
        calls.append(len(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "fix_source", counted)
    path = tmp_path / f"m{n}.py"
    path.write_text(_module(n))
    findings = check_file(str(path), Config())
    assert len([f for f in findings if f.fix is not None]) == n
    with_edits = _with_edits(findings, Config())
    assert all(f.fix is not None and f.fix.edits for f in with_edits if f.recipe is not None)
    return len(calls)


def test_json_edits_scale_with_the_findings_of_a_file(tmp_path, monkeypatch):
    """20 or 200 findings in one file: one fix of the whole file, split per finding (fixing each
    finding alone was quadratic: a LibCST transform, a verification and a whole-file diff per
    finding).  Counted, not timed."""
    assert _whole_file_fixes(tmp_path, 20, monkeypatch) == 1
    assert _whole_file_fixes(tmp_path, 200, monkeypatch) == 1


CASES = {
    "separate": _module(12),
    "neighbours_share_a_block": f"import torch\n{HAZARD}\ntorch.backends.cudnn.allow_tf32 = True\nx = 1\n{HAZARD}\n",
    "flag_right_after_imports": f"import torch\n{HAZARD}\nx = 1\n\n{HAZARD}\n",
    "crlf": f"import torch\r\n\r\n{HAZARD}\r\nx = 1\r\n\r\n{HAZARD}\r\n",
    "predicate_bound_midway": (
        f"import torch\n\ndef f():\n    {HAZARD}\n\nIS_ROCM = torch.version.hip is not None\n\n"
        f"def g():\n    {HAZARD}\n    x = 1; {HAZARD}\n\nclass A:\n    {HAZARD}\n"
    ),
}


FIXTURES = [p for p in sorted((ROOT / "fixtures").glob("*/*.py")) if not p.stem.endswith("_ok")]


@pytest.mark.parametrize(
    "source",
    [*CASES.values(), *[p.read_text("utf-8") for p in FIXTURES]],
    ids=[*CASES, *[p.name for p in FIXTURES]],
)
def test_edits_per_file_are_the_edits_of_each_finding_alone(tmp_path, source):
    from rocm_lint.engine import check_source
    from rocm_lint.fix.api import edits_by_finding, edits_for

    path = str(tmp_path / "m.py")
    Path(path).write_text(source, encoding="utf-8", newline="")
    findings = check_source(path, source, Config())
    if isinstance(findings, list):
        assert edits_by_finding(path, source, findings, Config()) == [
            edits_for(path, source, f, Config()) for f in findings
        ]


def test_a_rule_that_crashes_costs_one_error_line(tmp_path, monkeypatch, request):
    """A bug in one rule on one file is that file's error, the other files are still checked."""
    from rocm_lint.config import Config
    from rocm_lint.engine_paths import check_paths
    from rocm_lint.rules import full_masks

    (tmp_path / "a.cu").write_text(
        "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"
    )
    (tmp_path / "b.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")

    def broken(unit):
        raise ValueError("boom")
        yield

    import dataclasses

    checkers = full_masks.ROC602.source_checkers
    monkeypatch.setattr(
        full_masks.ROC602, "source_checkers", [dataclasses.replace(c, fn=broken) for c in checkers]
    )
    from rocm_lint import registry

    registry.source_checkers.cache_clear()
    request.addfinalizer(registry.source_checkers.cache_clear)  # after monkeypatch restores the rule
    report = check_paths([str(tmp_path)], Config(), jobs=1)
    assert [
        e.path.endswith("a.cu") and "internal error" in e.reason and "boom" in e.reason for e in report.errors
    ] == [True]
    assert [f.code for f in report.findings] == ["ROC101"]


def test_flake8_without_roc_selected_runs_no_analysis(tmp_path):
    """flake8 runs every installed plugin on every file and filters afterwards: a run that does
    not select ROC must not pay for the analysis (it cost +18% of `flake8 --select E9`)."""
    (tmp_path / "t.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    code = (
        "import sys\nfrom flake8.main.cli import main\nimport rocm_lint.engine as engine\n"
        "calls = []\nreal = engine.analyse_python_tree\n"
        "engine.analyse_python_tree = lambda *a, **k: calls.append(1) or real(*a, **k)\n"
        "for select in sys.argv[1:]:\n"
        "    try:\n"
        "        main(['-j1', '--select', select, '--exit-zero', 't.py'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    sys.stderr.write('%s analysed:%s\\n' % (select, bool(calls)))\n"
    )
    quiet = subprocess.run([sys.executable, "-c", code, "E9"], capture_output=True, text=True, cwd=tmp_path)
    assert "E9 analysed:False" in quiet.stderr, quiet.stderr
    assert "ROC101" not in quiet.stdout
    loud = subprocess.run(
        [sys.executable, "-c", code, "E9,ROC1"], capture_output=True, text=True, cwd=tmp_path
    )
    assert "ROC101" in loud.stdout and "analysed:True" in loud.stderr, loud.stdout + loud.stderr
