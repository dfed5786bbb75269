"""noqa handling matches flake8 (the parity test in test_rule_fixtures runs flake8 itself)."""

import subprocess
import sys
import textwrap

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_python_source

from conftest import ROOT

H = "torch.backends.cuda.matmul.allow_tf32 = True"


def lines(src):
    result = check_python_source("t.py", "import torch\n" + textwrap.dedent(src), Config())
    assert isinstance(result, list), result
    return [f.line for f in result]


@pytest.mark.parametrize(
    "comment,suppressed",
    [
        ("# noqa", True),
        ("# NOQA", True),
        ("# noqa: ROC101", True),
        ("# noqa:ROC101", True),
        ("# noqa: ROC101,ROC201", True),
        ("# noqa: ROC201 ROC101", True),
        ("# noqa: ROC1", True),  # flake8 matches prefixes
        ("# noqa: ROC201", False),
        ("# noqa: E501", False),
        ("#noqa", False),  # flake8 needs a space after the hash
        ("# not a noqa", False),
    ],
)
def test_inline_forms(comment, suppressed):
    assert (lines(f"{H}  {comment}\n") == []) is suppressed


def test_noqa_belongs_on_the_reported_line_of_a_bracketed_statement():
    # flake8 (and so rocm-lint) reads noqa on the physical line of the finding
    src = """
    torch.compile(
        model,
        mode="reduce-overhead",
    )  # noqa: ROC201
    torch.compile(
        model,
        mode="reduce-overhead",  # noqa: ROC201
    )
    """
    assert lines(src) == [5]


def test_noqa_after_a_multiline_string_covers_it():
    src = '''
    import os
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = """
    max_split_size_mb:64
    """  # noqa: ROC301
    '''
    assert lines(src) == []


def test_noqa_on_other_line_does_not_count():
    assert lines(f"x = 1  # noqa\n{H}\n") == [3]


@pytest.mark.parametrize("header", ["# flake8: noqa", "# ruff: noqa"])
def test_file_level_exemption(header):
    assert lines(f"{header}\n{H}\n") == []


def test_ruff_file_level_codes():
    assert lines(f"# ruff: noqa: ROC101\n{H}\n") == []
    assert lines(f"# ruff: noqa: ROC2\n{H}\n") == [3]


def test_ruff_accepts_our_noqa(tmp_path):
    """ruff must not report or strip `# noqa: ROC101` when ROC is declared external."""
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nexternal = ["ROC"]\nselect = ["RUF100"]\n')
    (tmp_path / "a.py").write_text(f"import torch\n{H}  # noqa: ROC101\n")
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


_SHAPES = '''\
import torch
a = 1; b = (2,
  3)  # noqa: ROC101
@decorator(x,
           y)  # noqa
def f(a,
      b):  # noqa: ROC2
    # noqa in a comment line of its own
    """Doc
    string"""
    if x: y = (1,
               2)  # noqa
    elif (z and
          w):  # noqa: ROC3
        pass
    else:  # noqa
        q = f"""
        {torch.backends.cuda.matmul.allow_tf32}"""  # noqa: ROC101
    try:
        pass
    except (A,
            B):  # noqa
        pass
    finally:
        pass
class C(Base,
        Other):  # noqa
    def m(self): return 1  # noqa
if (a and
    b): c = 1  # noqa
x = 1 + \\
    2  # noqa
'''


_MATCH = "match x:\n    case [1,\n          2]:  # noqa\n        pass\n"


@pytest.mark.parametrize(
    "text",
    [_SHAPES, ROOT.joinpath("src", "rocm_lint", "engine.py").read_text()]
    + ([_MATCH] if sys.version_info >= (3, 10) else []),
)
def test_the_parsed_tree_gives_flake8s_logical_lines(text):
    """With the parsed tree only the statements holding findings are tokenized: every line's
    logical line must be the one tokenizing the whole file gives (flake8's mapping)."""
    import ast

    from rocm_lint.noqa import NoqaIndex

    whole, regions = NoqaIndex(text), NoqaIndex(text, ast.parse(text))
    for line in range(1, text.count("\n") + 2):
        assert regions._line_text(line).rstrip("\r\n") == whole._line_text(line).rstrip("\r\n"), line
