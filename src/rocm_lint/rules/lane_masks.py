"""ROC601: a ballot (``__ballot_sync``, ``__activemask``, a project wrapper) kept in 32 bits, and
its unsafe fix (a 64-bit declaration and the ``ll`` bit counts on ROCm)."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, cast

from rocm_lint.finding import Applicability
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, FixAvailability, Hit, Rule
from rocm_lint.rules.warp import IDENTS, defined_at, names_pattern

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

ROC601 = Rule(
    "ROC601",
    "lane-mask-32-bit",
    "ballot/activemask result kept in 32 bits (32-bit variable, __popc/__ffs/__clz/__brev, 1 << lane): "
    "lanes 32-63 of a 64-wide wavefront are dropped",
    # __popc & co: a ballot may come from a project wrapper the file only calls
    triggers=("__ballot", "__activemask", "__popc", "__ffs", "__clz", "__brev"),
    fix=Applicability.UNSAFE,
    fix_availability=FixAvailability.SOMETIMES,
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

_BALLOT = LazyPattern(r"__(?:ballot_sync|ballot|activemask)\b")
_TYPE32 = r"(?:unsigned\s+int|unsigned(?!\s+(?:long|char|short))|(?<!long\s)int|uint32_t|int32_t|uint|u32)"


@lru_cache(maxsize=64)
def _type32_patterns(
    aliases: FrozenSet[str],
) -> Tuple["re.Pattern[str]", "re.Pattern[str]", "re.Pattern[str]", str]:
    """(a ballot's 32-bit declaration head, a 32-bit type ahead, a 32-bit type here, the type
    regex) for the built-in 32-bit types and the project's 32-bit aliases (``typedef uint32_t U32;``,
    ``using lane_t = unsigned;``: ``unit.project.int_aliases``)."""
    type32 = _TYPE32
    if aliases:
        type32 = (
            "(?:"
            + "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
            + r"\b|"
            + _TYPE32
            + ")"
        )
    decl = re.compile(
        r"^\s*(?:(?:const|static|register|volatile)\s+)*(" + type32 + r")\s+([A-Za-z_]\w*)\s*=\s*"
        r"(?:\(\s*" + type32 + r"\s*\)\s*|static_cast\s*<\s*" + type32 + r"\s*>\s*\(\s*)?$"
    )
    return decl, re.compile(r"(?=\b(?:" + type32 + r")\s+)"), re.compile(r"\b(?:" + type32 + r")\s+"), type32


def _types32(unit: CppUnit):
    """``_type32_patterns`` for this file's project (its 32-bit aliases)."""
    return _type32_patterns(unit.project.aliases_of(32))


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
    for at, end in spans[bisect_left(spans, (lo,)) :]:
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
    cached = cast(Optional[Dict[str, List[Tuple[int, int]]]], unit.memo.get("declared_32"))
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
    from rocm_lint.cpp.scanner import calls

    cached = cast(Optional[List[Tuple[int, int, int, str]]], unit.memo.get("ballot_calls"))
    if cached is None:
        found = [(m.start(), m.end(), paren, m.group(0)) for m, paren in calls(unit, _BALLOT)]
        wrappers = unit.project.ballot_wrappers
        if wrappers:
            for m, paren in calls(unit, names_pattern(frozenset(wrappers))):
                if not _is_definition(unit, m.start()):
                    found.append((m.start(), m.end(), paren, m.group(0)))
            found.sort()
        cached = unit.memo["ballot_calls"] = found
    return cached


_RETURN_TYPES = frozenset(
    {"void", "int", "bool", "unsigned", "long", "float", "double", "auto", "T", "signed", "short", "char"}
)


