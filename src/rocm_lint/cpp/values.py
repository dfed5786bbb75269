"""Integer values of C constant expressions as their own type holds them (``literal_value``:
``0xFFFFFFFFu``, ``~0u``, ``(uint64_t)-1`` ...), and the integer types masks are written in."""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple


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


# -- integer arithmetic over named constants (ROC711's byte counts) ---------------------------------------
# sizeof of the scalar types byte counts are written with (LP64, CUDA's and HIP's half types)
SIZEOF = {
    "char": 1,
    "signed char": 1,
    "unsigned char": 1,
    "int8_t": 1,
    "uint8_t": 1,
    "bool": 1,
    "short": 2,
    "unsigned short": 2,
    "int16_t": 2,
    "uint16_t": 2,
    "half": 2,
    "__half": 2,
    "at::Half": 2,
    "c10::Half": 2,
    "__nv_bfloat16": 2,
    "nv_bfloat16": 2,
    "__hip_bfloat16": 2,
    "at::BFloat16": 2,
    "c10::BFloat16": 2,
    "half2": 4,
    "__half2": 4,
    "__nv_bfloat162": 4,
    "float": 4,
    "int": 4,
    "unsigned": 4,
    "unsigned int": 4,
    "int32_t": 4,
    "uint32_t": 4,
    "float2": 8,
    "double": 8,
    "long": 8,
    "unsigned long": 8,
    "long long": 8,
    "unsigned long long": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "size_t": 8,
    "float4": 16,
    "int4": 16,
    "uint4": 16,
    "double2": 16,
}
_CAST_TYPES = frozenset(t for t, (bits, _) in INT_TYPES.items()) | {"short", "unsigned short"}
_ARITH_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)([uUlLzZ]*)(?![\w.])|((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)"
    r"|(<<|>>|[-+*/%()&|^~<>,]))"
)
_BINARY = {  # operator -> precedence (C's, higher binds tighter)
    "*": 5,
    "/": 5,
    "%": 5,
    "+": 4,
    "-": 4,
    "<<": 3,
    ">>": 3,
    "&": 2,
    "^": 1,
    "|": 0,
}
MAX_DEPTH = 6  # names followed through names


def int_expression(text: str, lookup: "Callable[[str], Optional[str]]", depth: int = 0) -> Optional[int]:
    """The value of an integer constant expression with names (``96 * 1024``,
    ``(2 * kTile + 4 * 1024) * sizeof(half)``, ``static_cast<int>(SMEM)``, ``kBytes << 1``):
    ``lookup(name)`` gives a name's definition text (a macro body, a constant's initializer) or
    None; names are followed ``MAX_DEPTH`` deep.  None for anything not decided: an unknown name,
    a call, a division by zero, a negative or absurd value, a floating literal."""
    if depth > MAX_DEPTH or len(text) > 400:
        return None
    toks: List[Tuple[str, str]] = []
    pos = 0
    t = text.replace("'", "")
    while pos < len(t):
        m = _ARITH_TOKEN.match(t, pos)
        if m is None:
            if t[pos:].strip():
                return None
            break
        pos = m.end()
        if m.group(1):
            toks.append(("num", m.group(1)))
        elif m.group(3):
            toks.append(("name", re.sub(r"\s+", "", m.group(3))))
        else:
            toks.append(("op", m.group(4)))
        if len(toks) > 80:
            return None
    parser = _Arith(toks, lookup, depth)
    value = parser.expr(0)
    if value is None or parser.i != len(toks) or not 0 <= value < (1 << 40):
        return None
    return value


class _Arith:
    def __init__(self, toks: List[Tuple[str, str]], lookup, depth: int) -> None:
        self.toks, self.lookup, self.depth, self.i = toks, lookup, depth, 0

    def peek(self, k: int = 0) -> Tuple[str, str]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("end", "")

    def take(self, kind: str, value: Optional[str] = None) -> bool:
        tok = self.peek()
        if tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return True
        return False

    def expr(self, floor: int) -> Optional[int]:
        left = self.unary()
        while left is not None:
            kind, op = self.peek()
            if kind != "op" or op not in _BINARY or _BINARY[op] < floor:
                return left
            self.i += 1
            right = self.expr(_BINARY[op] + 1)
            if right is None:
                return None
            left = _apply(op, left, right)
        return left

    def type_name(self) -> Optional[str]:
        """A type spelled by the next names (``unsigned int``, ``at::Half``), consumed; or None."""
        words: List[str] = []
        while self.peek()[0] == "name" and len(words) < 3:
            words.append(self.peek()[1])
            self.i += 1
        name = " ".join(words).replace("std::", "")
        if name in SIZEOF or name in _CAST_TYPES:
            return name
        self.i -= len(words)
        return None

    def unary(self) -> Optional[int]:
        kind, tok = self.peek()
        if kind == "op" and tok in "+-~":
            self.i += 1
            v = self.unary()
            if v is None:
                return None
            return v if tok == "+" else None  # a negative or `~` byte count: undecided
        if kind == "op" and tok == "(":
            self.i += 1
            start = self.i
            cast = self.type_name()
            if cast is not None and self.take("op", ")"):  # (int)x
                return self.unary()
            self.i = start
            v = self.expr(0)
            return v if v is not None and self.take("op", ")") else None
        if kind == "num":
            self.i += 1
            return (
                int(tok, 16)
                if tok[:2] in ("0x", "0X")
                else (int(tok, 8) if len(tok) > 1 and tok[0] == "0" else int(tok))
            )
        if kind == "name":
            if tok in ("sizeof",):
                self.i += 1
                if not self.take("op", "("):
                    return None
                size_of = self.type_name()
                if size_of is None or size_of not in SIZEOF or not self.take("op", ")"):
                    return None
                return SIZEOF[size_of]
            if tok in ("static_cast", "std::static_cast") and self.peek(1) == ("op", "<"):
                self.i += 2
                if self.type_name() is None or not self.take("op", ">") or not self.take("op", "("):
                    return None
                v = self.expr(0)
                return v if v is not None and self.take("op", ")") else None
            start = self.i
            cast = self.type_name()
            if cast is not None and self.peek() == ("op", "("):  # int(x)
                self.i += 1
                v = self.expr(0)
                return v if v is not None and self.take("op", ")") else None
            self.i = start + 1
            if self.peek() == ("op", "("):
                return None  # a call
            body = self.lookup(tok)
            if body is None:
                return None
            return int_expression(body, self.lookup, self.depth + 1)
        return None


def _apply(op: str, a: int, b: int) -> Optional[int]:
    """``a op b`` where both are known non-negative and the result stays so: then C's arithmetic
    (signed or unsigned, truncating division) and Python's agree; anything else is undecided (a
    negative intermediate meets C's unsigned conversions of ``sizeof``, and its ``/``/``%`` truncate)."""
    if op == "*":
        out = a * b
    elif op == "+":
        out = a + b
    elif op == "-":
        out = a - b
    elif op in ("/", "%"):
        if b == 0:
            return None
        out = a // b if op == "/" else a % b
    elif op == "<<":
        out = a << b if b < 40 else -1
    elif op == ">>":
        out = a >> b if b < 64 else -1
    else:
        out = {"&": a & b, "^": a ^ b, "|": a | b}[op]
    return out if 0 <= out < (1 << 62) else None
