"""Adding a rule touches the rule's module, its page and its fixtures only: shown with the
scaffolder on a copy of the repository, then the copy's own tests, CLI and flake8 see the rule."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    copy = tmp_path_factory.mktemp("scaffold") / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis")
    for d in ("src", "fixtures", "docs", "tests", "scripts", "benchmarks", "semgrep-rules"):
        shutil.copytree(ROOT / d, copy / d, ignore=ignore, symlinks=True)  # rocm-lint.yaml is a link
    for f in ("mkdocs.yml", "README.md", "pyproject.toml", "Makefile"):
        shutil.copy(ROOT / f, copy / f)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-qm", "before")
    env = dict(os.environ, PYTHONPATH=str(copy / "src"))
    for args in (
        [
            "ROC109",
            "ungated-sync-debug-mode",
            "--call",
            "torch.cuda.set_sync_debug_mode",
            "--summary",
            "torch.cuda.set_sync_debug_mode() without a ROCm gate: a test rule",
            "--reference",
            "https://pytorch.org/docs/stable/cuda.html",
        ],
        [
            "ROC799",
            "reduce-add-sync",
            "--language",
            "cuda",
            "--pattern",
            r"__reduce_add_sync\b",
            "--summary",
            "__reduce_add_sync has no HIP counterpart: a test rule",
            "--reference",
            "https://rocm.docs.amd.com/projects/HIP/en/latest/",
        ],
    ):
        proc = subprocess.run(
            [sys.executable, "scripts/new_rule.py", *args],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return copy, env


def test_scaffolder_touches_only_module_page_and_fixtures(repo):
    copy, _ = repo
    touched = sorted(line[3:] for line in _git(copy, "status", "--porcelain", "-uall").splitlines())
    assert touched == sorted(
        [
            "src/rocm_lint/rules/ungated_sync_debug_mode.py",
            "src/rocm_lint/docs/ROC109.md",
            "docs/rules/ROC109.md",
            "fixtures/rules/ROC109.py",
            "fixtures/rules/ROC109_ok.py",
            "fixtures/rules/ROC109.py.expected",
            "src/rocm_lint/rules/reduce_add_sync.py",
            "src/rocm_lint/docs/ROC799.md",
            "docs/rules/ROC799.md",
            "fixtures/rules/ROC799.cu",
            "fixtures/rules/ROC799_ok.cu",
            "fixtures/rules/ROC799.cu.expected",
            "src/rocm_lint/rule_index.py",
        ]
    )


def test_the_new_rules_pass_the_repositorys_own_tests(repo):
    copy, env = repo
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "tests/test_fixture_snapshots.py",
            "tests/test_docs.py",
            "tests/test_architecture.py",
            "tests/test_rule_fixtures.py",
            "tests/test_docs_site.py",
            "tests/test_registry_index.py",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.integration  # Semgrep on the fixtures, and subprocess checks: minutes
def test_the_new_rules_pass_the_import_hygiene_and_semgrep_tests(repo):
    """The C++ template loads no reader at import (the family's checks run lazily) and declares
    that it has no Semgrep twin yet (Rule.semgrep), so the Semgrep harness holds it to that."""
    copy, env = repo
    proc = subprocess.run(
        # (the pre-commit hook test needs the repository's own hook files: it runs on the repository)
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "--all-tiers",
            "-k",
            "not precommit",
            "tests/test_import_hygiene.py",
            "tests/test_semgrep.py",
            "tests/test_rule_unit.py",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout, proc.stdout[-2000:]


def test_every_front_end_sees_the_new_rules(repo):
    copy, env = repo
    rules = json.loads(
        subprocess.run(
            [sys.executable, "-m", "rocm_lint", "rules", "--json"],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert {"ROC109", "ROC799"} <= {r["code"] for r in rules}
    check = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocm_lint",
            "check",
            "--output-format",
            "concise",
            "-q",
            "fixtures/rules/ROC109.py",
            "fixtures/rules/ROC109_ok.py",
            "fixtures/rules/ROC799.cu",
            "fixtures/rules/ROC799_ok.cu",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = check.stdout.splitlines()
    assert [ln.split(": ")[1].split()[0] for ln in lines] == ["ROC109", "ROC109", "ROC799"], check.stdout
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "ROC109", "fixtures/rules/ROC109.py"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    assert [ln.split()[1] for ln in flake8.stdout.splitlines()] == ["ROC109", "ROC109"], (
        flake8.stdout + flake8.stderr
    )
    page = subprocess.run(
        [sys.executable, "-m", "rocm_lint", "rule", "ROC799"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert page.startswith("# ROC799: reduce-add-sync")
