"""Macros that a file's own headers define, per platform.

Projects name their feature tests: DeepSpeed's ``ds_kernel_utils.h`` says
``#if __CUDA_ARCH__ >= 530`` / ``#define PTX_AVAILABLE``, and the kernels test
``#ifdef PTX_AVAILABLE`` around their PTX: the macro is never defined on ROCm, so the code it
guards is NVIDIA-only.  bitsandbytes' ``compat.cuh`` defines ``BNB_HIP`` as 1 under
``__HIP_PLATFORM_AMD__`` and 0 otherwise.  This module follows a file's quoted includes
(``#include "x.h"``) into the project, analyses each header once with the same two-platform
preprocessor model, and returns what each macro is on each platform (defined or not, and its
value when one definition applies).  Angle-bracket (system and library) headers are not followed.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, AnyStr, Dict, Iterator, List, Optional, Tuple

from rocm_lint.build import context as build_context
from rocm_lint.workspace import Workspace, memoized

if TYPE_CHECKING:
    from rocm_lint.cpp.lexer import Lexed

# at a line's start (``directive_matches``: a literal-first search, where a `^[ \t]*` lead in
# multi-line mode was tried at every offset of the text)
_QUOTED_INCLUDE = re.compile(r'#[ \t]*include[ \t]*"([^"\n]+)"')
_BLANKS = re.compile(r"[ \t]*")
_BLANK_BYTES = re.compile(rb"[ \t]*")
_SEARCH_SUBDIRS = ("", "include", "includes")
MAX_DEPTH = 4
MAX_HEADER_BYTES = 2 * 1024 * 1024


def directive_matches(
    pattern: "re.Pattern[AnyStr]", data: AnyStr
) -> Iterator[Tuple["re.Match[AnyStr]", int]]:
    """(match, 1-based line) of ``pattern`` (one that starts with ``#`` and never spans a
    newline; ``data`` text or bytes) where only blanks precede the ``#`` on its line: the
    matches of ``^[ \t]*`` + ``pattern`` in multi-line mode.  A match dropped here hides no other: any later ``#`` of its
    line follows a non-blank.  Linear: newlines are counted from the previous match on, and a
    line's blank lead is measured once."""
    nl, blanks = ("\n", _BLANKS) if isinstance(data, str) else (b"\n", _BLANK_BYTES)
    line, counted = 1, 0  # the line of offset ``counted``
    line_start, lead_end = -1, -1  # the current line's start and where its blanks end
    for m in pattern.finditer(data):
        at = m.start()
        newline = data.rfind(nl, counted, at)
        line += data.count(nl, counted, at)
        counted = at
        if newline != -1 or line_start < 0:
            line_start = newline + 1 if newline != -1 else data.rfind(nl, 0, at) + 1
            lead_end = blanks.match(data, line_start).end()
        if lead_end == at:
            yield m, line


