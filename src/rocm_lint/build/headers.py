"""A header's platform, from the files that include it.

``rocm_lint.build.context.file_platform`` knows the sources each build compiles; a header is
named by no build file, yet it is NVIDIA-only when every place that includes it is: bitsandbytes'
``gemm_4bit_mma.cuh`` is included only by ``gemm_4bit_sm75.cu``/``gemm_4bit_sm80.cu``, which
``CMakeLists.txt`` compiles only in its CUDA branch, and ``gemm_4bit_sm80.cuh`` also by
``gemm_4bit.cu`` (compiled for ROCm too) under ``#if defined(BNB_HAS_GEMM4BIT_SM80)``, a macro
the build defines only for CUDA.  So::

    header_platform(path) -> "cuda" | None

is ``"cuda"`` iff the header has at least one includer in the project and every include of it
is in a source the ROCm build never compiles (``file_platform``), in a header that is itself
NVIDIA-only (the same question, asked backwards through the includers, cycle-safe and bounded),
or on a line the includer's ``#if`` model says no ROCm build reaches (``Preprocessed.nvidia_only``,
seeded with the build's ``macro_facts`` and the includer's own headers, as the C++ scanner
seeds it).  Anything unknown gives no fact: an includer the ROCm build may compile, a header with
no includer in the project (another project may include it), an include whose path resolves
nowhere for sure (``#include "../x/y.h"`` that is not there), a macro that names the header
(``#define MY_HEADER "y.h"``: ``#include MY_HEADER`` may be anywhere), too many includers or too
deep a chain, a project tree too large to index.

The project's includes are indexed once per build root (the directory holding ``.git``, or the
highest directory on the way up holding a build file): one bounded pass over its C/C++ files
(``Workspace.read_bounded``, hidden directories skipped), each ``#include "..."``/``<...>`` line kept by the
included file's name.  An include names the header when, resolved against the includer's
directory, it is the header, or else when the header's path ends with the spelled path.  The
index's reads are no cache dependencies; the includers a header's answer looked at, and what
their own answers read (build files, their headers), are noted with ``Workspace.note_read`` on every call
(a changed includer re-checks the header).  A new includer of a header, in a file the answer
never looked at, is not seen by the content cache (as a new importer of a Python module is not).
"""

from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from rocm_lint.build.context import CUDA, ROCM, file_platform, macro_facts
from rocm_lint.cpp.includes import directive_matches, included_macro_facts, read_header, shared_lex
from rocm_lint.cpp.preproc import analyse, include_guard
from rocm_lint.cpp.vocabulary import learned_macros
from rocm_lint.workspace import Workspace, memoized

__all__ = ["HEADER_EXT", "header_platform", "includes_of"]

