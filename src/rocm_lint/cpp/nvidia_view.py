"""The NVIDIA translation unit of a C++ file, for checking fixes: a partial preprocessor that
folds the ROCm macros away (``nvidia_view``) and compares what the NVIDIA compiler would see
before and after a fix (``same_on_nvidia``), under each define the file reads by value
(``value_tested_macros``, ``nvidia_define_sets``)."""

from __future__ import annotations

import re
from itertools import combinations
from typing import FrozenSet, Iterable, Iterator, List, Optional, Tuple, Union

from rocm_lint.cpp.conditions import (
    ROCM_DEFINED,
    ROCM_SOMETIMES,
    Node,
    apply_binary,
    is_rocm_macro,
    parse_condition,
)
from rocm_lint.cpp.lexer import lex
from rocm_lint.cpp.preproc import CONDITIONALS, directive_spans


# -- the NVIDIA translation unit, for checking fixes ------------------------------------------------
def macro_tests(node: Optional[Node], under_defined: bool = False) -> Iterator[Tuple[str, bool]]:
    """(macro, tested by value?) for every macro ``node`` reads: ``USE_ROCM`` in ``#if USE_ROCM``
    is read by value, in ``defined(USE_ROCM)`` only for being defined.  Names inside a
    function-like macro's arguments count as read by value (the macro may compare them)."""
    if node is None:
        return
    if node.kind == "name":
        yield node.value, True
    elif node.kind == "defined":
        yield node.value, False
    elif node.kind == "call":
        for name in re.findall(r"[A-Za-z_]\w*", node.value)[1:]:
            if name != "defined":
                yield name, True
    else:
        for a in node.args:
            yield from macro_tests(a)


