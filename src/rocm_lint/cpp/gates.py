"""What the fixes write into a C++ file: the ROCm gate macro and the way the file tests it
(``rocm_gate_macro``, ``gate_style``, ``rocm_condition``, ``rocm_if``), a ``#ifdef`` block that keeps
NVIDIA line numbers (``gate_lines``, ``nvidia_line``) and the lines a statement holds alone."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, cast

from rocm_lint.cpp.conditions import parse_condition
from rocm_lint.cpp.nvidia_view import macro_tests

if TYPE_CHECKING:
    from rocm_lint.cpp.preproc import Directive
    from rocm_lint.cpp.scanner import CppUnit


_GATE_PREFERENCE = ("USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__")


def build_rocm_macros(ws, path: str) -> Tuple[str, ...]:
    """The macros the project's build defines for ``path`` on ROCm and never on NVIDIA
    (``rocm_lint.build.context.macro_facts``: ``add_compile_definitions(CT2_USE_HIP)`` in the
    branch only the ROCm build takes), sorted; () where the build says nothing definite."""
    from rocm_lint.build.context import macro_facts

    out = []
    for name, nvidia, rocm in macro_facts(ws, path):
        value = rocm[1]
        zero = value is not None and getattr(value, "kind", None) == "num" and not value.value
        if nvidia[0] is False and rocm[0] is True and not zero:
            out.append(name)
    return tuple(sorted(out))


def rocm_gate_macro(unit: CppUnit) -> str:
    """The macro a fix tests: a macro the project's build defines on ROCm only (the one the
    file tests, else the first), else the ROCm macro the file already tests (PyTorch's
    USE_ROCM first), else the first configured one, else USE_ROCM (torch extensions, where
    ``cpp_extension`` defines it, and wherever nothing is known)."""
    cached = unit.memo.get("gate_macro")
    if cached is None:
        used = {
            n
            for d in unit.pre.directives
            if d.condition is not None
            for n in re.findall(r"[A-Za-z_]\w*", d.arg)
        }
        built = build_rocm_macros(unit.workspace, unit.path)
        cached = (
            next((m for m in built if m in used), None)
            or (built[0] if built else None)
            or next((m for m in _GATE_PREFERENCE if m in used), None)
            or next((m for m in unit.config.rocm_macros if m in used), None)
            or (unit.config.rocm_macros[0] if unit.config.rocm_macros else "USE_ROCM")
        )
        unit.memo["gate_macro"] = cached
    return cached  # type: ignore[return-value]


def gate_style(unit: CppUnit) -> str:
    """How the file tests its gate macro (``rocm_gate_macro``): ``"defined"`` (``#ifdef USE_ROCM``,
    ``defined(USE_ROCM)``, or not at all), ``"value"`` (``#if USE_ROCM``: a build may pass
    ``-DUSE_ROCM=0``) or ``"both"``.  A fix tests the macro the same way, so that it is right
    under every define the file itself is built with."""
    cached = unit.memo.get("gate_style")
    if cached is None:
        macro = rocm_gate_macro(unit)
        by_value = by_defined = False
        for d in unit.pre.directives:
            if d.name in ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef"):
                if macro not in d.arg:
                    continue
                if d.condition is None:
                    by_value = True  # unparsable: assume the worst
                for name, value in macro_tests(d.condition):
                    if name == macro:
                        by_value, by_defined = by_value or value, by_defined or not value
            elif d.name == "define" and macro in d.arg:
                # `#define IS_HIP USE_ROCM` reads it by value, `#define IS_HIP defined(USE_ROCM)` not
                body = re.sub(r"^\s*[A-Za-z_]\w*(?:\([^)]*\))?", "", d.arg)
                node = parse_condition(body) if body.strip() else None
                if node is None:
                    by_value = by_value or bool(re.search(r"\b" + re.escape(macro) + r"\b", body))
                else:
                    for name, value in macro_tests(node):
                        if name == macro:
                            by_value, by_defined = by_value or value, by_defined or not value
        cached = "both" if by_value and by_defined else "value" if by_value else "defined"
        unit.memo["gate_style"] = cached
    return cached  # type: ignore[return-value]


def rocm_condition(unit: CppUnit, negate: bool = False) -> str:
    """The ``#if`` expression that is true on ROCm only (false on NVIDIA with the macro undefined
    and, where the file reads it by value, defined to 0), in the file's own style."""
    macro = rocm_gate_macro(unit)
    style = gate_style(unit)
    if style == "defined":
        return f"!defined({macro})" if negate else f"defined({macro})"
    if style == "value":
        return f"!{macro}" if negate else macro
    return f"!(defined({macro}) && {macro})" if negate else f"(defined({macro}) && {macro})"


