"""32-lane logical warps: which code of a file uses one consistently, and where it meets the
hardware width.

A kernel that treats every 32 lanes as a warp *on purpose* — every shuffle passes width 32, lane
and warp ids come from the same 32 (``tid & 31``, ``tid >> 5``), shared arrays hold one slot per
32-lane warp — computes the same result on a 64-wide wavefront: HIP's ``__shfl*(var, lane,
width)`` keeps each exchange inside its ``width``-lane group (``amd_warp_functions.h``), so the
wavefront behaves as two independent 32-lane warps.  What breaks is *mixing* the two widths:
a shuffle without a width (or ``__shfl_xor(v, o)`` / ``warpSize`` loops), a ballot or vote (always
the whole wavefront), ``warpSize``/``C10_WARP_SIZE``/``__lane_id()``, next to 32-based lane math.

The unit is a function together with the functions of the same file it calls, and those that
call it (``rocm_lint.cpp.functions``): a kernel computes ``lane = tid & 31`` and hands the value
to a ``warp_reduce`` helper, or a width-32 helper is called by a kernel indexing by
``tid / warpSize``; either half alone looks consistent.  A function is *mixed* when a function
that reaches it through calls (itself included) reaches hardware-width code through calls.
Helpers in other headers are seen through the project facts: a call of a header's shuffle
wrapper (``unit.project.shuffle_wrappers``) without a literal width 32 among its arguments, or of
a ballot wrapper, is hardware width; so is a call of a helper the file cannot see whose name says
shuffle or ballot (``packed_shfl_sync(MASK_ALL, v, src)`` in a header included from elsewhere);
a function of this file with a ``width = warpSize`` default parameter is hardware width at each
call that passes no 32.

API
---
``LogicalWarps(unit)``
    ``mixed(offset)``: the function holding ``offset`` is mixed (None outside every function).
    ``constant_consistent(name, definition)``: every use of the 32-valued constant ``name`` (other
    than its definition at offset ``definition``) is in a function that is not mixed, and it has
    at least one; a use outside every function (another macro, a template argument at file
    scope) keeps it a finding.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set

from rocm_lint.cpp.functions import Functions, brace_tree, function_of, functions_in
from rocm_lint.cpp.lanes import SAME, Simulator
from rocm_lint.cpp.values import literal_value

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

# literal-first (no leading \b: the regex engine's literal search), a word start checked after
_HARDWARE_WORDS = re.compile(r"(?:warpSize|C10_WARP_SIZE|__AMDGCN_WAVEFRONT_SIZE(?:__)?)\b|__lane_id\s*\(")
_VOTE = re.compile(
    r"__(?:ballot(?:_sync)?|any(?:_sync)?|all(?:_sync)?|uni(?:_sync)?|activemask"
    r"|match_(?:any|all)_sync|reduce_(?:add|min|max|and|or|xor)_sync)\b"
)
_SHUFFLE = re.compile(r"__shfl(?:_up|_down|_xor)?(_sync)?\b")
_EXCHANGE = re.compile(r"(?i)shfl|shuffle|ballot|activemask|__any|__all|__syncwarp|tiled_partition|Warp[A-Z]")
_MASK_ARGUMENT = re.compile(r"_sync\s*\(\s*$")  # `__shfl_xor_sync(__activemask(), ...`: a mask, not data
_WIDTH_DEFAULT = re.compile(r"=\s*(?:warpSize|C10_WARP_SIZE)\b")
_DEVICE_CODE = re.compile(r"__(?:device|global|shfl|ballot|activemask|syncwarp)|threadIdx|warpSize")
_NAMED_HELPER = re.compile(r"(?i)shfl|shuffle|ballot|activemask")
# the same on an ASCII text lowered (5x faster than the case-blind search; ``str.lower`` keeps an
# ASCII text's offsets, and no non-ASCII character is there to match case-blind)
_NAMED_HELPER_LOWER = re.compile(r"shfl|shuffle|ballot|activemask")
MAX_FUNCTIONS = 4000  # beyond: each function is its own unit (no call graph)
MAX_CONSTANTS = 32


class LogicalWarps:
    def __init__(self, unit: "CppUnit") -> None:
        # Nothing is computed here: a file without a candidate finding pays for none of it.
        self.unit = unit
        self._constants: Dict[str, bool] = {}
        self._brace_tree: Optional[tuple] = None
        self._hardware_at: Optional[List[int]] = None
        self._functions: Optional[Functions] = None
        self._mixed: Optional[List[bool]] = None
        self._callers: Optional[List[Set[int]]] = None

    @property
    def _tree(self) -> tuple:
        if self._brace_tree is None:
            self._brace_tree = brace_tree(self.unit.code)
        return self._brace_tree

    @property
    def _hardware(self) -> List[int]:
        """The file's own hardware-width code (offsets); a function holding some is mixed without
        further ado, the call graph and the helpers of other files (the project's headers, read
        on demand) are computed only for a function that would be consistent without them."""
        if self._hardware_at is None:
            self._hardware_at = self._hardware_offsets()
        return self._hardware_at

    @property
    def functions(self) -> Functions:
        if self._functions is None:
            self._functions = functions_in(self.unit.code, self._tree)
        return self._functions

    def _complete_mixed(self) -> List[bool]:
        if self._mixed is None:
            fns = self.functions
            n = len(fns.items)
            hardware = [False] * n
            for offset in self._hardware:
                i = fns.at(offset)
                if i >= 0:
                    hardware[i] = True
            for i in self._wrapper_calls():
                hardware[i] = True
            self._mixed = _propagate(fns, hardware) if n <= MAX_FUNCTIONS else hardware
        return self._mixed

    # -- hardware-width code ---------------------------------------------------------------------
    def _hardware_offsets(self) -> List[int]:
        """Offsets of the file's hardware-width code, as ROCm compiles it, in order."""
        unit, code = self.unit, self.unit.code
        out: List[int] = []
        for m in _HARDWARE_WORDS.finditer(code):
            if not m.start() or not (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                out.append(m.start())
        if "__" in code:
            for m in _VOTE.finditer(code):
                if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                    continue
                if not _MASK_ARGUMENT.search(code, max(0, m.start() - 40), m.start()):
                    out.append(m.start())
        widthless: List[int] = []
        if "__shfl" in code:
            for m in _SHUFFLE.finditer(code):
                paren = _paren_after(code, m.start(), m.end())
                if paren is None:
                    continue
                width_at = 3 if m.group(1) else 2
                if len(unit.args(paren)) <= width_at and not unit.nvidia_only(m.start()):
                    widthless.append(m.start())  # no width: the whole wavefront
        if widthless:
            # unless the lane simulator shows the function computing on a 64-lane wavefront
            # what it computes on 32-lane warps (rocm_lint.cpp.lanes)
            cleared = self._evaluated_same(widthless)
            out.extend(o for o in widthless if o not in cleared)
        return sorted(o for o in out if not unit.nvidia_only(o))

    def _evaluated_same(self, shuffles: List[int]) -> Set[int]:
        """The width-less shuffles (offsets) that every function reaching them from outside the
        file's call graph (a kernel, or a helper nothing in the file calls; in a header, every
        function on the way, as other files may call it) runs to the same reads on wave64 and on
        32-lane warps, and at least one runs at all (``lanes``)."""
        fns = self.functions
        if not fns.items or len(fns.items) > MAX_FUNCTIONS:
            return set()
        callers = fns.callers()
        sim = self._simulator()
        header = not self.unit.path.endswith(_SOURCE_SUFFIXES)
        out: Set[int] = set()
        for offset in shuffles:
            i = fns.at(offset)
            if i < 0:
                continue
            roots = _roots_of(i, callers, header)
            if roots is None:
                continue
            verdicts = [sim.evaluate(r) for r in roots]
            if all(v.verdict == SAME for v in verdicts) and any(offset in v.shuffles for v in verdicts):
                out.add(offset)
        return out

    def _simulator(self) -> Simulator:
        unit = self.unit

        def resolve(name: str, at: int, world: str):
            d = unit.pre.macro(name, unit.line_of(at), world)
            text = d.body if d is not None and d.params is None else name
            text = unit.expand(text, at)
            value = literal_value(text)
            return value if value is not None else text

        return Simulator(unit.code, self.functions, resolve, unit.nvidia_only)

    def _wrapper_calls(self) -> Set[int]:
        """Functions that call a hardware-width helper: a header's ballot wrapper, a header's
        shuffle wrapper without a width 32 among its arguments, a function of this file whose
        width parameter defaults to ``warpSize`` without a 32."""
        unit, code, fns = self.unit, self.unit.code, self.functions
        own = {f.name for f in fns.items}
        ballots: Set[str] = set()
        shuffles: Set[str] = set()
        if _DEVICE_CODE.search(code):  # host code (a code generator's 32) calls no device helper
            project = unit.project
            ballots = {n for n in project.ballot_wrappers if n not in own}
            shuffles = {n for n in project.shuffle_wrappers if n not in own}
        for f in fns.items:
            head = code[max(0, f.start - 400) : f.start]
            paren = head.rfind(")")
            name_at = head.rfind(f.name + "(") if paren != -1 else -1
            if name_at != -1 and _WIDTH_DEFAULT.search(head, name_at, paren + 1):
                shuffles.add(f.name)
        out: Set[int] = set()
        candidates = []  # (offset, name) of each call a hardware-width helper may be
        known = ballots | shuffles
        if known:
            for m in _names_pattern(frozenset(known)).finditer(code):
                candidates.append((m.start(), m.group(0)))
        helpers = (
            _NAMED_HELPER_LOWER.finditer(code.lower()) if code.isascii() else _NAMED_HELPER.finditer(code)
        )
        for m in helpers:
            # a helper the file cannot see (its header comes from elsewhere) named for a shuffle
            # or a ballot: `packed_shfl_sync(MASK_ALL, v, src)`
            a, b = m.start(), m.end()
            while a > 0 and (code[a - 1].isalnum() or code[a - 1] == "_"):
                a -= 1
            while b < len(code) and (code[b].isalnum() or code[b] == "_"):
                b += 1
            name = code[a:b]
            if name in own or name in known or name.startswith("__") or (a and code[a - 1] == "."):
                continue
            candidates.append((a, name))
            (ballots if "ballot" in name.lower() or "activemask" in name.lower() else shuffles).add(name)
        for at, name in candidates:
            i = fns.at(at)
            if i < 0 or i in out or (at and (code[at - 1].isalnum() or code[at - 1] == "_")):
                continue
            paren = _paren_after(code, at, at + len(name))
            if paren is None or unit.nvidia_only(at):
                continue
            if name in ballots or not any(self._is_32(a, b) for a, b in unit.args(paren)[1:]):
                out.add(i)
        return out

    def _is_32(self, a: int, b: int) -> bool:
        text = self.unit.code[a:b]
        if not text.strip():
            return False
        return literal_value(self.unit.expand(text, a)) == 32

    # -- queries -------------------------------------------------------------------------------
    def mixed(self, offset: int) -> Optional[bool]:
        own = function_of(self.unit.code, offset, self._tree)
        if own is None:
            return None
        i = bisect_left(self._hardware, own[1])
        if i < len(self._hardware) and self._hardware[i] <= own[2]:
            return True  # hardware-width code in the function itself
        i = self.functions.at(offset)
        return None if i < 0 else self._complete_mixed()[i]

    def lone_helper(self, offset: int) -> bool:
        """Is ``offset`` in a device helper that nothing in the file calls, that calls nothing of
        the file and holds no warp exchange of its own (``lane_id() { return threadIdx.x & 31; }``
        in a header)?  Its 32 is consumed elsewhere: the file's other warp code is the evidence of
        what its callers assume."""
        fns = self.functions
        i = fns.at(offset)
        if i < 0 or len(fns.items) > MAX_FUNCTIONS or fns.callees[i]:
            return False
        if self._callers is None:
            self._callers = fns.callers()
        if self._callers[i]:
            return False
        f = fns.items[i]
        code = self.unit.code
        head = code[max(0, f.start - 400) : f.start]
        if "__global__" in head[head.rfind(";") + 1 :] or "__global__" in head[head.rfind("}") + 1 :]:
            return False  # a kernel is its own consumer
        return not _EXCHANGE.search(code, f.start, f.end)

    def constant_consistent(self, name: str, definition: int) -> bool:
        cached = self._constants.get(name)
        if cached is None:
            cached = self._constants[name] = (
                self._uses_consistent(name, definition) if len(self._constants) < MAX_CONSTANTS else False
            )
        return cached

    def _uses_consistent(self, name: str, definition: int) -> bool:
        unit, code = self.unit, self.unit.code
        used = False
        for m in re.finditer(r"\b" + re.escape(name) + r"\b", code):
            if m.start() == definition or unit.nvidia_only(m.start()):
                continue
            if self.mixed(m.start()) is not False:
                return False  # outside every function, or in a mixed one
            used = True
        return used


@lru_cache(maxsize=256)
def _names_pattern(names: FrozenSet[str]) -> "re.Pattern[str]":
    return re.compile("(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")


def _paren_after(code: str, start: int, end: int) -> Optional[int]:
    """The ``(`` of a call whose name is ``code[start:end]``, or None (a name inside a longer one,
    no call)."""
    if start and (code[start - 1].isalnum() or code[start - 1] == "_"):
        return None
    i = end
    while i < len(code) and code[i] in " \t\r\n":
        i += 1
    return i if i < len(code) and code[i] == "(" else None


MAX_ROOTS = 16
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")  # a translation unit, not an included file


def _roots_of(i: int, callers: List[Set[int]], every: bool = False) -> Optional[List[int]]:
    """The functions that reach function ``i`` through calls and that nothing in the file calls
    (``i`` itself when nothing calls it), or with ``every`` all the functions that reach it (a
    header's functions may be called from any file that includes it); None past ``MAX_ROOTS`` or
    when a cycle leaves none."""
    seen = {i}
    todo = [i]
    roots: List[int] = []
    while todo:
        j = todo.pop()
        if every or not callers[j]:
            roots.append(j)
            if len(roots) > MAX_ROOTS:
                return None
        for c in callers[j]:
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return sorted(roots) or None


def _propagate(fns: Functions, hardware: List[bool]) -> List[bool]:
    """A function is mixed when some function that reaches it through calls (itself included)
    reaches hardware-width code through calls: up from the hardware-width functions along the
    callers, then down from every function so reached along the callees.  Linear."""
    callers = fns.callers()
    reach = list(hardware)
    todo = [i for i, h in enumerate(hardware) if h]
    while todo:
        i = todo.pop()
        for c in callers[i]:
            if not reach[c]:
                reach[c] = True
                todo.append(c)
    mixed = list(reach)
    todo = [i for i, r in enumerate(reach) if r]
    while todo:
        i = todo.pop()
        for c in fns.callees[i]:
            if not mixed[c]:
                mixed[c] = True
                todo.append(c)
    return mixed


# -- arrays sized for 32-lane warps, indexed by a hardware-width id ------------------------------
_INDEXED = re.compile(r"\b([A-Za-z_]\w*)\s*\[\s*([A-Za-z_0-9]\w*)\s*\]")
_HARDWARE_ID = re.compile(
    r"\b([A-Za-z_]\w*)\s*=\s*([^;{}=]{0,120}?\b(?:warpSize|C10_WARP_SIZE)\b[^;{}]{0,40});"
)
_DECLARATION_HEAD = re.compile(r"\s*(?:[A-Za-z_][\w:]*\s+)+")


def hardware_indexed_arrays(unit: "CppUnit", warps: LogicalWarps):
    """(start, end, what) of each array declared in a function with 32 elements (a literal or a
    32-valued constant) that the same function indexes by an id computed from the hardware width
    (``int wid = threadIdx.x / warpSize; ... sums[wid]``): one slot per 32-lane warp, filled
    per 64-lane wavefront."""
    code = unit.code
    if "[" not in code or ("warpSize" not in code and "C10_WARP_SIZE" not in code):
        return
    found_ids = [
        (m, init)
        for m in _HARDWARE_ID.finditer(code)
        for init in (" ".join(m.group(2).split()),)
        if re.search(r"[/%&]|>>", init)
    ]
    if not found_ids:
        return  # the functions of the file are not needed
    fns = warps.functions
    ids: Dict[int, Dict[str, str]] = {}  # function -> {id name: its initializer}
    for m, init in found_ids:
        i = fns.at(m.start())
        if i >= 0:
            ids.setdefault(i, {})[m.group(1)] = init
    if not ids:
        return
    arrays: Dict[tuple, tuple] = {}  # (function, name) -> (start, end of the bound)
    uses: List[tuple] = []  # (function, name, index text)
    for m in _INDEXED.finditer(code):
        i = fns.at(m.start())
        if i not in ids:
            continue
        stmt = unit.statement_start(m.start())
        head = code[stmt : m.start()]
        if (
            head.strip()
            and _DECLARATION_HEAD.fullmatch(head)
            and not head.strip().endswith(("return", "else"))
        ):
            bound = m.group(2)
            if bound == "32" or literal_value(unit.expand(bound, m.start(2))) == 32:
                arrays[(i, m.group(1))] = (m.start(2), m.end(2))
        else:
            uses.append((i, m.group(1), m.group(2)))
    for i, name, index in uses:
        found = arrays.get((i, name))
        if found is None:
            continue
        init = ids[i].get(index) or ("warpSize" if index in ("warpSize", "C10_WARP_SIZE") else None)
        if init is None:
            continue
        del arrays[(i, name)]  # once per array
        yield (
            found[0],
            found[1],
            (
                f"`{name}[{code[found[0] : found[1]]}]` (a slot per 32-lane warp) indexed by "
                f"`{index}` = `{init}`, an id from the hardware width"
            ),
        )
