"""CMake's ``if()``/``while()`` conditions for the interpreter (``rocm_lint.build.cmake_eval``):
the reduction passes of ``cmConditionEvaluator`` (parentheses; unary tests; binary tests;
``NOT``; ``AND`` and ``OR`` at one precedence, from the left), CMP0054's quoted arguments, CMP0012's
constants, auto-dereferenced names.  A test on an unknown value is unknown and the logic around
it Kleene's; a shape CMake rejects is Unknown."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Tuple

from rocm_lint.build.cmake_values import (
    BINARY_TESTS,
    CONDITION_KEYWORDS,
    Choose,
    CommandDef,
    State,
    UNARY_TESTS,
    Unknown,
    is_off,
    scanf_number,
    split_list,
    to_regex,
    truth_constant,
    version_key,
)


class Condition:
    """One evaluation of an ``if()`` argument list (CMake's reduction passes), with the
    possibly-multi-valued variables fixed in ``fixed`` (Choose asks for the next one).  A test
    whose operand is unknown is None and ``NOT``/``AND``/``OR`` are Kleene's (the passes' shape
    depends on the keywords only, never on values); a shape CMake rejects raises Unknown."""

    def __init__(self, interp: Any, st: State, fixed: Dict[str, Optional[str]]) -> None:
        self.interp, self.st, self.fixed = interp, st, fixed

    def var(self, name: str) -> Optional[str]:
        if name in self.fixed:
            return self.fixed[name]
        value = self.st.get(name)
        if value is None:
            raise Unknown
        if len(value) == 1:
            return next(iter(value))
        raise Choose(name, value)

    def defined(self, name: str) -> bool:
        key = "\0defined:" + name
        if key in self.fixed:
            return self.fixed[key] == "1"
        if name.startswith("ENV{"):
            raise Unknown
        if name.startswith("CACHE{") and name.endswith("}"):
            value = self.st.cached(name[6:-1])
        else:
            value = self.st.get(name)
        if value is None:
            raise Unknown
        outcomes = {v is not None for v in value}
        if len(outcomes) == 1:
            return outcomes.pop()
        raise Choose(key, frozenset({"1", "0"}))

    def evaluate(self, tokens: List[Tuple[str, bool]]) -> Optional[bool]:
        return self._reduce(self._parens(list(tokens)))

    def _kw(self, item: object, *words: str) -> bool:
        return isinstance(item, tuple) and not item[1] and item[0] in words

    def _parens(self, items: List[object]) -> List[object]:
        out: List[object] = []
        stack: List[List[object]] = []
        for it in items:
            if self._kw(it, "("):
                stack.append(out)
                out = []
            elif self._kw(it, ")"):
                if not stack:
                    raise Unknown
                inner = Truth(self._reduce(out))
                out = stack.pop()
                out.append(inner)
            else:
                out.append(it)
        if stack:
            raise Unknown
        return out

    def _is_keyword(self, item: object) -> bool:
        return isinstance(item, tuple) and not item[1] and item[0] in CONDITION_KEYWORDS

    def _reduce(self, items: List[object]) -> Optional[bool]:
        items = self._unary(items)
        items = self._binary(items)
        items = self._not(items)
        items = self._andor(items)
        if len(items) != 1:
            raise Unknown
        return self._bool(items[0])

    def _operand(self, item: object) -> Tuple[str, bool]:
        if isinstance(item, Truth) or self._is_keyword(item):
            raise Unknown
        return item  # type: ignore[return-value]

    def _leaf(self, compute: Callable[[], bool]) -> "Truth":
        try:
            return Truth(compute())
        except Unknown:
            return Truth(None)

    def _unary(self, items: List[object]) -> List[object]:
        out: List[object] = []
        k = 0
        while k < len(items):
            it = items[k]
            if self._kw(it, *UNARY_TESTS) and k + 1 < len(items):
                text, _ = self._operand(items[k + 1])
                out.append(self._leaf(lambda: self._test(it[0], text)))  # type: ignore[index]
                k += 2
                continue
            out.append(it)
            k += 1
        return out

    def _test(self, op: str, arg: str) -> bool:
        if op == "DEFINED":
            return self.defined(arg)
        if op == "IS_ABSOLUTE":
            return arg.startswith("/") or arg.startswith("~")
        if op in ("EXISTS", "IS_DIRECTORY"):
            if not arg.startswith("/") or not self.interp._in_tree(arg):
                raise Unknown
            return os.path.isdir(arg) if op == "IS_DIRECTORY" else os.path.exists(arg)
        if op == "COMMAND":
            if isinstance(self.st.funcs.get(arg.lower()), CommandDef) or hasattr(
                self.interp, "_c_" + arg.lower()
            ):
                return True
            raise Unknown
        if op == "TARGET":
            if self.st.items(("targets",)).get(arg):
                return True
            raise Unknown
        raise Unknown

    def _value(self, item: object) -> str:
        text, quoted = self._operand(item)
        if quoted:
            return text
        value = self.var(text)
        return text if value is None else value

    def _binary(self, items: List[object]) -> List[object]:
        out: List[object] = []
        k = 0
        while k < len(items):
            if k + 2 < len(items) and self._kw(items[k + 1], *BINARY_TESTS):
                op = items[k + 1][0]  # type: ignore[index]
                left, right = items[k], items[k + 2]
                self._operand(left)
                self._operand(right)
                out.append(self._leaf(lambda: self._compare(op, left, right)))
                k += 3
                continue
            out.append(items[k])
            k += 1
        return out

    def _compare(self, op: str, left: object, right: object) -> bool:
        if op == "MATCHES":
            lhs = self._value(left)
            rx = to_regex(self._operand(right)[0])
            return rx.search(lhs) is not None
        if op == "IN_LIST":
            lhs = self._value(left)
            name, quoted = self._operand(right)
            value = self.var(name)
            if value is None:
                return False
            return lhs in split_list(value)
        if op in ("IS_NEWER_THAN", "PATH_EQUAL"):
            raise Unknown
        a, b = self._value(left), self._value(right)
        if op in ("LESS", "GREATER", "EQUAL", "LESS_EQUAL", "GREATER_EQUAL"):
            x, y = scanf_number(a), scanf_number(b)
            if x is None or y is None:
                return False
            return {
                "LESS": x < y,
                "GREATER": x > y,
                "EQUAL": x == y,
                "LESS_EQUAL": x <= y,
                "GREATER_EQUAL": x >= y,
            }[op]
        if op.startswith("VERSION_"):
            va, vb = version_key(a), version_key(b)
            return {
                "VERSION_LESS": va < vb,
                "VERSION_GREATER": va > vb,
                "VERSION_EQUAL": va == vb,
                "VERSION_LESS_EQUAL": va <= vb,
                "VERSION_GREATER_EQUAL": va >= vb,
            }[op]
        ea, eb = a.encode(), b.encode()
        return {
            "STREQUAL": ea == eb,
            "STRLESS": ea < eb,
            "STRGREATER": ea > eb,
            "STRLESS_EQUAL": ea <= eb,
            "STRGREATER_EQUAL": ea >= eb,
        }[op]

    def _not(self, items: List[object]) -> List[object]:
        # right to left; ``NOT NOT`` and ``NOT <keyword>`` (which CMake rejects): Unknown
        out: List[object] = []
        k = len(items) - 1
        while k >= 0:
            it = items[k]
            if self._kw(it, "NOT") and out and (k == 0 or not self._kw(items[k - 1], "NOT")):
                nxt = out.pop()
                if self._is_keyword(nxt):
                    raise Unknown
                value = self._bool(nxt)
                out.append(Truth(None if value is None else not value))
            elif self._kw(it, "NOT"):
                raise Unknown
            else:
                out.append(it)
            k -= 1
        out.reverse()
        return out

    def _andor(self, items: List[object]) -> List[object]:
        """``AND`` and ``OR`` have one precedence in CMake's implementation: passes from the left,
        each reducing ``x OP y`` and going on after the result, until none reduces."""
        items = list(items)
        changed = True
        while changed:
            changed = False
            k = 0
            while k + 2 < len(items):
                op = items[k + 1]
                if self._kw(op, "AND", "OR"):
                    left, right = items[k], items[k + 2]
                    if self._is_keyword(left) or self._is_keyword(right):
                        raise Unknown
                    a, b = self._bool(left), self._bool(right)
                    if op[0] == "AND":  # type: ignore[index]
                        r = False if a is False or b is False else (None if a is None or b is None else True)
                    else:
                        r = True if a is True or b is True else (None if a is None or b is None else False)
                    items[k : k + 3] = [Truth(r)]
                    changed = True
                k += 1
        return items

    def _bool(self, item: object) -> Optional[bool]:
        if isinstance(item, Truth):
            return item.value
        text, quoted = self._operand(item)
        try:
            constant = truth_constant(text)
            if constant is not None:
                return constant
            if quoted:
                return False
            return not is_off(self.var(text))
        except Unknown:
            return None


class Truth:
    """A reduced test: True, False or None (unknown)."""

    __slots__ = ("value",)

    def __init__(self, value: Optional[bool]) -> None:
        self.value = value
