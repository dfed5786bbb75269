"""ROC604: ``warpSize`` or ``__AMDGCN_WAVEFRONT_SIZE`` used as a compile-time constant (not one in
ROCm 7; the macro is deprecated)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, Optional, Set

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

ROC604 = Rule(
    "ROC604",
    "warp-size-compile-time",
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


_WAVEFRONT_MACRO = LazyPattern(r"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b")
_ARRAY_BOUND = LazyPattern(
    r"\b([A-Za-z_]\w*)\s+[A-Za-z_]\w*\s*(?:\[[^\]\[;]*\]\s*)*\[[^\]\[;]*\bwarpSize\b[^\]\[;]*\]"
)
_NOT_TYPES = {
    "return",
    "case",
    "else",
    "do",
    "goto",
    "throw",
    "delete",
    "new",
    "sizeof",
    "co_return",
    "co_yield",
}
_CONSTANT_CONTEXTS = (
    (re.compile(r"\bconstexpr\b[^;{}]*?\bwarpSize\b"), "in a `constexpr`"),
    (re.compile(r"\bstatic_assert\s*\([^;]*?\bwarpSize\b"), "in a `static_assert`"),
    (re.compile(r"\b[A-Za-z_]\w*<\s*(?:[^<>;(){}]*,\s*)?warpSize\s*[,>]"), "as a template argument"),
    (re.compile(r"\btemplate\s*<[^<>;{}()]*?=\s*warpSize\b"), "as a template default"),
    (re.compile(r"\bcase\s+warpSize\s*:"), "as a case label"),
)


# The project's own `warpSize` (flashinfer's `constexpr unsigned warpSize = 32;` in a namespace, a
# `#define warpSize 32`): name lookup finds it, not HIP's run-time variable.
_OWN_WARP_SIZE = LazyPattern(
    r"(?:\b(?:constexpr|const)\b[^;{}()=]{0,80}?\bwarpSize\s*=|#\s*define\s+warpSize\b)"
)


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
        return ROC604.hit(
            at,
            at + len("warpSize") if code.startswith("warpSize", at) else end,
            ROC604.message("constant", what=what),
        )

    for m in _WAVEFRONT_MACRO.finditer(code) if "__AMDGCN_WAVEFRONT_SIZE" in code else ():
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
