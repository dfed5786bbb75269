"""A C/C++/CUDA lexer that blanks comments and literals, keeping every offset.

The rules match literal-first patterns on *code*: the text with every comment and the
inside of every string and character literal replaced by spaces (newlines kept, so lines
and columns stay put; the quotes stay, so ``"   "`` still reads as a string).  The
literal contents remain available through :class:`Lexed.strings` for the rules that need
them (inline PTX, ``#include "..."``).

One compiled regular expression finds the next comment or literal; everything between is
code.  Handled: ``//`` comments continued with a backslash, ``/* */`` (unterminated: to the
end), string and character literals with escapes and backslash-newline, raw strings
``R"delim( ... )delim"`` with encoding prefixes, digit separators (``0xFFFF'FFFF`` is one
number, not a character literal), and unterminated literals (to the end of the line, as
compilers recover).  pygments' CudaLexer is the oracle in the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Tuple

_TOKEN = re.compile(
    r"""
    (?P<line>//[^\\\n]*(?:\\(?:\r?\n|.)[^\\\n]*)*)
  | (?P<block>/\*[\s\S]*?(?:\*/|\Z))
  | (?P<raw>(?<![\w])(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\([\s\S]*?(?:\)(?P=delim)"|\Z))
  | (?P<str>"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*\\?(?:"|$))
  | (?P<chr>(?<![0-9A-Fa-f_])'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*\\?(?:'|$))
""",
    re.X | re.M,
)
# Every alternative is linear: each loop is "normal* (escape normal*)*" with disjoint parts, and
# none can fail once it has started (a backslash at the very end of the text is taken by the
# ``\\?``), so nothing is ever retried.  ``(?:[^"\\]+|\\.)*`` failing on a literal that ends in a
# backslash at the end of the file used to backtrack exponentially (24 characters: 5 s).

# The same without raw strings, used when the text holds no `R"` at all (the common case).  Its
# first step is the character class `[/"']` itself (the regex engine skips to such a character in
# a tight loop: twice as fast as the lookahead `(?=[/"'])` it replaced, which ran the pattern's
# first step at every offset); each alternative then checks that character by a lookbehind.  The
# matches (spans, ``lastgroup``) are the ones of `_TOKEN` less its `raw` alternative: a named
# group may miss the first character, so callers read ``m.span()`` and ``m.group()`` only.
_FAST_TOKEN = re.compile(
    r"""[/"'](?:
    (?<=/)(?:(?P<line>/[^\\\n]*(?:\\(?:\r?\n|.)[^\\\n]*)*)
           |(?P<block>\*[\s\S]*?(?:\*/|\Z)))
  | (?<=")(?P<str>[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*\\?(?:"|$))
  | (?<![0-9A-Fa-f_]')(?<=')(?P<chr>[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*\\?(?:'|$)))
""",
    re.X | re.M,
)

_NOT_NEWLINE = re.compile(r"[^\n]")


@dataclass(frozen=True)
class Lexed:
    text: str  # the original
    code: str  # comments and literal contents blanked, same length as text
    # (start, end) of every string/char literal including its quotes, in file order
    strings: Tuple[Tuple[int, int], ...]
    comments: Tuple[Tuple[int, int], ...]

    def string_value(self, start: int, end: int) -> str:
        """The text between the quotes of the literal at ``start..end``."""
        s = self.text[start:end]
        if s.startswith(("R", "u8R", "uR", "UR", "LR")):
            open_ = s.index("(")
            return s[open_ + 1 : s.rfind(")")]
        first = s.find('"') if '"' in s[:3] else s.find("'")
        last = len(s) - 1 if len(s) > first + 1 and s[-1] == s[first] else len(s)
        return s[first + 1 : last]


def _blank(segment: str) -> str:
    if "\n" not in segment:
        return " " * len(segment)
    return _NOT_NEWLINE.sub(" ", segment)


def _closed(literal: str) -> bool:
    """Does a string or character literal (a raw one with its prefix) end with its quote?"""
    if literal[:1] in ("'", '"'):
        return len(literal) > 1 and literal[-1] == literal[0]
    return literal.endswith('"') and literal.count('"') >= 2  # a raw string


def lex(text: str) -> Lexed:
    strings: List[Tuple[int, int]] = []
    comments: List[Tuple[int, int]] = []

    def blank(m: "re.Match[str]") -> str:
        literal = m.group()
        kind = m.lastgroup
        if kind in ("line", "block"):
            comments.append(m.span())
            return " " * len(literal) if "\n" not in literal else _NOT_NEWLINE.sub(" ", literal)
        strings.append(m.span())
        closed = _closed(literal)
        if kind in ("str", "chr"):
            quote = literal[0]
            inner = literal[1:-1] if closed else literal[1:]
            return quote + _blank(inner) + (quote if closed else "")
        # raw string (with an optional encoding prefix)
        open_ = literal.find('"')
        head = literal[: open_ + 1]
        inner = literal[len(head) : -1] if closed else literal[len(head) :]
        return head + _blank(inner) + ('"' if closed else "")

    code = (_TOKEN if 'R"' in text else _FAST_TOKEN).sub(blank, text)
    return Lexed(text, code, tuple(strings), tuple(comments))


def unterminated_literal_line(lexed: Lexed) -> int:
    """The line (1-based) of the first string or character literal that is not closed on its
    line, outside preprocessor directives (``#error Don't`` is common and harmless); 0 if none.
    Such a file is not valid C++: compilers recover by ending the literal at the line's end,
    but a fix's statement or block extent read from it cannot be trusted."""
    text = lexed.text
    for start, end in lexed.strings:
        if _closed(text[start:end]):
            continue
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].lstrip().startswith("#"):
            continue
        return text.count("\n", 0, start) + 1
    return 0
