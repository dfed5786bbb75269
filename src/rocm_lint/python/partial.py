"""Parse only the top-level statements that can yield a finding (issue #28).

A module that holds a trigger word is parsed before it is walked, yet the walk enters only the
statements that hold a trigger line.  Most of a big module is top-level ``def``/``class``
statements that hold none and that no fact of the analysis reads: this module finds them by
text and hands the parser the module with those statements blanked (each line emptied, so
every kept node keeps its line and column).  docs/architecture.md ("Partial parse") holds the
argument that the findings are those of the whole parse; tests/test_partial_parse.py holds it
on every fixture, on generated modules and on real trees.

What is kept (:func:`plan`): every top-level statement that is not a ``def``/``class`` (imports,
assignments, ``if``/``try``/``assert``, ``pytestmark``, ``__all__``: cheap, and early exits
and module facts live there), and each ``def``/``class`` (decorators included) that

* holds a line the walk enters (a trigger line; a line naming a value bound on one is added
  after the parse, :func:`uncovered`),
* holds the word ``import`` (imports anywhere feed the module's import map),
* may bind or define a name the kept text mentions (``name =``, ``obj.name =``, ``name:`` at a
  line's start, ``def name``/``class name``): the module's bindings and predicates are keyed by
  name, flat over every scope, so every binding of a name a kept statement may ask about is kept,
* mentions the name of a kept top-level function (inherited gates read every reference), or
* holds a word a whole-module reader of an active rule looks for (:data:`READS`).

A rule whose facts read more than that (a gated walk of the whole module, every call of a
kind) is in :data:`WHOLE_MODULE`: while it is active for a file, the file is parsed whole.

The text pass is linear: one regex search for line starts at column 0, one lexer pass for
multi-line strings (a column-0 line inside one starts no statement), and searches per word.
A statement split wrongly (a column-0 line inside brackets) leaves the kept text unparseable or
a kept statement running into a blanked block; the engine then parses the whole module.
"""

from __future__ import annotations

import bisect
import os
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from rocm_lint.words import line_numbers, whole_word_positions

# Rules that read the module as a whole beyond names (a gated walk of every statement, every
# call of a kind, the statements after a node): a file where one is active is parsed whole.
#   ROC206: CAPTURE_FACTS walks the whole module gated (hazards, calls of its own functions)
#           and reads the statements after ``capture_begin`` in ``tree.body``.
#   ROC501-503: BUILD_FACTS (rules/build.py) walks the whole module gated, reads every string
#           constant and the module's public names.
#   ROC405-407: the ``setup()`` calls anywhere (``ast.walk(ctx.tree)``) and the module-level
#           assignments they pass.
#   ROC504: every module-level function (evaluated for ROCm) and the module-level statements that
#           call them (``ctx.tree.body``); EXTENSIONS walks the whole module gated.
WHOLE_MODULE: FrozenSet[str] = frozenset(
    {"ROC206", "ROC501", "ROC502", "ROC503", "ROC405", "ROC406", "ROC407", "ROC504"}
)

