"""Jupyter notebooks through the real CLI (issue #29 item 2): code cells checked as one module,
findings placed in their cell, bad notebooks an error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rocm_lint.discovery import language_of

SRC = str(Path(__file__).resolve().parents[1] / "src")
TF32 = "torch.backends.cuda.matmul.allow_tf32 = True"


def _cell(kind: str, *lines: str) -> dict:
    cell = {
        "cell_type": kind,
        "metadata": {},
        "source": [line + "\n" for line in lines[:-1]] + list(lines[-1:]),
    }
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(path: Path, cells, language: str = "python") -> Path:
    path.write_text(
        json.dumps(
            {
                "cells": cells,
                "nbformat": 4,
                "nbformat_minor": 5,
                "metadata": {"kernelspec": {"language": language, "name": "k"}},
            },
            indent=1,
        )
    )
    return path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run(
        [sys.executable, "-m", "rocm_lint", "check", "--no-cache", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _sample(tmp_path: Path) -> Path:
    return _notebook(
        tmp_path / "proto.ipynb",
        [
            _cell("markdown", "# Prototype"),
            _cell("code", "%matplotlib inline", "import torch", "!pip install x"),
            _cell("code", "x = 1", TF32),  # cell 3: the finding, row 2
            _cell("code", "if torch.version.cuda is not None:", "    " + TF32),  # gated: silent
            _cell("code", TF32 + "  # noqa: ROC101"),  # suppressed in its cell
        ],
    )


def test_notebook_is_a_language():
    assert language_of("a/b/Proto.IPYNB") == "notebook"


def test_finding_in_its_cell_concise(tmp_path):
    _sample(tmp_path)
    proc = _run("proto.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [line for line in lines if line.startswith("proto.ipynb:cell 3:2:1: ROC101 ")]
    assert len(lines) == 1  # the gated cell and the noqa'd cell are silent
    assert "1 checked" in proc.stderr


def test_json_cell_and_row(tmp_path):
    _sample(tmp_path)
    proc = _run("proto.ipynb", "--output-format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    [finding] = json.loads(proc.stdout)
    assert finding["code"] == "ROC101"
    assert finding["cell"] == 3
    assert finding["location"] == {"row": 2, "column": 1}
    assert finding["end_location"]["row"] == 2
    assert finding["filename"].endswith("proto.ipynb")
    assert finding["fix"] is None


def test_directory_walk_finds_notebooks(tmp_path):
    (tmp_path / "nb").mkdir()
    _sample(tmp_path / "nb")
    proc = _run(".", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1
    assert "nb/proto.ipynb:cell 3:2:1: ROC101" in proc.stdout.replace(os.sep, "/")


def test_non_ascii_column_is_in_characters(tmp_path):
    _notebook(tmp_path / "u.ipynb", [_cell("code", "import torch"), _cell("code", "é = 1; " + TF32)])
    [finding] = json.loads(_run("u.ipynb", "--output-format", "json", cwd=tmp_path).stdout)
    assert (finding["cell"], finding["location"]) == (2, {"row": 1, "column": 8})


def test_invalid_json_is_an_error_line(tmp_path):
    (tmp_path / "bad.ipynb").write_text('{"cells": [\n')
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    proc = _run("bad.ipynb", "list.ipynb", cwd=tmp_path)
    assert proc.returncode == 2
    assert "bad.ipynb: invalid notebook JSON at line 2" in proc.stderr
    assert "list.ipynb: not a Jupyter notebook" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_syntax_error_is_placed_in_its_cell(tmp_path):
    # (a file is parsed only when it holds a rule's trigger word, as a .py file)
    _notebook(
        tmp_path / "s.ipynb",
        [_cell("code", "import torch", TF32), _cell("markdown", "text"), _cell("code", "x = 1", "def f(:")],
    )
    proc = _run("s.ipynb", cwd=tmp_path)
    assert proc.returncode == 2
    assert "s.ipynb: syntax error in cell 3 at line 2" in proc.stderr


def test_other_kernels_and_cell_magics_are_not_python(tmp_path):
    _notebook(tmp_path / "r.ipynb", [_cell("code", "library(torch)", TF32 + " <- 1")], language="R")
    _notebook(tmp_path / "m.ipynb", [_cell("code", "import torch"), _cell("code", "%%bash", "echo " + TF32)])
    proc = _run("r.ipynb", "m.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 checked" in proc.stderr or "All checks passed" in proc.stderr


def test_fix_leaves_notebooks_unchanged_and_says_so(tmp_path):
    path = _sample(tmp_path)
    before = path.read_bytes()
    proc = _run("proto.ipynb", "--fix", cwd=tmp_path)
    assert proc.returncode == 1
    assert "notebooks (.ipynb) are checked, not fixed" in proc.stderr
    assert path.read_bytes() == before


def test_cache_keeps_the_cell(tmp_path):
    _sample(tmp_path)
    env = dict(os.environ, PYTHONPATH=SRC)
    args = [
        sys.executable,
        "-m",
        "rocm_lint",
        "check",
        "proto.ipynb",
        "--output-format",
        "json",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    first = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    second = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert any((tmp_path / "cache").rglob("*.json"))
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert json.loads(second.stdout)[0]["cell"] == 3


def test_add_noqa_refuses_notebooks_clearly(tmp_path):
    path = _sample(tmp_path)
    before = path.read_bytes()
    proc = _run("proto.ipynb", "--add-noqa", cwd=tmp_path)
    assert proc.returncode == 2
    assert "notebooks (.ipynb) are checked, not edited" in proc.stderr
    assert path.read_bytes() == before


def test_stdin_notebook(tmp_path):
    text = _sample(tmp_path).read_text()
    env = dict(os.environ, PYTHONPATH=SRC)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocm_lint",
            "check",
            "--no-cache",
            "-",
            "--stdin-filename",
            "proto.ipynb",
            "--output-format",
            "concise",
        ],
        input=text,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("proto.ipynb:cell 3:2:1: ROC101 ")


def test_magics_keep_the_module_valid_and_code_with_a_question_is_kept(tmp_path):
    _notebook(
        tmp_path / "q.ipynb",
        [
            _cell("code", "import torch", "torch.cuda?", "for i in range(2):", "    %time f(i)"),
            _cell("code", TF32 + "  # why?"),  # a comment ending in `?` is no help request
        ],
    )
    proc = _run("q.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("q.ipynb:cell 2:1:1: ROC101 ")
