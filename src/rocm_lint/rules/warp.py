"""ROC6: warp and wavefront width in CUDA C++ (AMD CDNA wavefronts are 64 lanes wide).

Every checker reads ``unit.code`` (comments and literals blanked), so text in comments
and strings never fires; the scanner drops hits in code that is never compiled on ROCm.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.lazy import LazyPattern, lazy_functions
from rocm_lint.rule import CPP_LANGUAGES, FixAvailability, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

# (the C++ machinery is imported when a C++ file is checked, not by a Python check)
lazy_functions(globals(), "rocm_lint.cpp.scanner", "calls", "gate_lines", "literal_value", "whole_statement_lines")
lazy_functions(globals(), "rocm_lint.cpp.logical_warp", "LogicalWarps", "hardware_indexed_arrays")

ROC601 = Rule(
    "ROC601", "lane-mask-32-bit",
    "ballot/activemask result kept in 32 bits (32-bit variable, __popc/__ffs/__clz/__brev, 1 << lane): "
    "lanes 32-63 of a 64-wide wavefront are dropped",
    # __popc & co: a ballot may come from a project wrapper the file only calls
    triggers=("__ballot", "__activemask", "__popc", "__ffs", "__clz", "__brev"),
    fix=Applicability.UNSAFE, fix_availability=FixAvailability.SOMETIMES,
    languages=CPP_LANGUAGES,
    messages={
        "count_of_ballot": "`{call}` of a ballot counts only lanes 0-31: on a 64-wide wavefront the ballot is "
                           "64 bits; use `{wide}`",
        "count_of_wrapper": "`{call}` of `{wrapper}(...)`, a ballot (it returns one: {where}), counts only "
                            "lanes 0-31: on a 64-wide wavefront the ballot is 64 bits; use `{wide}`",
        "count_of_expression": "`{call}({expr})` truncates the ballot `{name}` to lanes 0-31 (on a 64-wide "
                               "wavefront it is 64 bits); use `{wide}` and 64-bit lane masks (`1ull << lane`)",
        "ballot_shift": "ballot tested with a 32-bit `1 << lane`: lanes 32-63 of a 64-wide wavefront are never "
                        "seen; use `1ull << lane` and a 64-bit mask",
        "variable_32": "`{name}` keeps a ballot in 32 bits: on a 64-wide wavefront lanes 32-63 are dropped "
                       "(silent wrong results, or a hang waiting for them); use a 64-bit type "
                       "(`unsigned long long`/`uint64_t`) and `__popcll`/`__ffsll`",
        "count_of_variable": "`{call}({name})` truncates the 64-bit ballot to lanes 0-31; use `{wide}`",
        "variable_shift": "`{name}` tested with a 32-bit `1 << lane`: lanes 32-63 are never seen (and shifting "
                          "an int by 32 or more is undefined); use `1ull << lane`",
    },
)
ROC602 = Rule(
    "ROC602", "full-mask-32-bit",
    "32-bit full mask (0xffffffff, ~0u, FULL_MASK) passed to a *_sync warp function: HIP wants a "
    "64-bit mask (compile error) and 32 bits cover half a wavefront",
    triggers=("_sync",),
    fix=Applicability.UNSAFE, fix_availability=FixAvailability.SOMETIMES,
    languages=CPP_LANGUAGES,
    messages={"default": "32-bit full mask `{mask}` passed to `{call}`: HIP's *_sync functions take a 64-bit "
                         "mask (a 32-bit one fails to compile) and 0xffffffff names only lanes 0-31 of a 64-wide "
                         "wavefront; use a 64-bit all-lanes mask on ROCm (`0xffffffffffffffffull`, "
                         "`__activemask()`)"},
)
ROC603 = Rule(
    "ROC603", "warp-size-32",
    "warp size 32 hard-coded (WARP_SIZE 32, & 31 / % 32 / >> 5 lane math, reductions from 16, "
    "shuffle width 32): half of a 64-wide wavefront is ignored",
    triggers=("32", "31", ">> 5", ">>5", "16", "0x1f", "0x1F"),
    languages=CPP_LANGUAGES,
    messages={"default": "warp size 32 hard-coded ({what}): AMD CDNA GPUs run 64-lane wavefronts, so half of "
                         "each wavefront is ignored or mis-indexed; use `warpSize` at run time, `C10_WARP_SIZE` "
                         "in PyTorch code, or a 64 under `#ifdef USE_ROCM`"},
)
ROC604 = Rule(
    "ROC604", "warp-size-compile-time",
    "warpSize or __AMDGCN_WAVEFRONT_SIZE used as a compile-time constant: not a constant in ROCm 7, "
    "the macro is deprecated",
    triggers=("warpSize", "__AMDGCN_WAVEFRONT_SIZE"),
    languages=CPP_LANGUAGES,
    messages={
        "constant": "`warpSize` used {what}: since ROCm 7 it is no longer a compile-time constant, so this "
                    "stops compiling; size with a constant you choose per arch (`#ifdef __GFX9__` 64 / 32), or "
                    "read `warpSize` at run time",
        "macro": "`{macro}` is deprecated (the wavefront size is no longer a compile-time property in recent "
                 "ROCm/LLVM); read `warpSize` at run time, or test the arch macro (`__GFX9__`)",
    },
)
ROC605 = Rule(
    "ROC605", "wave64-hard-coded-rocm",
    "wave size 64 hard-coded on the ROCm side (RDNA GPUs run wave32), or a wave size chosen from an incomplete "
    "list of GPU targets",
    triggers=("64", "63", ">> 6", ">>6", "32", "0x3f", "0x3F"),
    languages=CPP_LANGUAGES,
    messages={"default": "wave size 64 hard-coded on the ROCm side ({what}): right on CDNA (MI200/MI300), "
                         "wrong on RDNA GPUs (gfx10/11/12), which HIP compiles for wave32; use `warpSize` at run "
                         "time, or test the arch (`__GFX9__`) before assuming 64",
              "arch_list": "wave size {size} chosen from an incomplete list of wave{size} GPUs ({listed}): "
                           "{missing} {verb} wave{size} too but {get} the other branch's {other}; test the family "
                           "(`{family}`) instead of listing chips, or read `warpSize` at run time"},
)

FULL32 = 0xFFFFFFFF

# -- ROC601 ------------------------------------------------------------------------------------
_BALLOT = LazyPattern(r"__(?:ballot_sync|ballot|activemask)\b")
_TYPE32 = r"(?:unsigned\s+int|unsigned(?!\s+(?:long|char|short))|(?<!long\s)int|uint32_t|int32_t|uint|u32)"


@lru_cache(maxsize=64)
def _type32_patterns(aliases: FrozenSet[str]) -> Tuple["re.Pattern[str]", "re.Pattern[str]", "re.Pattern[str]", str]:
    """(a ballot's 32-bit declaration head, a 32-bit type ahead, a 32-bit type here, the type
    regex) for the built-in 32-bit types and the project's 32-bit aliases (``typedef uint32_t U32;``,
    ``using lane_t = unsigned;``: ``unit.project.int_aliases``)."""
    type32 = _TYPE32
    if aliases:
        type32 = "(?:" + "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True)) + r"\b|" + _TYPE32 + ")"
    decl = re.compile(r"^\s*(?:(?:const|static|register|volatile)\s+)*(" + type32 + r")\s+([A-Za-z_]\w*)\s*=\s*"
                      r"(?:\(\s*" + type32 + r"\s*\)\s*|static_cast\s*<\s*" + type32 + r"\s*>\s*\(\s*)?$")
    return decl, re.compile(r"(?=\b(?:" + type32 + r")\s+)"), re.compile(r"\b(?:" + type32 + r")\s+"), type32


def _types32(unit: CppUnit):
    """``_type32_patterns`` for this file's project (its 32-bit aliases)."""
    return _type32_patterns(unit.project.aliases_of(32) if "typedef" in unit.text or "using" in unit.text
                            or '"' in unit.text else frozenset())