def rocm_if(unit: CppUnit) -> str:
    """The directive that opens a ROCm-only block: ``#ifdef USE_ROCM``, ``#if USE_ROCM`` or
    ``#if defined(USE_ROCM) && USE_ROCM`` (see ``gate_style``)."""
    style = gate_style(unit)
    if style == "defined":
        return f"#ifdef {rocm_gate_macro(unit)}"
    macro = rocm_gate_macro(unit)
    return f"#if {macro}" if style == "value" else f"#if defined({macro}) && {macro}"


def newline_of(unit: CppUnit) -> str:
    return "\r\n" if "\r\n" in unit.text[:4096] else "\n"


def nvidia_line(unit: CppUnit, line: int) -> Optional[int]:
    """The line number ``__LINE__`` gives physical ``line`` in the NVIDIA build (a ``#line N``
    directive earlier in the file, compiled there, renumbers; an earlier fix wrote one), or
    None where that depends on macros we cannot see."""
    marks = unit.memo.get("line_marks")
    if marks is None:
        ends: List[int] = []
        numbers: List[Optional[int]] = []
        for d in unit.pre.directives:
            if d.name == "line":
                number = re.fullmatch(r"\s*(\d+)\s*", d.arg)
                cuda = unit.pre.status(d.line).cuda
                if cuda is not False:
                    ends.append(d.end_line)
                    numbers.append(int(number.group(1)) if number and cuda else None)
        marks = unit.memo["line_marks"] = (ends, numbers)
    ends, numbers = marks  # type: ignore[misc]
    i = bisect_left(ends, line) - 1
    if i < 0:
        return line
    return None if numbers[i] is None else numbers[i] + line - ends[i] - 1


def gate_lines(unit: CppUnit, first: int, last: int, rocm_text: str) -> Optional[Tuple[int, int, str]]:
    """An edit that gives lines ``first..last`` a ROCm version: ``#ifdef MACRO`` (in the file's
    style, ``gate_style``) + ``rocm_text`` + ``#else`` + the original lines + ``#endif``.  ``#line``
    directives keep every NVIDIA line at its number (``__LINE__`` in CUDA_CHECK messages), the
    original lines and the ones after the block.  On lines only compiled for ROCm the text is
    replaced in place.  ``rocm_text`` has no final newline.  None when the NVIDIA line numbers
    cannot be known here."""
    start, _ = unit.line_span(first)
    _, end = unit.line_span(last)
    original = unit.text[start:end]
    if unit.pre.rocm_branch(first):
        return start, end, rocm_text
    at = nvidia_line(unit, first)
    if at is None:
        return None
    nl = newline_of(unit)
    after = at + last - first + 1
    if not rocm_text:  # nothing in its place on ROCm: the lines are NVIDIA's only
        return (
            start,
            end,
            f"#if {rocm_condition(unit, negate=True)}{nl}#line {at}{nl}{original}{nl}#endif{nl}#line {after}",
        )
    return (
        start,
        end,
        (f"{rocm_if(unit)}{nl}{rocm_text}{nl}#else{nl}#line {at}{nl}{original}{nl}#endif{nl}#line {after}"),
    )