HEADER_EXT = re.compile(r"\.(?:h|hh|hpp|hxx|h\+\+|cuh|inl|inc|ipp|tcc|tpp)\Z", re.I)
_C_FILE = re.compile(r"\.(?:c|cc|cpp|cxx|c\+\+|cu|hip|h|hh|hpp|hxx|h\+\+|cuh|inl|inc|ipp|tcc|tpp)\Z", re.I)
# `#include "a/b.h"` / `<a/b.h>`; `#define NAME "a/b.h"` (an include through a macro).  Both
# start with their literal `#` (the regex engine's fast search; a `^[ \t]*` lead in multi-line
# mode was tried at every offset of every file) and ``directive_matches`` keeps a match only where
# blanks alone precede the `#` on its line, as the `^[ \t]*` lead did.
_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*(["<])([^">\n]{1,512})[">]')
_DEFINE_PATH = re.compile(rb'#[ \t]*define[ \t]+[A-Za-z_]\w*[ \t]+["<]([^">\n]{1,512})[">][ \t]*$', re.M)
_BUILD_FILES = ("CMakeLists.txt", "setup.py")
_SKIP_DIRS = frozenset(("node_modules", "__pycache__"))
MAX_LEVELS = 12  # directories walked up to find the root (as build.context)
MAX_INDEX_FILES = 40_000  # C/C++ files indexed per root; a larger tree gives no fact
MAX_INDEX_DIRS = 20_000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_INCLUDERS = 64  # includes of one header looked at; more: no fact
MAX_VISITED = 128  # headers visited backwards from one header
MAX_DEPTH = 8  # includer chain depth

# an include: (includer's real path, 1-based line, quoted?, spelled path)
Include = Tuple[str, int, bool, str]


@memoized(maxsize=256)
def _root(ws: Workspace, directory: str) -> Optional[str]:
    """The build root above ``directory``: the directory holding ``.git``, else the highest one
    on the way up holding a build file; None where there is neither."""
    here, best = directory, None
    for _ in range(MAX_LEVELS):
        if os.path.exists(os.path.join(here, ".git")):
            return here
        if any(os.path.isfile(os.path.join(here, name)) for name in _BUILD_FILES):
            best = here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return best


Index = Tuple[Dict[str, Tuple[Include, ...]], FrozenSet[str]]


@memoized(maxsize=16)
def _index(ws: Workspace, root: str) -> Optional[Index]:
    """(includes by the included file's name, names a ``#define`` spells as a path) of every
    C/C++ file under ``root``; None where the tree is too large to index."""
    by_name: Dict[str, List[Include]] = {}
    defined: Set[str] = set()
    files = dirs = 0
    for directory, subdirs, names in os.walk(root):
        dirs += 1
        if dirs > MAX_INDEX_DIRS:
            return None
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in _SKIP_DIRS]
        real_directory = None
        for name in names:
            if not _C_FILE.search(name):
                continue
            files += 1
            if files > MAX_INDEX_FILES:
                return None
            path = os.path.join(directory, name)
            try:
                data = ws.read_bounded(path, MAX_FILE_BYTES, note=False)  # the index is no dependency
            except OSError:
                continue
            if not isinstance(data, bytes) or b"include" not in data:
                continue
            real = None  # resolved at the first include (a file without one costs no realpath)
            for m, line in directive_matches(_INCLUDE, data):
                if real is None:
                    # the directory resolved once, the file's own name only when it is a link:
                    # realpath(dir/name) == realpath(dir)/name for a name that is no link
                    if real_directory is None:
                        real_directory = os.path.realpath(directory)
                    real = (
                        os.path.realpath(path) if os.path.islink(path) else os.path.join(real_directory, name)
                    )
                spelled = m.group(2).decode("utf-8", "replace").strip()
                by_name.setdefault(os.path.basename(spelled), []).append(
                    (real, line, m.group(1) == b'"', spelled)
                )
            if b"define" in data:
                for m, _ in directive_matches(_DEFINE_PATH, data):
                    defined.add(os.path.basename(m.group(1).decode("utf-8", "replace").strip()))
    return {k: tuple(v) for k, v in by_name.items()}, frozenset(defined)


@memoized(maxsize=8192)
def _beside(ws: Workspace, here: str) -> Optional[str]:
    """The real path of the file ``here`` (an include resolved against its includer's directory),
    or None where there is no such file: one answer per path, where every header of the include's
    name asked again (``utils.h`` of many directories)."""
    return os.path.realpath(here) if os.path.isfile(here) else None


