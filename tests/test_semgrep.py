"""The Semgrep rules in semgrep-rules/ (shipped in the package as rocm_lint/semgrep/rocm-lint.yaml).

`semgrep --test` cannot be used: CUDA syntax (`__global__`, `__device__`) makes Semgrep's C++ parser
report PartialParsing, which `--test` counts as an error. So this harness runs
`semgrep --json` once over annotated fixtures (`// ruleid: rocm-lint.ROC601` or
`// ok: rocm-lint.ROC601` on the line before the code, Semgrep's own convention) and compares.
The parity test checks that every Semgrep finding on the shared C++ fixtures is also a finding
of the built-in scanner, except the differences by design listed in docs/semgrep.md.
"""

import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, RULE_FIXTURES
from rocm_lint.config import Config
from rocm_lint.engine import check_file
from rocm_lint.registry import all_rules
from rocm_lint.semgrep import RULES, semgrep_command

SEMGREP_DIR = ROOT / "semgrep-rules"
SEMGREP_FIXTURES = SEMGREP_DIR / "tests"
ANNOTATION = re.compile(r"(?://|/\*)\s*(ruleid|ok):\s*([\w.,\s-]+?)\s*(?:\*/)?\s*$")
CPP_CODES = [r.code for r in all_rules() if r.code[:4] in ("ROC6", "ROC7")]
SUPPRESSED = re.compile(r"\bNOLINT(?:NEXTLINE)?\b|rocm-lint:\s*ignore")

if semgrep_command() is None:  # pragma: no cover - `make test` installs semgrep
    pytest.skip("semgrep is not installed (pip install -e '.[test]')", allow_module_level=True)


