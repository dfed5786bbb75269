"""C++ facts of a translation unit and the project headers it includes, computed once per run.

The ROC6 rules decide on facts that often live somewhere else than the line they report: the
mask in ``__shfl_xor_sync(FULL_MASK, ...)`` is a macro of ``common.h``, the ballot in
``__popc(ballot(p) & lt)`` comes from a project helper, the shuffle in a
``for (int offset = 16; offset > 0; offset /= 2)`` reduction is ``warp_shfl_xor(v, offset)``.
This module gathers those facts from the file itself and from the project headers it includes
with quotes (``rocm_lint.cpp.includes`` resolves them; at most ``includes.MAX_DEPTH`` levels),
always as the ROCm build sees them (a definition in an NVIDIA-only branch is no fact).

API
---
``unit_facts(ws, path, text) -> Facts``
    The facts of one file: its own wrappers, plus everything its quoted includes (and theirs)
    provide.  ``code``/``pre`` are the file's lexed code and preprocessor model.
``header_facts(ws, header) -> Facts``
    The facts of one header and everything it includes, by real path: cached, so a header
    shared by a hundred ``.cu`` files is read, lexed and analysed once per process.
``Facts``
    ``values``: object-like macros and ``const``/``constexpr`` scalars: name -> ``Value``
    (its text on ROCm and where it is defined); ``ballot_wrappers`` and ``shuffle_wrappers``:
    name -> ``Where`` of functions and function-like macros that return a ballot
    (``__ballot_sync``/``__ballot``/``__activemask``) or wrap a shuffle (``__shfl*``);
    ``int_aliases``: the project's names of integer types and their width on ROCm
    (``typedef uint32_t U32;`` -> 32, ``using mask_t = unsigned long long;`` -> 64), through
    aliases of aliases across headers (``alias_links``, ``resolve_aliases()``).
    ``value_of(name)`` follows a name through ``values``.
``wrappers_in(code, pre, path) -> (ballot wrappers, shuffle wrappers)``
    Wrappers defined in one file (the rules use it on the file they check).
``int_aliases_in(code, pre) -> (int aliases, alias links)``
    Integer type aliases defined in one file (likewise).
Every header is read and analysed once per ``Workspace`` (``rocm_lint.workspace``: the front
end's caches, dropped when a file read changed on disk).

Reads are bounded (``includes.read_header``); a header that cannot be read is no fact.  Every
pattern is linear; wrappers are found from the intrinsic calls outward (a bounded backward
scan to the enclosing function's name), never by matching whole definitions.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

from rocm_lint.cpp import includes
from rocm_lint.cpp.functions import brace_tree, function_of, identifier_before
from rocm_lint.cpp.preproc import Preprocessed, analyse
from rocm_lint.workspace import Workspace, memoized

Where = Tuple[str, int]  # (path, 1-based line)


@dataclass(frozen=True)
class Value:
    text: str  # the definition as ROCm sees it (comments blanked, stripped)
    where: Where
    rocm_only: bool = False  # defined in a branch only ROCm compiles (written for ROCm on purpose)
    type: str = ""  # a constant's declared type (`uint64_t`, a project's `U64`); "" for a macro


@dataclass
class Facts:
    values: Dict[str, Value] = field(default_factory=dict)
    ballot_wrappers: Dict[str, Where] = field(default_factory=dict)
    shuffle_wrappers: Dict[str, Where] = field(default_factory=dict)
    # project names of integer types: name -> bits (32 or 64) on ROCm (`typedef uint32_t U32;`,
    # `using lane_mask_t = unsigned long long;`); 0 where the definitions disagree
    int_aliases: Dict[str, int] = field(default_factory=dict)
    # aliases of names not (yet) known as integer types: name -> the aliased name (`typedef U32
    # lane_t;` in a header that includes the one defining U32)
    alias_links: Dict[str, str] = field(default_factory=dict)
    # *_sync warp functions a HIP vendor header redefines as macros that drop the mask
    # (ggml's vendors/hip.h: `#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var,
    # laneMask, width)`): name -> where; a mask passed to them never reaches HIP
    mask_free_sync: Dict[str, Where] = field(default_factory=dict)

    def update(self, other: "Facts") -> None:
        self.values.update(other.values)
        self.ballot_wrappers.update(other.ballot_wrappers)
        self.shuffle_wrappers.update(other.shuffle_wrappers)
        self.int_aliases.update(other.int_aliases)
        self.alias_links.update(other.alias_links)
        self.mask_free_sync.update(other.mask_free_sync)

    def resolve_aliases(self) -> None:
        """Give ``alias_links`` whose target is now a known integer type its width (4 rounds)."""
        for _ in range(4):
            done = [(n, t) for n, t in self.alias_links.items() if t in self.int_aliases]
            if not done:
                return
            for name, target in done:
                if name not in self.int_aliases:
                    self.int_aliases[name] = self.int_aliases[target]
                del self.alias_links[name]

    def aliases_of(self, bits: int) -> FrozenSet[str]:
        """The project's names of ``bits``-bit integer types."""
        return frozenset(n for n, b in self.int_aliases.items() if b == bits)

    def value_of(self, name: str, depth: int = 0) -> Optional[Value]:
        """The final definition ``name`` leads to (``ALL = FULL``, ``FULL = 0xffffffff``)."""
        v = self.values.get(name)
        while v is not None and depth < 8 and _IDENT.fullmatch(v.text.strip("() \t")):
            nxt = self.values.get(v.text.strip("() \t"))
            if nxt is None:
                break
            v, depth = nxt, depth + 1
        return v


