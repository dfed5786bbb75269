"""Where two versions of a module differ: the runs of statements ``fix.nvidia_path`` folds.

The two modules' statements are aligned by their ASTs (or their text, ``_TextKeys``); a
statement changed only inside its blocks is aligned block by block.  Why the statements outside
the runs need no folding: ``docs/fixes.md``, "Only what changed is folded".
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

_NESTED = ("body", "orelse", "finalbody")


def _same_header(a: ast.stmt, b: ast.stmt) -> bool:
    """Two statements of one kind that differ only inside their blocks (the same decorators,
    signature, test, loop target, context managers, exception handlers' types and names)."""
    if type(a) is not type(b) or isinstance(a, getattr(ast, "Match", ())):
        return False
    for name, value in ast.iter_fields(a):
        other = getattr(b, name, None)
        if name in _NESTED:
            continue
        if name == "handlers":
            if len(value) != len(other):
                return False
            for h, g in zip(value, other):
                if (
                    h.name != g.name
                    or (h.type is None) != (g.type is None)
                    or (h.type is not None and ast.dump(h.type) != ast.dump(g.type))
                ):
                    return False
            continue
        if _dump_field(value) != _dump_field(other):
            return False
    return True


def _dump_field(value: object) -> object:
    if isinstance(value, list):
        return [_dump_field(v) for v in value]
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def changed_regions(
    old: ast.Module, new: ast.Module, old_text: Optional[str] = None, new_text: Optional[str] = None
) -> List[Tuple[List[ast.stmt], List[ast.stmt]]]:
    """(old statements, new statements): runs of statements of one block that the fix changed;
    every statement outside them is the same statement (equal ASTs) in both, in the same place.
    A statement changed only inside its blocks (a ``def`` whose body gained an ``if``) is
    compared block by block.  With the two sources, statements are told equal by their text
    (the same lines and offsets parse to the same AST when both modules have the same
    ``__future__`` imports), which spares dumping every statement."""
    out: List[Tuple[List[ast.stmt], List[ast.stmt]]] = []
    keys = None
    if old_text is not None and new_text is not None and _futures(old) == _futures(new):
        keys = (_TextKeys(old_text), _TextKeys(new_text))
    _align(old.body, new.body, out, keys=keys)
    return out


def _futures(tree: ast.Module) -> List[str]:
    return [
        a.name
        for s in tree.body
        if isinstance(s, ast.ImportFrom) and s.module == "__future__"
        for a in s.names
    ]


class _TextKeys:
    """A statement's text: its lines as written and its offsets in them."""

    def __init__(self, text: str) -> None:
        self.lines = re.split(r"\r\n|\r|\n", text)  # as Python counts lines (not str.splitlines)

    def __call__(self, stmt: ast.stmt) -> object:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", None) or ()])
        last = getattr(stmt, "end_lineno", None) or stmt.lineno
        return (
            stmt.col_offset,
            getattr(stmt, "end_col_offset", None),
            "\n".join(self.lines[first - 1 : last]),
        )


def _header(stmt: ast.stmt) -> str:
    """A statement without its blocks (a simple statement whole)."""
    parts: List[object] = [type(stmt).__name__]
    for name, value in ast.iter_fields(stmt):
        if name in _NESTED:
            continue
        if name == "handlers":
            parts.append([(h.name, _dump_field(h.type)) for h in value])
        else:
            parts.append(_dump_field(value))
    return repr(parts)


def _align(
    a_body: List[ast.stmt],
    b_body: List[ast.stmt],
    out: List[Tuple[List[ast.stmt], List[ast.stmt]]],
    by_header: bool = False,
    keys=None,
) -> None:
    """Align two blocks statement by statement (equal ASTs), then the runs that differ by their
    statements' headers: a pair with the same header is compared block by block."""
    from difflib import SequenceMatcher

    if by_header:
        a, b = [_header(s) for s in a_body], [_header(s) for s in b_body]
    elif keys is not None:
        a, b = [keys[0](s) for s in a_body], [keys[1](s) for s in b_body]
    else:
        a, b = [ast.dump(s) for s in a_body], [ast.dump(s) for s in b_body]
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal" and not by_header:
            continue
        if tag != "equal":
            if not by_header and i1 < i2 and j1 < j2:
                _align(a_body[i1:i2], b_body[j1:j2], out, by_header=True, keys=keys)
            else:
                out.append((a_body[i1:i2], b_body[j1:j2]))
            continue
        for x, y in zip(a_body[i1:i2], b_body[j1:j2]):
            if not _same_header(x, y):
                out.append(([x], [y]))
                continue
            for name in _NESTED:
                if isinstance(getattr(x, name, None), list):
                    _align(getattr(x, name), getattr(y, name), out, keys=keys)
            for h, g in zip(getattr(x, "handlers", None) or (), getattr(y, "handlers", None) or ()):
                _align(h.body, g.body, out, keys=keys)