_ASSIGN = LazyPattern(r"^\s*([A-Za-z_]\w*)\s*=\s*$")
_NARROW_CALL = LazyPattern(r"\b(__popc|__ffs|__clz|__brev)\s*\(\s*$")
_SAME_MEANING_64 = {"__popc": "__popcll", "__ffs": "__ffsll"}  # __clz/__brev count from bit 63


def _wide(call: str) -> str:
    """The 64-bit form of a 32-bit bit-count intrinsic (``__popc`` -> ``__popcll``)."""
    return _SAME_MEANING_64.get(call, call + "ll")


def declared_32(unit: CppUnit, name: str, before: int) -> bool:
    """Is ``name`` declared with a 32-bit type in the text from 2000 characters before the
    innermost ``{`` around ``before`` up to ``before``?  The file's declarations are indexed
    once (``_declarations_32``): a kernel with thousands of assignments stays linear."""
    start = unit.open_brace_before(before)
    lo = max(0, start - 2000) if start >= 0 else 0
    spans = _declarations_32(unit).get(name, ())
    for at, end in spans[bisect_left(spans, (lo,)):]:
        if at >= before:
            break
        if end <= before:
            return True
    return False


_DECLARATOR = LazyPattern(r"([A-Za-z_]\w*)\s*([;,=])?")
_INITIALISER = LazyPattern(r"=[^,;]*,\s*")


def _declarations_32(unit: CppUnit):
    """{name: [(start of the type, end of the name's `;`/`,`/`=`)]} of every declarator in a
    declaration with a 32-bit type (``unsigned a = 0, mask;``), in file order."""
    cached = unit.memo.get("declared_32")
    if cached is None:
        code = unit.code
        cached = {}
        _, type32_at, type32_here, _ = _types32(unit)
        for t in type32_at.finditer(code):
            m = type32_here.match(code, t.start())
            pos = m.end()
            while True:
                d = _DECLARATOR.match(code, pos)
                if d is None or d.group(2) is None:
                    break
                cached.setdefault(d.group(1), []).append((t.start(), d.end()))
                if d.group(2) == ";":
                    break
                if d.group(2) == "=":
                    init = _INITIALISER.match(code, d.end(2) - 1)
                    if init is None:
                        break
                    pos = init.end()
                else:
                    pos = d.end()
                    while pos < len(code) and code[pos].isspace():
                        pos += 1
        unit.memo["declared_32"] = cached
    return cached


def ballot_calls(unit: CppUnit) -> List[Tuple[int, int, int, str]]:
    """(start, end of the name, offset of the ``(``, name) of every ballot in the file: the
    intrinsics (``__ballot_sync``, ``__ballot``, ``__activemask``) and calls of the ballot
    wrappers the file or its project headers define (``unit.project``), in file order."""
    cached = unit.memo.get("ballot_calls")
    if cached is None:
        found = [(m.start(), m.end(), paren, m.group(0)) for m, paren in calls(unit, _BALLOT)]
        wrappers = unit.project.ballot_wrappers
        if wrappers:
            for m, paren in calls(unit, names_pattern(frozenset(wrappers))):
                if not _is_definition(unit, m.start()):
                    found.append((m.start(), m.end(), paren, m.group(0)))
            found.sort()
        cached = unit.memo["ballot_calls"] = found
    return cached  # type: ignore[return-value]


