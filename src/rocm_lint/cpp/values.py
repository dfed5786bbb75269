"""Integer values of C constant expressions as their own type holds them (``literal_value``:
``0xFFFFFFFFu``, ``~0u``, ``(uint64_t)-1`` ...), and the integer types masks are written in."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple


# values a cast between 32 and 64 bits changes (-1 and ~0 widen to 64 ones, 64 ones narrow to 32)
WIDTH_SENSITIVE = frozenset({0xFFFFFFFF, (1 << 64) - 1})
INT_TYPES = {  # (width, signed) of the integer types masks are written in (LP64: long is 64 bits)
    "int": (32, True),
    "signed": (32, True),
    "signed int": (32, True),
    "int32_t": (32, True),
    "unsigned": (32, False),
    "unsigned int": (32, False),
    "uint32_t": (32, False),
    "uint": (32, False),
    "u32": (32, False),
    "unsigned long": (64, False),
    "unsigned long int": (64, False),
    "unsigned long long": (64, False),
    "unsigned long long int": (64, False),
    "uint64_t": (64, False),
    "u64": (64, False),
    "size_t": (64, False),
    "long": (64, True),
    "long long": (64, True),
    "int64_t": (64, True),
}
_NAMED_VALUES = {
    "UINT32_MAX": (0xFFFFFFFF, 32, False),
    "UINT_MAX": (0xFFFFFFFF, 32, False),
    "UINT64_MAX": ((1 << 64) - 1, 64, False),
    "ULLONG_MAX": ((1 << 64) - 1, 64, False),
    "ULONG_MAX": ((1 << 64) - 1, 64, False),
}
_VALUE_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)|((?:std\s*::\s*)?[A-Za-z_]\w*)|(.))")


def literal_value(text: str, aliases: Optional[Dict[str, int]] = None) -> Optional[int]:
    """The value of a C integer constant expression as its own type holds it (unsigned, in
    that type's width): ``0xFFFFFFFFu``, ``~0u``, ``-1``, ``(unsigned)-1``, ``uint32_t(-1)``,
    ``static_cast<uint32_t>(-1)``, ``UINT32_MAX`` are all 0xffffffff; ``0xffffffffull`` too (a
    64-bit type, 32 bits set); ``(uint64_t)-1`` and ``~0ull`` are 64 ones.  ``aliases``: the
    project's integer type names and their widths (``(U32)-1``, ``U64(-1)``; read as unsigned).
    None for anything else."""
    toks: List[Tuple[str, str]] = []
    t = text.replace("'", "")
    if len(t) > 200:
        return None
    pos = 0
    while pos < len(t):
        m = _VALUE_TOKEN.match(t, pos)
        if m is None:
            if t[pos:].strip():
                return None
            break
        pos = m.end()
        if m.group(1):
            if pos < len(t) and (t[pos].isalnum() or t[pos] in "_."):
                return None  # 1.5f, 0x1p3, 12abc: not an integer constant
            toks.append(("num", m.group(1) + "|" + m.group(2)))
        elif m.group(3):
            toks.append(("name", re.sub(r"\s+", "", m.group(3)).replace("std::", "")))
        elif m.group(4):
            toks.append(("op", m.group(4)))
        if len(toks) > 40:
            return None
    result = _ValueParser(toks, aliases).parse()
    return None if result is None else result[0]


class _ValueParser:
    """``expr := '(' type ')' expr | type '(' expr ')' | static_cast '<' type '>' '(' expr ')'
    | ('~' | '-' | '+') expr | '(' expr ')' | number | UINT32_MAX ...`` with C's conversions:
    (value, width, signed), the value kept unsigned in its width."""

    def __init__(self, toks: List[Tuple[str, str]], aliases: Optional[Dict[str, int]] = None) -> None:
        self.toks, self.i = toks, 0
        self.aliases = aliases or {}

    def parse(self) -> Optional[Tuple[int, int, bool]]:
        v = self.expr(0)
        return v if v is not None and self.i == len(self.toks) else None

    def peek(self, k: int = 0) -> Tuple[str, str]:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else ("end", "")

    def take(self, kind: str, value: Optional[str] = None) -> bool:
        tok = self.peek()
        if tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return True
        return False

    def type_name(self) -> Optional[Tuple[int, bool]]:
        """A type of ``INT_TYPES`` spelled over several words (``unsigned long long``)."""
        words: List[str] = []
        j = self.i
        while self.peek(len(words))[0] == "name" and len(words) < 4:
            words.append(self.peek(len(words))[1])
        for n in range(len(words), 0, -1):
            spec = INT_TYPES.get(" ".join(words[:n]))
            if spec:
                self.i = j + n
                return spec
        if words and self.aliases.get(words[0]) in (32, 64):
            self.i = j + 1
            return self.aliases[words[0]], False
        return None

    def expr(self, depth: int) -> Optional[Tuple[int, int, bool]]:
        if depth > 12:
            return None
        kind, value = self.peek()
        if kind == "op" and value in "~-+":
            self.i += 1
            inner = self.expr(depth + 1)
            if inner is None:
                return None
            v, w, signed = inner
            mask = (1 << w) - 1
            v = (~v & mask) if value == "~" else ((-v) & mask) if value == "-" else v
            return v, w, signed
        if kind == "op" and value == "(":
            self.i += 1
            start = self.i
            spec = self.type_name()
            if spec is not None and self.take("op", ")"):
                inner = self.expr(depth + 1)
                return None if inner is None else _convert(inner, spec)
            self.i = start
            inner = self.expr(depth + 1)
            return inner if inner is not None and self.take("op", ")") else None
        if kind == "name" and value == "static_cast":
            self.i += 1
            if not self.take("op", "<"):
                return None
            spec = self.type_name()
            if spec is None or not self.take("op", ">") or not self.take("op", "("):
                return None
            inner = self.expr(depth + 1)
            return None if inner is None or not self.take("op", ")") else _convert(inner, spec)
        if kind == "name" and value in _NAMED_VALUES:
            self.i += 1
            return _NAMED_VALUES[value]
        if kind == "name":
            spec = self.type_name()
            if spec is None or not self.take("op", "("):
                return None
            inner = self.expr(depth + 1)
            return None if inner is None or not self.take("op", ")") else _convert(inner, spec)
        if kind == "num":
            self.i += 1
            digits, suffix = value.split("|")
            octal = digits[:1] == "0" and len(digits) > 1 and digits[:2].lower() != "0x"
            if octal and ("8" in digits or "9" in digits):
                return None
            n = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8 if octal else 10)
            suffix = suffix.lower()
            unsigned = "u" in suffix
            if (
                "l" in suffix
                or n > 0xFFFFFFFF
                or (n > 0x7FFFFFFF and not unsigned and digits[:2].lower() != "0x")
            ):
                return n & ((1 << 64) - 1), 64, not (unsigned or n > 0x7FFFFFFFFFFFFFFF)
            return n, 32, not (unsigned or n > 0x7FFFFFFF)  # a hex literal too big for int is unsigned
        return None


def _convert(value: Tuple[int, int, bool], spec: Tuple[int, bool]) -> Tuple[int, int, bool]:
    """C's integer conversion: a signed value widens with its sign, any value narrows by bits."""
    v, w, signed = value
    width, to_signed = spec
    if signed and v >> (w - 1) and width > w:
        v = v - (1 << w)  # negative: sign-extend
    return v & ((1 << width) - 1), width, to_signed