# What the other whole-module readers look for, by rule: a dropped statement holding one of
# these words (lower case, as substrings of its lowered text) is kept.
#   ROC801: ``_handles_fnuz`` (ast.walk of the module: names/strings with fnuz, gcnArchName,
#           gfx94/gfx95, ``.fp8_dtype``); IMPORTS_NVIDIA_DSL (``cutlass`` imports).
#   ROC802: IMPORTS_NVIDIA_DSL; ``_size_caps`` (every binding of a name holding ``max``:
#           :data:`BINDS`).
#   ROC106: ``_exporting`` (module-level functions whose text names a capability call).
#   ROC404: ``_looks_up(ctx.tree)`` (a ``which``/``exists``/... call anywhere in the module).
READS: Dict[str, Tuple[str, ...]] = {
    "ROC801": ("fnuz", "gcnarchname", "gfx94", "gfx95", "fp8_dtype", "cutlass"),
    "ROC802": ("cutlass",),
    "ROC106": ("get_device_capability", "get_device_properties"),
    "ROC404": ("which", "find_executable", "exists", "isfile", "access"),
    # rules/backends.py: whether the module reads a setting back, restores it or calls
    # torch.cuda.tunable decides ROC101's fix (the family's rules share the module's walk)
    "ROC101": ("allow_tf32", "precision", "tunable"),
    "ROC102": ("reduced_precision_reduction",),
    "ROC103": ("sdp",),
    "ROC104": ("cufft_plan_cache",),
    "ROC105": ("init_process_group",),
}
# Rules of a module with a whole-module reader that is not theirs (audited): packages.py's
# ``_looks_up(ctx.tree)`` is ROC404's alone.
NAMES_ONLY: FrozenSet[str] = frozenset({"ROC401", "ROC402", "ROC403", "ROC408"})
# Rules that read every binding of names holding a word: a dropped statement that may bind
# such a name is kept.
BINDS: Dict[str, Tuple[str, ...]] = {"ROC802": ("max",)}

# A kept part above this share of the text is not worth a second text: the whole is parsed.
MAX_KEPT_SHARE = 0.75
# Below this size the text pass costs more than it saves.
MIN_CHARS = 4000

ENV_WHOLE = "ROCM_LINT_WHOLE_PARSE"  # =1: parse every module whole (debugging, the property test)
# The cut is off unless asked for: =auto cuts where at most MAX_KEPT_SHARE stays, =always blanks
# what can be blanked, whatever its share (the tests).  Off by default because on real code it
# cuts nothing: equivalence keeps every block binding a name the kept text mentions (bindings are
# keyed by name across scopes), 97% of torch's trigger files (docs/benchmarks.md).
ENV_ALWAYS = "ROCM_LINT_PARTIAL_PARSE"

# A line that starts at column 0 with code (not blank, not a comment, not indented).
_COL0 = re.compile(r"^[^ \t\r\n#\f]", re.M)
# Comments and strings, in one pass; only multi-line ones matter (linear: each alternative
# starts with a distinct character and its repeats consume distinct classes).
_LEX = re.compile(
    r'''#[^\n]*|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)|\'\'\'(?:[^'\\]|\\.|'(?!''))*(?:\'\'\'|\Z)'''
    r"""|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?""",
    re.S,
)
_DEF_HEAD = re.compile(r"(?:async[ \t]+)?def[ \t]|class[ \t(:]|@")
_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What a statement may bind, by text: a target at a statement's start (a line's start after its
# indent, or after ``;`` or a compound header's ``:``), plain, dotted (``self.x =``: the module's
# bindings are keyed by attribute name too) or parenthesized, before ``=`` or ``:`` (an
# annotated binding: its annotation may span lines), and the targets chained after it
# (``a = b = 1``); ``def name``/``class name``.  Its last name is what it binds.  Over-
# approximations only keep more: a keyword argument on a line of its own (``    name=value,``),
# ``if x:`` (``x``), an annotation's own name.  Linear: the class repeats to the first char
# outside it, then one test per char of backtracking.
_HEAD = re.compile(r"(?:^[ \t]*|[;:][ \t]*)\(*([A-Za-z_][\w. \t)]*)(?:=(?!=)|(?=:))", re.M)
_CHAINED = re.compile(r"[ \t]*\(*([A-Za-z_][\w. \t)]*)=(?!=)")
_DEFINES = re.compile(r"(?:def|class)[ \t]+([A-Za-z_]\w*)")
_LAST_NAME = re.compile(r"(\w+)[^\w]*$")


class Plan:
    """The kept text and which top-level blocks were blanked (lines, 1-based, inclusive)."""

    def __init__(self, source: str, dropped: List[Tuple[int, int]], kept_chars: int) -> None:
        self.source = source
        self.dropped = dropped
        self.kept_chars = kept_chars
        self._firsts = [a for a, _ in dropped]

    def dropped_block(self, line: int) -> Optional[int]:
        """The index of the blanked block holding ``line``, if any."""
        i = bisect.bisect_right(self._firsts, line) - 1
        return i if i >= 0 and self.dropped[i][1] >= line else None


