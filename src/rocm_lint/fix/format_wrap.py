"""A statement already spread over several lines that a fix pushes past the line length.

ROCm vLLM's ``flex_attention.py`` holds a call laid out over three lines (its continuation lines
aligned with the opening bracket); the fix's ``mode="default" if is_rocm else "reduce-overhead"``
made its last line 92 columns where the project keeps 80 (``E501``).  ``fix.layout`` wraps one-line
statements only, so such a statement is first joined into one line, exactly as ruff format reads it
(the line breaks inside brackets are whitespace), and laid out again by ``fix.layout``: split at its
last brackets, the items on one line if they fit, else one per line with a trailing comma.

It is left as the fix made it (never worse than that) where the join would lose something: a
comment inside the statement, a string spanning lines, a magic trailing comma (ruff keeps those
brackets exploded: the author chose the layout), or a statement with no layout here.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

_EMPTY = cst.Module([])
_NONE = cst.SimpleWhitespace("")
_SPACE = cst.SimpleWhitespace(" ")


class _Join(cst.CSTTransformer):
    """Every line break inside the statement's brackets becomes the space (or nothing) ruff
    format puts there; ``ok`` turns False on what a join would lose."""

    def __init__(self) -> None:
        super().__init__()
        self.ok = True

    def leave_ParenthesizedWhitespace(self, original, updated):
        if updated.first_line.comment is not None or any(
            line.comment is not None for line in updated.empty_lines
        ):
            self.ok = False
            return updated
        return _SPACE

    def _strip(self, node, *fields):
        return node.with_changes(**{f: _NONE for f in fields if getattr(node, f) == _SPACE})

    def leave_LeftParen(self, original, updated):
        return self._strip(updated, "whitespace_after")

    def leave_RightParen(self, original, updated):
        return self._strip(updated, "whitespace_before")

    def leave_LeftSquareBracket(self, original, updated):
        return self._strip(updated, "whitespace_after")

    def leave_RightSquareBracket(self, original, updated):
        return self._strip(updated, "whitespace_before")

    def leave_LeftCurlyBrace(self, original, updated):
        return self._strip(updated, "whitespace_after")

    def leave_RightCurlyBrace(self, original, updated):
        return self._strip(updated, "whitespace_before")

    def leave_Call(self, original, updated):
        updated = self._strip(updated, "whitespace_before_args")
        if updated.args and isinstance(updated.args[-1].comma, cst.Comma):
            self.ok = False  # a magic trailing comma
        return updated

    def _no_trailing_comma(self, updated, items):
        if items and isinstance(getattr(items[-1], "comma", None), cst.Comma):
            self.ok = False
        return updated

    def leave_List(self, original, updated):
        return self._no_trailing_comma(updated, updated.elements)

    def leave_Set(self, original, updated):
        return self._no_trailing_comma(updated, updated.elements)

    def leave_Dict(self, original, updated):
        return self._no_trailing_comma(updated, updated.elements)

    def leave_Tuple(self, original, updated):
        return self._no_trailing_comma(updated, updated.elements) if len(updated.elements) > 1 else updated

    def leave_Subscript(self, original, updated):
        return self._no_trailing_comma(updated, updated.slice)


def widths(stmt: cst.CSTNode, indent: int) -> List[int]:
    """The width of each line of ``stmt`` written at ``indent`` columns (continuation lines are
    relative to the block, as LibCST writes them)."""
    return [indent + len(line) for line in _EMPTY.code_for_node(stmt).rstrip("\n").split("\n")]


def joined(stmt: cst.SimpleStatementLine) -> Optional[cst.SimpleStatementLine]:
    """``stmt`` as one line, or None where joining it would lose a comment, a string's line
    breaks or a magic trailing comma."""
    join = _Join()
    body = [small.visit(join) for small in stmt.body]
    if not join.ok:
        return None
    new = stmt.with_changes(body=body)
    code = _EMPTY.code_for_node(new.with_changes(leading_lines=()))
    if code.rstrip("\n").count("\n"):
        return None  # a string over several lines, a backslash continuation
    return new


def rewrap_statement(
    stmt: cst.SimpleStatementLine, indent: int, limit: int, config
) -> Optional[cst.SimpleStatementLine]:
    """A multi-line ``stmt`` with a line past ``limit``, laid out again as ruff format would
    (joined, then ``fix.layout.wrap_statement``); None where that is not possible."""
    from rocm_lint.fix.layout import wrap_statement

    flat = joined(stmt)
    if flat is None:
        return None
    if max(widths(flat.with_changes(leading_lines=()), indent)) <= limit:
        return flat  # ruff format joins what fits on one line (no magic trailing comma)
    return wrap_statement(flat, indent, limit, config)