@lru_cache(maxsize=256)
def names_pattern(names: FrozenSet[str]) -> "re.Pattern[str]":
    """A literal alternation of ``names`` (longest first), ending at a word boundary."""
    return re.compile("(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")


_RETURN_TYPES = frozenset({"void", "int", "bool", "unsigned", "long", "float", "double", "auto", "T", "signed",
                           "short", "char"})


def _is_definition(unit: CppUnit, start: int) -> bool:
    """Is ``name(`` at ``start`` a function's definition or declaration (a return type right
    before the name: ``unsigned long long``, ``uint64_t``, ``lane_mask_t``, ``T``) or a
    ``#define``, not a call?"""
    code = unit.code
    head = code[max(unit.statement_start(start), start - 200):start]
    if head.lstrip().startswith("#"):
        return True
    i = len(head.rstrip(" \t\r\n*&"))
    j = i
    while j > 0 and (head[j - 1].isalnum() or head[j - 1] == "_"):
        j -= 1
    word = head[j:i]
    return word in _RETURN_TYPES or (word.endswith("_t") and len(word) > 2) or word in unit.project.int_aliases


def _ballot_variables(unit: CppUnit):
    """(name, ballot call offset, statement start, statement end, declared 32-bit, declaration match)."""
    cached = unit.memo.get("ballot_vars")
    if cached is not None:
        return cached
    out = []
    code = unit.code
    for start, _, paren, _ in ballot_calls(unit):
        stmt = unit.statement_start(start)
        head = code[stmt:start]
        end = unit.matching(paren)
        decl = _types32(unit)[0].match(head)
        if decl:
            out.append((decl.group(2), start, stmt, end, True, decl))
            continue
        auto = re.match(r"^\s*(?:[\w:<>]+\s+)+?([A-Za-z_]\w*)\s*=\s*$", head)  # `unsigned long long b =`
        assign = _ASSIGN.match(head)
        if auto:
            out.append((auto.group(1), start, stmt, end, False, None))
        elif assign:
            out.append((assign.group(1), start, stmt, end, declared_32(unit, assign.group(1), stmt), None))
    unit.memo["ballot_vars"] = out
    return out


@ROC601.source_checker()
def find_32_bit_lane_masks(unit: CppUnit) -> Iterator[Hit]:
    code = unit.code
    if "__ballot" not in code and "__activemask" not in code and not (
            _NARROW_WORDS.search(code) and unit.project.ballot_wrappers):
        return
    wrappers = unit.project.ballot_wrappers
    reported: Set[int] = set()
    # A ballot handed straight to a 32-bit bit-count: __popc(__ballot_sync(m, p)), __popc(my_ballot(p))
    for start, _, paren, name in ballot_calls(unit):
        stmt = unit.statement_start(start)
        narrow = _NARROW_CALL.search(code, stmt, start)
        close = unit.matching(paren)
        if narrow and narrow.end() == start:
            call = narrow.group(1)
            if name in wrappers and not name.startswith("__"):
                message = ROC601.message("count_of_wrapper", call=call, wrapper=name, wide=_wide(call),
                                         where=_where(unit, wrappers[name]))
            else:
                message = ROC601.message("count_of_ballot", call=call, wide=_wide(call))
            reported.add(narrow.start())
            yield ROC601.hit(narrow.start(), close, message,
                             no_fix="a bit count taken straight of a ballot call is not rewritten (the fix "
                                    "widens a ballot variable's declaration and its uses)")
        if re.match(r"\s*&\s*(?:\(\s*)?1[uU]?\s*<<", code[close:close + 40]):
            yield ROC601.hit(start, close, ROC601.message("ballot_shift"), no_fix=_NO_SHIFT_FIX)
    _, shifts_of = _mask_uses(unit)
    counts_of = _narrow_calls(unit)
    for name, at, stmt, end, is32, decl in _ballot_variables(unit):
        scope_end = unit.block_end(end)
        shifts = _within(shifts_of.get(name, ()), end, scope_end)
        uses = []
        mine = counts_of.get(name, ())
        for n in mine[bisect_left(mine, (end,)):]:
            if n[0] >= scope_end:
                break
            if n[0] not in reported:
                uses.append(n)
        if is32:
            plain = [(u[0], u[1], u[2]) for u in uses if u[3] == name]
            fix = _fix_declaration(unit, name, stmt, end, decl, plain, shifts) \
                if decl and len(plain) == len(uses) else ()
            yield ROC601.hit(at if decl is None else stmt + decl.start(1), end,
                             ROC601.message("variable_32", name=name), edits=fix,
                             fix_message="keep the ballot in 64 bits on ROCm (`unsigned long long`, "
                                         "`__popcll`/`__ffsll`)",
                             no_fix="a 64-bit twin is written only for a plain declaration whose every "
                                    "bit-count use takes the variable alone and has a same-meaning 64-bit "
                                    "form, with no `1 << lane` test to rewrite; one of those does not hold here")
        for u in uses:
            reported.add(u[0])
            if u[3] == name:
                message = ROC601.message("count_of_variable", call=u[2], name=name, wide=_wide(u[2]))
            else:
                message = ROC601.message("count_of_expression", call=u[2], expr=" ".join(u[3].split()),
                                         name=name, wide=_wide(u[2]))
            yield ROC601.hit(u[0], u[1], message,
                             no_fix=f"this use changes with the declaration of `{name}` (its ROC601 finding "
                                    "carries the fix, where one can be made)")
        for sh in shifts:
            yield ROC601.hit(sh[0], sh[1], ROC601.message("variable_shift", name=name), no_fix=_NO_SHIFT_FIX)