def whole_parse_forced() -> bool:
    """Parse whole: the default, and forced by ``ROCM_LINT_WHOLE_PARSE=1`` over any mode."""
    return os.environ.get(ENV_WHOLE, "") not in ("", "0") or os.environ.get(ENV_ALWAYS, "") not in (
        "auto",
        "always",
    )


def may_cut(text: str, codes: FrozenSet[str]) -> bool:
    """Is ``text`` one the cut handles, with no rule active that reads the whole module?"""
    if codes & WHOLE_MODULE or len(text) < MIN_CHARS and not _always():
        return False
    # Text the cut does not handle: ``\r`` and ``\f`` change what a line and its indent are,
    # and a non-ASCII identifier is NFKC-normalized by the parser (``\ufb01le`` binds ``file``),
    # which a text search for names would miss (and ``str.lower`` may change a text's length).
    return text.isascii() and "\r" not in text and "\f" not in text and "\0" not in text


def _always() -> bool:
    return os.environ.get(ENV_ALWAYS, "") == "always"


class _Blocks:
    """A module's text cut at its top-level statements: per block its first line, char range
    and whether it is a ``def``/``class`` that may be blanked."""

    def __init__(self, text: str, strings: bool = True) -> None:
        self.text = text
        self.strings = strings  # False: a quick cut that takes column-0 lines in strings for heads
        self.lines: List[int] = []  # first line of each block
        self.starts: List[int] = []  # char offset of each block
        self.droppable: List[bool] = []
        self._cut(text)
        self.ends = self.starts[1:] + [len(text)]

    def _cut(self, text: str) -> None:
        strings: List[Tuple[int, int]] = (
            [(m.start(), m.end()) for m in _LEX.finditer(text) if text.count("\n", m.start(), m.end())]
            if self.strings
            else []
        )
        s_starts = [a for a, _ in strings]
        line, last = 1, 0
        decorated = False  # the open block is decorators waiting for their def/class
        for m in _COL0.finditer(text):
            pos = m.start()
            line += text.count("\n", last, pos)
            last = pos
            i = bisect.bisect_right(s_starts, pos) - 1
            if i >= 0 and strings[i][1] > pos and text[strings[i][0]] != "#":
                continue  # inside a multi-line string: part of the open block
            if pos >= 2 and text[pos - 2] == "\\" or pos >= 3 and text[pos - 3 : pos] == "\\\r\n":
                if self.droppable:
                    self.droppable[-1] = False  # a continued line at column 0: keep the block whole
                continue
            head = _DEF_HEAD.match(text, pos) is not None
            if decorated and head:
                decorated = text[pos] == "@"
                continue
            if decorated and self.droppable:
                self.droppable[-1] = False  # decorators of no def/class: not a block to blank
            decorated = head and text[pos] == "@"
            self.lines.append(line)
            self.starts.append(pos)
            self.droppable.append(head)
        if decorated and self.droppable:
            self.droppable[-1] = False
        if not self.starts or self.starts[0] != 0:  # blank lines or comments first
            self.lines.insert(0, 1)
            self.starts.insert(0, 0)
            self.droppable.insert(0, False)

    def block_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos) - 1

    def block_of_line(self, line: int) -> int:
        return bisect.bisect_right(self.lines, line) - 1


def _first_kept(
    blocks: _Blocks, lines: Sequence[int], extra_lines: Sequence[int], low: str, words: Sequence[str]
) -> Tuple[List[bool], int]:
    """The blocks kept before the closure (every block that is no def/class, those holding a
    line the walk enters, an import or a word a module fact reads) and their size."""
    keep = [not d for d in blocks.droppable]
    for line in list(lines) + list(extra_lines):
        keep[blocks.block_of_line(line)] = True
    for word in words:
        for b in _word_blocks(blocks, low, word):
            keep[b] = True
    return keep, sum(blocks.ends[b] - blocks.starts[b] for b, k in enumerate(keep) if k)


