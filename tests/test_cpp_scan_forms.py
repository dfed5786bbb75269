"""Faster forms of the C++ scanner's helpers against the plain forms they replaced: the same
answers on generated texts (hypothesis)."""

import re

from hypothesis import given, settings, strategies as st

from rocm_lint.cpp.scanner import _statement_bounds


def _statement_bounds_by_lines(code):
    """The form it replaced: the file split into lines, each tested with ``lstrip``."""
    bounds = [m.end() for m in re.finditer(r"[;{}]", code)]
    line_start = 0
    for line in code.split("\n")[:-1]:
        end = line_start + len(line)
        if line.lstrip().startswith("#"):
            bounds.append(end + 1)
        line_start = end + 1
    bounds.sort()
    return bounds


_PIECES = st.sampled_from(
    [
        "#",
        "##",
        "define X",
        "\n",
        " ",
        "\t",
        "\r",
        "\x0c",
        "\u2028",
        "x",
        ";",
        "{",
        "}",
        "  #if A\n",
        "a # b",
        "\n#",
        "#\n",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_statement_bounds_as_by_lines(pieces):
    code = "".join(pieces)
    assert _statement_bounds(code) == _statement_bounds_by_lines(code)


# -- the lexer's search for comments and literals ---------------------------------------------------
from rocm_lint.cpp.lexer import _FAST_TOKEN, lex  # noqa: E402

_LOOKAHEAD_TOKEN = re.compile(
    r"""(?=[/"'])(?:
    (?P<line>//[^\\\n]*(?:\\(?:\r?\n|.)[^\\\n]*)*)
  | (?P<block>/\*[\s\S]*?(?:\*/|\Z))
  | (?P<str>"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*\\?(?:"|$))
  | (?P<chr>(?<![0-9A-Fa-f_])'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*\\?(?:'|$)))
""",
    re.X | re.M,
)  # the form it replaced
_LEX_PIECES = st.sampled_from(
    [
        "/",
        "//",
        "/*",
        "*/",
        "*",
        '"',
        "'",
        "\\",
        "\n",
        "\r\n",
        " ",
        "a",
        "0x1",
        "F",
        "_",
        "9",
        "u8",
        "L",
        "x = 'a';",
        '"s\\"t"',
        "// c\\\n d",
        "/* b */",
        "1'000",
    ]
)


@settings(max_examples=800, deadline=None)
@given(st.lists(_LEX_PIECES, max_size=40))
def test_the_fast_token_search_matches_the_lookahead_form(pieces):
    text = "".join(pieces)
    ours = [(m.span(), m.lastgroup) for m in _FAST_TOKEN.finditer(text)]
    assert ours == [(m.span(), m.lastgroup) for m in _LOOKAHEAD_TOKEN.finditer(text)]
    assert len(lex(text).code) == len(text)


# -- literal-first searches ---------------------------------------------------------------------------
from rocm_lint.cpp.facts import _const_word  # noqa: E402
from rocm_lint.cpp.logical_warp import _NAMED_HELPER, _NAMED_HELPER_LOWER  # noqa: E402

_WORD_PIECES = st.sampled_from(
    [
        "const",
        "constexpr",
        "expr",
        "x",
        "_",
        "9",
        " ",
        "\n",
        "é",
        "Ω",
        "(",
        ";",
        "Shfl",
        "SHUFFLE",
        "ballot",
        "ActiveMask",
        "shfl",
        "K",
        "ſ",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_WORD_PIECES, max_size=30), st.integers(0, 40))
def test_const_word_is_the_bounded_search(pieces, pos):
    code = "".join(pieces)
    pos = min(pos, len(code))
    ours = _const_word(code, pos)
    theirs = re.compile(r"\bconst(?:expr)?\b").search(code, pos)
    assert (ours and ours.span()) == (theirs and theirs.span())


@settings(max_examples=500, deadline=None)
@given(st.lists(_WORD_PIECES, max_size=30))
def test_named_helpers_lowered_as_case_blind(pieces):
    code = "".join(pieces)
    theirs = [m.span() for m in _NAMED_HELPER.finditer(code)]
    if code.isascii():
        assert [m.span() for m in _NAMED_HELPER_LOWER.finditer(code.lower())] == theirs


# -- the device-code test of .cpp/.h files --------------------------------------------------------------
from rocm_lint.cpp.asm import holds_gpu_assembly  # noqa: E402
from rocm_lint.cpp.scanner import ASM_WORDS, DEVICE_WORDS, holds_device_code  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            list(DEVICE_WORDS)
            + list(ASM_WORDS)
            + ['"shfl.sync.bfly.b32"', "x" * 300, "__", "asm", "<<", "thread", "Idx", "\n"]
        ),
        max_size=12,
    )
)
def test_holds_device_code_as_any_word(pieces):
    text = "".join(pieces)
    assert holds_device_code(text) == (
        any(w in text for w in DEVICE_WORDS) or any(w in text for w in ASM_WORDS) and holds_gpu_assembly(text)
    )
