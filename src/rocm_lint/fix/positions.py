"""LibCST positions where the fixer looks, not over the whole module.

LibCST's ``PositionProvider`` generates the code of the whole module to count lines and columns:
two fifths of a fix's time on a large module where one statement changes.  The fixer (the
``RecipeTransformer``) needs positions for two things only:

* every top-level statement's line span, to skip those no finding touches: taken from Python's
  ``ast`` (LibCST's module body and ``ast``'s agree statement by statement, except that a line
  ``a = 1; b = 2`` is one LibCST statement and two ``ast`` ones: the spans are matched up so);
* every node inside a top-level statement the transformer enters: the code of that statement
  alone is generated with LibCST's own position-tracking state, and shifted to the statement's
  first line (a top-level statement starts at column 0, so columns need no shift).

A module the two parsers do not line up on (a count that differs) gets LibCST's positions for
the whole module, as before.  The tests compare these positions with LibCST's for every node of
every fixture.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set


class LazyPositions:
    """A mapping-like view (``get``, ``[]``, ``in``) of LibCST positions, filled per top-level
    statement by :meth:`expand`."""

    def __init__(self, module, tree: ast.Module, lines) -> None:
        from libcst import SimpleStatementLine
        from libcst.metadata import CodePosition, CodeRange

        from rocm_lint.lines import char_col

        self.module = module
        self._computed: Dict[object, object] = {}
        self._first_line: Dict[int, int] = {}  # id(top-level statement) -> its first line (ast)
        self._expanded: Set[int] = set()
        body = tree.body
        k = 0
        for stmt in module.body:
            n = len(stmt.body) if isinstance(stmt, SimpleStatementLine) else 1
            group = body[k : k + n]
            k += n
            if len(group) != n:
                raise ValueError("LibCST and ast disagree on the module's statements")
            first, last = group[0], group[-1]
            end_line = last.end_lineno or last.lineno
            end_col = char_col(lines[end_line - 1], last.end_col_offset or 0) if end_line <= len(lines) else 0
            self._computed[stmt] = CodeRange(CodePosition(first.lineno, 0), CodePosition(end_line, end_col))
            self._first_line[id(stmt)] = first.lineno
        if k != len(body):
            raise ValueError("LibCST and ast disagree on the module's statements")

    def expand(self, node) -> None:
        """Positions for every node of ``node`` when it is a top-level statement (once)."""
        key = id(node)
        if key not in self._first_line or key in self._expanded:
            return
        from libcst.metadata import CodePosition, CodeRange, PositionProvider
        from libcst.metadata.position_provider import PositionProvidingCodegenState

        provider = PositionProvider()
        provider._computed = {}
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=provider,
        )
        node._codegen(state)
        own = provider._computed[node]
        shift = self._first_line[key] - own.start.line
        for sub, where in provider._computed.items():
            self._computed[sub] = CodeRange(
                CodePosition(where.start.line + shift, where.start.column),
                CodePosition(where.end.line + shift, where.end.column),
            )
        self._expanded.add(key)

    def get(self, node, default=None):
        return self._computed.get(node, default)

    def __getitem__(self, node):
        return self._computed[node]

    def __contains__(self, node) -> bool:
        return node in self._computed


def lazy_positions(wrapper, text: str, tree: Optional[ast.Module] = None) -> Optional[LazyPositions]:
    """:class:`LazyPositions` for the module of ``wrapper`` (``tree``: the ``ast`` of ``text``
    when the caller has it), or None where it cannot be trusted (the caller then uses LibCST's
    positions for the whole module)."""
    from rocm_lint.lines import split_lines

    try:
        # the LibCST internals expand() uses: another LibCST without them gets whole-module positions
        from libcst.metadata.position_provider import PositionProvidingCodegenState  # noqa: F401

        if not callable(
            getattr(wrapper.module.body[0] if wrapper.module.body else wrapper.module, "_codegen", None)
        ):
            return None
        tree = tree if tree is not None else ast.parse(text)
        return LazyPositions(wrapper.module, tree, split_lines(text, keepends=True))
    except (SyntaxError, ValueError, RecursionError, MemoryError, ImportError, AttributeError, TypeError):
        return None
