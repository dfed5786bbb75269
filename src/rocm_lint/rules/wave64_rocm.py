"""ROC605: wave size 64 hard-coded on the ROCm side (RDNA GPUs run wave32), and wave sizes chosen
from an incomplete list of GPU targets (``#if defined(__gfx90a__) || defined(__gfx942__)``)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Iterator, List, Optional, Set, Tuple

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule
from rocm_lint.rules.warp import IDENTS
from rocm_lint.rules.warp_size import wave_hits

if TYPE_CHECKING:
    import re

    from rocm_lint.cpp.scanner import CppUnit

ROC605 = Rule(
    "ROC605",
    "wave64-hard-coded-rocm",
    "wave size 64 hard-coded on the ROCm side (RDNA GPUs run wave32), or a wave size chosen from an incomplete "
    "list of GPU targets",
    triggers=("64", "63", ">> 6", ">>6", "32", "0x3f", "0x3F"),
    languages=CPP_LANGUAGES,
    messages={
        "default": "wave size 64 hard-coded on the ROCm side ({what}): right on CDNA (MI200/MI300), "
        "wrong on RDNA GPUs (gfx10/11/12), which HIP compiles for wave32; use `warpSize` at run "
        "time, or test the arch (`__GFX9__`) before assuming 64",
        "arch_list": "wave size {size} chosen from an incomplete list of wave{size} GPUs ({listed}): "
        "{missing} {verb} wave{size} too but {get} the other branch's {other}; test the family "
        "(`{family}`) instead of listing chips, or read `warpSize` at run time",
    },
)


@ROC605.source_checker()
def find_wave64_on_rocm_side(unit: CppUnit) -> Iterator[Hit]:
    if not any(r.cuda is False and r.rocm is not False for r in unit.pre.regions):
        return  # no ROCm-only code in this file
    seen: Set[int] = set()
    for start, end, what in wave_hits(unit, 64):
        line = unit.line_of(start)
        region = unit.pre.status(line)
        if not unit.pre.rocm_only(line) or region.wave == 64 or start in seen:
            continue
        seen.add(start)
        yield ROC605.hit(start, end, ROC605.message(what=what))


# The wave64 and wave32 targets a ROCm build compiles for (PyTorch's default ROCm arch list and the
# Instinct line): GCN5/CDNA (gfx9) run wave64, RDNA (gfx10-12) wave32.  A branch that picks the wave
# size from a list of chips must name them all, or test the family (__GFX9__).
WAVE_TARGETS = {
    64: ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950"),
    32: ("gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"),
}
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
    for name in IDENTS.findall(expanded):
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
        cached = unit.memo[f"wave_lines_{size}"] = sorted({unit.line_of(h[0]) for h in wave_hits(unit, size)})
    return cached  # type: ignore[return-value]


def _tests_unknown_macros(unit: CppUnit) -> bool:
    """Does an ``#if``/``#elif`` test a name the file neither defines nor knows as a ROCm macro
    (one a project header may define as a list of chips, like ``IS_CDNA``)?"""
    for d in unit.pre.directives:
        if d.name in ("if", "elif"):
            for name in IDENTS.findall(d.arg):
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
            sizes = [
                size
                for size in (64, 32)
                if _defines_in(unit, first, last, size) or _has_line(_wave_lines(unit, size), first, last)
            ]
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
            end = d.arg_start + len(unit.code[d.arg_start : d.end].rstrip())
            yield ROC605.hit(
                d.arg_start,
                end,
                ROC605.message(
                    "arch_list",
                    size=size,
                    other=other,
                    listed=", ".join(covered),
                    missing=", ".join(missing),
                    verb="run" if len(missing) > 1 else "runs",
                    get="get" if len(missing) > 1 else "gets",
                    family="__GFX9__" if size == 64 else "__GFX10__ || __GFX11__ || __GFX12__",
                ),
            )