def _is_definition(unit: CppUnit, start: int) -> bool:
    """Is ``name(`` at ``start`` a function's definition or declaration (a return type right
    before the name: ``unsigned long long``, ``uint64_t``, ``lane_mask_t``, ``T``) or a
    ``#define``, not a call?"""
    code = unit.code
    head = code[max(unit.statement_start(start), start - 200) : start]
    if head.lstrip().startswith("#"):
        return True
    i = len(head.rstrip(" \t\r\n*&"))
    j = i
    while j > 0 and (head[j - 1].isalnum() or head[j - 1] == "_"):
        j -= 1
    word = head[j:i]
    return (
        word in _RETURN_TYPES or (word.endswith("_t") and len(word) > 2) or word in unit.project.int_aliases
    )


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
    if (
        "__ballot" not in code
        and "__activemask" not in code
        and not (_NARROW_WORDS.search(code) and unit.project.ballot_wrappers)
    ):
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
                message = ROC601.message(
                    "count_of_wrapper",
                    call=call,
                    wrapper=name,
                    wide=_wide(call),
                    where=defined_at(unit, wrappers[name]),
                )
            else:
                message = ROC601.message("count_of_ballot", call=call, wide=_wide(call))
            reported.add(narrow.start())
            yield ROC601.hit(
                narrow.start(),
                close,
                message,
                no_fix="a bit count taken straight of a ballot call is not rewritten (the fix "
                "widens a ballot variable's declaration and its uses)",
            )
        if re.match(r"\s*&\s*(?:\(\s*)?1[uU]?\s*<<", code[close : close + 40]):
            yield ROC601.hit(start, close, ROC601.message("ballot_shift"), no_fix=_NO_SHIFT_FIX)
    _, shifts_of = _mask_uses(unit)
    counts_of = _narrow_calls(unit)
    for name, at, stmt, end, is32, decl in _ballot_variables(unit):
        scope_end = unit.block_end(end)
        shifts = _within(shifts_of.get(name, ()), end, scope_end)
        uses = []
        mine = counts_of.get(name, ())
        for n in mine[bisect_left(mine, (end,)) :]:
            if n[0] >= scope_end:
                break
            if n[0] not in reported:
                uses.append(n)
        if is32:
            plain = [(u[0], u[1], u[2]) for u in uses if u[3] == name]
            fix = (
                _fix_declaration(unit, name, stmt, end, decl, plain, shifts)
                if decl and len(plain) == len(uses)
                else ()
            )
            yield ROC601.hit(
                at if decl is None else stmt + decl.start(1),
                end,
                ROC601.message("variable_32", name=name),
                edits=fix,
                fix_message="keep the ballot in 64 bits on ROCm (`unsigned long long`, `__popcll`/`__ffsll`)",
                no_fix="a 64-bit twin is written only for a plain declaration whose every "
                "bit-count use takes the variable alone and has a same-meaning 64-bit "
                "form, with no `1 << lane` test to rewrite; one of those does not hold here",
            )
        for u in uses:
            reported.add(u[0])
            if u[3] == name:
                message = ROC601.message("count_of_variable", call=u[2], name=name, wide=_wide(u[2]))
            else:
                message = ROC601.message(
                    "count_of_expression", call=u[2], expr=" ".join(u[3].split()), name=name, wide=_wide(u[2])
                )
            yield ROC601.hit(
                u[0],
                u[1],
                message,
                no_fix=f"this use changes with the declaration of `{name}` (its ROC601 finding "
                "carries the fix, where one can be made)",
            )
        for sh in shifts:
            yield ROC601.hit(sh[0], sh[1], ROC601.message("variable_shift", name=name), no_fix=_NO_SHIFT_FIX)


_NO_SHIFT_FIX = "a `1 << lane` test of a 64-bit ballot needs a 64-bit shift (`1ull << lane`), written by hand"


_NARROW_WORDS = LazyPattern(r"__(?:popc|ffs|clz|brev)\b")
_NARROW_AT = LazyPattern(r"(__popc|__ffs|__clz|__brev)\s*\(")


