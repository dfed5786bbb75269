"""A small parser for the statements of a C++ function body: enough of C++ for the lane
simulator (``rocm_lint.cpp.lanes``) to run a device function, and nothing it cannot read.

Reads lexed code (comments and literals blanked, ``rocm_lint.cpp.lexer``); preprocessor lines
are skipped.  Anything outside the subset raises ``Unknown``: the caller then keeps its own
logic.

Statements are tuples: ``("block", [stmt])``, ``("decl", [(name, is_array, init, offset)])``,
``("expr", expr, offset)``, ``("if", cond, then, else | None, offset)``, ``("for", init, cond,
step, body, offset)`` (a ``while`` is a ``for`` without init and step), ``("return", expr |
None, offset)``, ``("break" | "continue", offset)``.  Expressions: ``("num", int | ("float",
text))``, ``("name", name, offset)``, ``("bin", op, a, b)``, ``("un", op, a)``, ``("sel", c, a,
b)``, ``("assign", op, target, value, offset)`` (``++x`` is ``+=``), ``("post", op, target,
offset)``, ``("call", callee, [args], offset)``, ``("index", base, index)``, ``("member", base,
field)``, ``("comma", a, b)``, ``("opaque", offset)`` (an initializer list, a string).

API
---
``tokenize(code, start, end) -> [(kind, text, offset)]``; ``Parser(tokens).block()``.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple


class Unknown(Exception):
    """The code is outside what the reader (or the simulator) can evaluate; the message says why."""


_TOKEN = re.compile(
    r"(?:(?P<num>(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[uUlLfF]*)"
    r"|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||::|[+\-*/%&|^]=|[-+*/%&|^!~<>=?:;,.(){}\[\]]))"
)
_TYPE_WORDS = frozenset(
    (
        "const constexpr static volatile register unsigned signed int long short char float "
        "double bool auto void __shared__ __restrict__ size_t uint32_t int32_t uint64_t int64_t "
        "uint half __half typename"
    ).split()
)
_KEYWORDS = frozenset(
    {"if", "else", "for", "while", "do", "switch", "return", "break", "continue", "goto", "case", "asm"}
)


def tokenize(code: str, start: int, end: int) -> List[Tuple[str, str, int]]:
    """(kind, text, offset) of each token of ``code[start:end]`` (lexed code: no comments or
    literals); preprocessor lines are skipped."""
    out: List[Tuple[str, str, int]] = []
    pos = start
    while pos < end:
        while pos < end and code[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        if code[pos] == "#":  # a directive line (`#pragma unroll`)
            nl = code.find("\n", pos)
            pos = end if nl == -1 else nl + 1
            continue
        if code[pos] == '"' or code[pos] == "'":
            close = code.find(code[pos], pos + 1)
            out.append(("str", code[pos : close + 1], pos))
            pos = end if close == -1 else close + 1
            continue
        m = _TOKEN.match(code, pos, end)
        if m is None or m.end() == pos:
            raise Unknown(f"character {code[pos]!r}")
        kind = m.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


class Parser:
    """Statements and expressions of a function body as small tuples."""

    def __init__(self, toks: List[Tuple[str, str, int]]) -> None:
        self.t = toks
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j][1] if j < len(self.t) else ""

    def kind(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j][0] if j < len(self.t) else ""

    def at(self) -> int:
        return self.t[self.i][2] if self.i < len(self.t) else -1

    def take(self, text: Optional[str] = None) -> str:
        if self.i >= len(self.t):
            raise Unknown("unexpected end")
        tok = self.t[self.i][1]
        if text is not None and tok != text:
            raise Unknown(f"expected {text!r}, found {tok!r}")
        self.i += 1
        return tok

    # statements
    def block(self) -> list:
        out = []
        while self.i < len(self.t) and self.peek() != "}":
            out.append(self.statement())
        return out

    def statement(self):
        tok, at = self.peek(), self.at()
        if tok == "{":
            self.take()
            body = self.block()
            self.take("}")
            return ("block", body)
        if tok == ";":
            self.take()
            return ("block", [])
        if tok == "if":
            self.take()
            if self.peek() == "constexpr":
                self.take()
            self.take("(")
            cond = self.expr()
            self.take(")")
            then = self.statement()
            other = None
            if self.peek() == "else":
                self.take()
                other = self.statement()
            return ("if", cond, then, other, at)
        if tok == "for":
            self.take()
            self.take("(")
            init = None if self.peek() == ";" else self.simple()
            self.take(";")
            cond = None if self.peek() == ";" else self.expr()
            self.take(";")
            step = None if self.peek() == ")" else self.expr_list()
            self.take(")")
            return ("for", init, cond, step, self.statement(), at)
        if tok == "while":
            self.take()
            self.take("(")
            cond = self.expr()
            self.take(")")
            return ("for", None, cond, None, self.statement(), at)
        if tok == "return":
            self.take()
            value = None if self.peek() == ";" else self.expr()
            self.take(";")
            return ("return", value, at)
        if tok in ("break", "continue"):
            self.take()
            self.take(";")
            return (tok, at)
        if tok in _KEYWORDS:
            raise Unknown(f"`{tok}`")
        s = self.simple()
        self.take(";")
        return s

    def simple(self):
        """A declaration or an expression (no trailing ``;``)."""
        decl = self._declaration()
        if decl is not None:
            return decl
        return ("expr", self.expr_list(), self.at())

    def _declaration(self):
        # a type: words (with `::`, `<...>`, `*`, `&`) and then a name followed by = ; , [ ( {
        j = self.i
        words = 0
        while j < len(self.t):
            kind, text, _ = self.t[j]
            if kind == "id" and text not in _KEYWORDS:
                words += 1
                j += 1
                if j < len(self.t) and self.t[j][1] == "<" and self.t[j - 1][1] not in _TYPE_WORDS:
                    depth = 0
                    while j < len(self.t):
                        if self.t[j][1] == "<":
                            depth += 1
                        elif self.t[j][1] == ">":
                            depth -= 1
                        elif self.t[j][1] == ">>":
                            depth -= 2
                        elif self.t[j][1] in (";", "{", "}"):
                            return None
                        j += 1
                        if depth <= 0:
                            break
                continue
            if text in ("::",):
                j += 1
                words -= 1
                continue
            if text in ("*", "&") and words >= 1:
                j += 1
                continue
            break
        if words < 2 or j >= len(self.t) or self.t[j][1] not in ("=", ";", ",", "[", "(", "{"):
            return None
        name_at = j - 1
        if self.t[name_at][0] != "id":
            return None
        self.i = name_at
        out = []
        while True:
            name_tok = self.t[self.i]
            self.take()
            is_array = False
            init = None
            if self.peek() == "[":
                self.take()
                is_array = True
                if self.peek() != "]":
                    self.expr()
                self.take("]")
                while self.peek() == "[":
                    self.take()
                    self.expr()
                    self.take("]")
            if self.peek() == "=":
                self.take()
                if self.peek() == "{":
                    self._skip_braces()
                    init = ("opaque", name_tok[2])
                else:
                    init = self.assignment()
            elif self.peek() in ("(", "{"):
                close = ")" if self.peek() == "(" else "}"
                self.take()
                args = self._args(close)
                init = args[0] if len(args) == 1 else ("opaque", name_tok[2])
            out.append((name_tok[1], is_array, init, name_tok[2]))
            if self.peek() == ",":
                self.take()
                while self.peek() in ("*", "&"):
                    self.take()
                continue
            break
        return ("decl", out)

    def _skip_braces(self) -> None:
        depth = 0
        while self.i < len(self.t):
            tok = self.take()
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    return

    def _args(self, close: str) -> list:
        args = []
        while self.peek() != close:
            args.append(self.assignment())
            if self.peek() == ",":
                self.take()
        self.take(close)
        return args

    # expressions (precedence climbing)
    def expr(self):
        return self.expr_list()

    def expr_list(self):
        e = self.assignment()
        while self.peek() == ",":
            self.take()
            e = ("comma", e, self.assignment())
        return e

    def assignment(self):
        left = self.ternary()
        tok = self.peek()
        if tok == "=" or (len(tok) >= 2 and tok.endswith("=") and tok not in ("==", "!=", "<=", ">=")):
            at = self.at()
            self.take()
            return ("assign", tok, left, self.assignment(), at)
        return left

    def ternary(self):
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.assignment()
            self.take(":")
            b = self.assignment()
            return ("sel", cond, a, b)
        return cond

    _LEVELS = (
        ("||",),
        ("&&",),
        ("|",),
        ("^",),
        ("&",),
        ("==", "!="),
        ("<", ">", "<=", ">="),
        ("<<", ">>"),
        ("+", "-"),
        ("*", "/", "%"),
    )

    def binary(self, level: int):
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level] and self.kind() == "op":
            op = self.take()
            left = ("bin", op, left, self.binary(level + 1))
        return left

    def unary(self):
        tok = self.peek()
        if tok in ("-", "!", "~", "+", "*", "&") and self.kind() == "op":
            self.take()
            return ("un", tok, self.unary())
        if tok in ("++", "--"):
            at = self.at()
            self.take()
            return ("assign", "+=" if tok == "++" else "-=", self.unary(), ("num", 1), at)
        if tok == "(" and self._cast_ahead():
            self.take()
            while self.peek() != ")":
                self.take()
            self.take(")")
            return self.unary()
        return self.postfix()

    def _cast_ahead(self) -> bool:
        j = self.i + 1
        seen = False
        while j < len(self.t) and self.t[j][1] != ")":
            kind, text, _ = self.t[j]
            if not (
                text in _TYPE_WORDS or text in ("*", "&", "::") or (kind == "id" and text.endswith("_t"))
            ):
                return False
            seen = True
            j += 1
        return seen and j + 1 < len(self.t) and self.t[j + 1][1] not in (")", ";", ",", "]")

    def postfix(self):
        e = self.primary()
        while True:
            tok = self.peek()
            if tok == "(":
                at = self.at()
                self.take()
                e = ("call", e, self._args(")"), at)
            elif tok == "[":
                self.take()
                idx = self.expr_list()
                self.take("]")
                e = ("index", e, idx)
            elif tok in (".", "->"):
                self.take()
                e = ("member", e, self.take())
            elif tok in ("++", "--"):
                at = self.at()
                self.take()
                e = ("post", "+=" if tok == "++" else "-=", e, at)
            else:
                return e

    def primary(self):
        kind, tok, at = self.t[self.i] if self.i < len(self.t) else ("", "", -1)
        if tok == "(":
            self.take()
            e = self.expr_list()
            self.take(")")
            return e
        if kind == "num":
            self.take()
            return ("num", _number(tok))
        if kind == "str":
            self.take()
            return ("opaque", at)
        if kind == "id":
            self.take()
            name = tok
            while self.peek() == "::":
                self.take()
                name += "::" + self.take()
            if self.peek() == "<" and (name in ("static_cast", "reinterpret_cast") or self._template_call()):
                depth = 0
                while True:
                    t = self.take()
                    depth += {"<": 1, ">": -1, ">>": -2}.get(t, 0)
                    if depth <= 0:
                        break
            return ("name", name, at)
        raise Unknown(f"token {tok!r}")

    def _template_call(self) -> bool:
        """``name<...>(``: template arguments before a call's parenthesis."""
        depth = 0
        for j in range(self.i, min(len(self.t), self.i + 40)):
            t = self.t[j][1]
            if t == "<":
                depth += 1
            elif t in (">", ">>"):
                depth -= 1 if t == ">" else 2
                if depth <= 0:
                    return j + 1 < len(self.t) and self.t[j + 1][1] == "("
            elif t in (";", "{", "}", "&&", "||"):
                return False
        return False


def _number(text: str):
    t = text.rstrip("uUlL")
    try:
        return int(t, 0) if not re.search(r"[.eEfF]", t) or t.lower().startswith("0x") else ("float", text)
    except ValueError:
        return ("float", text)
