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


_PIECES = st.sampled_from(["#", "##", "define X", "\n", " ", "\t", "\r", "\x0c", "\u2028", "x", ";", "{", "}",
                           "  #if A\n", "a # b", "\n#", "#\n"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_statement_bounds_as_by_lines(pieces):
    code = "".join(pieces)
    assert _statement_bounds(code) == _statement_bounds_by_lines(code)
