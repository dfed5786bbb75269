"""Functions of a C++ file, found from its braces: where each body is, which function holds an
offset, and which functions of the file call which.

Reads lexed code (comments and literals blanked).  A block is a function body when it opens
right after ``name(params)`` (qualifiers and a trailing return type allowed) and ``name`` is no
keyword; a function nested in another's body (a lambda, a local struct's method) belongs to the
outer one.  Every scan is linear: one pass over the braces, bounded backward scans to a
function's name, one pass over the identifiers of each body.

API
---
``brace_tree(code)``
    (offsets of every ``{``, ``{`` -> its ``}``, ``{`` -> the enclosing ``{`` or -1).
``function_of(code, offset, tree) -> (name, body start, body end) | None``
    The innermost function whose body holds ``offset``.
``functions_in(code) -> Functions``
    Every outermost function body of the file, in order, and the calls between them
    (``Functions.callees[i]``: indices of the file's functions that function ``i`` calls,
    templates' ``name<...>(`` included); ``Functions.at(offset)``: the index of the function
    whose body holds ``offset``, or -1.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

_NOT_FUNCTIONS = frozenset(
    {
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "return",
        "sizeof",
        "decltype",
        "alignof",
        "__attribute__",
        "alignas",
        "defined",
        "noexcept",
        "static_assert",
        "__launch_bounds__",
    }
)
# what may stand between a function's `)` and its `{`: qualifiers, a trailing return type
_QUALS_OR_RETURN = re.compile(
    r"(?:\s|const\b|noexcept\b|override\b|final\b|volatile\b|mutable\b|&)*"
    r"(?:->[\w\s:<>,*&]*)?"
)


def brace_tree(code: str) -> Tuple[List[int], Dict[int, int], Dict[int, int]]:
    """(offsets of every ``{``, ``{`` -> its ``}`` (or len(code)), ``{`` -> the enclosing ``{`` or -1)."""
    opens: List[int] = []
    close: Dict[int, int] = {}
    parent: Dict[int, int] = {}
    stack: List[int] = []
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            parent[m.start()] = stack[-1] if stack else -1
            opens.append(m.start())
            stack.append(m.start())
        elif stack:
            close[stack.pop()] = m.start()
    for o in stack:
        close[o] = len(code)
    return opens, close, parent


def innermost_block(tree, offset: int) -> int:
    """The ``{`` of the innermost block holding ``offset`` (a :func:`brace_tree`), or -1."""
    opens, close, parent = tree
    i = bisect_left(opens, offset) - 1
    o = opens[i] if i >= 0 else -1
    while o != -1 and close[o] < offset:
        o = parent[o]
    return o


def opener_before(code: str, close_at: int, opener: str, closer: str, floor: int) -> int:
    """The ``opener`` matching the ``closer`` at ``close_at`` (``)`` -> ``(``, ``>`` -> ``<``),
    scanning back no further than ``floor``; -1 when a ``;``, ``{`` or ``}`` comes first or the
    scan reaches ``floor``."""
    depth = 0
    for i in range(close_at, max(floor, 0) - 1, -1):
        c = code[i]
        if c == closer:
            depth += 1
        elif c == opener:
            depth -= 1
            if depth == 0:
                return i
        elif c in ";{}":
            return -1
    return -1


def function_of(code: str, offset: int, tree) -> Optional[Tuple[str, int, int]]:
    """(name, body start, body end) of the function whose body holds ``offset``, or None.  From
    the innermost block outward: a block opened right after ``name(...)`` (qualifiers and a
    trailing return type allowed) with ``name`` not a keyword is a function body."""
    _, close, parent = tree
    o = innermost_block(tree, offset)
    for _ in range(12):
        if o == -1:
            return None
        name = name_before_block(code, o)
        if name:
            return name, o, close[o]
        o = parent[o]
    return None


def name_before_block(code: str, brace: int) -> Optional[str]:
    """The function name of ``name(params) quals {`` when ``brace`` opens such a body."""
    paren = code.rfind(")", max(0, brace - 160), brace)
    if paren == -1:
        return None
    between = code[paren + 1 : brace]
    if not _QUALS_OR_RETURN.fullmatch(between):
        return None
    i = opener_before(code, paren, "(", ")", paren - 4000)
    if i == -1:
        return None
    found = identifier_before(code, i)
    if found is None or found[1] in _NOT_FUNCTIONS:
        return None
    return found[1]


def identifier_before(code: str, at: int) -> Optional[Tuple[int, str]]:
    """(offset, name) of the identifier that ends right before ``at`` (whitespace between
    allowed) and starts a word (``[A-Za-z_]`` after a non-word character), or None."""
    i = at
    while i > 0 and code[i - 1].isspace():
        i -= 1
    end = i
    while i > 0 and (code[i - 1].isalnum() or code[i - 1] == "_"):
        i -= 1
    if i == end or not (code[i] == "_" or "a" <= code[i] <= "z" or "A" <= code[i] <= "Z"):
        return None
    return i, code[i:end]


@dataclass
class Function:
    name: str
    start: int  # the body's `{`
    end: int  # the body's `}` (or the end of the code)


@dataclass
class Functions:
    items: List[Function] = field(default_factory=list)
    callees: List[Set[int]] = field(default_factory=list)
    _starts: List[int] = field(default_factory=list)

    def at(self, offset: int) -> int:
        """The index of the function whose body holds ``offset``, or -1."""
        i = bisect_right(self._starts, offset) - 1
        return i if i >= 0 and offset <= self.items[i].end else -1

    def callers(self) -> List[Set[int]]:
        out: List[Set[int]] = [set() for _ in self.items]
        for i, called in enumerate(self.callees):
            for j in called:
                out[j].add(i)
        return out


MAX_TEMPLATE_ARGS = 200  # `name<...>(`: how far a call's template arguments may run


def functions_in(code: str, tree=None) -> Functions:
    """The file's outermost function bodies and the calls between them (``tree``: the code's
    ``brace_tree``, when the caller has it)."""
    opens, close, parent = tree = tree or brace_tree(code)
    items: List[Function] = []
    inside: Dict[int, bool] = {}  # `{` -> lies in a function body (its own or an enclosing one)
    for o in opens:
        p = parent[o]
        if p != -1 and inside[p]:
            inside[o] = True
            continue
        name = name_before_block(code, o)
        inside[o] = name is not None
        if name is not None:
            items.append(Function(name, o, close[o]))
    del tree
    found = Functions(items, [set() for _ in items], [f.start for f in items])
    if not items:
        return found
    by_name: Dict[str, List[int]] = {}
    for i, f in enumerate(items):
        by_name.setdefault(f.name, []).append(i)
    for i, f in enumerate(items):
        # each call's `(`, then the name before it (template arguments skipped): fewer matches
        # than every identifier of the body
        paren = code.find("(", f.start, f.end)
        while paren != -1:
            name = _callee_before(code, paren)
            targets = by_name.get(name) if name else None
            if targets is not None:
                found.callees[i].update(t for t in targets if t != i)
            paren = code.find("(", paren + 1, f.end)
    return found


def _callee_before(code: str, paren: int) -> Optional[str]:
    """The name called by the ``(`` at ``paren`` (``name(``, ``name<T, 4>(``), or None."""
    i = paren
    while i > 0 and code[i - 1] in " \t\r\n":
        i -= 1
    if i > 0 and code[i - 1] == ">":
        i = opener_before(code, i - 1, "<", ">", i - MAX_TEMPLATE_ARGS)
        if i == -1:
            return None
        while i > 0 and code[i - 1] in " \t\r\n":
            i -= 1
    end = i
    while i > 0 and (code[i - 1].isalnum() or code[i - 1] == "_"):
        i -= 1
    return code[i:end] if i < end else None
