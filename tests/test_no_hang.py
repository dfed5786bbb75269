"""No input may hang a run: the lexer and readers are linear, and the readers see every line
(a BOM, CR-only line ends, form feeds).  Timing checks are scaling properties only: 10x the
input may cost at most 15x the time (best of 3, small times floored so noise cannot fail it)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rocm_lint.config import Config
from rocm_lint.cpp.lexer import lex
from rocm_lint.engine import check_source

SRC = str(Path(__file__).resolve().parents[1] / "src")
FLOOR = 0.01  # seconds: a quadratic path shows as its 10x time passes 15 * FLOOR


def _best(fn, arg) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - start)
    return best


def assert_linear(fn, make, n: int) -> None:
    small, big = make(n), make(10 * n)
    fn(small)  # warm caches (compiled patterns, imports)
    t1, t2 = _best(fn, small), _best(fn, big)
    if t2 / max(t1, FLOOR) > 15:  # once more before failing: a loaded machine can stall a run
        t1, t2 = _best(fn, small), _best(fn, big)
    assert t2 / max(t1, FLOOR) <= 15, f"10x input: {t1:.4f}s -> {t2:.4f}s"


def _check(name):
    return lambda text: check_source(name, text, Config())


# -- the C++ lexer -------------------------------------------------------------------------------
def test_lexer_string_ending_in_backslash_at_end_of_file_in_a_subprocess():
    """`"aaaa...\\` at the end of the file backtracked exponentially (24 characters: 5 s, 40:
    hours; the language server froze while a user typed)."""
    code = ("from rocm_lint.cpp.lexer import lex\n"
            "for q in ('\"', \"'\"):\n"
            "    for text in (q + 'a' * 60 + '\\\\', 'R\"x()x\" ' + q + 'a' * 60 + '\\\\', q + '\\\\' + q * 60 + '\\\\'):\n"
            "        lex(text)\n")
    env = dict(os.environ, PYTHONPATH=SRC)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30, env=env)


@pytest.mark.parametrize("make", [
    # (`"aaa...\` itself is exponential on the old lexer: only run in the subprocess above)
    lambda n: '"' + '\\"' * n + "\\",  # each quote restarted a scan to the end: quadratic
    lambda n: "'" + "\\'" * n + "\\",
    lambda n: 'R"x( )x" "' + '\\"' * n + "\\",
    lambda n: "// " + "\\\n" * n,
    lambda n: "/* " + "*" * n,
    lambda n: 'R"' + "a" * 10 + "(" + ")" * n,
])
def test_lexer_is_linear(make):
    assert_linear(lex, make, 3000)


def test_lexer_takes_a_trailing_backslash_into_the_literal():
    text = 'int x; "abc\\'
    lexed = lex(text)
    assert lexed.strings == ((7, len(text)),)
    assert lexed.code == 'int x; "    '


# -- quadratic paths in the readers and the Python analyser -------------------------------------------
@pytest.mark.parametrize("name, make", [
    # one long word in a shell/CMake `if` (SETTING_NAMES tried from every position of the word)
    ("x.sh", lambda n: "if [ " + "a" * n + " ]; then echo; fi\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"),
    ("CMakeLists.txt", lambda n: "if(" + "a" * n + ")\nendif()\nset(TORCH_CUDA_ARCH_LIST \"8.0\")\n"),
])
def test_long_word_in_a_condition_is_linear(name, make):
    assert_linear(_check(name), make, 3000)


@pytest.mark.parametrize("make", [
    # 20k `x=1;` on one line: every statement lowered the whole line (`may_matter`)
    lambda n: "import torch\n" + "x=1;" * n + "\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
    # many findings on one line: `alone_on_its_lines` encoded the line for each, noqa searched it
    lambda n: "import torch\n" + "torch.backends.cuda.matmul.allow_tf32 = True;" * n + "  # noqa: ROC999\n",
    # many names bound on a trigger line: one alternation of every name
    lambda n: "import torch\n" + "".join(f"m{i} = 'reduce-overhead';" for i in range(n)) + "\n"
              + "".join(f"torch.compile(f, mode=m{i})\n" for i in range(0, n, 50)),
])
def test_many_statements_on_one_line_are_linear(make):
    assert_linear(_check("x.py"), make, 600)


@pytest.mark.parametrize("name, make", [
    ("x.sh", lambda n: "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128;" * n + "  # noqa: ROC999\n"),
    ("x.yml", lambda n: "jobs:\n" + "".join(f"  j{i}:\n    env:\n      PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128\n\n"
                                            for i in range(n))),
    ("Dockerfile", lambda n: "FROM ubuntu\n" + "ENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n" * n),
])
def test_config_readers_are_linear(name, make):
    assert_linear(_check(name), make, 300)


# -- readers see every line -------------------------------------------------------------------------
YAML = "env:\n  PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128\n  X: 1\n"
DOCKERFILE = ("FROM ubuntu\nENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"
              "RUN echo a \\\n  && export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n")
SHELL = "#!/bin/sh\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\nif [ -d /opt/rocm ]; then\n  echo\nfi\n"
DOTENV = "A=1\nPYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"
FILES = [("a.yml", YAML), ("Dockerfile", DOCKERFILE), ("a.sh", SHELL), (".env", DOTENV)]


def _findings(name, text):
    result = check_source(name, text, Config())
    assert isinstance(result, list)
    return [(f.line, f.col, f.code, f.end_line) for f in result]


@pytest.mark.parametrize("name, text", FILES)
def test_cr_only_line_ends_read_as_lf(name, text):
    expected = _findings(name, text)
    assert expected
    assert _findings(name, text.replace("\n", "\r")) == expected


@pytest.mark.parametrize("name, text", FILES)
def test_a_byte_order_mark_hides_nothing(name, text):
    expected = _findings(name, text)
    assert _findings(name, "\ufeff" + text) == [(ln, col + (ln == 1), code, e) for ln, col, code, e in expected]


def test_bom_yaml_first_key_with_one_space_children():
    text = "env:\n PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128\n"
    assert _findings("a.yml", "\ufeff" + text) == _findings("a.yml", text) != []


@pytest.mark.parametrize("name, text", FILES)
def test_form_feed_page_breaks_hide_nothing(name, text):
    """A form feed starting a line (an Emacs page break, `^L`) is a blank, as in Python: the
    findings are those of the LF file, one column on for lines that start with it."""
    expected = _findings(name, text)
    lines = text.split("\n")
    paged = "\n".join("\f" + ln if ln else ln for ln in lines)
    shifted = [(ln, col + 1, code, e) for ln, col, code, e in expected]
    assert _findings(name, paged) == shifted
    # a page break on a line of its own reads as the empty line it shows as
    assert _findings(name, text.replace("\n", "\n\f\n")) == _findings(name, text.replace("\n", "\n\n"))
