"""Finding positions to LSP positions, and a finding to a diagnostic (``server``)."""

from __future__ import annotations

from typing import Optional

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from rocm_lint.finding import Edit, Finding
from rocm_lint.lines import NEWLINE
from rocm_lint.registry import get_rule

SOURCE = "rocm-lint"


class Positions:
    """Finding positions to LSP positions for one text.

    Python findings carry ``ast`` columns (UTF-8 byte offsets); the C++ and config scanners
    carry character offsets.  LSP wants the client's code units (UTF-16 unless negotiated).
    """

    def __init__(self, text: str, codec: PositionCodec, byte_columns: bool) -> None:
        self.lines = NEWLINE.split(text)  # a final empty line too: the end of the document
        self.codec = codec
        self.byte_columns = byte_columns

    def _chars(self, line: int, col: int) -> int:
        if not self.byte_columns or line >= len(self.lines):
            return col
        return len(self.lines[line].encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def position(self, line: int, col: int, *, byte_columns: Optional[bool] = None) -> types.Position:
        """``line`` 1-based, ``col`` 0-based (bytes or characters as the finding's kind has it)."""
        line0 = max(line - 1, 0)
        if line0 >= len(self.lines):
            return types.Position(line=len(self.lines), character=0)
        use_bytes = self.byte_columns if byte_columns is None else byte_columns
        chars = self._chars(line0, col) if use_bytes else col
        chars = min(chars, len(self.lines[line0]))
        return self.codec.position_to_client_units(self.lines, ServerTextPosition(line0, chars))

    def finding_range(self, f: Finding) -> types.Range:
        start = self.position(f.line, f.col)
        if f.end_line and (f.end_line, f.end_col) > (f.line, f.col):
            end = self.position(f.end_line, f.end_col)
        else:  # no end: to the end of the line
            line0 = max(f.line - 1, 0)
            end = self.position(
                f.line, len(self.lines[line0]) if line0 < len(self.lines) else 0, byte_columns=False
            )
        return types.Range(start=start, end=end)

    def edit_range(self, edit: Edit) -> types.Range:
        # Fix edits are character-based for every language (fix.engine.edits_for: column 0).
        return types.Range(
            start=self.position(*edit.start, byte_columns=False),
            end=self.position(*edit.end, byte_columns=False),
        )

    def whole(self) -> types.Range:
        last = len(self.lines) - 1
        end = self.codec.position_to_client_units(self.lines, ServerTextPosition(last, len(self.lines[last])))
        return types.Range(start=types.Position(line=0, character=0), end=end)


def to_diagnostic(f: Finding, where: Positions) -> types.Diagnostic:
    rule = get_rule(f.code)
    return types.Diagnostic(
        range=where.finding_range(f),
        message=f.message,
        severity=types.DiagnosticSeverity.Warning,
        code=f.code,
        code_description=types.CodeDescription(href=rule.url) if rule else None,
        source=SOURCE,
        data={"fix": f.fix.applicability.value if f.fix else None},
    )