def _names_header(ws: Workspace, include: Include, header: str) -> Optional[bool]:
    """Does ``include`` name ``header`` (a real path)?  None: cannot tell."""
    includer, _, quoted, spelled = include
    spelled = spelled.replace("\\", "/")
    here = _beside(ws, os.path.join(os.path.dirname(includer), *spelled.split("/")))
    if here is not None:
        if here == header:
            return True
        if quoted:  # a quoted include finds the file beside the includer first
            return False
    parts = [p for p in spelled.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None  # not beside the includer, and no suffix to match: resolves nowhere we know
    return header.replace(os.sep, "/").endswith("/" + "/".join(parts))


def _unreached_on_rocm(ws: Workspace, includer: str, line: int) -> bool:
    """Does no ROCm build reach ``includer``'s ``#include`` on ``line``?"""
    if not _conditional_above(ws, includer, line):
        return False  # no #if around it but the include guard: reached wherever the file is
    lines, deps = _unreached(ws, includer)
    for dep in deps:
        ws.note_read(dep)
    return line in lines


_OPENING = re.compile(r"#[ \t]*if")  # at a line's start: ``directive_matches``


@memoized(maxsize=2048)
def _openings(ws: Workspace, includer: str) -> Tuple[int, ...]:
    """The lines of ``includer`` that open a conditional (``#if``/``#ifdef``/``#ifndef``, a
    commented one too), its include guard's left out."""
    text = read_header(ws, includer) or ""
    out = [line for _, line in directive_matches(_OPENING, text)]
    if out and include_guard(text) is not None:
        out.pop(0)
    return tuple(out)


def _conditional_above(ws: Workspace, includer: str, line: int) -> bool:
    """Does a conditional open above ``line`` (the model is then read; else the line is reached
    wherever the file is: the cheap answer for most includes)?"""
    openings = _openings(ws, includer)
    return bool(openings) and openings[0] < line


@memoized(maxsize=2048)
def _unreached(ws: Workspace, includer: str) -> Tuple[FrozenSet[int], Tuple[str, ...]]:
    """(the lines of ``includer``'s ``#include`` directives that no ROCm build reaches, by its
    ``#if`` model seeded as the C++ scanner seeds it (the build's macros, its own headers' and
    the platform macros its includes teach), and the files that model read."""
    with ws.recording_reads() as reads:
        lines = _unreached_lines(ws, includer)
    return lines, tuple(sorted(reads))


def _unreached_lines(ws: Workspace, includer: str) -> FrozenSet[int]:
    text = read_header(ws, includer)
    if text is None:
        return frozenset()
    try:
        pre = analyse(text, shared_lex(ws, text))
        # the file's own include guard is no fact of its headers (one that includes it back)
        guard = include_guard(pre.lexed.code)
        seed = tuple(
            f for f in macro_facts(ws, includer) + included_macro_facts(ws, includer, text) if f[0] != guard
        )
        rocm_extra, cuda_extra = learned_macros(pre)
        if seed or rocm_extra or cuda_extra:
            pre = analyse(text, pre.lexed, rocm_extra, cuda_extra, seed)
    except RecursionError:
        return frozenset()
    # NVIDIA compiles the line, ROCm does not (a line neither compiles, `#if 0`, is read as an include)
    return frozenset(
        d.line
        for d in pre.directives
        if d.name == "include" and pre.nvidia_only(d.line) and pre.status(d.line).cuda is not False
    )


@memoized(maxsize=4096)
def _includes_of(ws: Workspace, header: str) -> Optional[Tuple[Include, ...]]:
    """The includes that name ``header``; None where one of them may or may not (or a macro
    spells its name, or the project cannot be indexed)."""
    root = _root(ws, os.path.dirname(header))
    index = _index(ws, root) if root is not None else None
    if index is None:
        return None
    by_name, defined = index
    name = os.path.basename(header)
    if name in defined:
        return None  # `#define MY_HEADER "name.h"`: `#include MY_HEADER` may be anywhere
    out: List[Include] = []
    for include in by_name.get(name, ()):
        names = _names_header(ws, include, header)
        if names is None:
            return None
        if names and include[0] != header:
            out.append(include)
    return tuple(out)


def includes_of(ws: Workspace, header: str) -> Optional[Tuple[Include, ...]]:
    """The includes in the project that name ``header`` (a real path): (includer's real path,
    1-based line, quoted?, spelled path) each; None where one may or may not name it, a macro
    spells its name, or the project cannot be indexed.  Not noted as dependencies: the caller
    notes the includers whose text its answer reads."""
    return _includes_of(ws, header)


def _search(ws: Workspace, header: str) -> Optional[str]:
    """Backwards from ``header`` through its includers: ``CUDA`` when every path ends at an
    NVIDIA-only source or an include no ROCm build reaches, and at least one does."""
    todo: List[Tuple[str, int]] = [(header, 0)]
    seen = {header}
    ended = False  # at least one path ends at an NVIDIA-only source or line
    while todo:
        current, depth = todo.pop()
        includes = _includes_of(ws, current)
        if not includes or len(includes) > MAX_INCLUDERS:
            return None  # no includer in the project (another may include it), or too many
        for includer, line, _, _ in includes:
            ws.note_read(includer)
            platform = file_platform(ws, includer)
            if platform == CUDA:
                ended = True
                continue
            if platform == ROCM:
                return None
            if _unreached_on_rocm(ws, includer, line):
                ended = True
                continue
            if not HEADER_EXT.search(includer):
                return None  # a source the ROCm build may compile includes it here
            if includer in seen:
                continue  # a cycle: the paths into it are walked from where it was met first
            if depth + 1 >= MAX_DEPTH or len(seen) >= MAX_VISITED:
                return None
            seen.add(includer)
            todo.append((includer, depth + 1))
    return CUDA if ended else None


@memoized(maxsize=4096)
def _answer(ws: Workspace, header: str) -> Tuple[Optional[str], Tuple[str, ...]]:
    """(the header's platform, the files the answer depends on)."""
    with ws.recording_reads() as reads:
        platform = _search(ws, header)
    reads.discard(header)
    return platform, tuple(sorted(reads))


def header_platform(ws: Workspace, path: str) -> Optional[str]:
    """``"cuda"`` for a project header only NVIDIA builds include (see the module docstring),
    else None (also for any file that is not a header).  The includers looked at, and what
    their answers read, are noted as the check's dependencies."""
    if not HEADER_EXT.search(path):
        return None
    platform, deps = _answer(ws, os.path.realpath(path))
    for dep in deps:
        ws.note_read(dep)
    return platform
