"""Formatter-clean fixes: a statement that a fix made longer than the project's line length is
wrapped the way ruff format (and black) would wrap it, so a pre-commit run with ruff's hooks
beside rocm-lint's does not fail a second time on every fixed commit.

The line length is the project's (``fix.format_config``: ruff's, black's or flake8's setting, the
closest directory's file first; 88 where none says).  Only a line
the fix pushed past it is wrapped: a line that was already longer is left alone (the project does
not hold it to a length), and so is anything already spread over several lines.

The layouts are ruff format's for the shapes fixes make (``A if is_rocm else B`` as a value, an
argument, a dict value or an index; a gated statement one level deeper):

* a value ending in brackets (a call, an index, a literal) is split at those brackets: the
  contents on one indented line when they fit, else one item per line with a magic trailing
  comma, and an item that still does not fit split in turn (its own brackets, or a conditional
  expression over three lines);
* any other value of an assignment or ``return`` is put in parentheses, on one indented line
  when it fits, else a conditional expression over three lines;
* a trailing comment stays on the last line and counts towards its width, except pragma
  comments (``# noqa``, ``# type:`` ...), which ruff does not count.

Wrapping changes whitespace only: the statement's syntax tree is the same, and the verification
of the fix (the NVIDIA program must be the original one) runs on the wrapped text.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from rocm_lint.fix.format_config import DEFAULT_LINE_LENGTH, line_length_for, project_style, style_for  # noqa: F401

_PRAGMA = re.compile(r"#\s*(?:noqa|type:|pyright:|pylint:|ruff:|isort:|nosec|fmt:)", re.IGNORECASE)


_EMPTY = cst.Module([])


def _code(node) -> str:
    return _EMPTY.code_for_node(node)


def _comment_width(comment: Optional[cst.Comment]) -> int:
    if comment is None or _PRAGMA.match(comment.value):
        return 0
    return 2 + len(comment.value)


def _bare(item) -> str:
    """An argument or element without its comma and the space after it."""
    changes = {}
    if hasattr(item, "comma"):
        changes["comma"] = cst.MaybeSentinel.DEFAULT
    if isinstance(item, cst.Arg):
        changes["whitespace_after_arg"] = cst.SimpleWhitespace("")
    return _code(item.with_changes(**changes))


class Layout:
    """Lines for a statement at ``indent`` columns within ``limit`` (continuation lines relative to
    the statement: the parse of the result puts them under the block's indentation)."""

    def __init__(self, limit: int, indent: int) -> None:
        self.limit = limit
        self.indent = indent

    def fits(self, line: str, extra: int = 0) -> bool:
        return self.indent + len(line) + extra <= self.limit

    def brackets(self, node) -> Optional[Tuple[str, List[Tuple[object, str]], str, bool]]:
        """(text up to the opening bracket, [(item node, item text)], closing bracket, whether an
        exploded list gets a trailing comma) of a node that ends in brackets."""
        if isinstance(node, cst.Call) and node.args and not node.lpar:
            return _code(node.func) + "(", [(a, _bare(a)) for a in node.args], ")", True
        if (
            isinstance(node, cst.Subscript)
            and len(node.slice) == 1
            and not node.lpar
            and isinstance(node.slice[0].slice, cst.Index)
        ):
            return _code(node.value) + "[", [(node.slice[0].slice.value, _bare(node.slice[0]))], "]", False
        if isinstance(node, (cst.Dict, cst.List, cst.Set)) and node.elements and not node.lpar:
            opening, closing = {cst.Dict: "{}", cst.List: "[]", cst.Set: "{}"}[type(node)]
            return opening, [(e, _bare(e)) for e in node.elements], closing, True
        if isinstance(node, cst.Tuple) and len(node.elements) > 1 and len(node.lpar) == 1:
            return "(", [(e, _bare(e)) for e in node.elements], ")", True
        return None

    def split(self, node, ind: int, tail: int) -> Optional[List[str]]:
        """``node`` split at its brackets: the first line continues the current one, the others
        are indented by ``ind``; ``tail`` is the width of what follows the closing bracket."""
        parts = self.brackets(node)
        if parts is None:
            return None
        opening, items, closing, trailing = parts
        inner = " " * (ind + 4)
        hugged = inner + ", ".join(text for _, text in items)
        # a literal of several items is split one item per line (black's and ruff's rule), call
        # arguments and a lone item stay on one line where they fit
        collection = isinstance(node, (cst.Dict, cst.List, cst.Set, cst.Tuple)) and len(items) > 1
        if self.fits(hugged) and not collection and not any("\n" in text for _, text in items):
            return [opening, hugged, " " * ind + closing]
        lines = [opening]
        for n, (item, text) in enumerate(items):
            comma = "," if trailing or n + 1 < len(items) else ""
            line = inner + text + comma
            if self.fits(line) or "\n" in text:
                lines.append(line)
                continue
            lines.extend(self._item(item, text, ind + 4, comma) or [line])
        lines.append(" " * ind + closing)
        return lines

    def _item(self, item, text: str, ind: int, comma: str) -> Optional[List[str]]:
        """An argument or element too long for one line, split in turn."""
        prefix, value = "", item
        if isinstance(item, cst.Arg):
            value = item.value
            prefix = text[: len(text) - len(_code(value))] if text.endswith(_code(value)) else None
        elif isinstance(item, (cst.Element, cst.DictElement)):
            value = item.value
            prefix = text[: len(text) - len(_code(value))] if text.endswith(_code(value)) else None
        if prefix is None:
            return None
        if isinstance(value, cst.IfExp) and not value.lpar and not prefix:
            lines = self.conditional(value, ind)
            lines[-1] += comma
            return lines
        split = self.split(value, ind, len(comma))
        if split is None:
            return None
        split[0] = " " * ind + prefix + split[0]
        split[-1] += comma
        return split

    def conditional(self, node: cst.IfExp, ind: int) -> List[str]:
        pad = " " * ind
        return [pad + _code(node.body), pad + "if " + _code(node.test), pad + "else " + _code(node.orelse)]

    def statement(self, head: str, value, tail: str, comment: int, parenthesize: bool) -> Optional[List[str]]:
        """The lines of ``head value tail`` (the comment's width after the last line), or None
        where no layout applies."""
        split = self.split(value, 0, len(tail) + comment)
        if split is not None:
            # (where even the line up to the bracket is too long, ruff's layout is another one)
            return (
                [head + split[0]] + split[1:-1] + [split[-1] + tail] if self.fits(head + split[0]) else None
            )
        if not parenthesize or not self.fits(head + "("):
            return None
        flat = "    " + _code(value)
        if self.fits(flat) or value.lpar:
            body = [flat]
        elif isinstance(value, cst.IfExp):
            body = self.conditional(value, 4)
        elif isinstance(value, cst.BooleanOperation):
            body = self.operands(value, 4)
        else:
            body = [flat]
        return [head + "("] + body + [")" + tail]

    def operands(self, node: cst.BooleanOperation, ind: int) -> List[str]:
        """``a and b and c`` one operand per line, each after the first led by its operator."""
        op = type(node.operator)
        items: List[Tuple[str, object]] = []

        def walk(n, lead: str) -> None:
            if isinstance(n, cst.BooleanOperation) and type(n.operator) is op and not n.lpar:
                walk(n.left, lead)
                walk(n.right, "and " if op is cst.And else "or ")
            else:
                items.append((lead, n))

        walk(node, "")
        return [" " * ind + lead + _code(n) for lead, n in items]


def _value_of(small) -> Tuple[Optional[object], bool]:
    """(the value a statement ends with, whether ruff puts it in parentheses when it is too long)."""
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.Return)) and small.value is not None:
        return small.value, True
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        return small.value, True
    if isinstance(small, cst.Expr):
        return small.value, False
    if isinstance(small, cst.Assert) and small.msg is None:
        return small.test, True
    return None, False


