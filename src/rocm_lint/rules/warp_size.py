"""ROC603: warp size 32 hard-coded (``WARP_SIZE 32``, lane math, reductions from 16, shuffle width
32), and the search for hard-coded wave sizes (``wave_hits``) that ROC605 runs for 64."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, Optional, Set, Tuple

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule
from rocm_lint.rules.warp import IDENTS, defined_at, names_pattern

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

ROC603 = Rule(
    "ROC603",
    "warp-size-32",
    "warp size 32 hard-coded (WARP_SIZE 32, & 31 / % 32 / >> 5 lane math, reductions from 16, "
    "shuffle width 32): half of a 64-wide wavefront is ignored",
    triggers=("32", "31", ">> 5", ">>5", "16", "0x1f", "0x1F"),
    languages=CPP_LANGUAGES,
    messages={
        "default": "warp size 32 hard-coded ({what}): AMD CDNA GPUs run 64-lane wavefronts, so half of "
        "each wavefront is ignored or mis-indexed; use `warpSize` at run time, `C10_WARP_SIZE` "
        "in PyTorch code, or a 64 under `#ifdef USE_ROCM`"
    },
)

_WARP_NAME = LazyPattern(
    r"(?i)(?:^(?:k|c|g|s|m)?_*|_)(?:warp|wave(?:front)?)_?(?:size|sz|width|len(?:gth)?|threads|lanes|dim)_*$"
    r"|threads_?per_?(?:warp|wave)|lanes_?per_?(?:warp|wave)|^(?:k_?)?num_?lanes$"
    # a warp size with a tag: WARP_SIZE_GGUF (not a log, shift, bit count, mask or half of it)
    r"|(?:^(?:k|c|g|s|m)?_*|_)(?:warp|wave(?:front)?)_?size_(?!(?:log|shift|bits?|mask|half|bytes?)(?:_|\d|$))"
    r"[a-z0-9]+_*$"
)
_BLOCK_DIM_BEHIND = LazyPattern(r"blockDim\s*\.\s*[xyz]\s*$")
_TILE = LazyPattern(r"(?:tiled_partition|thread_block_tile)\s*<\s*(\d+)\s*[,>]")
_LANE_OPERAND = r"(?:threadIdx\s*\.\s*[xyz]|\b(?:tid|tidx|tid_x|thread_id|threadId|thread_idx|threadIdx_x|ltid|local_tid|lane|lane_id|laneId|lane_idx|laneid|lane_index))"


def _size_patterns(size: int):
    """Operator-led patterns: an operator character of lane math, then the number (``& 31``,
    ``>> 5``, ``% 32``, ``/ 32``; a plain ``>`` too, rejected by the operator check after); the
    operand is looked up behind it.  (The number alone matched every
    ``5``/``31``/``32`` in the text, each then looked at in Python.)"""
    mask, shift = size - 1, size.bit_length() - 1
    math = re.compile(
        r"[>&%%/]\s*((?:%d|%s|%d|%d)[uU]?)(?![\w.])" % (mask, hex(mask).replace("0x", "0[xX]"), size, shift)
    )
    named = re.compile(r"%d[uU]?(?=\s*(?:\)\s*)?[;,}>)])" % size)  # the number first: a fast literal search
    return math, named


_LANE_OPERAND_BEHIND = LazyPattern(_LANE_OPERAND + r"\s*$")


def _name_behind(code: str, lo: int, hi: int) -> Optional[Tuple[int, str]]:
    """(offset, name) of the identifier that ends ``code[lo:hi]`` (trailing whitespace allowed), as
    the leftmost match of ``[A-Za-z_]\\w*\\s*$`` in that window would give it, or None.  A
    backward scan: linear, where the regex searched from every letter of a long word."""
    i = hi
    while i > lo and code[i - 1].isspace():
        i -= 1
    end = i
    while i > lo and (code[i - 1].isalnum() or code[i - 1] == "_"):
        i -= 1
    while i < end and not (code[i] == "_" or ("a" <= code[i] <= "z") or ("A" <= code[i] <= "Z")):
        i += 1
    return (i, code[i:end]) if i < end else None


_OPERATOR_BEHIND = LazyPattern(r"(>>|&|%|/)\s*$")
_ASSIGNED_BEHIND = LazyPattern(r"(?<![=!<>])=\s*(?:\(\s*)?$")
_MATH32, _NAMED32 = _size_patterns(32)
_MATH64, _NAMED64 = _size_patterns(64)
_SHFL_WIDTH = LazyPattern(r"__shfl(?:_up|_down|_xor)?(_sync)?\b")
_REDUCTION_LOOP = LazyPattern(
    r"for\s*\(\s*(?:(?:const\s+)?(?:unsigned\s+int|unsigned|int|uint32_t|size_t|auto|int32_t|uint)\s+)?([A-Za-z_]\w*)\s*="
    r"\s*(\d+)[uU]?\s*;"
)
# literal-first (no leading \b: the regex engine's literal search), a word start checked after
_CUB_WARP = LazyPattern(r"Warp(?:Reduce|Scan|Exchange|Load|Store|MergeSort)\s*<[^<>;{}]*?,\s*(\d+)\s*[,>]")


def wave_hits(unit: CppUnit, size: int) -> Iterator[Tuple[int, int, str]]:
    """(start, end, what) of every hard-coded ``size`` used as the wave width."""
    from rocm_lint.cpp.scanner import calls

    code = unit.code
    math, named = (_MATH32, _NAMED32) if size == 32 else (_MATH64, _NAMED64)
    for d in unit.pre.directives:
        if d.name == "define":
            m = re.match(r"\s*([A-Za-z_]\w*)\s+\(?\s*(\d+)[uU]?\s*\)?\s*$", d.arg)
            if m and int(m.group(2)) == size and _WARP_NAME.search(m.group(1)):
                at = d.arg_start + code[d.arg_start : d.end].find(m.group(1))
                yield at, d.end, f"`#define {m.group(1)} {size}`"
    for m in named.finditer(code):
        eq = _ASSIGNED_BEHIND.search(code, max(0, m.start() - 80), m.start())
        if eq is None:
            continue
        name = _name_behind(code, max(0, eq.start() - 80), eq.start())
        if name and _WARP_NAME.search(name[1]):
            yield name[0], m.end(), f"`{name[1]} = {size}`"
    mask, shift = size - 1, size.bit_length() - 1
    ops = {str(mask): "&", hex(mask): "&", str(size): "%/", str(shift): ">>"}
    for found in math.finditer(code):
        # the number as a match of its own: what follows is the check of each number met
        # (the operator within 8 characters before it, the operand within 40 before that)
        start, end = found.span(1)
        number = found.group(1).rstrip("uU").lower()
        op = _OPERATOR_BEHIND.search(code, max(0, start - 8), start)
        if (
            op is None
            or op.group(1) not in ops.get(number, ())
            or (op.group(1) == ">>") != (number == str(shift))
        ):
            continue
        operand = _LANE_OPERAND_BEHIND.search(code, max(0, op.start() - 40), op.start())
        if operand is None and op.group(1) in (">>", "/") and "blockDim" in code:
            operand = _BLOCK_DIM_BEHIND.search(code, max(0, op.start() - 40), op.start())  # warps per block
        if operand:
            yield operand.start(), end, f"lane/warp math `{' '.join(code[operand.start() : end].split())}`"
    for m, paren in calls(unit, _SHFL_WIDTH) if "__shfl" in code else ():
        args = unit.args(paren)
        i = 3 if m.group(1) else 2
        if len(args) > i and re.fullmatch(
            r"\(?\s*" + str(size) + r"[uU]?\s*\)?", code[args[i][0] : args[i][1]]
        ):
            yield args[i][0], args[i][1], f"shuffle width {size} in `{m.group(0)}`"
    start_value = size // 2
    wrapper_call = None  # the project's shuffle wrappers, looked up for the first loop that needs them
    for m in _REDUCTION_LOOP.finditer(code):
        if int(m.group(2)) != start_value:
            continue
        var = m.group(1)
        close = unit.matching(code.index("(", m.start()))
        header = code[m.end() : close]
        if not re.search(
            r"\b" + re.escape(var) + r"\s*(?:>|>=|!=)\s*0|\b" + re.escape(var) + r"\s*(?:/=\s*2|>>=\s*1)"
            r"|\b" + re.escape(var) + r"\s*=\s*" + re.escape(var) + r"\s*(?:/\s*2|>>\s*1)",
            header,
        ):
            continue
        body_start = close
        while body_start < len(code) and code[body_start] in " \t\r\n":
            body_start += 1
        body_end = (
            unit.matching(body_start)
            if code[body_start : body_start + 1] == "{"
            else code.find(";", body_start)
        )
        body = code[body_start:body_end]
        via = None
        if "__shfl" not in body:
            if wrapper_call is None:
                wrappers = unit.project.shuffle_wrappers
                wrapper_call = names_pattern(frozenset(wrappers)) if wrappers else False
            via = wrapper_call.search(body) if wrapper_call else None
            if via is None:
                continue
        number = m.start() + m.group(0).rindex(m.group(2))
        what = f"shuffle reduction starting at offset {start_value}"
        if via:
            what += (
                f" through `{via.group(0)}` ({defined_at(unit, unit.project.shuffle_wrappers[via.group(0)])})"
            )
        yield number, number + len(m.group(2)), what
    if size == 32 and "Warp" in code:
        for m in _CUB_WARP.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            if int(m.group(1)) == 32:
                yield (
                    m.start(),
                    m.end(),
                    f"`{' '.join(m.group(0).rstrip(',>').split())}>` (a 32-lane logical warp)",
                )
    if size == 32 and ("tiled_partition" in code or "thread_block_tile" in code):
        last_statement = -1
        for m in _TILE.finditer(code):
            # `thread_block_tile<32> t = tiled_partition<32>(b);` is one finding
            if int(m.group(1)) == 32 and unit.statement_start(m.start()) != last_statement:
                last_statement = unit.statement_start(m.start())
                yield (
                    m.start(),
                    m.end(),
                    f"`{' '.join(m.group(0).rstrip(',>').split())}>` (a 32-lane tile as the warp)",
                )


@ROC603.source_checker()
def find_warp_size_32(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.logical_warp import LogicalWarps, hardware_indexed_arrays

    seen: Set[int] = set()
    warps = None
    lone = []  # lane math in helpers nothing in the file calls: decided by the file's other warp code
    reported = False
    for start, end, what in wave_hits(unit, 32):
        line = unit.line_of(start)
        region = unit.pre.status(line)
        if region.wave == 32 or start in seen:
            continue  # an RDNA-only (wave32) branch: 32 is right there
        if what.startswith("shuffle width") and unit.pre.rocm_only(line):
            continue  # an explicit width on the ROCm side is a deliberate 32-lane logical warp
        seen.add(start)
        # A 32-lane logical warp used consistently (no hardware width in the function, the
        # functions it calls or those calling it: rocm_lint.cpp.logical_warp) computes the same
        # on a 64-wide wavefront; a 32-valued constant is one when all its uses are.
        warps = warps or LogicalWarps(unit)
        name = IDENTS.match(unit.code, start)
        if name and what in (f"`#define {name.group(0)} 32`", f"`{name.group(0)} = 32`"):
            if warps.constant_consistent(name.group(0), start):
                continue
        elif warps.mixed(start) is False:
            if what.startswith("lane/warp math") and warps.lone_helper(start):
                lone.append((start, end, what))
            continue
        reported = True
        yield ROC603.hit(start, end, ROC603.message(what=what))
    if "[" in unit.code and ("warpSize" in unit.code or "C10_WARP_SIZE" in unit.code):
        for start, end, what in hardware_indexed_arrays(unit, warps or LogicalWarps(unit)):
            if start not in seen and unit.pre.status(unit.line_of(start)).wave != 32:
                reported = True
                yield ROC603.hit(start, end, ROC603.message(what=what))
    if reported:
        # A lane-id helper whose callers are elsewhere, in a file whose own warp code mixes 32
        # with the hardware width: its callers are read as the file's code is.
        for start, end, what in lone:
            yield ROC603.hit(
                start,
                end,
                ROC603.message(
                    what=what + ", in a helper nothing in this file calls, next to warp code of the file "
                    "that mixes 32 lanes with the hardware width"
                ),
            )