def run_semgrep(files):
    proc = subprocess.run(
        [*semgrep_command(), "scan", "--config", str(RULES), "--json", "--metrics=off", "--disable-version-check",
         "--scan-unknown-extensions", *map(str, files)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    fatal = [e for e in data["errors"] if e.get("level") != "warn"]  # PartialParsing is a warning
    assert fatal == [], fatal
    found = defaultdict(set)
    for r in data["results"]:
        code = r["check_id"].rsplit(".", 1)[-1]  # Semgrep prefixes the config's path
        found[Path(r["path"]).resolve()].add((r["start"]["line"], code))
    return found


def fixture_files():
    return sorted(SEMGREP_FIXTURES.glob("*.cu"))


def shared_files():
    return sorted(p for p in RULE_FIXTURES.iterdir() if p.name.startswith(("ROC6", "ROC7")))


@pytest.fixture(scope="module")
def semgrep_findings():
    """One Semgrep run (start-up is seconds) over every file the tests look at."""
    return run_semgrep(fixture_files() + shared_files())


def annotations(path: Path):
    """{line: (kind, codes)} for the code line each annotation precedes."""
    out = {}
    pending = []
    for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        m = ANNOTATION.search(line)
        if m and line.strip().startswith(("//", "/*")):
            codes = {c.strip().rsplit(".", 1)[-1] for c in m.group(2).split(",") if c.strip()}
            pending.append((m.group(1), codes))
            continue
        for kind, codes in pending:
            entry = out.setdefault(lineno, {"ruleid": set(), "ok": set()})
            entry[kind] |= codes
        pending = []
    return out


# -- the rules file --------------------------------------------------------------------------------
def test_rules_mirror_the_cpp_catalogue():
    assert (SEMGREP_DIR / "rocm-lint.yaml").resolve() == RULES.resolve()
    data = yaml.safe_load(RULES.read_text("utf-8"))
    ids = [r["id"] for r in data["rules"]]
    assert sorted(ids) == [f"rocm-lint.{c}" for c in CPP_CODES]
    for r in data["rules"]:
        code = r["id"].rsplit(".", 1)[-1]
        meta = r["metadata"]
        assert meta["rocm-lint-code"] == code and meta["category"] == "portability"
        assert meta["confidence"] in ("HIGH", "MEDIUM", "LOW")
        assert any(ref.endswith(f"/docs/rules/{code}.md") for ref in meta["references"])
        assert r["severity"] in ("ERROR", "WARNING") and r["languages"] == ["cpp"] and r["message"].strip()


def test_every_rule_has_positive_and_negative_fixtures():
    seen = defaultdict(set)
    for path in fixture_files():
        for entry in annotations(path).values():
            for kind in ("ruleid", "ok"):
                for code in entry[kind]:
                    seen[code].add(kind)
    assert {c: sorted(seen[c]) for c in CPP_CODES} == {c: ["ok", "ruleid"] for c in CPP_CODES}


# -- the harness -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_semgrep_fixture(path, semgrep_findings):
    found = semgrep_findings.get(path.resolve(), set())
    expected = {(line, code) for line, entry in annotations(path).items() for code in entry["ruleid"]}
    forbidden = {(line, code) for line, entry in annotations(path).items() for code in entry["ok"]}
    assert sorted(expected - found) == [], "ruleid lines Semgrep did not report"
    assert sorted(found & forbidden) == [], "ok lines Semgrep reported"
    assert sorted(found - expected) == [], "findings on lines with no ruleid annotation"


# -- parity with the built-in scanner -------------------------------------------------------------------
def builtin(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [f for f in result if f.code in CPP_CODES]


@pytest.mark.parametrize("path", fixture_files() + shared_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_semgrep_finding_is_a_builtin_finding(path, semgrep_findings):
    ours = builtin(path)
    found = semgrep_findings.get(path.resolve(), set())
    lines = path.read_text("utf-8").splitlines()
    # By design (docs/semgrep.md): a CUTLASS/CuTe-bound file gets only ROC707 from the built-in
    # scanner, once per library; Semgrep reports each include and the line hazards.
    bound = any(f.code == "ROC707" and ("CUTLASS" in f.message or "CuTe" in f.message) for f in ours)
    if bound:  # compared per file: Semgrep's ROC707 must be the built-in one
        assert {c for _, c in found if c == "ROC707"} <= {f.code for f in ours}
        return
    if any(f.code == "ROC707" for f in ours):  # libcu++: once per file in the built-in scanner
        found = {(l, c) for l, c in found if c != "ROC707"}
    # By design: Semgrep does not read clang-tidy's NOLINT or rocm-lint's ignore comments.
    found = {(l, c) for l, c in found if not SUPPRESSED.search(lines[l - 1])}
    assert sorted(found - {(f.line, f.code) for f in ours}) == []


def test_parity_is_not_vacuous(semgrep_findings):
    """The shared fixtures give Semgrep real work: most rules find something there."""
    codes = {c for p in shared_files() for _, c in semgrep_findings.get(p.resolve(), set())}
    assert len(codes) >= 11, sorted(codes)


# -- Semgrep's limits on CUDA, as verified on the pinned version ---------------------------------------
def test_cuda_files_need_explicit_paths_and_unknown_extensions(tmp_path):
    shutil.copy(SEMGREP_FIXTURES / "ROC701.cu", tmp_path / "k.cu")
    base = [*semgrep_command(), "scan", "--config", str(RULES), "--json", "--metrics=off",
            "--disable-version-check"]
    count = lambda args: len(json.loads(subprocess.run(
        base + args, capture_output=True, text=True, timeout=300, cwd=tmp_path).stdout)["results"])
    assert count(["."]) == 0  # a directory: .cu is not a C++ extension to Semgrep
    assert count(["--scan-unknown-extensions", "."]) == 0  # still not: only named files
    assert count(["k.cu"]) == 0  # named, but an unknown extension
    assert count(["--scan-unknown-extensions", "k.cu"]) == 2


# -- the pre-commit hook wrapper -------------------------------------------------------------------------
def test_wrapper_picks_cpp_files(tmp_path, capsys):
    from rocm_lint.semgrep import cpp_files, main

    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\n")
    (tmp_path / "host.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "dev.cpp").write_text("__global__ void k() {}\n")
    (tmp_path / "a.py").write_text("import torch\n")
    names = [str(tmp_path / n) for n in ("k.cu", "host.cpp", "dev.cpp", "a.py")]
    assert cpp_files(names) == [names[0], names[2]]
    assert main([names[1], names[3]]) == 0  # nothing for Semgrep: not even started
    assert main([names[0]]) == 1  # a finding: --error


# -- the pre-commit hook, through the real pre-commit ------------------------------------------------------
def test_precommit_hook(tmp_path_factory):
    pytest.importorskip("pre_commit")
    from test_precommit import _env, _git, hook_repository

    tmp = tmp_path_factory.mktemp("semgrep-hook")
    env = _env(tmp)
    hooks = hook_repository(tmp, env)
    project = tmp / "project"
    project.mkdir()
    shutil.copy(SEMGREP_FIXTURES / "ROC702.cu", project / "kernel.cu")
    (project / "ok.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1.f; }\n")
    (project / "train.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    _git("init", "--quiet", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)
    run = lambda *files: subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "rocm-lint-semgrep", "--color", "never",
         "--files", *files], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    failed = run("kernel.cu", "train.py")
    out = failed.stdout + failed.stderr
    assert failed.returncode == 1, out
    assert "rocm-lint.ROC702" in out and "kernel.cu" in out
    assert "train.py" not in out.split("hook id: rocm-lint-semgrep", 1)[-1]  # Python is not Semgrep's
    passed = run("ok.cu", "train.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