_NO_SHIFT_FIX = "a `1 << lane` test of a 64-bit ballot needs a 64-bit shift (`1ull << lane`), written by hand"


_NARROW_WORDS = LazyPattern(r"__(?:popc|ffs|clz|brev)\b")
_NARROW_AT = LazyPattern(r"(__popc|__ffs|__clz|__brev)\s*\(")
_IDENTS = LazyPattern(r"[A-Za-z_]\w*")


def _narrow_calls(unit: CppUnit) -> Dict[str, List[Tuple[int, int, str, str]]]:
    """{name: [(start, end, call, argument text)]} of every 32-bit bit count (``__popc(...)``,
    ``__ffs``, ``__clz``, ``__brev``) whose argument mentions ``name``, in file order: found once
    per file and looked up per ballot variable (a kernel with thousands of ballots stays linear)."""
    cached = unit.memo.get("narrow_calls")
    if cached is None:
        code = unit.code
        cached = {}
        for m in _NARROW_AT.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            paren = m.end() - 1
            end = unit.matching(paren)
            arg = code[paren + 1:end - 1].strip()
            for name in set(_IDENTS.findall(arg[:400])):
                cached.setdefault(name, []).append((m.start(), end, m.group(1), arg))
        unit.memo["narrow_calls"] = cached
    return cached  # type: ignore[return-value]


def _where(unit: CppUnit, where: Tuple[str, int]) -> str:
    """``common.cuh:12`` for a project header (its path from this file's directory when that
    stays short), ``line 12`` for this file."""
    path, line = where
    if not path or os.path.realpath(path) == os.path.realpath(os.path.abspath(unit.path)):
        return f"line {line}"
    rel = os.path.relpath(path, os.path.dirname(os.path.abspath(unit.path)))
    return f"{os.path.basename(path) if rel.startswith('..' + os.sep + '..') else rel}:{line}"


# A variable's 32-bit shift tests (``mask & (1 << lane)``,
# ``(1 << lane) & mask``), found once per file and looked up per variable: a kernel with
# thousands of ballots stays linear.  The shift test is matched at every offset (a lookahead)
# because its two forms can overlap: ``x & (1 << y) & mask``.
_SHIFT_TEST = LazyPattern(r"(?=(?P<all>\b(?P<a>[A-Za-z_]\w*)\s*&\s*\(?\s*1[uU]?\s*<<"
                         r"|\(\s*1[uU]?\s*<<\s*\w+\s*\)\s*&\s*(?P<b>[A-Za-z_]\w*)\b))")


def _mask_uses(unit: CppUnit):
    """({name: [(start, end, call)]} of bit counts, {name: [(start, end, "")]} of shift tests),
    each list in file order; shift tests may overlap (``_within`` picks as a scan would)."""
    cached = unit.memo.get("mask_uses")
    if cached is None:
        code = unit.code
        counts: dict = {}  # bit counts: _narrow_calls
        shifts: dict = {}
        if "<<" in code:
            for m in _SHIFT_TEST.finditer(code):
                name = m.group("a") or m.group("b")
                shifts.setdefault(name, []).append((m.start("all"), m.end("all"), ""))
        cached = unit.memo["mask_uses"] = (counts, shifts)
    return cached


def _within(spans, start: int, end: int) -> list:
    """The spans inside ``start..end``, without overlaps (the first of overlapping ones wins, as
    a left-to-right regex scan of that range would)."""
    if not spans:
        return []
    out: list = []
    last = start
    for span in spans[bisect_left(spans, (start,)):]:
        if span[0] >= end:
            break
        if span[0] >= last and span[1] <= end:
            out.append(span)
            last = span[1]
    return out


def _fix_declaration(unit: CppUnit, name, stmt, end, decl, uses, shifts) -> Tuple[Tuple[int, int, str], ...]:
    """The unsafe fix: on ROCm the declaration is 64-bit and its __popc/__ffs become the ll forms.
    Only when every bit-count use has a 64-bit twin of the same meaning, each use is a whole
    statement on its own lines, and nothing tests the mask with a 32-bit shift."""
    if shifts or any(u[2] not in _SAME_MEANING_64 for u in uses):
        return ()
    code = unit.code
    semi = code.find(";", end)
    # The call must close where the statement ends: an unbalanced call (a comment that swallows
    # `, p);`, a macro's half) stops at a brace, and the statement would run into the next block.
    if semi == -1 or code[end - 1:end] != ")" or "{" in code[end:semi] or "}" in code[end:semi]:
        return ()
    lines = whole_statement_lines(unit, stmt + len(decl.group(0)) - len(decl.group(0).lstrip()), semi + 1)
    if lines is None:
        return ()
    edits = []
    a, b = unit.line_span(lines[0])
    b = unit.line_span(lines[1])[1]
    original = unit.text[a:b]
    type_at = stmt + decl.start(1) - a
    rocm = original[:type_at] + "unsigned long long" + original[type_at + len(decl.group(1)):]
    type32 = _types32(unit)[3]
    rocm = re.sub(r"\(\s*" + type32 + r"\s*\)|static_cast\s*<\s*" + type32 + r"\s*>",
                  lambda m: "(unsigned long long)" if m.group(0).startswith("(") else "static_cast<unsigned long long>",
                  rocm, count=1)
    edit = gate_lines(unit, lines[0], lines[1], rocm)
    if edit is None:
        return ()
    edits.append(edit)
    for u in uses:
        u_start = u[0]
        u_stmt = unit.statement_start(u_start)
        u_semi = code.find(";", u_start)
        if u_semi == -1:
            return ()
        span = whole_statement_lines(unit, u_stmt + len(code[u_stmt:u_start]) - len(code[u_stmt:u_start].lstrip()),
                                     u_semi + 1)
        if span is None:
            return ()
        ua, ub = unit.line_span(span[0])[0], unit.line_span(span[1])[1]
        text = unit.text[ua:ub]
        rel = u_start - ua
        call = u[2]
        new = text[:rel] + _SAME_MEANING_64[call] + text[rel + len(call):]
        edit = gate_lines(unit, span[0], span[1], new)
        if edit is None:
            return ()
        edits.append(edit)
    starts = [e[0] for e in edits]
    if len(set(starts)) != len(starts):
        return ()
    return tuple(edits)


