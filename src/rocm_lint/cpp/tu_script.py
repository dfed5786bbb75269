"""One C/C++ file as the events a translation-unit walk replays (``rocm_lint.cpp.tu_entry``).

A file's script is what it does to the preprocessor's and the compiler's state, in file order:
its conditionals (parsed), ``#define``/``#undef`` (body and parameters), ``#include`` (the path
as spelled, quoted or not, on its line), ``#pragma once``, its include guard, and the
declarations the C++ facts read from an includer (``rocm_lint.cpp.facts``): integer type
aliases (``typedef uint32_t Word;``, ``using Word = unsigned;``, an alias of a name), namespace-
scope ``const``/``constexpr`` scalars, and the ballot and shuffle wrappers the file defines.
The walk decides, per platform, which of them happen.

One script per (path, content) in the workspace (``script_of``): a header included by a hundred
translation units is lexed and read once; an edit gives new content, so a new script.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, FrozenSet, List, Optional, Tuple

from rocm_lint.cpp import includes
from rocm_lint.cpp.conditions import Node, parse_condition
from rocm_lint.cpp.facts import (
    alias_declarations,
    const_declarations,
    declared_type,
    wrappers_in,
)
from rocm_lint.cpp.functions import brace_tree, function_of
from rocm_lint.cpp.preproc import CONDITIONALS, analyse, directive_spans, include_guard
from rocm_lint.workspace import Workspace, memoized

__all__ = ["IDENTIFIER", "Script", "script_of"]

_MACRO_HEAD = re.compile(r"\s*([A-Za-z_]\w*)(\([^)]*\))?")
_WORD = re.compile(r"\s*([A-Za-z_]\w*)")
_SPELLED = re.compile(r'\s*(["<])([^">\n]{1,512})[">]')
_ONCE = re.compile(r"\s*once\b")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")

# events, each a tuple whose first item says its kind:
#   ("cond", directive name, condition Node or None)
#   ("define", name, params or None, body, line) / ("undef", name)
#   ("include", line, spelled path, quoted?)
#   ("alias", name, bits or None, target)     an integer type alias, or an alias of a name
#   ("const", name, initializer, declared type, line)
#   ("ballot", name, line) / ("shuffle", name, line)   a wrapper the file defines
Event = Tuple[Any, ...]  # its items' types follow from its kind (above)


@dataclass(frozen=True)
class Script:
    path: str
    guard: Optional[str]  # the include guard (``#ifndef G`` / ``#define G`` first)
    once: bool  # ``#pragma once``
    events: Tuple[Event, ...]
    words: FrozenSet[str]  # the identifiers of its code: what of an includer's state it can read


def script_of(ws: Workspace, path: str) -> Optional[Script]:
    """The script of the project file at ``path`` (a real path), or None when it cannot be read.
    The file is noted as a dependency of the check in progress."""
    text = includes.read_header(ws, path)
    if text is None:
        return None
    ws.note_read(path)
    return _script(ws, path, text)


@memoized(maxsize=4096)
def _script(ws: Workspace, path: str, text: str) -> Script:
    lexed = includes.shared_lex(ws, text)
    code = lexed.code
    events: List[Tuple[int, Event]] = []
    spans: List[Tuple[int, int]] = []  # each directive's extent: declarations inside are no code
    once = False
    line, pos = 1, 0
    for m, start, end in directive_spans(code):
        line += code.count("\n", pos, start)
        pos = start
        spans.append((start, end))
        name = m.group(1) or ""
        arg = code[m.end() : end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        if name in CONDITIONALS:
            events.append((start, ("cond", name, _condition(name, arg))))
        elif name == "define":
            head = _MACRO_HEAD.match(arg)
            if head:
                body = arg[head.end() :].strip()
                events.append((start, ("define", head.group(1), head.group(2), body, line)))
        elif name == "undef":
            word = _WORD.match(arg)
            if word:
                events.append((start, ("undef", word.group(1))))
        elif name == "include":
            spelled = _SPELLED.match(text, m.end(), end)  # the lexer blanks the path: read the text
            if spelled:
                events.append((start, ("include", line, spelled.group(2).strip(), spelled.group(1) == '"')))
        elif name == "pragma" and _ONCE.match(arg):
            once = True
    starts = [s for s, _ in spans]

    def in_directive(at: int) -> bool:
        i = bisect_right(starts, at) - 1
        return i >= 0 and at < spans[i][1]

    for at, alias, bits, target in alias_declarations(code):
        if not in_directive(at):
            events.append((at, ("alias", alias, bits, target)))
    if "const" in code:
        line_starts = _line_starts(code)
        tree = None
        for at, name, value in const_declarations(code):
            if in_directive(at):
                continue
            tree = tree or brace_tree(code)
            if function_of(code, at, tree) is None:  # namespace or class scope
                typed = declared_type(code, at, name)
                events.append((at, ("const", name, value, typed, bisect_right(line_starts, at))))
    if "__ballot" in code or "__activemask" in code or "__shfl" in code:
        # the file's own #if model decides where a wrapper is (as ``facts.wrappers_in`` reads it)
        line_starts = _line_starts(code)
        ballots, shuffles = wrappers_in(code, analyse(text, lexed), path)
        for kind, table in (("ballot", ballots), ("shuffle", shuffles)):
            for name, (_, at_line) in table.items():
                offset = line_starts[at_line - 1] if at_line - 1 < len(line_starts) else len(code)
                events.append((offset, (kind, name, at_line)))
    events.sort(key=lambda e: e[0])
    ordered = tuple(e for _, e in events)
    guard = include_guard(code)
    words = frozenset(IDENTIFIER.findall(code))
    return Script(path, guard if guard and _wraps_all(ordered) else None, once, ordered, words)


def _wraps_all(events: Tuple[Event, ...]) -> bool:
    """Does the first conditional (an include guard's ``#ifndef``) close at the file's last event?
    Only then is a defined guard a skipped file (``#ifndef MC`` / ``#define MC ...`` that ends
    midway is a plain test)."""
    depth = 0
    for i, event in enumerate(events):
        if event[0] != "cond":
            continue
        if event[1] in ("if", "ifdef", "ifndef"):
            depth += 1
        elif event[1] == "endif":
            depth -= 1
            if depth == 0:
                return i == len(events) - 1
    return False


def _line_starts(code: str) -> List[int]:
    return [0] + [x.end() for x in re.finditer(r"\n", code)]


def _condition(name: str, arg: str) -> Optional[Node]:
    if name in ("if", "elif"):
        return parse_condition(arg)
    if name in ("ifdef", "ifndef", "elifdef", "elifndef"):
        word = _WORD.match(arg)
        if word:
            node = Node("defined", word.group(1))
            return Node("unary", "!", (node,)) if name.endswith("ndef") else node
    return None