def _relaid(
    indent: int,
    limit: int,
    config,
    head: str,
    value,
    tail: str,
    comment,
    parenthesize: bool,
    after: str,
    kind,
):
    """The statement ``head value tail`` (its comment after it) laid out within ``limit`` and
    parsed (``after``: what completes it as a statement, a body), or None where it fits, is not
    one line, has no layout here, or does not parse as ``kind``."""
    layout = Layout(limit, indent)
    width = _comment_width(comment)
    flat = head + _code(value) + tail
    if "\n" in flat or layout.fits(flat, width):
        return None
    lines = layout.statement(head, value, tail, width, parenthesize)
    if lines is None:
        return None
    try:
        new = cst.parse_statement("\n".join(lines) + "\n" + after, config=config)
    except cst.ParserSyntaxError:
        return None
    return new if isinstance(new, kind) else None


def wrap_statement(
    stmt: cst.SimpleStatementLine, indent: int, limit: int, config
) -> Optional[cst.SimpleStatementLine]:
    """``stmt`` (one line at ``indent`` columns) wrapped to ``limit``, or None when it fits, is
    not one line, or has no layout here."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assert) and small.msg is not None:
        return wrap_assert(stmt, indent, limit, config)
    flat = _code(small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
    value, parenthesize = _value_of(small)
    if value is None or not flat.endswith(_code(value)):
        return None
    new = _relaid(
        indent,
        limit,
        config,
        flat[: len(flat) - len(_code(value))],
        value,
        "",
        stmt.trailing_whitespace.comment,
        parenthesize,
        "",
        cst.SimpleStatementLine,
    )
    return (
        None
        if new is None
        else new.with_changes(leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)
    )


def wrap_assert(stmt: cst.SimpleStatementLine, indent: int, limit: int, config):
    """``assert test, msg`` past ``limit``: the test in parentheses (``assert (\n    test\n), msg``)."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assert) or stmt.body[0].msg is None:
        return None
    small = stmt.body[0]
    new = _relaid(
        indent,
        limit,
        config,
        "assert ",
        small.test,
        ", " + _code(small.msg),
        stmt.trailing_whitespace.comment,
        True,
        "",
        cst.SimpleStatementLine,
    )
    return (
        None
        if new is None
        else new.with_changes(leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)
    )


