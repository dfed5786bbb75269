"""The CI output formats (SARIF, GitHub annotations, JUnit) and the terminal ones (colour, code
frame, progress bar), through the real CLI; SARIF is checked against the official 2.1.0 JSON
schema and with Microsoft's SARIF validator."""

import io
import json
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest

from conftest import ROOT, run_cli
from rocm_lint.cli_report import use_color
from rocm_lint.config import Config
from rocm_lint.engine_paths import check_paths
from rocm_lint.output.github import escape_data, escape_property
from rocm_lint.output.progress import ProgressBar, wants_progress
from rocm_lint.registry import all_rules

SCHEMA = (
    ROOT / "tests" / "data" / "sarif-2.1.0.json"
)  # OASIS SARIF 2.1.0 schema, as shipped by sarif-multitool
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A non-ASCII string before the hazard: Python's columns are UTF-8 bytes, CI formats want characters.
TRAIN = (
    "import torch\n"
    'label = "débit"; torch.backends.cuda.matmul.allow_tf32 = True\n'
    'model = torch.compile(model, mode="reduce-overhead")\n'
)
KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(int* out, bool p) {\n"
    "  unsigned int m = __ballot_sync(0xffffffff, p);\n"
    "  out[threadIdx.x] = __popc(m);\n"
    "}\n"
)
LAUNCH = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text(KERNEL)
    (tmp_path / "my scripts").mkdir()
    (tmp_path / "my scripts" / "launch.sh").write_text(LAUNCH)
    (tmp_path / "broken.py").write_bytes(b"import torch\n\0\0\0")
    return tmp_path


def findings_by_code(proc):
    return sorted(ln.split()[1] for ln in proc.stdout.splitlines())


# -- SARIF -------------------------------------------------------------------------------------
@pytest.fixture
def sarif(project):
    proc = run_cli("check", ".", "--output-format", "sarif", cwd=project)
    assert proc.returncode == 2, proc.stderr  # findings, and one file that could not be analysed
    assert "Found" not in proc.stderr  # machine formats print no summary
    return json.loads(proc.stdout)


def test_sarif_matches_the_official_schema(sarif):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text("utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)


def test_sarif_rules_results_and_locations(sarif, project):
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    assert all(r["helpUri"].endswith(f"/{r['id']}.md") and r["shortDescription"]["text"] for r in rules)
    results = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r
        for r in run["results"]
    }
    assert set(results) == {
        ("ROC101", "train.py"),
        ("ROC201", "train.py"),
        ("ROC601", "csrc/k.cu"),
        ("ROC602", "csrc/k.cu"),
        ("ROC702", "csrc/k.cu"),
        ("ROC301", "my%20scripts/launch.sh"),
    }
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    # character columns on a line with a non-ASCII string (the AST's byte offset would be 19)
    region = results[("ROC101", "train.py")]["locations"][0]["physicalLocation"]["region"]
    line = TRAIN.splitlines()[1]
    assert region["startLine"] == 2
    assert region["startColumn"] == line.index("torch") + 1 == 18
    assert region["endColumn"] == line.index(" = True") + 1