def value_tested_macros(text: str, rocm_macros: Iterable[str] = ()) -> FrozenSet[str]:
    """The ROCm macros ``text`` reads by value (``#if USE_ROCM``, ``#define IS_HIP USE_ROCM``):
    a build may define them to 0 (``-DUSE_ROCM=0``) and still be the NVIDIA build."""
    extra = frozenset(rocm_macros)
    if not any(name in text for name in ROCM_DEFINED | ROCM_SOMETIMES | extra) and "__gfx" not in text:
        return frozenset()
    code = lex(text).code
    out = set()
    for m, start, end in directive_spans(code):
        name = m.group(1) or ""
        if name not in ("if", "elif", "define"):
            continue
        arg = code[m.end() : end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        if name == "define":
            mm = re.match(r"\s*[A-Za-z_]\w*(?:\([^)]*\))?", arg)
            arg = arg[mm.end() :] if mm else ""
            if not arg.strip():
                continue
        node = parse_condition(arg)
        if node is None:  # unparsable: any ROCm name in it may be read by value
            out.update(n for n in re.findall(r"[A-Za-z_]\w*", arg) if is_rocm_macro(n, extra))
            continue
        out.update(n for n, by_value in macro_tests(node) if by_value and is_rocm_macro(n, extra))
    return frozenset(out)


def _fold(
    node: Optional[Node], rocm_extra: FrozenSet[str], zero: FrozenSet[str] = frozenset()
) -> Union[int, str, None]:
    """Partially evaluate ``node`` on NVIDIA: ROCm macros are undefined (0), those in ``zero``
    defined to 0, the rest stays symbolic.  Returns an int when the value is known, else a
    canonical string."""
    if node is None:
        return None
    k = node.kind
    if k == "num":
        return node.value
    if k == "name":
        return 0 if node.value in zero or is_rocm_macro(node.value, rocm_extra) else node.value
    if k == "defined":
        if node.value in zero:
            return 1
        return 0 if is_rocm_macro(node.value, rocm_extra) else f"defined({node.value})"
    if k == "call":
        return re.sub(r"\s+", "", node.value)
    if k == "unary":
        a = _fold(node.args[0], rocm_extra, zero)
        if isinstance(a, int):
            return {"!": int(not a), "~": ~a, "-": -a, "+": a}[node.value]
        return f"{node.value}{a}"
    if k == "binary":
        a, b = (_fold(x, rocm_extra, zero) for x in node.args)
        op = node.value
        if op in ("&&", "||"):
            absorbing, neutral = (0, 1) if op == "&&" else (1, 0)
            for x in (a, b):
                if isinstance(x, int) and bool(x) == bool(absorbing):
                    return absorbing
            if isinstance(a, int):
                return b if not isinstance(b, int) else int(bool(b))
            if isinstance(b, int):
                return a
            return f"({a}{op}{b})"
        if isinstance(a, int) and isinstance(b, int):
            v = apply_binary(op, a, b)
            if v is not None:
                return v
        return f"({a}{op}{b})"
    if k == "ternary":
        c, a, b = (_fold(x, rocm_extra, zero) for x in node.args)
        if isinstance(c, int):
            return a if c else b
        return f"({c}?{a}:{b})"
    return None


_SPACE = re.compile(r"\s+")
_LINE_DIRECTIVE = re.compile(r"(\d+)\s*$")  # `#line N` (a file name would change __FILE__: kept as code)


def _emit_code(out: List[str], segment: str, first: int, delta: int, lines: bool) -> None:
    """Append the code lines of ``segment`` (its first line is physical line ``first``) to
    ``out``: continuations joined, whitespace normalised, numbered with ``delta`` if ``lines``."""
    parts = segment.split("\n")
    at, logical = first, ""
    for n, raw in enumerate(parts):
        if raw.endswith("\\") or raw.endswith("\\\r"):
            if not logical:
                at = first + n
            logical += raw.rstrip("\r")[:-1] + " "
            continue
        if logical:
            raw, logical = logical + raw, ""
        else:
            at = first + n
        norm = _SPACE.sub(" ", raw).strip()
        if norm:
            out.append(f"{at + delta}:{norm}" if lines else norm)
    if logical.strip():
        norm = _SPACE.sub(" ", logical).strip()
        out.append(f"{at + delta}:{norm}" if lines else norm)


def _fold_directive(
    name: str, arg: str, rocm_extra: FrozenSet[str], zero_set: FrozenSet[str]
) -> Union[int, str, None]:
    """The condition of an ``#if``/``#elif``/``#ifdef``/``#ifndef`` (and ``elifdef``/``elifndef``),
    folded (``_fold``); an unparsable ``#if`` stays its text."""
    if name in ("if", "elif"):
        node = parse_condition(arg)
        return _fold(node, rocm_extra, zero_set) if node is not None else "?" + _SPACE.sub("", arg)
    word = re.match(r"\s*([A-Za-z_]\w*)", arg)
    node = Node("defined", word.group(1) if word else "")
    if name.endswith("ndef"):
        node = Node("unary", "!", (node,))
    return _fold(node, rocm_extra, zero_set)


def nvidia_view(
    text: str, rocm_macros: Iterable[str] = (), zero: Iterable[str] = (), lines: bool = False
) -> List[str]:
    """What the NVIDIA compiler sees: code lines outside ROCm-only branches, whitespace
    normalised, comments dropped, with every conditional folded (ROCm macros undefined, or
    defined to 0 for those in ``zero``; everything else symbolic).  Conditionals that fold to a
    constant disappear; ``#line N`` directives only renumber.  With ``lines``, each code line
    carries the line number ``__LINE__`` gives it (``"12:x = 1;"``)."""
    rocm_extra = frozenset(rocm_macros)
    zero_set = frozenset(zero)
    lexed = lex(text)
    code = lexed.code
    out: List[str] = []
    # frames: [live, decided, opened, parent_live]
    stack: List[List[bool]] = []
    live = True
    pos = 0
    line = 1  # the physical line at ``pos``
    delta = 0  # presumed line - physical line (``#line``)

    def emit_code(segment: str, first: int) -> None:
        if live:
            _emit_code(out, segment, first, delta, lines)

    for m, start, end in directive_spans(code):
        segment = code[pos:start]
        emit_code(segment, line)
        line += segment.count("\n")
        directive_lines = code.count("\n", start, end)
        pos = end
        name = m.group(1) or ""
        arg = code[m.end() : end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        if name not in CONDITIONALS:
            number = _LINE_DIRECTIVE.fullmatch(arg) if name == "line" else None
            if number is not None:
                if live:
                    delta = int(number.group(1)) - (line + directive_lines + 1)
            else:
                emit_code(code[start:end], line)
            line += directive_lines
            continue
        line += directive_lines
        if name in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"):
            folded = _fold_directive(name, arg, rocm_extra, zero_set)
        if name in ("if", "ifdef", "ifndef"):
            frame = [False, False, False, live]
            stack.append(frame)
            if not live:
                continue
            if isinstance(folded, int):
                frame[0] = bool(folded)
                frame[1] = bool(folded)
            else:
                out.append(f"#if {folded}")
                frame[0], frame[2] = True, True
            live = frame[0]
            continue
        if not stack:
            out.append(f"#{name} {_SPACE.sub(' ', arg)}")
            continue
        frame = stack[-1]
        if name == "endif":
            stack.pop()
            if frame[2] and frame[3]:
                out.append("#endif")
            live = frame[3]
            continue
        if not frame[3]:
            continue
        if frame[1]:
            frame[0] = False
        elif name == "else":
            if frame[2]:
                out.append("#else")
            frame[0] = frame[1] = True
        elif isinstance(folded, int):
            if folded:
                if frame[2]:
                    out.append("#else")
                frame[0] = frame[1] = True
            else:
                frame[0] = False
        else:
            out.append(f"#elif {folded}" if frame[2] else f"#if {folded}")
            frame[0], frame[2] = True, True
        live = frame[0]
    emit_code(code[pos:], line)
    return out


def nvidia_define_sets(old: str, new: str = "", rocm_macros: Iterable[str] = ()) -> List[FrozenSet[str]]:
    """The sets of ROCm macros an NVIDIA build of the file may define to 0: none, and where
    the file reads a macro by value (``#if USE_ROCM``), each combination of those (the first
    few; beyond them, each alone and all together)."""
    value = sorted(value_tested_macros(old, rocm_macros) | value_tested_macros(new, rocm_macros))
    if len(value) <= 3:
        return [frozenset(c) for k in range(len(value) + 1) for c in combinations(value, k)]
    return [frozenset()] + [frozenset([v]) for v in value] + [frozenset(value)]


def same_on_nvidia(old: str, new: str, rocm_macros: Iterable[str] = (), lines: bool = False) -> bool:
    """Is the NVIDIA translation unit of ``new`` that of ``old``, under every set of defines
    the file may be built with for NVIDIA (each ROCm macro undefined, or defined to 0 where
    the file reads it by value)?  With ``lines``, every code line must also keep its line
    number (``__LINE__``, the messages of CUDA_CHECK-style macros)."""
    extra = frozenset(rocm_macros)
    for zero in nvidia_define_sets(old, new, extra):
        if nvidia_view(old, extra, zero, lines) != nvidia_view(new, extra, zero, lines):
            return False
    return True
