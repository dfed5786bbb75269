"""A header inside its translation units: what is in effect at its ``#include`` line.

A header, ``.inl`` or ``.cuh`` is no program of its own: it is read where a translation unit
includes it, after whatever the includer and the headers included before it defined.  An
``.inl`` that uses ``Word`` gets ``typedef uint32_t Word;`` from the ``.cu`` that includes it after
the defining header; a kernel header whose ``__shfl_xor_sync`` calls reach a compat header that
redefines them as mask-dropping macros under the ROCm macro never passes a mask to HIP.  So::

    entry_environment(ws, header) -> Entry | None

walks the translation units that include the header and records, at every inclusion whose
content is compiled (its include guard not yet defined, no earlier ``#pragma once`` entry), the
part of the state the header can read (the names its code holds, and those their bodies name:
a snapshot costs what the header names, not what the unit has defined) on each platform (NVIDIA: ROCm macros undefined; ROCm: ``USE_ROCM`` ... defined, as
``rocm_lint.cpp.conditions`` models them): the macros with their values and parameters, and, as
the ROCm build sees them, integer type aliases, namespace-scope constants, ballot and shuffle
wrappers.  The walk replays each file's script (``rocm_lint.cpp.tu_script``) through the same
three-valued ``#if`` model the per-file view uses, follows ``#include "..."`` and ``<...>`` into
the project (``includes.resolve_include``), and starts from what the project's build defines for
the source per platform (``build.context.macro_facts``) and whether it compiles the source at
all (``file_platform``).  A definition in code a platform may or may not compile is unknown
there; a macro never defined in the walk is unknown (the command line and system headers may
define it), never "undefined".

The header's entry is the meet over every recorded inclusion, per platform: a macro, alias or
constant holds when every inclusion agrees on it; anything else gives no fact, and the per-file
view (``cpp.includes``, ``cpp.facts``) decides as before (``cpp.tu_meet``).  None (no fact at all) for a header
nothing in the project includes, one whose includes cannot all be told (``build.headers``:
``#include MY_HEADER``, a path that resolves nowhere for sure), one with more than
``MAX_INCLUDERS`` includers or ``MAX_ROOTS`` translation units, a walk over ``MAX_TU_FILES``
file entries or ``MAX_TU_DEPTH`` deep, or an include of it the walks never met.  The roots are
found backwards through the includer index (``build.headers.includes_of``): every source file
on the way up is a translation unit; a header with no includer of its own (or includers that
cannot be told) is walked as a root from an unknown state.

Memoized in the workspace: one walk per root, one entry per header; the files a walk read
(every script, the build files of its root) and the includers looked at are noted as the
check's dependencies on every call, as ``build.headers`` notes its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple

from rocm_lint.build.context import CUDA, ROCM, file_platform, macro_facts
from rocm_lint.build.headers import HEADER_EXT, includes_of
from rocm_lint.cpp.conditions import (
    CUDA as CUDA_WORLD,
    ROCM as ROCM_WORLD,
    Node,
    Platform,
    Tri,
    parse_condition,
    tri_and,
    tri_not,
    tri_or,
    truth,
)
from rocm_lint.cpp.facts import Facts, Value
from rocm_lint.cpp.includes import resolve_include
from rocm_lint.cpp.tu_meet import UNKNOWN, Declared, Entry, Macro, Record, meet
from rocm_lint.cpp.tu_script import IDENTIFIER, script_of
from rocm_lint.workspace import Workspace, memoized

__all__ = ["Entry", "entry_environment", "MAX_INCLUDERS", "MAX_ROOTS"]

MAX_INCLUDERS = 64  # includes of the header looked at; more: no fact
MAX_ROOTS = 16  # translation units walked for one header; more: no fact
MAX_VISITED = 128  # files met backwards from the header
MAX_BACK_DEPTH = 8
MAX_TU_FILES = 512  # file entries one walk makes; more: the walk gives nothing
MAX_TU_DEPTH = 32


def _view(env: Dict[str, "Macro"], words: FrozenSet[str]) -> Dict[str, "Macro"]:
    """The macros of ``env`` a file whose code holds ``words`` can read: those it names, and
    those their bodies name (four rounds).  A snapshot per inclusion costs what the header names,
    not what the translation unit has defined."""
    out = {n: env[n] for n in words & env.keys()}
    todo = list(out.values())
    for _ in range(4):
        named = {w for m in todo if m[1] for w in IDENTIFIER.findall(m[1])} - out.keys()
        todo = [env[n] for n in named & env.keys()]
        if not todo:
            break
        out.update((n, env[n]) for n in named & env.keys())
    return out


class _TooLarge(Exception):
    pass


@dataclass(frozen=True)
class Walk:
    records: Dict[str, Tuple[Record, ...]]  # by the included header's real path
    met: FrozenSet[Tuple[str, int, str]]  # (includer, line, header) of every include resolved


class _Walker:
    def __init__(self, ws: Workspace, root: str) -> None:
        self.ws = ws
        self.worlds = (
            Platform(CUDA_WORLD, frozenset(), frozenset()),
            Platform(ROCM_WORLD, frozenset(), frozenset()),
        )
        self.raw: Tuple[Dict[str, Macro], Dict[str, Macro]] = ({}, {})
        self.rocm = Declared()
        self.once: Dict[str, Tuple[Tri, Tri]] = {}
        self.records: Dict[str, List[Record]] = {}
        self.met: set = set()
        self.entries = 0
        for name, on_cuda, on_rocm in macro_facts(ws, root):
            for i, (defined, node) in enumerate((on_cuda, on_rocm)):
                self.raw[i][name] = (defined, _node_text(node), None, ("", 0), False)
                self.worlds[i].local[name] = (defined, node)

    def _set(self, i: int, name: str, macro: Macro) -> None:
        self.raw[i][name] = macro
        defined, body, params = macro[0], macro[1], macro[2]
        local: Tuple[Tri, Optional[Node]]
        if defined is True and params is None:
            local = (True, parse_condition(body) if body else Node("num", 1))
        else:
            local = (defined, None)
        self.worlds[i].local[name] = local

    def run(self, path: str, state: Tuple[Tri, Tri], depth: int) -> None:
        script = script_of(self.ws, path)
        if script is None:
            return
        stack: List[Tuple[Tuple[Tri, Tri], Tuple[Tri, Tri]]] = []  # (outer, taken) per group
        current = state
        for event in script.events:
            kind = event[0]
            if kind == "cond":
                current = self._conditional(stack, current, event[1], event[2])
                continue
            if current == (False, False):
                continue
            if kind == "define":
                _, name, params, body, line = event
                rocm_only = current == (False, True)
                for i, s in enumerate(current):
                    if s is True:
                        self._set(i, name, (True, body, params, (path, line), rocm_only))
                    elif s is None:
                        self._set(i, name, UNKNOWN)
            elif kind == "undef":
                for i, s in enumerate(current):
                    if s is not False:
                        self._set(i, event[1], (False, None, None, (path, 0), False) if s else UNKNOWN)
            elif kind == "include":
                self._include(path, event[1], event[2], event[3], current, depth)
            elif current[1] is not False:
                self._declare(path, event, current[1] is True)

    def _conditional(self, stack, current, name, condition):
        if name in ("if", "ifdef", "ifndef"):
            stack.append((current, (False, False)))
        elif not stack:
            return current  # unbalanced: ignored, as a recovering compiler would
        outer, taken = stack[-1]
        if name == "endif":
            stack.pop()
            return outer
        if name == "else":
            now = (True, True)
        elif condition is None:
            now = (None, None)
        else:
            now = tuple(truth(w.evaluate(condition)) for w in self.worlds)
        stack[-1] = (outer, (tri_or(taken[0], now[0]), tri_or(taken[1], now[1])))
        return tuple(tri_and(outer[i], tri_and(tri_not(taken[i]), now[i])) for i in (0, 1))

    def _declare(self, path: str, event, definite: bool) -> None:
        """A declaration the ROCm build compiles (``definite``) or may compile."""
        kind, name = event[0], event[1]
        rocm = self.rocm
        if kind == "alias":
            bits, target = event[2], event[3]
            rocm.links.pop(name, None)
            if not definite:
                rocm.aliases.pop(name, None)
                return
            if bits is None:
                bits = rocm.aliases.get(target)
            if bits is None:
                rocm.aliases.pop(name, None)
                rocm.links[name] = target
            else:
                rocm.aliases[name] = bits if rocm.aliases.get(name, bits) == bits else 0
        elif kind == "const":
            if definite:
                rocm.consts[name] = Value(event[2], (path, event[4]), type=event[3])
            else:
                rocm.consts.pop(name, None)
        else:
            table = rocm.ballots if kind == "ballot" else rocm.shuffles
            if definite:
                table.setdefault(name, (path, event[2]))

    def _include(self, includer: str, line: int, spelled: str, quoted: bool, state, depth: int) -> None:
        header = resolve_include(self.ws, spelled, os.path.dirname(includer))
        if not header:
            return  # not in the project (a system or library header): unknown, as in the per-file view
        self.met.add((includer, line, header))
        if state == (False, False):
            return
        script = script_of(self.ws, header)
        if script is None:
            return
        self.entries += 1
        if depth >= MAX_TU_DEPTH or self.entries > MAX_TU_FILES:
            raise _TooLarge
        enters = list(state)
        before = self.once.get(header, (False, False))
        for i in (0, 1):
            if enters[i] is False:
                continue
            if script.once:
                enters[i] = tri_and(enters[i], tri_not(before[i]))
            if script.guard is not None:
                guard = self.raw[i].get(script.guard)
                if guard is None:  # the first inclusion: the guard is not defined yet
                    self._set(i, script.guard, (False, None, None, (header, 0), False))
                    guard = self.raw[i][script.guard]
                enters[i] = tri_and(enters[i], tri_not(guard[0]))
        if script.once:
            self.once[header] = (tri_or(before[0], enters[0]), tri_or(before[1], enters[1]))
        words = script.words
        self.records.setdefault(header, []).append(
            (
                includer,
                line,
                _view(self.raw[0], words) if enters[0] is not False else None,
                (_view(self.raw[1], words), self.rocm.view(words)) if enters[1] is not False else None,
            )
        )
        if enters != [False, False]:
            self.run(header, (enters[0], enters[1]), depth + 1)


def _node_text(node: Optional[Node]) -> Optional[str]:
    if node is None:
        return None
    if node.kind == "num":
        return str(node.value)
    if node.kind == "name":
        return str(node.value)
    return None


@memoized(maxsize=256)
def _walk(ws: Workspace, root: str) -> Tuple[Optional[Walk], Tuple[str, ...]]:
    """(the walk of the translation unit ``root``, or None where it is too large; the files it read)."""
    with ws.recording_reads() as reads:
        walker = _Walker(ws, root)
        platform = file_platform(ws, root)
        state: Tuple[Tri, Tri] = (
            (True, False) if platform == CUDA else (False, True) if platform == ROCM else (True, True)
        )
        try:
            walker.run(root, state, 0)
            walk: Optional[Walk] = Walk(
                {k: tuple(v) for k, v in walker.records.items()}, frozenset(walker.met)
            )
        except (_TooLarge, RecursionError):
            walk = None
    return walk, tuple(sorted(reads))


def _roots(ws: Workspace, header: str) -> Optional[List[str]]:
    """The translation units that may include ``header``: backwards through the includer index,
    every source on the way and every header that has no includer we can tell; None beyond the
    caps.  The includers looked at are noted as dependencies."""
    roots: List[str] = []
    todo: List[Tuple[str, int]] = [(header, 0)]
    seen = {header}
    while todo:
        current, depth = todo.pop()
        found = includes_of(ws, current)
        if current != header:
            ws.note_read(current)
            if not HEADER_EXT.search(current) or not found:
                roots.append(current)
        if not found:
            continue
        if len(found) > MAX_INCLUDERS:
            return None
        for includer, _, _, _ in found:
            if includer in seen:
                continue
            if depth + 1 >= MAX_BACK_DEPTH or len(seen) >= MAX_VISITED:
                return None
            seen.add(includer)
            todo.append((includer, depth + 1))
    return roots if len(roots) <= MAX_ROOTS else None


def _compute(ws: Workspace, header: str) -> Optional[Entry]:
    found = includes_of(ws, header)
    if not found or len(found) > MAX_INCLUDERS:
        return None  # no includer in the project (today's per-file view), or too many
    roots = _roots(ws, header)
    if not roots:
        return None
    records: List[Record] = []
    met: set = set()
    for root in roots:
        walk, deps = _walk(ws, root)
        for dep in deps:
            ws.note_read(dep)
        if walk is None:
            return None
        records.extend(walk.records.get(header, ()))
        met |= walk.met
    if not records or any((includer, line, header) not in met for includer, line, _, _ in found):
        return None  # an include of it the walks never met: an includer we could not place
    return meet(records)


@memoized(maxsize=2048)
def _entry(ws: Workspace, header: str) -> Tuple[Optional[Entry], Tuple[str, ...]]:
    with ws.recording_reads() as reads:
        entry = _compute(ws, header)
    reads.discard(header)
    return entry, tuple(sorted(reads))


def entry_environment(ws: Workspace, path: str) -> Optional[Entry]:
    """What holds at the entry of the header at ``path`` in every translation unit of the project
    that compiles it (see the module docstring); None: no fact (not a header, no includer, an
    includer we cannot place, over the caps).  The files the answer read are noted as the check's
    dependencies."""
    if not HEADER_EXT.search(path):
        return None
    entry, deps = _entry(ws, os.path.realpath(path))
    for dep in deps:
        ws.note_read(dep)
    return entry


def with_entry_facts(ws: Workspace, path: str, facts: Facts) -> Facts:
    """``facts`` (a file's own and its includes') over what its includers give it at its entry
    (``entry_environment``): the file's own view wins where both speak."""
    entry = entry_environment(ws, path)
    if entry is None or not _any_facts(entry.facts):
        return facts
    merged = Facts()
    merged.update(entry.facts)
    merged.update(facts)
    merged.resolve_aliases()
    return merged


def _any_facts(facts: Facts) -> bool:
    return bool(
        facts.values
        or facts.int_aliases
        or facts.alias_links
        or facts.ballot_wrappers
        or facts.shuffle_wrappers
        or facts.mask_free_sync
    )
