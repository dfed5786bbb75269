"""`--baseline-commit REF`: only the findings on lines the changes since `git merge-base REF HEAD`
added (working tree included), through real git in a temporary repository: an added line is
reported and an untouched one is not, a renamed file is followed, a deleted file gives nothing,
an untracked file is wholly new, a REF that moved on after the branch point is read through the
merge-base, bad REFs and directories outside git are usage errors; --fix fixes the reported
findings only.  The diff parser itself is tested on git's output shapes without git."""

import json
import shutil
import subprocess

import pytest

from conftest import run_cli
from rocm_lint.diffbase import _map_back, parse_diff

TF32 = "torch.backends.cuda.matmul.allow_tf32 = True\n"
CUDNN = "torch.backends.cudnn.allow_tf32 = True\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")


# -- the parser, on git's output (fast) -----------------------------------------------------------
def test_parse_diff_hunks_renames_deletions_and_quoted_names():
    patch = (
        b"diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n"
        b"@@ -2,0 +3 @@ x\n+new\n@@ -7,2 +8,3 @@\n-a\n-b\n+c\n+d\n+e\n@@ -20 +22,0 @@\n-gone\n"
        b"diff --git a/old.py b/sub/new.py\nsimilarity index 100%\nrename from old.py\nrename to sub/new.py\n"
        b"diff --git a/d.py b/d.py\ndeleted file mode 100644\n--- a/d.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"
        b'diff --git "a/t\\tb.py" "b/t\\tb.py"\n--- "a/t\\tb.py"\n+++ "b/t\\tb.py"\n@@ -0,0 +1 @@\n+z\n'
        b'diff --git "a/\\303\\251.py" "b/\\303\\251.py"\n--- /dev/null\n+++ "b/\\303\\251.py"\n@@ -0,0 +1,2 @@\n'
    )
    assert parse_diff(patch) == {
        b"a.py": {3, 8, 9, 10},  # a pure deletion (+22,0) adds no line
        b"sub/new.py": set(),  # renamed, unchanged: followed, nothing new
        b"t\tb.py": {1},
        "é.py".encode(): {1, 2},
    }  # d.py, deleted, is absent


def test_a_fixed_text_maps_back_to_the_original_lines():
    original = "import torch\na = 1\nb = 2\n"
    fixed = "import torch\n\nis_rocm = x\na = 1\nif not is_rocm:\n    b = 2\n"
    assert _map_back(fixed, original, 4) == 2  # `a = 1`, moved down by the inserted lines
    assert 3 in _map_back(fixed, original, 6)  # the gated `b = 2` came from line 3


