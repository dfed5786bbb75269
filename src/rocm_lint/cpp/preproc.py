"""A model of the C preprocessor's conditionals, evaluated on two platforms at once.

Every ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` condition is evaluated
twice, once as the NVIDIA compiler sees it ("cuda": USE_ROCM and the other ROCm macros
undefined) and once as a ROCm build sees it ("rocm": USE_ROCM defined, ``__CUDA_ARCH__``
and ``CUDA_VERSION`` undefined).  Macros we cannot see (they come from headers or the
command line) are *unknown*, so the logic is three-valued: True, False or None.  Each
line of the file then gets a status per platform: compiled (True), not compiled (False)
or maybe (None).  A line whose ROCm status is False is NVIDIA-only (or dead): the C++
rules stay silent there.  A line whose CUDA status is False but ROCm status is not is the
ROCm side of a split.

The expressions, what each platform defines and their three-valued evaluation are
``rocm_lint.cpp.conditions``.  The same expression trees give
``rocm_lint.cpp.nvidia_view.same_on_nvidia``, the check behind every C++ fix: a partial
preprocessor that folds the ROCm macros away and compares what the NVIDIA compiler would see
before and after.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from rocm_lint.cpp.conditions import (
    CUDA,
    ROCM,
    WAVE32_CONDITION,
    WAVE64_CONDITION,
    Node,
    Platform,
    Tri,
    parse_condition,
    tri_and,
    tri_not,
    tri_or,
    truth,
)
from rocm_lint.cpp.lexer import Lexed, lex

# -- the file model ---------------------------------------------------------------------------
_HASH = re.compile(r"#[ \t]*([A-Za-z_]\w*)?")
_NAMES = re.compile(r"[A-Za-z_]\w*")
CONDITIONALS = {"if", "ifdef", "ifndef", "elif", "else", "endif", "elifdef", "elifndef"}


@dataclass
class Directive:
    name: str  # if, ifdef, ifndef, elif, else, endif, define, undef, include, pragma, ...
    line: int  # first line (1-based)
    end_line: int  # last line (continuations)
    start: int  # offset of '#'
    end: int  # offset of the end of the directive's last line (before the newline)
    arg_start: int  # offset where the argument (condition, macro name, header) starts
    arg: str  # the argument text, comments blanked, continuations joined
    # conditionals: their group (the #if and its #elif/#else/#endif share one), the status of
    # the enclosing code on each platform, and the parsed condition (None for else/endif)
    group: int = -1
    outer: Tuple[Tri, Tri] = (True, True)
    condition: Optional[Node] = None
    # does each platform evaluate this condition at all (not when an earlier branch was taken)?
    reached: Tuple[Tri, Tri] = (True, True)


@dataclass
class Region:
    """A run of lines with the same compilation status."""

    line: int
    cuda: Tri
    rocm: Tri
    wave: Optional[int]  # 64 or 32 inside a branch taken only on such hardware (gfx9 / gfx10+)


@dataclass
class MacroDef:
    name: str
    line: int
    body: str  # comments blanked, continuations joined, stripped
    params: Optional[str]  # None for object-like macros
    cuda: Tri
    rocm: Tri


@dataclass
class _Frame:
    outer: Tuple[Tri, Tri]
    taken: Tuple[Tri, Tri]  # did an earlier branch of the group get taken?
    wave_outer: Optional[int]
    group: int
    branch_wave: Optional[int] = None  # a branch of this group tested for a wave64/wave32 arch


@dataclass
class Preprocessed:
    lexed: Lexed
    directives: List[Directive]
    regions: List[Region]
    macros: Dict[str, List[MacroDef]] = field(default_factory=dict)
    # the file's own status before any #if: (True, True), or the platform its directory gets from
    # the project's build (rocm_lint.build.context): (False, True) ROCm-only, (True, False)
    # never built for ROCm
    base: Tuple[Tri, Tri] = (True, True)
    # the platform macros this analysis knew beyond the built-in ones: the configuration's,
    # the build's (rocm_lint.build.context.macro_facts) and the file's own (cpp.vocabulary)
    platform_terms: FrozenSet[str] = frozenset()
    _region_lines: List[int] = field(default_factory=list)

    def status(self, line: int) -> Region:
        if not self._region_lines:
            self._region_lines = [r.line for r in self.regions]
        i = bisect_right(self._region_lines, line) - 1
        return self.regions[i] if i >= 0 else Region(1, self.base[0], self.base[1], None)

    def nvidia_only(self, line: int) -> bool:
        """Never compiled on ROCm (NVIDIA-only branch, or dead code like ``#if 0``)."""
        return self.status(line).rocm is False

    def rocm_only(self, line: int) -> bool:
        r = self.status(line)
        return r.cuda is False and r.rocm is not False

    def rocm_branch(self, line: int) -> bool:
        """ROCm-only through the file's own ``#if`` tests, where a fix may edit in place.  A file only
        its directory makes ROCm-only (``base``) is edited as NVIDIA-visible code (``#ifdef USE_ROCM``
        ... ``#else`` original): the fix check compares the NVIDIA view of the file itself."""
        return self.base[0] is not False and self.rocm_only(line)

    def macro(self, name: str, line: int, world: str = ROCM) -> Optional[MacroDef]:
        """The object-like definition of ``name`` in effect at ``line`` on ``world``."""
        best = None
        for d in self.macros.get(name, ()):
            if d.line >= line:
                break
            if (d.rocm if world == ROCM else d.cuda) is not False:
                best = d
        return best


def directive_spans(code: str) -> Iterable[Tuple[re.Match, int, int]]:
    """Each directive with its extent: (the match of ``#`` and its name, the offset of its line's
    start, the end of its last line); lines continued with a backslash belong to it (a ``#x``
    stringification on a continuation line is not a directive).  The ``#`` is found by a literal
    search and its line checked for nothing but blanks before it (a ``^``-anchored pattern tried
    every position of the text)."""
    last_end = -1
    find, rfind = code.find, code.rfind
    start = scanned = 0  # the start of the line of the last `#` met, and where that search stopped
    for m in _HASH.finditer(code):
        at = m.start()
        if at < last_end:
            continue
        newline = rfind("\n", scanned, at)  # only the text since the last `#`: linear
        if newline != -1:
            start = newline + 1
        scanned = at
        if start != at and code[start:at].strip(" \t"):
            continue  # not the first thing on its line
        end = find("\n", m.end())
        while end != -1 and (code[end - 1 : end] == "\\" or code[end - 2 : end] == "\\\r"):
            end = find("\n", end + 1)
        if end == -1:
            end = len(code)
        last_end = end
        yield m, start, end


_GUARD_TEST = re.compile(r"\s*(?:!\s*defined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*)))\s*$")
_FIRST_NAME = re.compile(r"\s*([A-Za-z_]\w*)")


def include_guard(code: str) -> Optional[str]:
    """The include guard of a header (lexed code): its first conditional is ``#ifndef G`` (or
    ``#if !defined(G)``) and the directive right after it is ``#define G``; ``#pragma`` lines
    before it are allowed.  None when the file has no such guard."""
    first: Optional[str] = None
    for m, start, end in directive_spans(code):
        name = m.group(1) or ""
        arg = code[m.end() : end]
        if first is None:
            if name == "pragma":
                continue
            if name == "ifndef":
                word = _FIRST_NAME.match(arg)
                first = word.group(1) if word else ""
            elif name == "if":
                test = _GUARD_TEST.match(arg)
                first = (test.group(1) or test.group(2)) if test else ""
            else:
                return None
            if not first:
                return None
            continue
        word = _FIRST_NAME.match(arg)
        return first if name == "define" and word and word.group(1) == first else None
    return None


def analyse(
    text: str,
    lexed: Optional[Lexed] = None,
    rocm_macros: Iterable[str] = (),
    cuda_macros: Iterable[str] = (),
    seed: Iterable[tuple] = (),
    base: Tuple[Tri, Tri] = (True, True),
) -> Preprocessed:
    """The file model.  ``seed``: (name, (defined, body) on NVIDIA, (defined, body) on ROCm)
    for macros the file's own headers define (``rocm_lint.cpp.includes``).  ``base``: whether
    each platform compiles the file at all (NVIDIA, ROCm), as the project's build decides
    (``rocm_lint.build.context``): ``(False, True)`` makes every line what a line under
    ``#ifdef USE_ROCM`` is, ``(True, False)`` what a line under ``#ifndef USE_ROCM`` is."""
    lexed = lexed or lex(text)
    code = lexed.code
    rocm_extra, cuda_extra = frozenset(rocm_macros), frozenset(cuda_macros)
    worlds = (Platform(CUDA, rocm_extra, cuda_extra), Platform(ROCM, rocm_extra, cuda_extra))
    seeded = tuple(seed)
    for name, on_cuda, on_rocm in seeded:
        worlds[0].local[name] = on_cuda
        worlds[1].local[name] = on_rocm
    guard = include_guard(code)
    if guard is not None and guard not in worlds[0].local:
        # `#ifndef MYLIB_COMPAT_H` / `#define MYLIB_COMPAT_H`: the first inclusion, the one that
        # counts, takes the branch on both platforms (else every line of a guarded header is
        # "maybe", and `#define MYLIB_HIP 1` under `__HIP_PLATFORM_AMD__` no ROCm fact)
        for w in worlds:
            w.local[guard] = (False, None)
    directives: List[Directive] = []
    regions: List[Region] = [Region(1, base[0], base[1], None)]
    macros: Dict[str, List[MacroDef]] = {}
    stack: List[_Frame] = []
    expandable: set = set()  # the object-like macros with a body, as _expand_names reads them
    current = base
    wave: Optional[int] = None
    groups = 0
    line = 1
    pos = 0
    for m, start, end in directive_spans(code):
        line += code.count("\n", pos, start)
        pos = start
        name = m.group(1) or ""
        arg_start = m.end()
        arg = code[arg_start:end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        end_line = line + code.count("\n", start, end)
        d = Directive(name, line, end_line, start, end, arg_start, arg)
        directives.append(d)
        if name in CONDITIONALS:
            new_state = None
            if name in ("if", "ifdef", "ifndef"):
                groups += 1
                frame = _Frame(current, (False, False), wave, groups)
                stack.append(frame)
            elif not stack:
                continue  # unbalanced #elif/#else/#endif: ignore, as a recovering compiler would
            frame = stack[-1]
            d.group, d.outer = frame.group, frame.outer
            if name == "endif":
                stack.pop()
                new_state, wave = frame.outer, frame.wave_outer
            else:
                if name in ("if", "elif"):
                    d.condition = parse_condition(arg)
                elif name in ("ifdef", "ifndef", "elifdef", "elifndef"):
                    word = re.match(r"\s*([A-Za-z_]\w*)", arg)
                    if word:
                        node = Node("defined", word.group(1))
                        d.condition = Node("unary", "!", (node,)) if name.endswith("ndef") else node
                if name == "else":
                    taken0 = taken1 = True
                elif d.condition is None:
                    taken0 = taken1 = None
                else:
                    taken0 = truth(worlds[0].evaluate(d.condition))
                    taken1 = truth(worlds[1].evaluate(d.condition))
                (outer0, outer1), (before0, before1) = frame.outer, frame.taken
                d.reached = (tri_and(outer0, tri_not(before0)), tri_and(outer1, tri_not(before1)))
                new_state = (
                    tri_and(outer0, tri_and(tri_not(before0), taken0)),
                    tri_and(outer1, tri_and(tri_not(before1), taken1)),
                )
                frame.taken = (tri_or(before0, taken0), tri_or(before1, taken1))
                wave = frame.wave_outer
                if name not in ("else", "ifndef", "elifndef"):
                    # object-like macros are spliced in only where the condition names one
                    text = (
                        _expand_names(arg, macros)
                        if expandable and not expandable.isdisjoint(_NAMES.findall(arg))
                        else arg
                    )
                    if WAVE64_CONDITION.search(text):
                        wave = frame.branch_wave = 64
                    elif WAVE32_CONDITION.search(text):
                        wave = frame.branch_wave = 32
                elif name == "else" and frame.branch_wave:
                    # the other side of an arch test: `#if IS_CDNA` 64 `#else` 32 (RDNA) is deliberate
                    wave = 96 - frame.branch_wave
            # the directive's own lines belong to the enclosing code, what follows to the branch
            regions.append(Region(line, frame.outer[0], frame.outer[1], frame.wave_outer))
            current = new_state
            regions.append(Region(end_line + 1, current[0], current[1], wave))
        elif name in ("define", "undef"):
            mm = re.match(r"\s*([A-Za-z_]\w*)(\([^)]*\))?", arg)
            if not mm:
                continue
            macro = mm.group(1)
            if name == "define":
                body = arg[mm.end() :].strip()
                md = MacroDef(macro, line, body, mm.group(2), current[0], current[1])
                macros.setdefault(macro, []).append(md)
                if md.params is None and md.body:
                    expandable.add(macro)
                else:
                    expandable.discard(macro)
                if md.params is None:
                    node = parse_condition(body) if body else Node("num", 1)
                    for w, state in zip(worlds, current):
                        if state is True:
                            w.local[macro] = (True, node)
                        elif state is None:
                            w.local[macro] = (None, None)
                        elif macro not in w.local and current != (False, False):
                            # defined here only in code the other platform compiles
                            # (``#if __CUDACC_VER_MAJOR__ >= 11`` ``#define X_CP_ASYNC_ENABLED``):
                            # as the file reads it, undefined on this one
                            w.local[macro] = (False, None)
            else:
                for w, state in zip(worlds, current):
                    if state is True:
                        w.local[macro] = (False, None)
                    elif state is None:
                        w.local[macro] = (None, None)
    terms = (
        rocm_extra | cuda_extra | frozenset(name for name, on_cuda, on_rocm in seeded if on_cuda != on_rocm)
    )
    return Preprocessed(lexed, directives, _merge(regions), macros, base, terms)


def _expand_names(text: str, macros: Dict[str, List[MacroDef]], depth: int = 0) -> str:
    """``text`` with object-like macros defined in the file spliced in (for reading arch tests
    such as ``#if IS_CDNA`` where ``IS_CDNA`` lists the gfx macros)."""
    if depth > 4 or not macros:
        return text

    def repl(m: "re.Match[str]") -> str:
        defs = macros.get(m.group(0))
        if defs and defs[-1].params is None and defs[-1].body:
            return "(" + _expand_names(defs[-1].body, macros, depth + 1) + ")"
        return m.group(0)

    return re.sub(r"[A-Za-z_]\w*", repl, text)


def _merge(regions: List[Region]) -> List[Region]:
    out: List[Region] = []
    for r in regions:
        if out and out[-1].line == r.line:
            out[-1] = r
        elif out and (out[-1].cuda, out[-1].rocm, out[-1].wave) == (r.cuda, r.rocm, r.wave):
            continue
        else:
            out.append(r)
    return out