# -- ROC602 ------------------------------------------------------------------------------------
_SYNC_MASK_CALL = LazyPattern(
    r"__(?:shfl(?:_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|uni_sync|syncwarp"
    r"|match_(?:any|all)_sync|reduce_\w+_sync)\b")


def _full32(unit: CppUnit, text: str, at: int) -> Optional[str]:
    """How ``text`` (a mask argument) is a 32-bit full mask on ROCm, or None."""
    expanded = unit.expand(text, at)
    value = literal_value(expanded)
    if value is None and _IDENTS.search(expanded):  # `(U32)-1`: the project's type names
        value = literal_value(expanded, unit.project.int_aliases)
    if value == FULL32:
        return text.strip() if expanded == text.strip() else f"{text.strip()} ({expanded})"
    return None


@ROC602.source_checker()
def find_32_bit_full_masks(unit: CppUnit) -> Iterator[Hit]:
    if "_sync" not in unit.code and "__syncwarp" not in unit.code:
        return
    for m, paren in calls(unit, _SYNC_MASK_CALL):
        args = unit.args(paren)
        if not args or args[0][0] >= args[0][1]:
            continue
        a, b = args[0]
        what = _full32(unit, unit.code[a:b], a)
        # a mask macro whose ROCm value its author defined under a ROCm-only branch: explicitly handled
        if what is None or unit.defined_for_rocm(unit.code[a:b].strip(), a):
            continue
        edits = _full_mask_fix(unit, unit.code[a:b].strip(), a, b)
        yield ROC602.hit(a, b, ROC602.message(mask=what, call=m.group(0)),
                         edits=edits, fix_message="use the 64-bit all-lanes mask on ROCm",
                         no_fix="no ROCm twin can be written here: the mask is neither a literal in the call "
                                "nor a `#define` of one this fix rewrites, or the statement holding it cannot "
                                "be copied whole")


FULL64 = "0xffffffffffffffffull"


def _full_mask_fix(unit: CppUnit, text: str, a: int, b: int) -> Tuple[Tuple[int, int, str], ...]:
    """The unsafe fix: a ROCm twin of the statement with a 64-bit mask (a literal argument),
    or of the ``#define`` that names the 32-bit mask (every use of the macro changes on ROCm:
    unsafe when it also serves as a plain number)."""
    if literal_value(text) == FULL32:
        stmt = unit.statement_start(a)
        semi = unit.code.find(";", b)
        if semi == -1:
            return ()
        lead = len(unit.code[stmt:a]) - len(unit.code[stmt:a].lstrip())
        lines = whole_statement_lines(unit, stmt + lead, semi + 1)
        if lines is None:
            return ()
        start = unit.line_span(lines[0])[0]
        original = unit.text[start:unit.line_span(lines[1])[1]]
        edit = gate_lines(unit, lines[0], lines[1], original[:a - start] + FULL64 + original[b - start:])
        return (edit,) if edit else ()
    if not re.fullmatch(r"[A-Za-z_]\w*", text):
        return ()
    d = unit.pre.macro(text, unit.line_of(a))
    if d is None or d.params is not None or literal_value(d.body) != FULL32:
        return ()
    directive = next((x for x in unit.pre.directives if x.name == "define" and x.line == d.line), None)
    if directive is None or directive.line != directive.end_line:
        return ()
    start, end = unit.line_span(d.line)
    line = unit.text[start:end]
    body_at = unit.code.find(d.body, directive.arg_start, end)
    if body_at == -1:
        return ()
    rel = body_at - start
    edit = gate_lines(unit, d.line, d.line, line[:rel] + FULL64 + line[rel + len(d.body):])
    return (edit,) if edit else ()


# -- ROC603 / ROC605: hard-coded wave sizes ----------------------------------------------------------
_WARP_NAME = LazyPattern(
    r"(?i)(?:^(?:k|c|g|s|m)?_*|_)(?:warp|wave(?:front)?)_?(?:size|sz|width|len(?:gth)?|threads|lanes|dim)_*$"
    r"|threads_?per_?(?:warp|wave)|lanes_?per_?(?:warp|wave)|^(?:k_?)?num_?lanes$"
    # a warp size with a tag: WARP_SIZE_GGUF (not a log, shift, bit count, mask or half of it)
    r"|(?:^(?:k|c|g|s|m)?_*|_)(?:warp|wave(?:front)?)_?size_(?!(?:log|shift|bits?|mask|half|bytes?)(?:_|\d|$))"
    r"[a-z0-9]+_*$")
_BLOCK_DIM_BEHIND = LazyPattern(r"blockDim\s*\.\s*[xyz]\s*$")
_TILE = LazyPattern(r"(?:tiled_partition|thread_block_tile)\s*<\s*(\d+)\s*[,>]")
_LANE_OPERAND = r"(?:threadIdx\s*\.\s*[xyz]|\b(?:tid|tidx|tid_x|thread_id|threadId|thread_idx|threadIdx_x|ltid|local_tid|lane|lane_id|laneId|lane_idx|laneid|lane_index))"


