"""ROC602: a 32-bit full mask (``0xffffffff``, ``~0u``, ``FULL_MASK``) passed to a ``*_sync`` warp
function, and its unsafe fix (a ROCm twin with the 64-bit all-lanes mask)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, FixAvailability, Hit, Rule
from rocm_lint.rules.warp import IDENTS

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

ROC602 = Rule(
    "ROC602",
    "full-mask-32-bit",
    "32-bit full mask (0xffffffff, ~0u, FULL_MASK) passed to a *_sync warp function: HIP wants a "
    "64-bit mask (compile error) and 32 bits cover half a wavefront",
    triggers=("_sync",),
    fix=Applicability.UNSAFE,
    fix_availability=FixAvailability.SOMETIMES,
    languages=CPP_LANGUAGES,
    messages={
        "default": "32-bit full mask `{mask}` passed to `{call}`: HIP's *_sync functions take a 64-bit "
        "mask (a 32-bit one fails to compile) and 0xffffffff names only lanes 0-31 of a 64-wide "
        "wavefront; use a 64-bit all-lanes mask on ROCm (`0xffffffffffffffffull`, "
        "`__activemask()`)"
    },
)

FULL32 = 0xFFFFFFFF

_SYNC_MASK_CALL = LazyPattern(
    r"__(?:shfl(?:_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|uni_sync|syncwarp"
    r"|match_(?:any|all)_sync|reduce_\w+_sync)\b"
)


def _full32(unit: CppUnit, text: str, at: int) -> Optional[str]:
    """How ``text`` (a mask argument) is a 32-bit full mask on ROCm, or None."""
    from rocm_lint.cpp.values import literal_value

    expanded = unit.expand(text, at)
    value = literal_value(expanded)
    if value is None and IDENTS.search(expanded):  # `(U32)-1`: the project's type names
        value = literal_value(expanded, unit.project.int_aliases)
    if value == FULL32:
        return text.strip() if expanded == text.strip() else f"{text.strip()} ({expanded})"
    return None


@ROC602.source_checker()
def find_32_bit_full_masks(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.gates import gate_edits
    from rocm_lint.cpp.facts import mask_free_sync_macros
    from rocm_lint.cpp.scanner import calls

    if "_sync" not in unit.code and "__syncwarp" not in unit.code:
        return
    mask_free = None
    found: List[Tuple[int, int, str, Optional[Tuple[int, int]], str]] = []
    for m, paren in calls(unit, _SYNC_MASK_CALL):
        args = unit.args(paren)
        if not args or args[0][0] >= args[0][1]:
            continue
        if mask_free is None:  # the project's HIP vendor header drops the mask (ggml's vendors/hip.h)
            mask_free = set(unit.project.mask_free_sync) | set(mask_free_sync_macros(unit.pre))
        if m.group(0) in mask_free:
            continue
        a, b = args[0]
        what = _full32(unit, unit.code[a:b], a)
        # a mask macro whose ROCm value its author defined under a ROCm-only branch: explicitly handled
        if what is None or unit.defined_for_rocm(unit.code[a:b].strip(), a):
            continue
        text = unit.code[a:b].strip()
        span = _literal_statement(unit, text, a, b)
        found.append((a, b, ROC602.message(mask=what, call=m.group(0)), span, text))
    # Statements on adjacent lines (three shuffles in a row) share one twin block: one `#ifdef`,
    # one `#else`, one `#line`, instead of a block each.
    groups: List[List[Any]] = []  # [first line, last line, indices into found]
    for i, (a, b, _, span, _) in enumerate(found):
        if span is None:
            continue
        if groups and groups[-1][0] <= span[0] <= groups[-1][1] + 1:
            groups[-1][1] = max(groups[-1][1], span[1])
            groups[-1][2].append(i)
        else:
            groups.append([span[0], span[1], [i]])
    shared: dict = {}
    for first, last, members in groups:
        start = unit.line_span(first)[0]
        rocm = unit.text[start : unit.line_span(last)[1]]
        for i in sorted(members, key=lambda i: -found[i][0]):
            a, b = found[i][0], found[i][1]
            rocm = rocm[: a - start] + FULL64 + rocm[b - start :]
        edits = gate_edits(unit, first, last, rocm)
        for i in members:
            shared[i] = edits
    for i, (a, b, message, span, text) in enumerate(found):
        edits = shared[i] if span is not None else _full_mask_fix(unit, text, a, b)
        yield ROC602.hit(
            a,
            b,
            message,
            edits=edits,
            fix_message="use the 64-bit all-lanes mask on ROCm",
            no_fix="no ROCm twin can be written here: the mask is neither a literal in the call "
            "nor a `#define` of one this fix rewrites, or the statement holding it cannot "
            "be copied whole",
        )


def _literal_statement(unit: CppUnit, text: str, a: int, b: int) -> Optional[Tuple[int, int]]:
    """(first, last) lines of the statement holding a literal full mask at ``a..b``, when the
    statement can be twinned whole; None for anything else (a macro name: ``_full_mask_fix``)."""
    from rocm_lint.cpp.gates import whole_statement_lines
    from rocm_lint.cpp.values import literal_value

    if literal_value(text) != FULL32:
        return None
    stmt = unit.statement_start(a)
    semi = unit.code.find(";", b)
    if semi == -1:
        return None
    lead = len(unit.code[stmt:a]) - len(unit.code[stmt:a].lstrip())
    return whole_statement_lines(unit, stmt + lead, semi + 1)


FULL64 = "0xffffffffffffffffull"


def _full_mask_fix(unit: CppUnit, text: str, a: int, b: int) -> Tuple[Tuple[int, int, str], ...]:
    """The unsafe fix: a ROCm twin of the statement with a 64-bit mask (a literal argument),
    or of the ``#define`` that names the 32-bit mask (every use of the macro changes on ROCm:
    unsafe when it also serves as a plain number)."""
    from rocm_lint.cpp.gates import gate_edits, whole_statement_lines
    from rocm_lint.cpp.values import literal_value

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
        original = unit.text[start : unit.line_span(lines[1])[1]]
        return gate_edits(unit, lines[0], lines[1], original[: a - start] + FULL64 + original[b - start :])
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
    return gate_edits(unit, d.line, d.line, line[:rel] + FULL64 + line[rel + len(d.body) :])
