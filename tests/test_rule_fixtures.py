"""The Python rule fixtures through flake8 (the plugin path) and the CLI: the same findings, as
many as the ``# expect:`` markers name. What each fixture finds (line, column, message, fix) is
pinned by its snapshot: tests/test_fixture_snapshots.py."""

import subprocess
import sys

from conftest import RULE_FIXTURES, expected_findings, run_cli

FIXTURE_FILES = sorted(RULE_FIXTURES.glob("*.py"))


def _flake8_lines(paths):
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
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=300,
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