def _size_patterns(size: int):
    """Operator-led patterns: an operator character of lane math, then the number (``& 31``,
    ``>> 5``, ``% 32``, ``/ 32``; a plain ``>`` too, rejected by the operator check after); the
    operand is looked up behind it.  (The number alone matched every
    ``5``/``31``/``32`` in the text, each then looked at in Python.)"""
    mask, shift = size - 1, size.bit_length() - 1
    math = re.compile(r"[>&%%/]\s*((?:%d|%s|%d|%d)[uU]?)(?![\w.])"
                      % (mask, hex(mask).replace("0x", "0[xX]"), size, shift))
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
    r"\s*(\d+)[uU]?\s*;")
# literal-first (no leading \b: the regex engine's literal search), a word start checked after
_CUB_WARP = LazyPattern(r"Warp(?:Reduce|Scan|Exchange|Load|Store|MergeSort)\s*<[^<>;{}]*?,\s*(\d+)\s*[,>]")


def _wave_hits(unit: CppUnit, size: int) -> Iterator[Tuple[int, int, str]]:
    """(start, end, what) of every hard-coded ``size`` used as the wave width."""
    code = unit.code
    math, named = (_MATH32, _NAMED32) if size == 32 else (_MATH64, _NAMED64)
    for d in unit.pre.directives:
        if d.name == "define":
            m = re.match(r"\s*([A-Za-z_]\w*)\s+\(?\s*(\d+)[uU]?\s*\)?\s*$", d.arg)
            if m and int(m.group(2)) == size and _WARP_NAME.search(m.group(1)):
                at = d.arg_start + code[d.arg_start:d.end].find(m.group(1))
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
        if op is None or op.group(1) not in ops.get(number, ()) or (op.group(1) == ">>") != (number == str(shift)):
            continue
        operand = _LANE_OPERAND_BEHIND.search(code, max(0, op.start() - 40), op.start())
        if operand is None and op.group(1) in (">>", "/") and "blockDim" in code:
            operand = _BLOCK_DIM_BEHIND.search(code, max(0, op.start() - 40), op.start())  # warps per block
        if operand:
            yield operand.start(), end, f"lane/warp math `{' '.join(code[operand.start():end].split())}`"
    for m, paren in (calls(unit, _SHFL_WIDTH) if "__shfl" in code else ()):
        args = unit.args(paren)
        i = 3 if m.group(1) else 2
        if len(args) > i and re.fullmatch(r"\(?\s*" + str(size) + r"[uU]?\s*\)?", code[args[i][0]:args[i][1]]):
            yield args[i][0], args[i][1], f"shuffle width {size} in `{m.group(0)}`"
    start_value = size // 2
    wrapper_call = None  # the project's shuffle wrappers, looked up for the first loop that needs them
    for m in _REDUCTION_LOOP.finditer(code):
        if int(m.group(2)) != start_value:
            continue
        var = m.group(1)
        close = unit.matching(code.index("(", m.start()))
        header = code[m.end():close]
        if not re.search(r"\b" + re.escape(var) + r"\s*(?:>|>=|!=)\s*0|\b" + re.escape(var) + r"\s*(?:/=\s*2|>>=\s*1)"
                         r"|\b" + re.escape(var) + r"\s*=\s*" + re.escape(var) + r"\s*(?:/\s*2|>>\s*1)", header):
            continue
        body_start = close
        while body_start < len(code) and code[body_start] in " \t\r\n":
            body_start += 1
        body_end = unit.matching(body_start) if code[body_start:body_start + 1] == "{" else code.find(";", body_start)
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
            what += f" through `{via.group(0)}` ({_where(unit, unit.project.shuffle_wrappers[via.group(0)])})"
        yield number, number + len(m.group(2)), what
    if size == 32 and "Warp" in code:
        for m in _CUB_WARP.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            if int(m.group(1)) == 32:
                yield m.start(), m.end(), f"`{' '.join(m.group(0).rstrip(',>').split())}>` (a 32-lane logical warp)"
    if size == 32 and ("tiled_partition" in code or "thread_block_tile" in code):
        last_statement = -1
        for m in _TILE.finditer(code):
            # `thread_block_tile<32> t = tiled_partition<32>(b);` is one finding
            if int(m.group(1)) == 32 and unit.statement_start(m.start()) != last_statement:
                last_statement = unit.statement_start(m.start())
                yield m.start(), m.end(), f"`{' '.join(m.group(0).rstrip(',>').split())}>` (a 32-lane tile as the warp)"


@ROC603.source_checker()
def find_warp_size_32(unit: CppUnit) -> Iterator[Hit]:
    seen: Set[int] = set()
    warps = None
    for start, end, what in _wave_hits(unit, 32):
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
        name = _IDENTS.match(unit.code, start)
        if name and what in (f"`#define {name.group(0)} 32`", f"`{name.group(0)} = 32`"):
            if warps.constant_consistent(name.group(0), start):
                continue
        elif warps.mixed(start) is False:
            continue
        yield ROC603.hit(start, end, ROC603.message(what=what))
    if "[" in unit.code and ("warpSize" in unit.code or "C10_WARP_SIZE" in unit.code):
        for start, end, what in hardware_indexed_arrays(unit, warps or LogicalWarps(unit)):
            if start not in seen and unit.pre.status(unit.line_of(start)).wave != 32:
                yield ROC603.hit(start, end, ROC603.message(what=what))


