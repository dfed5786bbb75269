"""LibCST sees only the statements a fix touches: the others become one-line placeholders.

LibCST's parse and code generation cost time in proportion to the whole module, while a fix
rewrites a few statements (a training script's TF32 switch inside a 1,500-line ``main()``).  So
before the transform, every statement that holds no finding's line and no place where the ROCm
flag goes, and is no neighbour of one, is replaced by a placeholder of the same lines: a
parenthesised empty tuple at the statement's indentation whose lines are comments carrying a
marker and the original line number (``(  #<marker>:12`` ... ``)  #<marker>:40``).  Line numbers
and the kept statements' text are unchanged, so findings, recipes and positions still apply.
After the transform every marker line is replaced by the original line it stands for.

What the transform reads of the module besides the touched statements is kept too: imports,
docstrings, the statements next to a touched one (the gating of neighbouring statements in one
block, the blank lines around the flag), statements that share a line with another, ``elif``
headers, and the indentation LibCST takes as the module's default (the first indented line: the
first multi-line compound top-level statement keeps an ``if 1:`` header and its body's first
indentation).  A result whose markers are not all found once, in order, falls back to the whole
module (:func:`restore` returns None).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Iterable, List, Optional, Sequence, Set, Tuple

from rocm_lint.lines import split_lines

_BLOCKS = ("body", "orelse", "finalbody")


class Skeleton:
    def __init__(self, text: str, skeleton: str, marker: str) -> None:
        self.text = text
        self.skeleton = skeleton
        self.marker = marker


def _start(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])


def _end(stmt: ast.stmt) -> int:
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _placeholdable(stmt: ast.stmt, lines: List[str]) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return False  # a docstring
    first = lines[_start(stmt) - 1]
    if getattr(stmt, "decorator_list", None):
        return first.lstrip().startswith("@")
    return not first[: stmt.col_offset].strip()  # nothing before it on its line


def _ranges(
    body: Sequence[ast.stmt],
    touched: Set[int],
    lines: List[str],
    out: List[Tuple[int, int]],
    elif_chain: bool = False,
    alone: int = -1,
) -> None:
    """The line ranges of ``body`` to replace: each run of consecutive statements that can go
    becomes one placeholder (the statement starting on line ``alone`` stays a run of its own)."""
    mine: List[Tuple[int, int, int]] = []  # (index, first line, last line)
    _candidates(body, touched, lines, out, elif_chain, mine)  # nested blocks' ranges go to ``out``
    merged: List[Tuple[int, int, int]] = []  # (first line, last line, index of the last statement)
    for i, a, b in mine:
        if merged and merged[-1][2] == i - 1 and a != alone and merged[-1][0] != alone:
            merged[-1] = (merged[-1][0], b, i)
        else:
            merged.append((a, b, i))
    out.extend((a, b) for a, b, _ in merged)


def _candidates(
    body: Sequence[ast.stmt],
    touched: Set[int],
    lines: List[str],
    out: list,
    elif_chain: bool,
    mine: List[Tuple[int, int, int]],
) -> None:
    spans = [(_start(s), _end(s)) for s in body]
    hit = [any(a <= t <= b for t in touched) for a, b in spans]
    for i, stmt in enumerate(body):
        a, b = spans[i]
        if hit[i]:
            for field in _BLOCKS:
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    chain = (
                        field == "orelse"
                        and isinstance(stmt, ast.If)
                        and len(block) == 1
                        and isinstance(block[0], ast.If)
                    )
                    _ranges(block, touched, lines, out, chain)
            for handler in getattr(stmt, "handlers", None) or ():
                _ranges(handler.body, touched, lines, out)
            continue
        if elif_chain or (i > 0 and hit[i - 1]) or (i + 1 < len(body) and hit[i + 1]):
            continue
        if (i > 0 and spans[i - 1][1] >= a) or (i + 1 < len(body) and spans[i + 1][0] <= b):
            continue  # shares a line with a neighbour
        if _placeholdable(stmt, lines):
            mine.append((i, a, b))


def _first_block(tree: ast.Module) -> Optional[Tuple[int, Optional[int]]]:
    """(first line, first body line) of the first top-level statement whose body starts on a
    line of its own: LibCST takes the module's default indentation from there (body line None:
    a ``match``, kept whole)."""
    for stmt in tree.body:
        if getattr(stmt, "cases", None):
            return _start(stmt), None
        block = getattr(stmt, "body", None)
        if (
            isinstance(block, list)
            and block
            and isinstance(block[0], ast.stmt)
            and block[0].lineno > stmt.lineno
        ):
            return _start(stmt), block[0].lineno
    return None


def build(text: str, tree: ast.Module, touched: Iterable[int], minimum: int = 200) -> Optional[Skeleton]:
    """The skeleton of ``text`` keeping the statements that hold a line of ``touched``; None
    when it would save little (fewer than ``minimum`` lines replaced) or cannot be built."""
    lines = split_lines(text, keepends=True)
    touched = set(touched)
    ranges: List[Tuple[int, int]] = []
    first_block = _first_block(tree)
    _ranges(tree.body, touched, lines, ranges, alone=first_block[0] if first_block else -1)
    if sum(b - a + 1 for a, b in ranges) < minimum:
        return None
    marker = "rocm-lint-kept-" + os.urandom(6).hex()
    if marker in text:
        return None
    out = list(lines)
    for a, b in ranges:
        indent = re.match(r"[ \t]*", lines[a - 1]).group(0)
        header = None
        if first_block is not None and first_block[0] == a:
            header = first_block[1]  # ``if 1:`` then the body's first indentation
            if header is None:
                continue
        for k in range(a, b + 1):
            ending = lines[k - 1][len(lines[k - 1].rstrip("\r\n")) :]
            tag = f"#{marker}:{k}"
            if header is not None and k < header:
                body = f"if 1:  {tag}" if k == a else tag
            elif header is not None and k == header:
                body_indent = re.match(r"[ \t]*", lines[k - 1]).group(0)
                body = f"{body_indent}{'()' if k == b else '('}  {tag}"
            elif k == a:
                body = f"{indent}{'()' if a == b else '('}  {tag}"
            elif k == b:
                body = f")  {tag}"
            else:
                body = tag
            out[k - 1] = body + ending
    return Skeleton(text, "".join(out), marker)


def restore(skeleton: Skeleton, fixed: str) -> Optional[str]:
    """``fixed`` (the transform of the skeleton) with every placeholder line back as it was;
    None when the placeholders are not all there, once each, in order."""
    original = split_lines(skeleton.text, keepends=True)
    pattern = re.compile(r"#" + re.escape(skeleton.marker) + r":(\d+)")
    expected = [
        i + 1
        for i, line in enumerate(split_lines(skeleton.skeleton, keepends=True))
        if skeleton.marker in line
    ]
    seen: List[int] = []
    out = []
    for line in split_lines(fixed, keepends=True):
        if skeleton.marker in line:
            m = pattern.search(line)
            if m is None:
                return None
            k = int(m.group(1))
            seen.append(k)
            out.append(original[k - 1])
        else:
            out.append(line)
    if seen != expected:
        return None
    return "".join(out)
