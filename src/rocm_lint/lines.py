"""Source lines as Python's tokenizer, C preprocessors and git count them.

Only ``\\r\\n``, ``\\r`` and ``\\n`` end a line.  ``str.splitlines`` also splits on form feed,
``\\v``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``: a file with a form feed
(an old Emacs page break) would put every later line one off, so that line numbers from ``ast``
point at the wrong text and fix edits land on the wrong lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import List, Optional, Tuple

_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str, keepends: bool = False) -> List[str]:
    """``text.splitlines(keepends)``, with only CR, LF and CRLF ending a line."""
    if keepends:
        return _LINE_WITH_END.findall(text)
    lines = NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    return lines


def char_col(line_text: str, byte_col: int) -> int:
    """An ``ast`` column (a UTF-8 byte offset into the line) as a character offset: what editors,
    ruff, pycodestyle and every rocm-lint format count."""
    if byte_col <= 0 or line_text.isascii():
        return max(byte_col, 0)
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


class LineIndex:
    """Offsets to (1-based line, 0-based column) and back, for one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: Optional[List[int]] = None

    @property
    def starts(self) -> List[int]:
        if self._starts is None:  # built on first use: most files have no finding
            # CR, LF and CRLF, as split_lines and ast count lines (a CR-only file has lines too)
            text = self.text
            ends = NEWLINE.finditer(text) if "\r" in text else re.finditer("\n", text)
            self._starts = [0] + [m.end() for m in ends]
        return self._starts

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def position(self, offset: int) -> Tuple[int, int]:
        line = self.line_of(offset)
        return line, offset - self.starts[line - 1]

    def offset(self, line: int, col: int = 0) -> int:
        return self.starts[line - 1] + col
