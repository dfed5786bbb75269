"""The questions about a module's source text a checker asks through its ``ModuleContext``
(``rocm_lint.python.context``, which is a :class:`SourceView`): the lines as ``ast`` counts them,
a node's source segment and a one-line snippet of it for messages, and whether a statement has
its lines to itself (only then may a fix wrap it).  Positions are ``ast``'s: 1-based lines,
UTF-8 byte columns."""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from rocm_lint.lines import split_lines


class SourceView:
    """Mixed into ``ModuleContext``, which provides ``text``, ``_lines`` (None until split),
    ``statement`` (the current statement), ``ancestors(node)`` and ``memo(key, factory)``."""

    text: str
    _lines: Optional[List[str]]
    statement: Any

    def ancestors(
        self, node: ast.AST
    ) -> Iterator[Tuple[ast.AST, ast.AST]]:  # pragma: no cover - ModuleContext's
        raise NotImplementedError

    def memo(self, key: str, factory: Any) -> Any:  # pragma: no cover - ModuleContext's
        raise NotImplementedError

    def source_lines(self) -> List[str]:
        """The module's lines with their endings, split once (as ``ast`` counts lines)."""
        if self._lines is None:
            self._lines = split_lines(self.text or "", keepends=True)
        return self._lines

    def segment(self, node: ast.AST) -> Optional[str]:
        """``ast.get_source_segment`` without re-splitting the whole source on every call."""
        if not self.text or getattr(node, "end_lineno", None) is None:
            return None
        lines = self.source_lines()[node.lineno - 1 : node.end_lineno]
        if not lines:
            return None
        if len(lines) == 1:
            return lines[0].encode("utf-8")[node.col_offset : node.end_col_offset].decode("utf-8", "replace")
        first = lines[0].encode("utf-8")[node.col_offset :].decode("utf-8", "replace")
        last = lines[-1].encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace")
        return first + "".join(lines[1:-1]) + last

    def snippet(self, node: ast.AST, default: str = "this comparison", width: int = 70) -> str:
        """The node's source on one line, shortened to ``width`` characters (for messages)."""
        text = " ".join((self.segment(node) or default).split())
        return text if len(text) <= width else text[: width - 3] + "..."

    def alone_on_its_lines(self, node: ast.AST) -> bool:
        """Whether the statement holding ``node`` (the node being checked or one of its
        ancestors) has its lines to itself: nothing but indentation before it (not `if x: `,
        `else: `, `a = 1; `) and nothing but a comment after it (not `; b`).  Only then can a
        fix wrap it in ``if not is_rocm:``; the "fixable" count relies on it."""
        return _alone(self, node)

    def is_whole_statement(self, node: ast.AST) -> bool:
        """Is ``node`` the entire current statement (an assignment, or a call on its own line)?

        Only then may a fix gate the statement without gating anything else with it.
        """
        stmt = self.statement
        if stmt is node:
            return True
        return isinstance(stmt, ast.Expr) and stmt.value is node


def _alone(ctx: "SourceView", node: ast.AST) -> bool:
    chain = [node] + [parent for _, parent in ctx.ancestors(node)]
    stmt = next((n for n in chain if isinstance(n, ast.stmt)), None)
    if stmt is None or not ctx.text or getattr(stmt, "end_lineno", None) is None:
        return True
    lines = ctx.source_lines()
    if not (0 < stmt.lineno <= stmt.end_lineno <= len(lines)):
        return True
    # Each line is encoded once, and only searched from the statement's ends (slicing and
    # stripping the line for every statement was quadratic on many statements on one line).
    encoded: Dict[int, bytes] = ctx.memo("context:encoded-lines", dict)
    for i in (stmt.lineno - 1, stmt.end_lineno - 1):
        if i not in encoded:
            encoded[i] = lines[i].encode("utf-8")
    first = _NON_BLANK.search(encoded[stmt.lineno - 1])
    if first is not None and first.start() < stmt.col_offset:
        return False  # code before the statement
    tail = encoded[stmt.end_lineno - 1]
    after = _NON_BLANK.search(tail, stmt.end_col_offset)
    return after is None or after.group() == b"#"


_NON_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # what bytes.strip() keeps