@ROC605.source_checker()
def find_wave64_on_rocm_side(unit: CppUnit) -> Iterator[Hit]:
    if not any(r.cuda is False and r.rocm is not False for r in unit.pre.regions):
        return  # no ROCm-only code in this file
    seen: Set[int] = set()
    for start, end, what in _wave_hits(unit, 64):
        line = unit.line_of(start)
        region = unit.pre.status(line)
        if not unit.pre.rocm_only(line) or region.wave == 64 or start in seen:
            continue
        seen.add(start)
        yield ROC605.hit(start, end, ROC605.message(what=what))


# The wave64 and wave32 targets a ROCm build compiles for (PyTorch's default ROCm arch list and the
# Instinct line): GCN5/CDNA (gfx9) run wave64, RDNA (gfx10-12) wave32.  A branch that picks the wave
# size from a list of chips must name them all, or test the family (__GFX9__).
WAVE_TARGETS = {64: ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950"),
                32: ("gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201")}
_GFX_TARGET = LazyPattern(r"__(gfx[0-9a-f]+)__")
_CONDITION_NAME = LazyPattern(r"(defined\s*(?:\(\s*)?)?([A-Za-z_]\w*)")


def _expand_condition(unit: CppUnit, text: str, line: int, depth: int = 0) -> str:
    """``text`` (an ``#if`` condition) with object-like macros spliced in as ROCm sees them at
    ``line``: the file's own, then the project headers' (``#if IS_CDNA``); names tested with
    ``defined`` stay."""
    if depth > 4:
        return text

    def repl(m: "re.Match[str]") -> str:
        name = m.group(2)
        if m.group(1) or name == "defined":
            return m.group(0)
        d = unit.pre.macro(name, line)
        if d is not None and d.params is None and d.body:
            return "(" + _expand_condition(unit, d.body, line, depth + 1) + ")"
        v = unit.project.values.get(name) if d is None and name not in unit.pre.macros else None
        if v is not None:
            return "(" + _expand_condition(unit, v.text, line, depth + 1) + ")"
        return m.group(0)

    return _CONDITION_NAME.sub(repl, text)


def _arch_list(unit: CppUnit, text: str, line: int) -> Optional[Tuple[int, List[str], List[str]]]:
    """(wave size, targets listed, targets missing) when ``text`` picks ROCm GPUs by a plain list
    of chips (``defined(__gfx90a__) || defined(__gfx942__)``, ROCm macros allowed) of one wave
    size that misses some of ``WAVE_TARGETS``; else None (a family test, a negation, other names)."""
    if "__gfx" not in text and not unit.project.values and not unit.pre.macros:
        return None
    expanded = _expand_condition(unit, text, line)
    if "!" in expanded or "__gfx" not in expanded:
        return None
    listed = _GFX_TARGET.findall(expanded)
    for name in _IDENTS.findall(expanded):
        if name != "defined" and not _GFX_TARGET.fullmatch(name) and not unit.rocm_macro(name):
            return None  # __GFX9__, a value test, a project switch: not a plain list
    sizes = {64 if t.startswith(("gfx8", "gfx9")) else 32 if t.startswith("gfx1") else 0 for t in listed}
    if len(sizes) != 1 or 0 in sizes:
        return None
    size = sizes.pop()
    missing = [t for t in WAVE_TARGETS[size] if t not in listed]
    return (size, sorted(set(listed)), missing) if missing else None


def _wave_lines(unit: CppUnit, size: int) -> List[int]:
    cached = unit.memo.get(f"wave_lines_{size}")
    if cached is None:
        cached = unit.memo[f"wave_lines_{size}"] = sorted({unit.line_of(h[0]) for h in _wave_hits(unit, size)})
    return cached  # type: ignore[return-value]


def _tests_unknown_macros(unit: CppUnit) -> bool:
    """Does an ``#if``/``#elif`` test a name the file neither defines nor knows as a ROCm macro
    (one a project header may define as a list of chips, like ``IS_CDNA``)?"""
    for d in unit.pre.directives:
        if d.name in ("if", "elif"):
            for name in _IDENTS.findall(d.arg):
                if name != "defined" and name not in unit.pre.macros and not unit.rocm_macro(name):
                    return True
    return False


def _defines_in(unit: CppUnit, first: int, last: int, value: int) -> Set[str]:
    """Names ``#define``d to ``value`` on lines ``first..last``.  The file's numeric defines are
    indexed by line once (a scan of every directive per branch was quadratic in the number of
    conditionals: 31 s for a file of a million ``#if`` lines)."""
    index = unit.memo.get("numeric_defines")
    if index is None:
        lines: List[int] = []
        entries: List[Tuple[str, int]] = []
        for d in unit.pre.directives:
            if d.name == "define":
                m = _DEFINE_NUMBER.match(d.arg)
                if m:
                    lines.append(d.line)
                    entries.append((m.group(1), int(m.group(2))))
        index = unit.memo["numeric_defines"] = (lines, entries)
    lines, entries = index  # type: ignore[misc]
    out: Set[str] = set()
    for i in range(bisect_left(lines, first), bisect_right(lines, last)):
        if entries[i][1] == value:
            out.add(entries[i][0])
    return out


_DEFINE_NUMBER = LazyPattern(r"\s*([A-Za-z_]\w*)\s+\(?\s*(\d+)[uU]?\s*\)?\s*$")


def _has_line(lines: List[int], first: int, last: int) -> bool:
    i = bisect_left(lines, first)
    return i < len(lines) and lines[i] <= last