EMPTY = Facts()

_IDENT = re.compile(r"[A-Za-z_]\w*")
BALLOT_CALL = re.compile(r"__(?:ballot_sync|ballot|activemask)\b")
SHUFFLE_CALL = re.compile(r"__shfl(?:_up|_down|_xor)?(?:_sync)?\b")
_RETURNED = re.compile(
    r"\breturn\s*(?:\(\s*[\w\s:]{1,60}\)\s*|static_cast\s*<[\w\s:]{1,60}>\s*\(\s*|\(\s*)?$"
)
_CLOSE_RETURN = re.compile(r"[\s)]*;")
MAX_WRAPPER_BODY = 1200  # a shuffle "wrapper" is a short function


def wrappers_in(code: str, pre: Preprocessed, path: str = "") -> Tuple[Dict[str, Where], Dict[str, Where]]:
    """(ballot wrappers, shuffle wrappers) defined in one file, as ROCm compiles it: functions
    that ``return`` a ballot call (a cast allowed), short functions that call a shuffle, and
    function-like macros whose body starts with a ballot call / calls a shuffle."""
    ballots: Dict[str, Where] = {}
    shuffles: Dict[str, Where] = {}
    has_ballot = "__ballot" in code or "__activemask" in code
    has_shuffle = "__shfl" in code
    if not (has_ballot or has_shuffle):
        return ballots, shuffles
    for name, defs in pre.macros.items():
        for d in defs:
            if d.params is None or d.rocm is False:
                continue
            body = d.body.lstrip("( \t")
            if has_ballot and BALLOT_CALL.match(body):
                ballots.setdefault(name, (path, d.line))
            if has_shuffle and SHUFFLE_CALL.search(d.body):
                shuffles.setdefault(name, (path, d.line))
    tree = None
    line_starts: Optional[List[int]] = None
    for pattern, table, present in (
        (BALLOT_CALL, ballots, has_ballot),
        (SHUFFLE_CALL, shuffles, has_shuffle),
    ):
        if not present:
            continue
        for m in pattern.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            if line_starts is None:
                line_starts = [0] + [x.end() for x in re.finditer(r"\n", code)]
            line = _line_of(line_starts, m.start())
            if pre.nvidia_only(line) or _in_directive(code, line_starts, line):
                continue
            if tree is None:
                tree = brace_tree(code)
            fn = function_of(code, m.start(), tree)
            if fn is None or fn[0] in table:
                continue
            if pattern is BALLOT_CALL:
                stmt = max(
                    code.rfind(";", fn[1], m.start()),
                    code.rfind("{", fn[1], m.start()),
                    code.rfind("}", fn[1], m.start()),
                )
                if not _RETURNED.search(code, stmt + 1, m.start()) or not _whole_return(code, m.end()):
                    continue
            elif fn[2] - fn[1] > MAX_WRAPPER_BODY:
                continue
            table[fn[0]] = (path, _line_of(line_starts, fn[1]))
    return ballots, shuffles