def enclosing_groups(unit: CppUnit, first: int, last: int) -> List[List[Directive]]:
    """The conditionals that enclose lines ``first..last`` (outermost first), each as its
    directives in order (``#if``, ``#elif``/``#else``, ``#endif``)."""
    groups = cast("Optional[Dict[int, List[Directive]]]", unit.memo.get("conditional_groups"))
    if groups is None:  # once per file: a file with many fixes asks for each
        groups = {}
        for d in unit.pre.directives:
            if d.name in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"):
                groups.setdefault(d.group, []).append(d)
        unit.memo["conditional_groups"] = groups
    # The groups open after each directive, in line order (a stack: conditionals nest), so a
    # file with many fixes asks a bisect and its nesting depth, not every group, per fix.
    stacks = cast("Optional[Tuple[List[int], List[Tuple[int, ...]]]]", unit.memo.get("conditional_stacks"))
    if stacks is None:
        lines: List[int] = []
        opened: List[Tuple[int, ...]] = []
        stack: Tuple[int, ...] = ()
        for d in sorted((d for ms in groups.values() for d in ms), key=lambda d: d.line):
            if d.name in ("if", "ifdef", "ifndef"):
                stack = stack + (d.group,)
            elif d.name == "endif" and stack and stack[-1] == d.group:
                stack = stack[:-1]
            lines.append(d.line)
            opened.append(stack)
        stacks = (lines, opened)
        unit.memo["conditional_stacks"] = stacks
    at = bisect_left(stacks[0], first) - 1
    out = []
    for group in stacks[1][at] if at >= 0 else ():
        members = groups[group]
        opening, closing = members[0], members[-1]
        if closing.name == "endif" and opening.line < first and closing.line > last:
            out.append(members)
    out.sort(key=lambda m: m[0].line)
    return out


def line_restores(unit: CppUnit, first: int, last: int) -> Optional[List[Tuple[int, int, str]]]:
    """Insertions of ``#line N`` after every later ``#elif``/``#else`` and the ``#endif`` of each
    conditional that encloses ``first..last``: a block a fix writes there adds physical lines,
    and the ``#line`` that follows it runs only where that branch is compiled.  Every NVIDIA
    configuration reaches one of these (the next branch it takes, or the ``#endif``), so every
    later line keeps its number whichever branches are taken.  None when a number cannot be known."""
    nl = newline_of(unit)
    out = []
    for members in enclosing_groups(unit, first, last):
        for d in members:
            if d.line <= last or d.name not in ("elif", "elifdef", "elifndef", "else", "endif"):
                continue
            number = nvidia_line(unit, d.end_line + 1)
            if number is None:
                return None
            _, end = unit.line_span(d.end_line)
            out.append((end, end, f"{nl}#line {number}"))
    return out


def gate_edits(unit: CppUnit, first: int, last: int, rocm_text: str) -> Tuple[Tuple[int, int, str], ...]:
    """``gate_lines``'s edit with the ``line_restores`` it needs, or () where none can be made."""
    edit = gate_lines(unit, first, last, rocm_text)
    if edit is None:
        return ()
    if edit[2] == rocm_text:  # replaced in place (a ROCm branch): the line count is kept
        return (edit,)
    restores = line_restores(unit, first, last)
    if restores is None:
        return ()
    return (edit, *restores)


def whole_statement_lines(unit: CppUnit, start: int, end: int) -> Optional[Tuple[int, int]]:
    """(first, last) line of the statement spanning ``start..end`` when those lines hold
    nothing else (no other statement, not part of a directive), else None."""
    first, last = unit.line_of(start), unit.line_of(max(start, end - 1))
    a, _ = unit.line_span(first)
    _, b = unit.line_span(last)
    code = unit.code
    if code[a:start].strip() or code[end:b].strip():
        return None
    if any(
        code[unit.line_span(n)[0] : unit.line_span(n)[1]].lstrip().startswith("#")
        for n in range(first, last + 1)
    ):
        return None
    if any(code[unit.line_span(n)[1] - 1 : unit.line_span(n)[1]] == "\\" for n in range(first, last + 1)):
        return None  # inside a macro definition
    key = ("balanced", a, b)  # once per statement: a line of n masked shuffles asks n times
    balanced = unit.memo.get(key)
    if balanced is None:
        balanced = unit.memo[key] = _balanced(code, a, b)
    if not balanced:
        # a bracket left open (a comment that swallows a call's `, p);`) or closed from outside:
        # the "statement" runs into the next block, and gating its lines would cut a block apart
        return None
    return first, last


_BRACKETS = re.compile(r"[()\[\]{}]")
_OPENS = {")": "(", "]": "[", "}": "{"}


def _balanced(code: str, start: int, end: int) -> bool:
    """Does ``code[start:end]`` (comments and literals blanked) close every bracket it opens, and
    only those?"""
    stack: List[str] = []
    for m in _BRACKETS.finditer(code, start, end):
        c = m.group()
        if c in "([{":
            stack.append(c)
        elif not stack or stack.pop() != _OPENS[c]:
            return False
    return not stack
