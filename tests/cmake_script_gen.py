"""A seeded generator of CMake scripts for the interpreter's differential test against ``cmake -P``:
nested if/elseif/else, options, set/unset/list/string operations, functions and macros with
PARENT_SCOPE, foreach, break/return; every script ends by printing the variables it used."""

from __future__ import annotations

import random
from typing import List

VARS = ["V0", "V1", "V2", "V3"]
LISTS = ["L0", "L1"]
OPTIONS = ["O0", "O1"]
INPUTS = ["IN0", "IN1"]  # given to cmake with -D, unknown to the interpreter
LITERALS = ["", "a", "b", "ON", "OFF", "1", "0", "2", "x;y", "1.2", "a-NOTFOUND", "TRUE"]
PRINTED = VARS + LISTS + OPTIONS + ["R0", "R1"]


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.funcs: List[str] = []
        self.macros: List[str] = []

    def lit(self) -> str:
        return self.r.choice(LITERALS)

    def value(self) -> str:
        k = self.r.random()
        if k < 0.45:
            return '"%s"' % self.lit()
        if k < 0.7:
            return '"${%s}"' % self.r.choice(VARS + INPUTS + OPTIONS)
        if k < 0.85:
            return "${%s}" % self.r.choice(VARS + LISTS)
        return '"${%s}_%s"' % (self.r.choice(VARS), self.lit().replace(";", ""))

    def atom(self) -> str:
        r = self.r
        k = r.randrange(9)
        v = r.choice(VARS + OPTIONS + INPUTS)
        if k == 0:
            return v
        if k == 1:
            return "NOT " + v
        if k == 2:
            return "DEFINED " + r.choice(VARS + LISTS)
        if k == 3:
            return '"${%s}" STREQUAL "%s"' % (v, self.lit())
        if k == 4:
            return "%s STREQUAL %s" % (v, r.choice(["a", "b", "ON"]))
        if k == 5:
            return '%s MATCHES "^[ab]"' % r.choice(VARS + LISTS)
        if k == 6:
            return '"${%s}" EQUAL %d' % (r.choice(VARS), r.randrange(3))
        if k == 7:
            return '"a" IN_LIST %s' % r.choice(LISTS)
        return '"%s"' % self.lit()

    def cond(self, depth: int = 0) -> str:
        r = self.r
        parts = [self.atom()]
        for _ in range(r.randrange(3)):
            parts.append(r.choice(["AND", "OR"]))
            if depth < 1 and r.random() < 0.3:
                parts.append("(" + self.cond(depth + 1) + ")")
            else:
                parts.append(self.atom())
        text = " ".join(parts)
        if r.random() < 0.15:
            text = "NOT (" + text + ")"
        return text

    def stmt(self, depth: int, where: str, ind: str) -> List[str]:
        r = self.r
        k = r.randrange(100)
        v = r.choice(VARS)
        lst = r.choice(LISTS)
        if k < 18:
            return [f"{ind}set({v} {self.value()})"]
        if k < 22:
            return [f"{ind}unset({v})"]
        if k < 26:
            return [f'{ind}option({r.choice(OPTIONS)} "doc" {r.choice(["ON", "OFF"])})']
        if k < 38:
            op = r.randrange(9)
            if op == 0:
                return [f"{ind}list(APPEND {lst} {self.value()} {self.lit() or 'z'})"]
            if op == 1:
                return [f"{ind}list(PREPEND {lst} {self.value()})"]
            if op == 2:
                return [f"{ind}list(REMOVE_ITEM {lst} {r.choice(['a', 'b', 'x', 'z'])})"]
            if op == 3:
                return [
                    f'{ind}list(FILTER {lst} {r.choice(["INCLUDE", "EXCLUDE"])} REGEX "^[a{r.choice("bxz")}]")'
                ]
            if op == 4:
                return [f"{ind}list(LENGTH {lst} {v})"]
            if op == 5:
                return [f"{ind}list(TRANSFORM {lst} APPEND _t)"]
            if op == 6:
                return [f'{ind}list(JOIN {lst} "-" {v})']
            if op == 7:
                return [f"{ind}list(INSERT {lst} 0 {r.choice(['a', 'q'])})"]
            return [f"{ind}list(REMOVE_DUPLICATES {lst})"]
        if k < 44:
            op = r.randrange(4)
            if op == 0:
                return [f"{ind}string(APPEND {v} {self.value()})"]
            if op == 1:
                return [f"{ind}string(TOUPPER {self.value()} {v})"]
            if op == 2:
                return [f'{ind}string(REPLACE "a" "b" {v} {self.value()})']
            return [f"{ind}string(LENGTH {self.value()} {v})"]
        if k < 60 and depth < 3:
            out = [f"{ind}if({self.cond()})"]
            out += self.block(depth + 1, where, ind + "  ")
            for _ in range(r.randrange(3)):
                out.append(f"{ind}elseif({self.cond()})")
                out += self.block(depth + 1, where, ind + "  ")
            if r.random() < 0.5:
                out.append(f"{ind}else()")
                out += self.block(depth + 1, where, ind + "  ")
            out.append(f"{ind}endif()")
            return out
        if k < 68 and depth < 3:
            head = r.choice([f"x IN LISTS {lst}", "x a b c", "x RANGE 2", f"x IN ITEMS a ${{{v}}}"])
            out = [f"{ind}foreach({head})"]
            out.append(f"{ind}  list(APPEND {r.choice(LISTS)} ${{x}})")
            out += self.block(depth + 1, where + "loop", ind + "  ")
            out.append(f"{ind}endforeach()")
            return out
        if k < 72 and "loop" in where:
            return [f"{ind}if({self.cond()})", f"{ind}  break()", f"{ind}endif()"]
        if k < 76 and "function" in where:
            return [f"{ind}if({self.cond()})", f"{ind}  return()", f"{ind}endif()"]
        if k < 86 and "function" in where:
            return [f"{ind}set({r.choice(VARS + ['R0', 'R1'])} {self.value()} PARENT_SCOPE)"]
        if k < 94 and where == "top" and (self.funcs or self.macros):
            name = r.choice(self.funcs + self.macros)
            args = " ".join(self.value() for _ in range(1 + r.randrange(3)))
            return [f"{ind}{name}({args})"]
        return [f"{ind}set({v} {self.value()})"]

    def block(self, depth: int, where: str, ind: str) -> List[str]:
        out: List[str] = []
        for _ in range(1 + self.r.randrange(3)):
            out += self.stmt(depth, where, ind)
        return out

    def script(self) -> str:
        r = self.r
        lines = ["cmake_minimum_required(VERSION 3.25)"]
        for k in range(r.randrange(3)):
            kind = r.choice(["function", "macro"])
            name = f"{kind[0]}{k}"
            lines.append(f"{kind}({name} p)")
            lines.append(
                '  set(R0 "${p}|${ARGN}|${ARGC}")'
                if kind == "macro"
                else '  set(R1 "${p}|${ARGN}" PARENT_SCOPE)'
            )
            lines += self.block(1, kind, "  ")
            lines.append(f"end{kind}()")
            (self.funcs if kind == "function" else self.macros).append(name)
        for _ in range(3 + r.randrange(6)):
            lines += self.stmt(0, "top", "")
        for name in PRINTED:
            lines += [
                f"if(DEFINED {name})",
                f'  message("{name}=[${{{name}}}]")',
                "else()",
                f'  message("{name} UNDEF")',
                "endif()",
            ]
        return "\n".join(lines) + "\n"