def _whole_return(code: str, after_name: int) -> bool:
    """Is the call whose name ends at ``after_name`` the whole returned value (``(...)``, then
    only closing parentheses of a cast before the ``;``)?"""
    i = after_name
    while i < len(code) and code[i].isspace():
        i += 1
    if i >= len(code) or code[i] != "(":
        return False
    depth, lo = 0, i
    while i < len(code) and i - lo < 4000:
        c = code[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        elif c in ";{}":
            return False
        i += 1
    else:
        return False
    return bool(_CLOSE_RETURN.match(code, i + 1))


def _line_of(line_starts: List[int], offset: int) -> int:
    return bisect_right(line_starts, offset)


def _in_directive(code: str, line_starts: List[int], line: int) -> bool:
    return code[line_starts[line - 1] : line_starts[line - 1] + 200].lstrip().startswith("#")


# literal-first (a leading \b defeated the regex engine's literal search: 20x slower over a file);
# the word start is checked by ``_const_word``
_CONST_WORD = re.compile(r"const(?:expr)?\b")
_DECL_STOP = re.compile(r"[;=(){}]")
_INIT_STOP = re.compile(r"[;{}]")


def _const_word(code: str, pos: int) -> Optional["re.Match[str]"]:
    """The first ``\\bconst(?:expr)?\\b`` at or after ``pos``: a match of the literal-first
    pattern whose previous character is no word character (``\\w``: alphanumeric or ``_``)."""
    while True:
        k = _CONST_WORD.search(code, pos)
        if k is None or not k.start():
            return k
        before = code[k.start() - 1]
        if not (before.isalnum() or before == "_"):
            return k
        pos = k.start() + 1


def const_declarations(code: str) -> Iterator[Tuple[int, str, str]]:
    """(offset of the keyword, name, initializer) of each ``const``/``constexpr`` scalar
    initialised with ``=`` or braces (``constexpr int kWarp = 32;``, ``const unsigned m{~0u};``):
    the name is the identifier right before the first ``=``/``{`` after the keyword (no ``;``,
    ``(``, ``)`` or ``}`` between), the initializer runs to the next ``;`` or ``}`` (no ``{``
    inside).  A declaration's text is skipped once matched.  A hand scan over the offsets of
    the stop characters (found once, then bisected): linear in the file, where the regex it
    replaces searched to the end of the file from every ``const`` of a long run."""
    stops = [m.start() for m in _DECL_STOP.finditer(code)]
    init_stops = [m.start() for m in _INIT_STOP.finditer(code)]
    names: Dict[int, Optional[Tuple[int, str]]] = {}
    pos = 0
    while True:
        k = _const_word(code, pos)
        if k is None:
            return
        pos = k.start() + 1
        i = bisect_left(stops, k.end())
        if i == len(stops) or code[stops[i]] not in "={":
            continue
        stop = stops[i]
        if stop not in names:
            names[stop] = identifier_before(code, stop)
        found = names[stop]
        if found is None or found[0] < k.end():
            continue
        j = bisect_left(init_stops, stop + 1)
        if j == len(init_stops) or code[init_stops[j]] == "{" or init_stops[j] == stop + 1:
            continue
        end = init_stops[j]
        yield k.start(), found[1], code[stop + 1 : end].strip()
        pos = end + 1


_DECL_WORDS = frozenset(
    {
        "const",
        "constexpr",
        "static",
        "inline",
        "volatile",
        "extern",
        "__device__",
        "__host__",
        "__constant__",
        "__shared__",
        "__forceinline__",
        "constinit",
        "thread_local",
    }
)
_TYPE_WORDS = re.compile(r"[A-Za-z_][\w:]*")


def declared_type(code: str, at: int, name: str) -> str:
    """The type a ``const_declarations`` entry (keyword at ``at``, ``name``) is declared with,
    storage words left out (``static constexpr uint64_t kAll`` -> ``uint64_t``), or ""."""
    head = code[at : at + 200]
    end = -1
    for w in _TYPE_WORDS.finditer(head):
        if w.group(0) == name:
            rest = head[w.end() :].lstrip()
            if rest[:1] in ("=", "{"):
                end = w.start()
                break
    if end == -1:
        return ""
    words = [w for w in _TYPE_WORDS.findall(head[:end]) if w not in _DECL_WORDS]
    if not words or len(words) > 4 or any(c in head[:end] for c in "<>*&[(,"):
        return ""
    return " ".join(w[5:] if w.startswith("std::") else w for w in words)


def _values_in(code: str, pre: Preprocessed, path: str) -> Dict[str, Value]:
    """Object-like macros with one value on ROCm, and ``const``/``constexpr`` scalars outside
    NVIDIA-only code."""
    out: Dict[str, Value] = {}
    for name, defs in pre.macros.items():
        live = [d for d in defs if d.rocm is not False]
        if not live or any(d.params is not None for d in live):
            continue
        bodies = {d.body for d in live}
        if len(bodies) == 1 and live[0].body:
            out[name] = Value(
                live[0].body,
                (path, live[-1].line),
                rocm_only=all(d.cuda is False and d.rocm is True for d in live),
            )
    if "const" in code:
        line_starts = [0] + [x.end() for x in re.finditer(r"\n", code)]
        tree = None
        for at, name, value in const_declarations(code):
            line = _line_of(line_starts, at)
            if pre.nvidia_only(line) or name in out:
                continue
            tree = tree or brace_tree(code)
            if function_of(code, at, tree) is None:  # namespace or class scope, not a function's local
                out[name] = Value(value, (path, line), type=declared_type(code, at, name))
    return out


# the integer types whose width a lane mask cares about, as C++ spells them on Linux (LP64)
_INT_BITS = (
    (
        re.compile(
            r"(?:(?:un)?signed\s+)?long\s+long(?:\s+int)?|(?:std::)?u?int64_t|__u?int64_t|u?int64|u64|s64"
            r"|(?:std::)?size_t|(?:unsigned\s+)?long(?:\s+int)?|u?intptr_t"
        ),
        64,
    ),
    (
        re.compile(
            r"(?:unsigned|signed)(?:\s+int)?|int|(?:std::)?u?int32_t|__u?int32_t|u?int32|uint|u32|s32"
        ),
        32,
    ),
)
_TYPEDEF = re.compile(
    r"typedef\s+((?:const\s+|volatile\s+)*[A-Za-z_][\w:]*(?:\s+[A-Za-z_][\w:]*){0,3})"
    r"\s+([A-Za-z_]\w*)\s*;"
)
_USING = re.compile(
    r"using\s+([A-Za-z_]\w*)\s*=\s*((?:const\s+|volatile\s+)*[A-Za-z_][\w:]*"
    r"(?:\s+[A-Za-z_][\w:]*){0,3})\s*;"
)
_QUALIFIER = re.compile(r"\b(?:const|volatile)\s+")


def alias_declarations(code: str) -> List[Tuple[int, str, Optional[int], str]]:
    """(offset, name, bits, target) of each ``typedef``/``using`` alias of an integer type or of
    another name, in file order: ``typedef uint32_t U32;`` -> (at, "U32", 32, "uint32_t"),
    ``using lane_t = unsigned long long;`` -> 64; ``typedef U32 lane_t;`` -> (at, "lane_t", None,
    "U32") (an alias of a name, which an alias defined earlier may resolve).  Aliases of anything
    else (``using T = typename K::T;``) are left out."""
    found: List[Tuple[int, str, str]] = []
    if "typedef" not in code and "using" not in code:
        return []
    # (literal-first patterns: a match inside a longer word is skipped here)
    for m in _TYPEDEF.finditer(code) if "typedef" in code else ():
        if not m.start() or not (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
            found.append((m.start(), m.group(2), m.group(1)))
    for m in _USING.finditer(code) if "using" in code else ():
        if not m.start() or not (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
            found.append((m.start(), m.group(1), m.group(2)))
    found.sort()
    out: List[Tuple[int, str, Optional[int], str]] = []
    for at, name, target in found:
        target = " ".join(_QUALIFIER.sub("", target).split())
        bits = next((b for pattern, b in _INT_BITS if pattern.fullmatch(target)), None)
        if bits is not None or (_IDENT.fullmatch(target) and target != name):
            out.append((at, name, bits, target))
    return out


def int_aliases_in(code: str, pre: Preprocessed) -> Tuple[Dict[str, int], Dict[str, str]]:
    """Integer type aliases one file defines outside NVIDIA-only code: ``typedef uint32_t U32;``,
    ``typedef unsigned int lane_t;``, ``using lane_mask_t = unsigned;`` -> 32, ``typedef uint64_t
    U64;`` -> 64, also through an alias defined earlier in the file; a name given two widths maps
    to 0.  Second: aliases of other names (``typedef U32 lane_t;``: name -> target), which a
    header's alias may resolve (``Facts.resolve_aliases``)."""
    out: Dict[str, int] = {}
    links: Dict[str, str] = {}
    line_starts: List[int] = []
    for at, name, bits, target in alias_declarations(code):
        if bits is None:
            bits = out.get(target)
        if not line_starts:
            line_starts = [0] + [x.end() for x in re.finditer(r"\n", code)]
        if pre.nvidia_only(_line_of(line_starts, at)):
            continue
        if bits is None:
            links[name] = target
            continue
        out[name] = bits if out.get(name, bits) == bits else 0
    return out, links


SYNC_NAME = re.compile(r"__\w+_sync|__syncwarp")
_HIP_INCLUDE = re.compile(r"\s*[<\"](?:hip/|hip_runtime)")


def mask_free_sync_macros(pre: Preprocessed, path: str = "") -> Dict[str, Where]:
    """Function-like macros named like a ``*_sync`` warp function whose body never uses their
    first parameter (the mask), defined where ROCm compiles them: in a file that includes HIP's
    runtime header (a HIP vendor header), or in a branch only ROCm compiles."""
    out: Dict[str, Where] = {}
    hip_file = None
    for name, defs in pre.macros.items():
        if not SYNC_NAME.fullmatch(name):
            continue
        for d in defs:
            params = [p.strip() for p in (d.params or "").split(",")]
            if (
                d.params is None
                or d.rocm is False
                or not params[0]
                or re.search(r"(?<![\w#])" + re.escape(params[0]) + r"\b", d.body)
            ):
                continue
            if hip_file is None:
                hip_file = any(
                    x.name == "include" and _HIP_INCLUDE.match(x.arg) and not pre.nvidia_only(x.line)
                    for x in pre.directives
                )
            if hip_file or (d.rocm is True and d.cuda is False):
                out.setdefault(name, (path, d.line))
    return out


@memoized(maxsize=4096)
def _own_facts(ws: Workspace, header: str) -> Facts:
    """What one header itself defines (not its includes)."""
    text = includes.read_header(ws, header)
    facts = Facts()
    if text is None:
        return facts
    lexed = includes.shared_lex(ws, text)
    try:
        pre = analyse(text, lexed, seed=includes.included_macro_facts(ws, header, text))
    except RecursionError:
        return facts
    facts.values = _values_in(lexed.code, pre, header)
    facts.ballot_wrappers, facts.shuffle_wrappers = wrappers_in(lexed.code, pre, header)
    facts.int_aliases, facts.alias_links = int_aliases_in(lexed.code, pre)
    facts.mask_free_sync = mask_free_sync_macros(pre, header)
    return facts


@memoized(maxsize=4096)
def _header_closure(ws: Workspace, header: str, depth: int) -> Facts:
    merged = Facts()
    if depth < includes.MAX_DEPTH:
        for sub in includes.quoted_includes(ws, header):
            if sub != header:
                merged.update(_header_closure(ws, sub, depth + 1))
    merged.update(_own_facts(ws, header))
    merged.resolve_aliases()
    return merged


def header_facts(ws: Workspace, header: str) -> Facts:
    """The facts of ``header`` (a real path) and the project headers it includes."""
    return _header_closure(ws, header, 0)


def unit_facts(ws: Workspace, path: str, text: str) -> Facts:
    """What the quoted includes of the file at ``path`` (with ``text``) provide."""
    if '"' not in text or "include" not in text:
        return EMPTY
    includes.note_closure(ws, path, text)
    myself = os.path.realpath(path)
    headers = [h for h in includes.resolved_includes(ws, path, text) if h != myself]
    if not headers:
        return EMPTY
    if len(headers) == 1:
        return header_facts(ws, headers[0])
    merged = Facts()
    for h in headers:
        merged.update(header_facts(ws, h))
    merged.resolve_aliases()
    return merged