def _word_blocks(blocks: _Blocks, text: str, word: str, whole_word: bool = False) -> Iterable[int]:
    pos = text.find(word)
    n = len(word)
    while pos != -1:
        if not whole_word or (
            (pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_"))
            and (pos + n >= len(text) or not (text[pos + n].isalnum() or text[pos + n] == "_"))
        ):
            b = blocks.block_of(pos)
            yield b
            pos = text.find(word, blocks.ends[b])  # the rest of this block adds nothing
        else:
            pos = text.find(word, pos + n)


def plan(
    text: str,
    lines: Sequence[int],
    codes: FrozenSet[str],
    script: bool,
    extra_lines: Iterable[int] = (),
    platform: Sequence[str] = (),
) -> Optional[Plan]:
    """The kept text for a module whose walk enters ``lines`` (sorted) with the rules ``codes``
    active, or None when the whole module is to be parsed (a whole-module rule is active, the
    text is small, or little would be blanked).  ``script``: every top-level function may
    inherit its callers' gate (not only private ones); ``extra_lines``: lines whose blocks
    must be kept (found after a first parse); ``platform``: the words phase 1 evaluates a
    binding or function for (``context.platform_words``): a block holding one is kept."""
    if not may_cut(text, codes):
        return None
    always = _always()
    limit = len(text) if always else MAX_KEPT_SHARE * len(text)
    low = text.lower()
    words = ["import", *platform] + [w for c in codes for w in READS.get(c, ())]
    extra_lines = list(extra_lines)
    # A quick cut first (no lexer: a column-0 line in a docstring cuts too, so its estimate is
    # low): most modules keep too much to be worth the lexer and the closure.
    if _first_kept(_Blocks(text, strings=False), lines, extra_lines, low, words)[1] > limit:
        return None
    blocks = _Blocks(text)
    n = len(blocks.starts)
    keep, kept_chars = _first_kept(blocks, lines, extra_lines, low, words)
    if kept_chars > limit:
        return None  # decided before the closure (which only keeps more)
    size = [blocks.ends[b] - blocks.starts[b] for b in range(n)]
    bind_words = [w for c in codes for w in BINDS.get(c, ())]
    # Closure: the names kept text mentions pull in the blocks that may bind or define them,
    # whose text mentions more names; the names of kept top-level functions pull in every block
    # that mentions them.  Blocks are asked largest first, so a module whose closure keeps most
    # of it is answered early.
    mentioned: Set[str] = set()
    referenced: Set[str] = set()
    binders: Dict[str, List[int]] = {}  # name -> droppable blocks that may bind it (asked ones)
    todo = [b for b in range(n) if keep[b]]

    def pull(b: int) -> None:
        nonlocal kept_chars
        if not keep[b]:
            keep[b] = True
            kept_chars += size[b]
            todo.append(b)

    def close() -> bool:
        while todo:
            if kept_chars > limit:
                return False
            b = todo.pop()
            start, end = blocks.starts[b], blocks.ends[b]
            new = set(_NAME_TOKEN.findall(text, start, end)) - mentioned
            mentioned.update(new)
            for name in new:
                for other in binders.get(name, ()):
                    pull(other)
            if blocks.droppable[b]:
                for name in _top_function_names(text, start, end, script):
                    if name not in referenced:
                        referenced.add(name)
                        for other in _word_blocks(blocks, text, name, whole_word=True):
                            pull(other)
        return kept_chars <= limit

    if not close():
        return None
    for b in sorted((b for b in range(n) if not keep[b]), key=lambda b: -size[b]):
        if keep[b]:
            continue
        names = _bound_names(text, blocks.starts[b], blocks.ends[b])
        if names & mentioned or bind_words and any(w in name.lower() for name in names for w in bind_words):
            pull(b)
            if not close():
                return None
        else:
            for name in names:
                binders.setdefault(name, []).append(b)
    if kept_chars > limit or all(keep):
        return None
    parts: List[str] = []
    dropped: List[Tuple[int, int]] = []
    for b in range(n):
        chunk = text[blocks.starts[b] : blocks.ends[b]]
        if keep[b]:
            parts.append(chunk)
        else:
            newlines = chunk.count("\n")
            parts.append("\n" * newlines)
            dropped.append((blocks.lines[b], blocks.lines[b] + newlines - (1 if chunk.endswith("\n") else 0)))
    return Plan("".join(parts), dropped, kept_chars)


def _bound_names(text: str, start: int, end: int) -> Set[str]:
    """The names a block may bind or define (see ``_HEAD``)."""
    names: Set[str] = set(_DEFINES.findall(text, start, end))
    for m in _HEAD.finditer(text, start, end):
        target = m.group(1)
        while True:
            last = _LAST_NAME.search(target)
            if last is not None:
                names.add(last.group(1))
            if m.end() == m.start() or text[m.end() - 1] != "=":
                break
            m = _CHAINED.match(text, m.end(), end)
            if m is None:
                break
            target = m.group(1)
    return names


_DEF_NAME = re.compile(r"\bdef[ \t]+([A-Za-z_]\w*)")


def _top_function_names(text: str, start: int, end: int, script: bool) -> List[str]:
    """The name of the top-level function a block defines, when inherited gates may consider
    it (private, or any function of a script).  A guess (the engine checks every candidate of
    the parsed tree after the parse, :func:`uncovered`)."""
    if text.startswith("class", start):
        return []
    m = _DEF_NAME.search(text, start, end)  # the first def of a (decorated) function block: its own
    if m is None:
        return []
    name = m.group(1)
    return [name] if script or name.startswith("_") and not name.startswith("__") else []


def covers(plan_: Plan, tree_body, lines: Sequence[int]) -> bool:
    """Does the parsed kept text hold what it should: no top-level statement runs into a
    blanked block (a statement split wrongly), and no line of ``lines`` is blanked?"""
    firsts = plan_._firsts
    for stmt in tree_body:
        decorators = getattr(stmt, "decorator_list", None)
        lo = min([stmt.lineno] + [d.lineno for d in decorators]) if decorators else stmt.lineno
        hi = getattr(stmt, "end_lineno", None) or lo
        i = bisect.bisect_left(firsts, lo)
        if i < len(firsts) and firsts[i] <= hi:
            return False
        if i > 0 and plan_.dropped[i - 1][1] >= lo:
            return False
    return not any(plan_.dropped_block(line) is not None for line in lines)


def uncovered(
    plan_: Plan, text: str, tree_body, lines: Sequence[int], script: bool, learned: Iterable[str] = ()
) -> List[int]:
    """Lines the analysis of the parsed kept text reads that fall in a blanked block: lines the
    walk enters (``lines``, trigger lines and the lines naming a value bound on one), the
    references of every top-level function whose callers' gate it may inherit, and the lines
    holding a name phase 1 learned as a predicate or platform name (``learned``: as a lower-case
    substring, as phase 1 searches them; a binding there would be evaluated too)."""
    out = [line for line in lines if plan_.dropped_block(line) is not None]
    low = None
    for name in learned:
        low = text.lower() if low is None else low
        pos = low.find(name.lower())
        while pos != -1:
            line = text.count("\n", 0, pos) + 1
            block = plan_.dropped_block(line)
            if block is not None:
                out.append(line)
                pos = low.find(name.lower(), text.find("\n", pos) + 1 or len(text))
            else:
                pos = low.find(name.lower(), pos + len(name))
        if out:
            return out  # one is enough to parse again
    names = [
        s.name
        for s in tree_body
        if type(s).__name__ in ("FunctionDef", "AsyncFunctionDef")
        and (script or s.name.startswith("_") and not s.name.startswith("__"))
    ]
    if names and plan_.dropped:
        offsets = sorted(p for name in names for p in whole_word_positions(text, name))
        out.extend(line for line in line_numbers(text, offsets) if plan_.dropped_block(line) is not None)
    return out
