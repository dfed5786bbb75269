"""No input may hang a run: the lexer and readers are linear, and the readers see every line
(a BOM, CR-only line ends, form feeds).  Scaling is checked without a clock (tests/work_count.py):
10x the input may cost at most 12x the Python steps (an exact count), and a large input must
finish within a CPU-time bound that the linear code meets with a wide margin and the old
quadratic paths (mostly inside one C call per item: a regex or ``str.lower`` over the whole
line, which the step count cannot see) overrun many times (the arithmetic is by each test)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_lint.config import Config
from rocm_lint.cpp.lexer import lex
from rocm_lint.engine import check_source
from work_count import Hang, assert_finishes, assert_linear_steps, cpu_limit

SRC = str(Path(__file__).resolve().parents[1] / "src")
BOUND = 10.0  # seconds of CPU time for one large input (waiting for a core on a busy machine is not counted)


def assert_linear(fn, make, n: int, big: int) -> None:
    """Linear in steps from ``n`` to ``10 * n``, and ``make(big)`` done within ``BOUND``."""
    assert_linear_steps(fn, make, n)
    assert_finishes(fn, make(big), BOUND, f"make({big})")


def _check(name):
    return lambda text: check_source(name, text, Config())


# -- the checks themselves ---------------------------------------------------------------------------
def test_the_step_count_flags_a_quadratic_loop():
    def rescan(items):  # a walk back over everything before each item, as statement_start once did
        for i in range(len(items)):
            for _ in range(i):
                pass

    def scan(items):
        for _ in items:
            pass

    assert_linear_steps(scan, lambda n: [0] * n, 20)
    with pytest.raises(AssertionError, match="steps"):
        assert_linear_steps(rescan, lambda n: [0] * n, 20)


def test_the_cpu_bound_fails_even_where_the_interruption_is_caught():
    """The engine turns an exception into a FileError: a hang it interrupted still fails."""
    with pytest.raises(Hang):
        with cpu_limit(0.05, "busy loop"):
            try:
                while True:
                    pass
            except Hang:
                pass


# -- the C++ lexer -------------------------------------------------------------------------------
def test_lexer_string_ending_in_backslash_at_end_of_file_in_a_subprocess():
    """`"aaaa...\\` at the end of the file backtracked exponentially (24 characters: 5 s, 40:
    hours; the language server froze while a user typed)."""
    code = (
        "from rocm_lint.cpp.lexer import lex\n"
        "for q in ('\"', \"'\"):\n"
        "    for text in (q + 'a' * 60 + '\\\\', 'R\"x()x\" ' + q + 'a' * 60 + '\\\\', q + '\\\\' + q * 60 + '\\\\'):\n"
        "        lex(text)\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30, env=env)


@pytest.mark.parametrize(
    "make",
    [
        # (`"aaa...\` itself is exponential on the old lexer: only run in the subprocess above)
        lambda n: '"' + '\\"' * n + "\\",  # each quote restarted a scan to the end: quadratic
        lambda n: "'" + "\\'" * n + "\\",
        lambda n: 'R"x( )x" "' + '\\"' * n + "\\",
        lambda n: "// " + "\\\n" * n,
        lambda n: "/* " + "*" * n,
        lambda n: 'R"' + "a" * 10 + "(" + ")" * n,
    ],
)
def test_lexer_is_linear(make):
    """The lexer's work is in its regular expressions (a few Python steps whatever the input):
    a CPU-time guard only.  300,000 repeats lex in ~0.1 s; a scan restarted from each quote costs
    >= ~1.3 ns per character scanned (the cheapest loop of the re module), >= 1.3e-9 * 3e5**2 / 2
    = ~60 s here, 6x the bound (the old lexer: still running after 20 s at 100,000)."""
    assert_finishes(lex, make(300_000), BOUND, "lex")


def test_lexer_takes_a_trailing_backslash_into_the_literal():
    text = 'int x; "abc\\'
    lexed = lex(text)
    assert lexed.strings == ((7, len(text)),)
    assert lexed.code == 'int x; "    '


# -- quadratic paths in the readers and the Python analyser -------------------------------------------
@pytest.mark.parametrize(
    "name, make",
    [
        # one long word in a shell/CMake `if` (SETTING_NAMES tried from every position of the word)
        (
            "x.sh",
            lambda n: (
                "if [ "
                + "a" * n
                + " ]; then echo; fi\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"
            ),
        ),
        ("CMakeLists.txt", lambda n: "if(" + "a" * n + ')\nendif()\nset(TORCH_CUDA_ARCH_LIST "8.0")\n'),
    ],
)
def test_long_word_in_a_condition_is_linear(name, make):
    """A word of 300,000 characters: ~0.2 s today; trying the names from every position scans
    the rest of the word each time, >= ~60 s (see the lexer; the old reader: ~10 s at 30,000)."""
    assert_linear(_check(name), make, 300, 300_000)


@pytest.mark.parametrize(
    "make, big",
    [
        # 20k `x=1;` on one line: every statement lowered the whole line (`may_matter`); 30,000:
        # ~0.4 s today, the old reader was still running after 20 s
        (
            lambda n: "import torch\n" + "x=1;" * n + "\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
            30_000,
        ),
        # many findings on one line: `alone_on_its_lines` encoded the line for each, noqa searched it;
        # 20,000: ~2 s today (the linear work per finding is large), the old reader ~8 s at 10,000,
        # ~30 s here
        (
            lambda n: (
                "import torch\n" + "torch.backends.cuda.matmul.allow_tf32 = True;" * n + "  # noqa: ROC999\n"
            ),
            20_000,
        ),
        # many names bound on a trigger line: one alternation of every name; 10,000: ~0.4 s today,
        # the old reader was still running after 20 s
        (
            lambda n: (
                "import torch\n"
                + "".join(f"m{i} = 'reduce-overhead';" for i in range(n))
                + "\n"
                + "".join(f"torch.compile(f, mode=m{i})\n" for i in range(0, n, 50))
            ),
            10_000,
        ),
    ],
)
def test_many_statements_on_one_line_are_linear(make, big):
    assert_linear(_check("x.py"), make, 60, big)


@pytest.mark.parametrize(
    "name, make",
    [
        (
            "x.sh",
            lambda n: "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128;" * n + "  # noqa: ROC999\n",
        ),
        (
            "x.yml",
            lambda n: (
                "jobs:\n"
                + "".join(
                    f"  j{i}:\n    env:\n      PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128\n\n"
                    for i in range(n)
                )
            ),
        ),
        ("Dockerfile", lambda n: "FROM ubuntu\n" + "ENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n" * n),
    ],
)
def test_config_readers_are_linear(name, make):
    """Steps from 100 to 1000 items (the YAML block ends found per job: 20x steps, the old reader);
    3,000 items take ~0.3 s today, a hang guard with 30x to spare."""
    assert_linear(_check(name), make, 100, 3000)


# -- readers see every line -------------------------------------------------------------------------
YAML = "env:\n  PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128\n  X: 1\n"
DOCKERFILE = (
    "FROM ubuntu\nENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"
    "RUN echo a \\\n  && export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n"
)
SHELL = (
    "#!/bin/sh\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\nif [ -d /opt/rocm ]; then\n  echo\nfi\n"
)
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
    assert _findings(name, "\ufeff" + text) == [
        (ln, col + (ln == 1), code, e) for ln, col, code, e in expected
    ]


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