@ROC605.source_checker()
def find_incomplete_arch_lists(unit: CppUnit) -> Iterator[Hit]:
    """``#if defined(__gfx90a__) || defined(__gfx942__)`` / wave size 64 / ``#else`` / 32: gfx906 and
    gfx908 are wave64 too, and get 32.  A chain is read as a whole: the chips of every branch that
    sets the same size count together (``#elif defined(__gfx90a__)`` after a gfx942 branch), and
    chips none of them names are only a hazard when they reach a branch of the other size (an
    ``#else`` of 64 after complete wave64 lists is right for the wave64 chips it catches)."""
    if "__gfx" not in unit.code and not _tests_unknown_macros(unit):
        return
    groups: dict = {}
    for d in unit.pre.directives:
        if d.group >= 0:
            groups.setdefault(d.group, []).append(d)
    for branch in groups.values():
        chosen = []  # (directive, size, listed) of each branch that picks a size from a chip list
        fallback = None  # the size the #else sets
        for i, d in enumerate(branch[:-1]):
            if unit.pre.nvidia_only(d.line) or d.name not in ("if", "elif", "else"):
                continue
            first, last = d.end_line + 1, branch[i + 1].line - 1
            sizes = [size for size in (64, 32) if _defines_in(unit, first, last, size)
                     or _has_line(_wave_lines(unit, size), first, last)]
            if len(sizes) != 1:
                continue  # no wave size set in this branch (project headers stay unread), or both
            if d.name == "else":
                fallback = sizes[0]
                continue
            found = _arch_list(unit, d.arg, d.line)
            if found is not None and found[0] == sizes[0]:
                chosen.append((d, found[0], found[1]))
            elif found is None and d.name == "if":
                break  # a family test or a switch decides first: not a chip-list chain
        for size in (64, 32):
            mine = [(d, listed) for d, s, listed in chosen if s == size]
            if not mine:
                continue
            other = 96 - size
            if fallback != other:
                continue  # the chips no list names reach no branch of the other size
            covered = sorted({t for _, listed in mine for t in listed})
            missing = [t for t in WAVE_TARGETS[size] if t not in covered]
            if not missing:
                continue
            d = mine[-1][0]  # the last list of that size: where a reader would add the missing chips
            end = d.arg_start + len(unit.code[d.arg_start:d.end].rstrip())
            yield ROC605.hit(d.arg_start, end, ROC605.message(
                "arch_list", size=size, other=other, listed=", ".join(covered), missing=", ".join(missing),
                verb="run" if len(missing) > 1 else "runs", get="get" if len(missing) > 1 else "gets",
                family="__GFX9__" if size == 64 else "__GFX10__ || __GFX11__ || __GFX12__"))


# -- ROC604 ------------------------------------------------------------------------------------
_WAVEFRONT_MACRO = LazyPattern(r"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b")
_ARRAY_BOUND = LazyPattern(r"\b([A-Za-z_]\w*)\s+[A-Za-z_]\w*\s*(?:\[[^\]\[;]*\]\s*)*\[[^\]\[;]*\bwarpSize\b[^\]\[;]*\]")
_NOT_TYPES = {"return", "case", "else", "do", "goto", "throw", "delete", "new", "sizeof", "co_return", "co_yield"}
_CONSTANT_CONTEXTS = (
    (re.compile(r"\bconstexpr\b[^;{}]*?\bwarpSize\b"), "in a `constexpr`"),
    (re.compile(r"\bstatic_assert\s*\([^;]*?\bwarpSize\b"), "in a `static_assert`"),
    (re.compile(r"\b[A-Za-z_]\w*<\s*(?:[^<>;(){}]*,\s*)?warpSize\s*[,>]"), "as a template argument"),
    (re.compile(r"\btemplate\s*<[^<>;{}()]*?=\s*warpSize\b"), "as a template default"),
    (re.compile(r"\bcase\s+warpSize\s*:"), "as a case label"),
)


# The project's own `warpSize` (flashinfer's `constexpr unsigned warpSize = 32;` in a namespace, a
# `#define warpSize 32`): name lookup finds it, not HIP's run-time variable.
_OWN_WARP_SIZE = LazyPattern(r"(?:\b(?:constexpr|const)\b[^;{}()=]{0,80}?\bwarpSize\s*=|#\s*define\s+warpSize\b)")


@ROC604.source_checker()
def find_compile_time_warp_size(unit: CppUnit) -> Iterator[Hit]:
    code = unit.code
    seen: Set[int] = set()

    def hit(start: int, end: int, what: str) -> Optional[Hit]:
        """The finding at the first ``warpSize`` in start..end, once per place."""
        at = code.find("warpSize", start, end)
        at = start if at == -1 else at
        if at in seen:
            return None
        seen.add(at)
        return ROC604.hit(at, at + len("warpSize") if code.startswith("warpSize", at) else end,
                          ROC604.message("constant", what=what))

    for m in (_WAVEFRONT_MACRO.finditer(code) if "__AMDGCN_WAVEFRONT_SIZE" in code else ()):
        yield ROC604.hit(m.start(), m.end(), ROC604.message("macro", macro=m.group(0)))
    if "warpSize" not in code or _OWN_WARP_SIZE.search(code):
        return  # (a file that declares its own `warpSize` constant reads that one, not HIP's)
    for d in unit.pre.directives:
        if d.name in ("if", "elif") and re.search(r"\bwarpSize\b", d.arg):
            h = hit(d.arg_start, d.end, "in `#if` (the preprocessor cannot see it: it reads as 0)")
            if h:
                yield h
    for m in _ARRAY_BOUND.finditer(code):
        if m.group(1) in _NOT_TYPES:
            continue
        h = hit(m.start(), m.end(), "as an array bound")
        if h:
            yield h
    for pattern, what in _CONSTANT_CONTEXTS:
        for m in pattern.finditer(code):
            h = hit(m.start(), m.end(), what)
            if h:
                yield h