# -- through git and the CLI --------------------------------------------------------------------
def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path):
    """`main`: four files with one finding each; `feature`, branched from it, changes them (and
    main moves on after the branch point)."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    git(tmp_path, "config", "commit.gpgsign", "false")
    (tmp_path / "edited.py").write_text("import torch\n" + TF32)
    (tmp_path / "renamed_src.py").write_text("import torch\n\n\ndef setup():\n    " + TF32)
    (tmp_path / "deleted.py").write_text("import torch\n\n\ndef other():\n    return 1\n" + TF32)
    (tmp_path / "on_main.py").write_text("import torch\n" + TF32 + "import os\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    git(tmp_path, "checkout", "-qb", "feature")
    (tmp_path / "edited.py").write_text("import torch\n" + TF32 + CUDNN)  # one line added
    git(tmp_path, "mv", "renamed_src.py", "pkg_renamed.py")  # renamed, unchanged
    git(tmp_path, "rm", "-q", "deleted.py")
    git(tmp_path, "commit", "-qam", "feature")
    git(tmp_path, "checkout", "-q", "main")
    (tmp_path / "on_main.py").write_text("import torch\nimport os\n")  # main drops its finding later
    git(tmp_path, "commit", "-qam", "main moves on")
    git(tmp_path, "checkout", "-q", "feature")
    return tmp_path


def findings(proc):
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)
    )


@needs_git
@pytest.mark.integration
def test_only_the_lines_the_branch_added_are_reported(repo):
    everything = findings(run_cli("check", "--output-format", "json", "--no-cache", cwd=repo))
    assert everything == [
        ("edited.py", 2, "ROC101"),
        ("edited.py", 3, "ROC101"),
        ("on_main.py", 2, "ROC101"),
        ("pkg_renamed.py", 5, "ROC101"),
    ]
    # the added cudnn line only: the untouched line, the renamed file and on_main.py (whose line
    # main removed after the branch point: a diff against main's tip would call it added) stay quiet
    proc = run_cli("check", "--output-format", "json", "--no-cache", "--baseline-commit", "main", cwd=repo)
    assert findings(proc) == [("edited.py", 3, "ROC101")]
    assert proc.returncode == 1
    # a user's git settings do not change what is read (prefixes, colour, external diff, context)
    for settings in (
        [
            ("diff.mnemonicPrefix", "true"),
            ("color.diff", "always"),
            ("diff.external", "false"),
            ("diff.context", "9"),
        ],
        [("diff.noprefix", "true")],
    ):
        for key, value in settings:
            git(repo, "config", key, value)
        proc = run_cli(
            "check", "--output-format", "json", "--no-cache", "--baseline-commit", "main", cwd=repo
        )
        assert findings(proc) == [("edited.py", 3, "ROC101")], settings
    # the working tree counts: an unstaged edit, a staged one, an untracked file
    (repo / "pkg_renamed.py").write_text((repo / "pkg_renamed.py").read_text() + "    " + CUDNN)
    # (unlike any deleted file, or git's -M would read it as that file renamed)
    (repo / "staged.py").write_text("import torch\n" + CUDNN + "".join(f"v{i} = {i}\n" for i in range(9)))
    git(repo, "add", "staged.py")
    (repo / "sub").mkdir()
    (repo / "sub" / "untracked.py").write_text("import torch\n\n" + CUDNN)
    proc = run_cli("check", "--output-format", "json", "--no-cache", "--baseline-commit", "main", cwd=repo)
    assert findings(proc) == [
        ("edited.py", 3, "ROC101"),
        ("pkg_renamed.py", 6, "ROC101"),
        ("staged.py", 2, "ROC101"),
        ("untracked.py", 3, "ROC101"),
    ]
    # a new file that git pairs with the deleted one (-M) is that file renamed: its old lines stay quiet
    (repo / "reborn.py").write_text("import torch\n\n\ndef other():\n    return 2\n" + TF32)
    git(repo, "add", "reborn.py")
    proc = run_cli(
        "check", "--output-format", "json", "--no-cache", "--baseline-commit", "main", "reborn.py", cwd=repo
    )
    assert findings(proc) == []
    # from a subdirectory, and naming a file: the same repository, the same lines
    proc = run_cli(
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--baseline-commit",
        "main",
        ".",
        "../edited.py",
        cwd=repo / "sub",
    )
    assert findings(proc) == [("edited.py", 3, "ROC101"), ("untracked.py", 3, "ROC101")]


@needs_git
@pytest.mark.integration
def test_a_renamed_file_with_an_edit_reports_the_edit_only(repo):
    (repo / "moved").mkdir()
    git(repo, "mv", "edited.py", "moved/edited.py")
    text = (repo / "moved" / "edited.py").read_text()
    (repo / "moved" / "edited.py").write_text(text.replace(CUDNN, "x = 1\n" + CUDNN))
    proc = run_cli("check", "--output-format", "json", "--no-cache", "--baseline-commit", "main", cwd=repo)
    # line 2 (TF32) came with the rename from main's edited.py; lines 3-4 are the branch's
    assert findings(proc) == [("edited.py", 4, "ROC101")]
    assert json.loads(proc.stdout)[0]["filename"].endswith("moved/edited.py")


@needs_git
@pytest.mark.integration
def test_clean_when_the_branch_adds_nothing_and_summary(repo):
    git(repo, "checkout", "-q", "main")
    proc = run_cli("check", "--no-cache", "--baseline-commit", "HEAD", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "" and "All checks passed" in proc.stderr
    assert "3 more on lines not changed since HEAD." in proc.stderr  # main's three findings
    # a commit id works as well as a branch name
    sha = git(repo, "rev-parse", "HEAD~1").strip()
    assert (
        findings(
            run_cli("check", "--output-format", "json", "--no-cache", "--baseline-commit", sha, cwd=repo)
        )
        == []
    )  # main's last commit removed a line: nothing added


@needs_git
@pytest.mark.integration
def test_bad_ref_not_a_repository_and_stdin_are_usage_errors(repo, tmp_path_factory):
    proc = run_cli("check", "--baseline-commit", "no-such-branch", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--baseline-commit no-such-branch: unknown revision" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("check", "--baseline-commit", "--output-format", cwd=repo)  # argparse: REF missing
    assert proc.returncode == 2
    outside = tmp_path_factory.mktemp("nogit")
    (outside / "t.py").write_text("import torch\n" + TF32)
    proc = run_cli(
        "check",
        "--baseline-commit",
        "main",
        cwd=outside,
        env={"GIT_CEILING_DIRECTORIES": str(outside.parent)},
    )
    assert (
        proc.returncode == 2 and "works in a git repository" in proc.stderr and "Traceback" not in proc.stderr
    )
    proc = run_cli("check", "-", "--baseline-commit", "main", cwd=repo, input="import torch\n" + TF32)
    assert proc.returncode == 2 and "not on stdin" in proc.stderr
    proc = run_cli("check", "--baseline-commit", "main", "--write-baseline", "b.json", cwd=repo)
    assert proc.returncode == 2 and "--write-baseline" in proc.stderr
    # unrelated history: no merge-base
    git(repo, "checkout", "-q", "--orphan", "lonely")
    git(repo, "commit", "-qm", "lonely")
    proc = run_cli("check", "--baseline-commit", "main", cwd=repo)
    assert proc.returncode == 2 and "no common ancestor" in proc.stderr


@needs_git
@pytest.mark.integration
def test_fix_and_diff_touch_only_the_reported_findings(repo):
    proc = run_cli("check", "--no-cache", "--diff", "--baseline-commit", "main", "edited.py", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    removed = [
        line for line in proc.stdout.splitlines() if line.startswith("-") and not line.startswith("---")
    ]
    assert removed == ["-" + CUDNN.strip()]  # main's TF32 line is left as it is
    assert "Would fix 1 finding." in proc.stderr
    proc = run_cli("check", "--no-cache", "--fix", "--baseline-commit", "main", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo / "edited.py").read_text()
    assert "\n" + TF32 in text and "    " + CUDNN in text  # old line ungated, new line gated
    # what remains: main's findings, not the branch's
    assert findings(run_cli("check", "--output-format", "json", "--no-cache", cwd=repo)) == [
        ("edited.py", text.splitlines().index(TF32.strip()) + 1, "ROC101"),
        ("on_main.py", 2, "ROC101"),
        ("pkg_renamed.py", 5, "ROC101"),
    ]


@needs_git
@pytest.mark.integration
def test_with_a_baseline_file_both_filters_apply(repo):
    (repo / "pkg_renamed.py").write_text((repo / "pkg_renamed.py").read_text() + "    " + CUDNN)
    proc = run_cli("check", "--no-cache", "--write-baseline", "bl.json", "pkg_renamed.py", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--baseline-commit",
        "main",
        "--baseline",
        "bl.json",
        cwd=repo,
    )
    assert findings(proc) == [("edited.py", 3, "ROC101")]  # pkg_renamed.py's new line is in bl.json


def _notebook(*cells):
    return (
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "metadata": {},
                        "outputs": [],
                        "source": source,
                    }
                    for source in cells
                ],
                "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            },
            indent=1,
        )
        + "\n"
    )


@needs_git
@pytest.mark.integration
def test_a_notebook_counts_whole_when_git_says_it_changed(repo):
    (repo / "proto.ipynb").write_text(_notebook("import torch\n" + TF32))
    git(repo, "add", "proto.ipynb")
    git(repo, "commit", "-qm", "notebook")

    def check():
        return run_cli(
            "check",
            "--output-format",
            "json",
            "--no-cache",
            "--baseline-commit",
            "HEAD",
            "proto.ipynb",
            cwd=repo,
        )

    assert findings(check()) == []  # untouched
    (repo / "proto.ipynb").write_text(_notebook("import torch\n" + TF32, "x = 1\n"))
    assert [(c["cell"], c["location"]["row"]) for c in json.loads(check().stdout)] == [(1, 2)]


@needs_git
@pytest.mark.integration
def test_after_fix_the_remaining_findings_are_read_against_the_fixed_file(repo):
    """The fix inserts lines above main's TF32 line, moving it onto a line number the branch had
    added before the fix: what remains is asked of git again, so it stays quiet."""
    (repo / "edited.py").write_text(
        "import torch\n" + CUDNN + TF32 + "".join(f"v{i} = {i}\n" for i in range(9))
    )
    proc = run_cli("check", "--no-cache", "--fix", "--baseline-commit", "main", "edited.py", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fixed 1 finding, 0 remaining" in proc.stderr
    text = (repo / "edited.py").read_text()
    assert "\n" + TF32 in text and "    " + CUDNN in text
