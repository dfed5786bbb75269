"""Every rule fixture: the findings are exactly the ``# expect:`` markers,
through the engine (CLI path) and through flake8 (the plugin path)."""

import subprocess
import sys
from collections import Counter

import pytest

from conftest import RULE_FIXTURES, expected_findings, run_cli
from rocm_lint.config import Config
from rocm_lint.engine import check_file
from rocm_lint.registry import all_rules

FIXTURE_FILES = sorted(RULE_FIXTURES.glob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_engine_matches_markers(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    got = Counter((f.line, f.code) for f in result)
    assert got == expected_findings(path)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_is_not_trivial(path):
    """A positive fixture marks findings; a negative one names no marker but holds triggers."""
    codes = {c for _, c in expected_findings(path)}
    if path.stem.endswith("_ok"):
        assert not codes
        rule = path.stem[:-3]
        triggers = next(r.triggers for r in all_rules() if r.code == rule)
        text = path.read_text("utf-8")
        assert any(t in text for t in triggers), "a negative fixture must contain look-alikes"
    else:
        assert path.stem in codes, f"{path.name} marks no {path.stem} finding"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_python_rule_has_fixtures(rule):
    if "python" in rule.languages:
        assert (RULE_FIXTURES / f"{rule.code}.py").is_file()
        assert (RULE_FIXTURES / f"{rule.code}_ok.py").is_file()


def _flake8_lines(paths):
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "ROC",
         "--format", "%(path)s:%(row)d:%(col)d: %(code)s %(text)s", *map(str, paths)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(proc.stdout.splitlines())


def test_flake8_and_cli_report_identical_findings():
    paths = FIXTURE_FILES
    flake8 = _flake8_lines(paths)
    proc = run_cli("check", "--output-format", "concise", "--quiet", *paths)
    assert proc.returncode == 1, proc.stderr
    ours = sorted(proc.stdout.splitlines())
    assert flake8 == ours
    assert len(ours) == sum(sum(expected_findings(p).values()) for p in paths)


def test_flake8_plugin_is_registered():
    proc = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "rocm-lint" in proc.stdout
