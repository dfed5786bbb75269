"""The docs say what the tool does (#29 item 11): the README's `rocm-lint check --diff train.py`
sample is the tool's real output; no install command names a package the index does not have
(rocm-lint is not released); no pre-commit snippet names a `rev:` tag the repository lacks; the
`--config` help says what `config.discover` does (flake8's options still add)."""

import re
import subprocess

import pytest

from conftest import ROOT, run_cli

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def _sample():
    text = (ROOT / "README.md").read_text("utf-8")
    m = re.search(r"^\$ rocm-lint check --diff train\.py\n(.*?)^\$ ", text, re.S | re.M)
    assert m, "the README's --diff sample is gone: update this test"
    return m.group(1)


@pytest.mark.integration  # runs the CLI
def test_the_readme_diff_sample_is_real_output(tmp_path):
    """The file is rebuilt from the sample's own old side; a change of fix layout shows here, and
    the sample is pasted again."""
    sample = _sample()
    hunk = sample.split("\n@@", 1)[1].split("\n", 1)[1]
    old = [line[1:] for line in hunk.splitlines() if line[:1] in (" ", "-")]
    (tmp_path / "train.py").write_text("\n".join(old) + "\n")
    proc = run_cli("check", "--no-cache", "--diff", "train.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout + proc.stderr == sample


def test_no_install_command_asks_the_index_for_rocm_lint():
    bad = []
    for doc in DOCS:
        for block in FENCE.findall(doc.read_text("utf-8")):
            for line in block.splitlines():
                m = re.search(
                    r"\b(?:pip|pipx|uv tool|uv pip) install\s+(['\"]?)rocm-lint\b[^@\s]*\1(\s|$)", line
                )
                if m:
                    bad.append(f"{doc.name}: {line.strip()}")
    assert not bad, "rocm-lint is not on PyPI yet; install from the repository at a commit: " + "; ".join(bad)


def test_pre_commit_revs_resolve():
    tags = set(subprocess.run(["git", "tag", "-l"], cwd=ROOT, capture_output=True, text=True).stdout.split())
    for doc in DOCS:
        for block in FENCE.findall(doc.read_text("utf-8")):
            for rev in re.findall(r"^\s*rev:\s*(\S+)", block, re.M):
                assert rev in tags or rev.startswith("<"), (
                    f"{doc.name}: rev {rev} is not a tag of this repository"
                )


def test_the_config_help_says_flake8_options_still_add():
    from rocm_lint.cli import build_parser

    check = build_parser()._subparsers._group_actions[0].choices["check"]
    (config,) = [a for a in check._actions if "--config" in a.option_strings]
    assert "instead of the closest" in config.help and "flake8" in config.help