def test_sarif_carries_fixes_and_file_errors(sarif):
    run = sarif["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert "fixes" not in by_rule["ROC101"]  # no safe place: a compound line
    fix = by_rule["ROC201"]["fixes"][0]
    inserted = "".join(
        rep["insertedContent"]["text"] for ch in fix["artifactChanges"] for rep in ch["replacements"]
    )
    assert 'mode="default" if is_rocm else "reduce-overhead"' in inserted
    header_fix = by_rule["ROC702"]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert "hip/hip_runtime.h" in header_fix["insertedContent"]["text"]
    assert "fixes" not in by_rule["ROC301"]  # display only
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    assert "binary" in note["message"]["text"]


def test_sarif_uri_of_a_directory_with_a_colon_stays_relative(tmp_path):
    odd = tmp_path / "we,ird:dir"
    odd.mkdir()
    (odd / "a%b.py").write_text(TRAIN, encoding="utf-8")
    data = json.loads(run_cli("check", ".", "--output-format", "sarif", cwd=tmp_path).stdout)
    location = data["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "we%2Cird%3Adir/a%25b.py", "uriBaseId": "%SRCROOT%"}


@pytest.mark.integration  # a real external tool or torch itself: --all-tiers
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
def test_sarif_passes_microsofts_validator(project, tmp_path_factory):
    out = tmp_path_factory.mktemp("sarif") / "rocm-lint.sarif"
    proc = run_cli("check", ".", "--output-format", "sarif", cwd=project)
    out.write_text(proc.stdout, encoding="utf-8")
    validator = subprocess.run(
        ["npx", "--yes", "@microsoft/sarif-multitool@5.7.0", "validate", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = validator.stdout + validator.stderr
    assert "Analysis completed successfully" in report, report
    problems = [ln for ln in report.splitlines() if re.search(r": (error|warning) [A-Z]+\d+:", ln)]
    assert problems == [], "\n".join(problems)


# -- GitHub annotations -------------------------------------------------------------------------
def test_github_annotations(project):
    proc = run_cli("check", ".", "--output-format", "github", cwd=project)
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    tf32 = next(ln for ln in lines if "ROC101" in ln)
    col = TRAIN.splitlines()[1].index("torch") + 1
    assert tf32.startswith(
        f"::error title=rocm-lint (ROC101),file=train.py,line=2,col={col},endLine=2,endColumn="
    )
    assert "::train.py:2:" in tf32
    assert any(
        ln.startswith("::error title=rocm-lint (ROC301),file=my scripts/launch.sh,line=1,") for ln in lines
    )
    assert any("file=broken.py::" in ln and "binary" in ln for ln in lines)
    assert all(ln.startswith("::error ") for ln in lines)


def test_github_escaping():
    assert escape_data("50% of lanes\nlost\r") == "50%25 of lanes%0Alost%0D"
    assert escape_property("a,b:c%") == "a%2Cb%3Ac%25"


# -- JUnit ---------------------------------------------------------------------------------------
def test_junit_report(project):
    proc = run_cli("check", ".", "--output-format", "junit", cwd=project)
    assert proc.returncode == 2
    root = ET.fromstring(proc.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "7" and root.get("errors") == "1"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    kernel = suites["csrc/k.cu"] if "csrc/k.cu" in suites else suites["./csrc/k.cu"]
    cases = kernel.findall("testcase")
    assert sorted(c.get("name") for c in cases) == [
        "rocm-lint.ROC601",
        "rocm-lint.ROC601",
        "rocm-lint.ROC602",
        "rocm-lint.ROC702",
    ]
    assert all(c.find("failure") is not None and c.get("line") for c in cases)
    errors = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert len(errors) == 1 and "broken.py" in errors[0].get("classname")


def test_junit_without_findings_has_one_passing_case(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = run_cli("check", tmp_path, "--output-format", "junit")
    assert proc.returncode == 0
    root = ET.fromstring(proc.stdout)
    cases = list(root.iter("testcase"))
    assert len(cases) == 1 and not list(cases[0])


# -- full: code frame, colour ----------------------------------------------------------------------
def test_every_format_and_flake8_count_characters(project):
    """One column for the hazard after "débit" in every text format and through flake8 (the AST's
    byte offset would say 19; the character column is 18)."""
    col = TRAIN.splitlines()[1].index("torch") + 1
    concise = run_cli("check", "train.py", "--output-format", "concise", cwd=project).stdout
    full = run_cli("check", "train.py", "--output-format", "full", cwd=project).stdout
    [item] = [
        i
        for i in json.loads(run_cli("check", "train.py", "--output-format", "json", cwd=project).stdout)
        if i["code"] == "ROC101"
    ]
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROC", "train.py"],
        cwd=project,
        capture_output=True,
        text=True,
    ).stdout
    expected = f"train.py:2:{col}: ROC101"
    assert expected in concise and expected in full and expected in flake8
    assert item["location"]["column"] == col == 18


def test_full_frame_points_at_the_hazard_in_characters(project):
    proc = run_cli("check", "train.py", "--output-format", "full", cwd=project)
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour
    lines = proc.stdout.splitlines()
    at = lines.index(next(ln for ln in lines if ln.startswith("2 | ")))
    source, caret = lines[at][4:], lines[at + 1][4:]
    assert caret.index("^") == source.index("torch")


def test_force_color_highlights_and_no_color_wins(project):
    colored = run_cli("check", "csrc/k.cu", "--output-format", "full", cwd=project, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in colored.stdout
    plain_text = ANSI.sub("", colored.stdout)
    assert plain_text == run_cli("check", "csrc/k.cu", "--output-format", "full", cwd=project).stdout
    # pygments coloured the C++ code frame: the keyword `unsigned` carries its own colour code
    frame = next(ln for ln in colored.stdout.splitlines() if "__ballot_sync" in ln and "|" in ln)
    assert re.search(r"\x1b\[[0-9;]+munsigned", frame)
    never = run_cli(
        "check",
        "csrc/k.cu",
        "--output-format",
        "full",
        cwd=project,
        env={"FORCE_COLOR": "1", "NO_COLOR": "1"},
    )
    assert "\x1b[" not in never.stdout + never.stderr


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


def test_use_color(monkeypatch):
    for var in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(var, raising=False)
    assert use_color(_Stream(True)) and not use_color(_Stream(False))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(_Stream(True))
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not use_color(_Stream(True))
    monkeypatch.delenv("NO_COLOR")
    assert use_color(_Stream(False))
    monkeypatch.setenv("FORCE_COLOR", "0")
    assert not use_color(_Stream(False))


# -- progress bar ----------------------------------------------------------------------------------
def test_progress_bar_waits_then_draws_then_erases():
    now = [0.0]
    stream = _Stream(True)
    bar = ProgressBar(stream, clock=lambda: now[0])
    bar(1, 100)
    assert stream.getvalue() == ""  # short runs never flash a bar
    now[0] = 0.6
    bar(50, 100)
    assert "50/100 files" in stream.getvalue() and "#" * 15 in stream.getvalue()
    now[0] = 0.61
    bar(51, 100)
    assert "51/100" not in stream.getvalue()  # redrawn at most every 0.1 s
    bar(100, 100)
    assert "100/100" in stream.getvalue()  # but the last one always
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_progress_only_on_a_terminal_and_not_quiet(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    assert wants_progress(_Stream(True), quiet=False)
    assert not wants_progress(_Stream(True), quiet=True)
    assert not wants_progress(_Stream(False), quiet=False)


def test_check_paths_reports_progress(project):
    calls = []
    report = check_paths(
        [str(project)], Config(), jobs=1, progress=lambda done, total: calls.append((done, total))
    )
    assert calls[-1] == (report.files_checked, report.files_checked)
    assert [d for d, _ in calls] == list(range(1, report.files_checked + 1))


# -- stable fingerprints and the project root (issue #17) -----------------------------------------
def _results(proc):
    return json.loads(proc.stdout)["runs"][0]["results"]


def test_sarif_fingerprints_survive_edits_elsewhere(tmp_path):
    (tmp_path / "t.py").write_text(
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    before = [
        r["partialFingerprints"]
        for r in _results(run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path))
    ]
    assert len(before) == 2 and before[0] != before[1]  # two identical lines: told apart by occurrence
    assert all(set(fp) == {"rocmLintLineHash/v1"} for fp in before)
    (tmp_path / "t.py").write_text(
        "import torch\n\n\n# moved down\nx = 1\n"
        "torch.backends.cuda.matmul.allow_tf32   =   True\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    after = _results(run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path))
    assert [r["partialFingerprints"] for r in after] == before
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after] == [6, 7]
    (tmp_path / "t.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = 1\n")
    changed = _results(run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path))
    assert changed[0]["partialFingerprints"] != before[0]


def test_ci_formats_name_files_from_the_repository_root_in_a_subdirectory(tmp_path):
    """Run from `pkg/` of a git work tree: SARIF's %SRCROOT% is the repository root and the URIs
    and GitHub's `file=` are relative to it, as code scanning and annotations resolve them."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "t.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    proc = run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path / "pkg")
    data = json.loads(proc.stdout)
    run = data["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "pkg/t.py",
        "uriBaseId": "%SRCROOT%",
    }
    github = run_cli("check", "--output-format", "github", "t.py", cwd=tmp_path / "pkg").stdout
    assert github.startswith("::error title=rocm-lint (ROC101),file=pkg/t.py,line=2,")