def wrap_if(stmt: cst.If, indent: int, limit: int, config) -> Optional[cst.If]:
    """An ``if`` whose test runs past ``limit``: the test in parentheses, on one line or one
    operand per line (``if (\n    a\n    and b\n):``), as ruff format lays it out."""
    if stmt.test.lpar:
        return None
    header = getattr(stmt.body, "header", None)
    test = stmt.test
    if (
        isinstance(test, cst.UnaryOperation)
        and isinstance(test.operator, cst.Not)
        and len(test.expression.lpar) == 1
        and isinstance(test.expression, cst.BooleanOperation)
    ):
        # `if not (a and b):` keeps its own parentheses as the split point (ruff hugs them)
        layout = Layout(limit, indent)
        inner = test.expression.with_changes(lpar=[], rpar=[])
        if layout.fits("if " + _code(test) + ":", _comment_width(header.comment if header else None)):
            return None
        body = ["    " + _code(inner)]
        if not layout.fits(body[0]):
            body = layout.operands(inner, 4)
        try:
            new = cst.parse_statement("\n".join(["if not ("] + body + ["):"]) + "\n    pass\n", config=config)
        except cst.ParserSyntaxError:
            return None
        return stmt.with_changes(test=new.test, whitespace_before_test=new.whitespace_before_test)
    new = _relaid(
        indent,
        limit,
        config,
        "if ",
        stmt.test,
        ":",
        header.comment if header else None,
        True,
        "    pass\n",
        cst.If,
    )
    return (
        None
        if new is None
        else stmt.with_changes(test=new.test, whitespace_before_test=new.whitespace_before_test)
    )


def wrap_with(stmt: cst.With, indent: int, limit: int, config) -> Optional[cst.With]:
    """A ``with`` statement of one item whose header runs past ``limit``: the item split at its
    brackets (``with f(\\n    {...}\\n):``)."""
    if len(stmt.items) != 1 or stmt.asynchronous is not None or isinstance(stmt.lpar, cst.LeftParen):
        return None
    item = stmt.items[0]
    tail = (" as " + _code(item.asname.name) if item.asname else "") + ":"
    header = getattr(stmt.body, "header", None)
    new = _relaid(
        indent,
        limit,
        config,
        "with ",
        item.item,
        tail,
        header.comment if header else None,
        False,
        "    pass\n",
        cst.With,
    )
    return None if new is None else new.with_changes(body=stmt.body, leading_lines=stmt.leading_lines)


def wrap_decorator(decorator: cst.Decorator, indent: int, limit: int, config) -> Optional[cst.Decorator]:
    """A decorator call past ``limit``, split at its parentheses."""
    new = _relaid(
        indent,
        limit,
        config,
        "@",
        decorator.decorator,
        "",
        decorator.trailing_whitespace.comment,
        False,
        "def f():\n    pass\n",
        cst.FunctionDef,
    )
    if new is None or len(new.decorators) != 1:
        return None
    return new.decorators[0].with_changes(
        leading_lines=decorator.leading_lines, trailing_whitespace=decorator.trailing_whitespace
    )