def _narrow_calls(unit: CppUnit) -> Dict[str, List[Tuple[int, int, str, str]]]:
    """{name: [(start, end, call, argument text)]} of every 32-bit bit count (``__popc(...)``,
    ``__ffs``, ``__clz``, ``__brev``) whose argument mentions ``name``, in file order: found once
    per file and looked up per ballot variable (a kernel with thousands of ballots stays linear)."""
    cached = cast(Optional[Dict[str, List[Tuple[int, int, str, str]]]], unit.memo.get("narrow_calls"))
    if cached is None:
        code = unit.code
        cached = {}
        for m in _NARROW_AT.finditer(code):
            if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
                continue
            paren = m.end() - 1
            end = unit.matching(paren)
            arg = code[paren + 1 : end - 1].strip()
            for name in set(IDENTS.findall(arg[:400])):
                cached.setdefault(name, []).append((m.start(), end, m.group(1), arg))
        unit.memo["narrow_calls"] = cached
    return cached


# A variable's 32-bit shift tests (``mask & (1 << lane)``,
# ``(1 << lane) & mask``), found once per file and looked up per variable: a kernel with
# thousands of ballots stays linear.  The shift test is matched at every offset (a lookahead)
# because its two forms can overlap: ``x & (1 << y) & mask``.
_SHIFT_TEST = LazyPattern(
    r"(?=(?P<all>\b(?P<a>[A-Za-z_]\w*)\s*&\s*\(?\s*1[uU]?\s*<<"
    r"|\(\s*1[uU]?\s*<<\s*\w+\s*\)\s*&\s*(?P<b>[A-Za-z_]\w*)\b))"
)


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
    for span in spans[bisect_left(spans, (start,)) :]:
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
    from rocm_lint.cpp.gates import gate_edits, whole_statement_lines

    if shifts or any(u[2] not in _SAME_MEANING_64 for u in uses):
        return ()
    code = unit.code
    semi = code.find(";", end)
    if semi == -1:
        return ()
    lines = whole_statement_lines(unit, stmt + len(decl.group(0)) - len(decl.group(0).lstrip()), semi + 1)
    if lines is None:
        return ()
    edits: List[Tuple[int, int, str]] = []
    a, b = unit.line_span(lines[0])
    b = unit.line_span(lines[1])[1]
    original = unit.text[a:b]
    type_at = stmt + decl.start(1) - a
    rocm = original[:type_at] + "unsigned long long" + original[type_at + len(decl.group(1)) :]
    type32 = _types32(unit)[3]
    rocm = re.sub(
        r"\(\s*" + type32 + r"\s*\)|static_cast\s*<\s*" + type32 + r"\s*>",
        lambda m: "(unsigned long long)" if m.group(0).startswith("(") else "static_cast<unsigned long long>",
        rocm,
        count=1,
    )
    edit = gate_edits(unit, lines[0], lines[1], rocm)
    if not edit:
        return ()
    edits.extend(edit)
    for u in uses:
        u_start = u[0]
        u_stmt = unit.statement_start(u_start)
        u_semi = code.find(";", u_start)
        if u_semi == -1:
            return ()
        span = whole_statement_lines(
            unit, u_stmt + len(code[u_stmt:u_start]) - len(code[u_stmt:u_start].lstrip()), u_semi + 1
        )
        if span is None:
            return ()
        ua, ub = unit.line_span(span[0])[0], unit.line_span(span[1])[1]
        text = unit.text[ua:ub]
        rel = u_start - ua
        call = u[2]
        new = text[:rel] + _SAME_MEANING_64[call] + text[rel + len(call) :]
        edit = gate_edits(unit, span[0], span[1], new)
        if not edit:
            return ()
        edits.extend(edit)
    edits = sorted(set(edits))  # (the same `#line` after an enclosing `#endif`, once)
    starts = [e[0] for e in edits]
    if len(set(starts)) != len(starts):
        return ()
    return tuple(edits)