@memoized(maxsize=8192)
def resolve_include(ws: Workspace, name: str, directory: str) -> str:
    """The real path of the project header an include spelled ``name`` in a file of ``directory``
    names: ``directory``, its ``include``/``includes`` folders, then the same four levels up
    (the ``-I`` directories a project's build usually gives); "" where none holds it."""
    here = directory
    for _ in range(4):
        for sub in _SEARCH_SUBDIRS:
            candidate = os.path.join(here, sub, name)
            if os.path.isfile(candidate):
                return os.path.realpath(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return ""


Fact = Tuple[str, Tuple[object, object], Tuple[object, object]]  # name, (defined, body) per platform


def resolved_includes(ws: Workspace, path: str, text: str) -> List[str]:
    """Real paths of the project headers ``text`` (the file at ``path``) includes with quotes,
    in order, each once."""
    if '"' not in text or "include" not in text:
        return []
    directory = os.path.dirname(os.path.abspath(path))
    out: List[str] = []
    for m, _ in directive_matches(_QUOTED_INCLUDE, text):
        name = m.group(1)
        header = resolve_include(ws, name, directory)
        if header and header not in out:
            out.append(header)
    return out


@memoized(maxsize=4096)
def quoted_includes(ws: Workspace, header: str) -> Tuple[str, ...]:
    """``resolved_includes`` of a header (by real path), cached."""
    text = read_header(ws, header)
    return tuple(resolved_includes(ws, header, text)) if text else ()


def note_closure(ws: Workspace, path: str, text: str) -> None:
    """Note every project header the file's quoted includes reach (``MAX_DEPTH`` deep) as a
    dependency of the check in progress (the content cache): the readers here cache what they
    read, so a header read for another file is not read again for this one."""
    if not ws.recording():
        return
    myself = os.path.realpath(path)
    todo = [(h, 0) for h in resolved_includes(ws, path, text) if h != myself]
    seen = set()
    while todo:
        header, depth = todo.pop()
        if header in seen:
            continue
        seen.add(header)
        ws.note_read(header)
        if depth < MAX_DEPTH:
            todo.extend((sub, depth + 1) for sub in quoted_includes(ws, header))


def included_macro_facts(ws: Workspace, path: str, text: str) -> Tuple[Fact, ...]:
    """What the headers ``text`` includes with quotes define, per platform: for each macro,
    (defined?, value expression) as the NVIDIA build and as the ROCm build sees it."""
    if '"' not in text or "include" not in text:
        return ()
    note_closure(ws, path, text)
    merged: Dict[str, Fact] = {}
    myself = os.path.realpath(path)
    for header in resolved_includes(ws, path, text):
        if header != myself:
            for fact in _header_facts(ws, header, 0):
                merged[fact[0]] = fact
    return tuple(merged.values())


@memoized(maxsize=1024)
def read_header(ws: Workspace, path: str) -> Optional[str]:
    """The text of a project header, read bounded (``read_bounded``: regular files only, at most
    ``MAX_HEADER_BYTES``), or None when it cannot be read: a header we cannot read says nothing.
    Cached by path in the workspace: the macro facts here and the C++ facts
    (``rocm_lint.cpp.facts``) share one read."""
    try:
        data = ws.read_bounded(path, MAX_HEADER_BYTES)
    except OSError:
        return None
    if not isinstance(data, bytes):
        return None
    return data.decode("utf-8", errors="replace")


MAX_LEXED_CHARS = 32 * 1024 * 1024  # the characters the shared lexes hold, at most (the oldest go first)
_LEXED = "rocm_lint.cpp.includes.shared_lex"


def shared_lex(ws: Workspace, text: str) -> "Lexed":
    """``lex(text)``, one per content in the workspace: a project header is lexed once whoever
    reads it (the include follower's macro facts, the C++ facts, the header-platform model, and
    the scan of the header itself when the run checks it).  Keyed by the text itself, so a header
    changed on disk is lexed again once read again (``Workspace.revalidate`` drops the stores,
    ``read_header``'s with them); at most ``MAX_LEXED_CHARS`` characters are held."""
    from rocm_lint.cpp.lexer import lex

    store = ws.store(_LEXED)
    found = store.get(text)
    if found is None:
        found = lex(text)
        size = ws.store(_LEXED + ".chars")
        held = size.get("held", 0) + len(text)
        while held > MAX_LEXED_CHARS and store:
            held -= len(store.pop(next(iter(store))).text)
        store[text] = found
        size["held"] = held
    return found


def _world_state(defs, world: str):
    """(defined, body node) of a macro on one platform from all its definitions."""
    from rocm_lint.cpp.conditions import Node, parse_condition

    live = [d for d in defs if (d.cuda if world == "cuda" else d.rocm) is not False]
    if not live:
        return (False, None)
    if (
        len(live) == 1
        and (live[0].cuda if world == "cuda" else live[0].rocm) is True
        and live[0].params is None
    ):
        body = live[0].body
        return (True, parse_condition(body) if body else Node("num", 1))
    return (None, None)


@memoized(maxsize=2048)
def _header_facts(ws: Workspace, header: str, depth: int) -> Tuple[Fact, ...]:
    from rocm_lint.cpp.preproc import analyse

    text = read_header(ws, header)
    if text is None:
        return ()
    inherited: Dict[str, Fact] = {}
    if depth < MAX_DEPTH:
        for sub in quoted_includes(ws, header):
            if sub != header:
                for fact in _header_facts(ws, sub, depth + 1):
                    inherited[fact[0]] = fact
    if "define" not in text:
        return tuple(inherited.values())
    try:
        # what the project's build defines for the header per platform (ggml's GGML_USE_HIP, which
        # ggml-hip/CMakeLists.txt defines for the sources it globs from ../ggml-cuda), then what
        # its own includes define
        pre = analyse(
            text, shared_lex(ws, text), seed=build_context.macro_facts(ws, header) + tuple(inherited.values())
        )
    except RecursionError:
        return tuple(inherited.values())
    for name, defs in pre.macros.items():
        if name.endswith(("_H", "_H_", "_HPP", "_CUH", "_INCLUDED")):
            continue  # include guards
        inherited[name] = (name, _world_state(defs, "cuda"), _world_state(defs, "rocm"))
    return tuple(inherited.values())
