"""A model of the C preprocessor's conditionals, evaluated on two platforms at once.

Every ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` condition is evaluated
twice, once as the NVIDIA compiler sees it ("cuda": USE_ROCM and the other ROCm macros
undefined) and once as a ROCm build sees it ("rocm": USE_ROCM defined, ``__CUDA_ARCH__``
and ``CUDA_VERSION`` undefined).  Macros we cannot see (they come from headers or the
command line) are *unknown*, so the logic is three-valued: True, False or None.  Each
line of the file then gets a status per platform: compiled (True), not compiled (False)
or maybe (None).  A line whose ROCm status is False is NVIDIA-only (or dead): the C++
rules stay silent there.  A line whose CUDA status is False but ROCm status is not is the
ROCm side of a split.

The same expression trees give :func:`same_on_nvidia`, the check behind every C++ fix:
a partial preprocessor that folds the ROCm macros away and compares what the NVIDIA
compiler would see before and after.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple, Union

from rocm_lint.cpp.lexer import Lexed, lex

Tri = Optional[bool]  # True, False, or None (unknown)
Value = Optional[int]  # an integer, or None (unknown)

# -- what each platform defines ---------------------------------------------------------------
# Defined in ROCm builds only (``defined(X)`` is 1 on ROCm, 0 on NVIDIA).
ROCM_DEFINED = frozenset({
    "USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__",
    "HIP_VERSION", "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH", "ROCM_VERSION",
    "ROCM_VERSION_MAJOR", "TORCH_HIP_VERSION", "__HIP_ROCclr__", "USE_ROCM_ATTENTION",
})
# Only in some ROCm compilations (the device pass, one GPU arch): 0 on NVIDIA, unknown on ROCm.
ROCM_SOMETIMES = frozenset({
    "__HIP_DEVICE_COMPILE__", "__AMDGCN__", "__AMDGPU__", "__AMDGCN_WAVEFRONT_SIZE",
    "__AMDGCN_WAVEFRONT_SIZE__", "__GFX8__", "__GFX9__", "__GFX10__", "__GFX11__", "__GFX12__",
})
# Of those, the on/off flags: a ROCm build that defines one gives it a nonzero value
# (``-DUSE_ROCM`` is ``-DUSE_ROCM=1``), so ``#if USE_ROCM`` is taken there.
ROCM_FLAGS = frozenset({
    "USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__", "__HIP_ROCclr__",
    "USE_ROCM_ATTENTION",
})
_GFX_MACRO = re.compile(r"__gfx\w+__$")
# Defined (in some compilations) on NVIDIA only: unknown there, 0 under HIP-Clang.
CUDA_ONLY = frozenset({
    "__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__", "__NVCC__", "__CUDACC_RDC__", "__NVCOMPILER",
    "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__", "CUDNN_VERSION", "CUBLAS_VERSION",
    "NCCL_VERSION_CODE", "__CUDA_ARCH_SPECIFIC__", "__CUDA_ARCH_FAMILY_SPECIFIC__", "__CUDA__",
})
_CUDA_FEATURE_MACRO = re.compile(r"__CUDA_ARCH_FEAT_\w+$")
# A branch taken only on wave64 hardware (gfx9: GCN5/CDNA) or only on wave32 hardware
# (gfx10+: RDNA): the matching hard-coded wave size is right there.
WAVE64_CONDITION = re.compile(
    r"(?<!!)\b(?:defined\s*(?:\(\s*)?)?(?:__GFX9__|__gfx9\w*__|\w*CDNA\w*)"
    r"|__AMDGCN_WAVEFRONT_SIZE(?:__)?\s*==\s*64")
WAVE32_CONDITION = re.compile(
    r"(?<!!)\b(?:defined\s*(?:\(\s*)?)?(?:__GFX1[0-2]__|__gfx1[0-2]\w*__|\w*RDNA\w*)"
    r"|__AMDGCN_WAVEFRONT_SIZE(?:__)?\s*==\s*32")

CUDA, ROCM = "cuda", "rocm"


def is_rocm_macro(name: str, extra: Iterable[str] = ()) -> bool:
    return name in ROCM_DEFINED or name in ROCM_SOMETIMES or bool(_GFX_MACRO.match(name)) or name in extra


def is_cuda_macro(name: str, extra: Iterable[str] = ()) -> bool:
    return name in CUDA_ONLY or bool(_CUDA_FEATURE_MACRO.match(name)) or name in extra


# -- expressions ----------------------------------------------------------------------------
_EXPR_TOKEN = re.compile(r"""
    (?P<num>0[xX][0-9a-fA-F']+|\d[\d']*)[uUlL]*
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),])
  | (?P<char>'(?:[^'\\]|\\.)*')
  | (?P<other>\S)
""", re.X)


@dataclass(frozen=True)
class Node:
    kind: str  # num, name, defined, call, unary, binary, ternary
    value: object = None  # int (num), str (name/defined/call text), operator
    args: Tuple["Node", ...] = ()


class _Parser:
    BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
              ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def __init__(self, text: str) -> None:
        self.toks: List[Tuple[str, str]] = []
        for m in _EXPR_TOKEN.finditer(text):
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind) if kind != "num" else m.group("num")))
        self.i = 0

    def peek(self) -> Tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self) -> Tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.ternary()
        if self.peek()[0] != "end":
            raise ValueError("trailing tokens")
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek() == ("op", "?"):
            self.take()
            a = self.ternary()
            if self.take() != ("op", ":"):
                raise ValueError("expected :")
            b = self.ternary()
            return Node("ternary", "?", (cond, a, b))
        return cond

    def binary(self, level: int) -> Node:
        """Precedence climbing over ``BINARY`` (left-associative): the tree recursive descent
        through the ten levels gives, without eleven calls per operand."""
        left = self.unary()
        while True:
            kind, op = self.peek()
            if kind != "op":
                return left
            op_level = _LEVEL.get(op)
            if op_level is None or op_level < level:
                return left
            self.i += 1
            left = Node("binary", op, (left, self.binary(op_level + 1)))

    def unary(self) -> Node:
        kind, text = self.peek()
        if kind == "op" and text in ("!", "~", "-", "+"):
            self.take()
            return Node("unary", text, (self.unary(),))
        return self.primary()

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            text = text.replace("'", "")
            return Node("num", int(text, 16) if text[:2].lower() == "0x" else int(text, 8 if text.startswith("0") and len(text) > 1 else 10))
        if kind == "char":
            return Node("name", text)  # rare; unknown value
        if kind == "name":
            if text == "defined":
                paren = self.peek() == ("op", "(")
                if paren:
                    self.take()
                k, name = self.take()
                if k != "name":
                    raise ValueError("defined without a name")
                if paren and self.take() != ("op", ")"):
                    raise ValueError("expected )")
                return Node("defined", name)
            if self.peek() == ("op", "("):  # a function-like macro or __has_include(...)
                depth, parts = 0, [text]
                while True:
                    k, t = self.take()
                    if k == "end":
                        raise ValueError("unbalanced call")
                    parts.append(t)
                    depth += t == "(" if k == "op" else 0
                    depth -= t == ")" if k == "op" else 0
                    if depth == 0:
                        break
                return Node("call", "".join(parts))
            if text in ("true", "false"):
                return Node("num", int(text == "true"))
            return Node("name", text)
        if (kind, text) == ("op", "("):
            node = self.ternary()
            if self.take() != ("op", ")"):
                raise ValueError("expected )")
            return node
        raise ValueError(f"unexpected {text!r}")


_LEVEL = {op: level for level, ops in enumerate(_Parser.BINARY) for op in ops}
_PLAIN_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*")


def parse_condition(text: str) -> Optional[Node]:
    """The expression tree of an ``#if`` condition, or None when it does not parse.  Nodes are
    immutable: a condition met again (``#ifdef USE_ROCM`` in every file) is parsed once."""
    if len(text) > 256:
        return _parse_condition(text)
    return _parse_condition_cached(text)


def _parse_condition(text: str) -> Optional[Node]:
    m = _PLAIN_NAME.fullmatch(text)
    if m is not None:  # the common `#if NAME`
        name = m.group(1)
        if name in ("true", "false"):
            return Node("num", int(name == "true"))
        return None if name == "defined" else Node("name", name)
    try:
        return _Parser(text).parse()
    except (ValueError, RecursionError, IndexError):
        return None


_parse_condition_cached = lru_cache(maxsize=8192)(_parse_condition)


def names_in(node: Optional[Node]) -> List[str]:
    if node is None:
        return []
    if node.kind in ("name", "defined"):
        return [node.value]
    if node.kind == "call":
        return re.findall(r"[A-Za-z_]\w*", node.value)
    return [n for a in node.args for n in names_in(a)]


def truth(v: Value) -> Tri:
    """A preprocessor value as a truth value (None: unknown)."""
    return None if v is None else v != 0


def _int(t: Tri) -> Value:
    return None if t is None else int(t)


def _binary(op: str, a: Value, b: Value) -> Value:
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    try:
        return {"|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b, "==": lambda: int(a == b),
                "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
                "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << min(b, 64),
                ">>": lambda: a >> min(b, 64), "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: int(a / b) if b else None, "%": lambda: a % b if b else None}[op]()
    except (KeyError, ValueError, OverflowError):
        return None


class Platform:
    """What one platform knows about macros: ``defined(name)`` and ``name``'s value."""

    def __init__(self, world: str, rocm_macros: FrozenSet[str], cuda_macros: FrozenSet[str]) -> None:
        self.world = world
        self.rocm_macros = rocm_macros
        self.cuda_macros = cuda_macros
        # file-local #defines seen so far: name -> (defined?: Tri, value node or None)
        self.local: Dict[str, Tuple[Tri, Optional[Node]]] = {}

    def defined(self, name: str) -> Tri:
        if name in self.local and self.local[name][0] is not None:
            return self.local[name][0]
        if self.world == CUDA:
            if is_rocm_macro(name, self.rocm_macros):
                return False
            return None
        if name in ROCM_DEFINED or name in self.rocm_macros:
            return True
        if name in ROCM_SOMETIMES or _GFX_MACRO.match(name):
            return None
        if is_cuda_macro(name, self.cuda_macros):
            return False
        return None

    def value(self, name: str, depth: int = 0) -> Value:
        if name in self.local and self.local[name][0]:
            body = self.local[name][1]
            return self.evaluate(body, depth + 1) if body is not None and depth < 8 else None
        d = self.defined(name)
        if d is False:
            return 0  # an undefined identifier is 0 in #if
        if d is True and self.world == ROCM and (name in ROCM_FLAGS or name in self.rocm_macros):
            return 1  # a ROCm build's flag: `#if USE_ROCM` is taken there
        return None

    def evaluate(self, node: Optional[Node], depth: int = 0) -> Value:
        if node is None:
            return None
        k = node.kind
        if k == "num":
            return node.value
        if k == "name":
            return self.value(node.value, depth)
        if k == "defined":
            return _int(self.defined(node.value))
        if k == "call":
            return None
        if k == "unary":
            v = self.evaluate(node.args[0], depth)
            if v is None:
                return None
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[node.value]
        if k == "binary":
            return _binary(node.value, self.evaluate(node.args[0], depth), self.evaluate(node.args[1], depth))
        if k == "ternary":
            c = self.evaluate(node.args[0], depth)
            a, b = self.evaluate(node.args[1], depth), self.evaluate(node.args[2], depth)
            if c is None:
                return a if a == b else None
            return a if c else b
        return None


# -- the file model ---------------------------------------------------------------------------
_HASH = re.compile(r"#[ \t]*([A-Za-z_]\w*)?")
_NAMES = re.compile(r"[A-Za-z_]\w*")
_CONDITIONALS = {"if", "ifdef", "ifndef", "elif", "else", "endif", "elifdef", "elifndef"}


@dataclass
class Directive:
    name: str  # if, ifdef, ifndef, elif, else, endif, define, undef, include, pragma, ...
    line: int  # first line (1-based)
    end_line: int  # last line (continuations)
    start: int  # offset of '#'
    end: int  # offset of the end of the directive's last line (before the newline)
    arg_start: int  # offset where the argument (condition, macro name, header) starts
    arg: str  # the argument text, comments blanked, continuations joined
    # conditionals: their group (the #if and its #elif/#else/#endif share one), the status of
    # the enclosing code on each platform, and the parsed condition (None for else/endif)
    group: int = -1
    outer: Tuple[Tri, Tri] = (True, True)
    condition: Optional[Node] = None
    # does each platform evaluate this condition at all (not when an earlier branch was taken)?
    reached: Tuple[Tri, Tri] = (True, True)


@dataclass
class Region:
    """A run of lines with the same compilation status."""

    line: int
    cuda: Tri
    rocm: Tri
    wave: Optional[int]  # 64 or 32 inside a branch taken only on such hardware (gfx9 / gfx10+)


@dataclass
class MacroDef:
    name: str
    line: int
    body: str  # comments blanked, continuations joined, stripped
    params: Optional[str]  # None for object-like macros
    cuda: Tri
    rocm: Tri


def tri_and(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def tri_or(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def tri_not(a: Tri) -> Tri:
    return None if a is None else not a


@dataclass
class _Frame:
    outer: Tuple[Tri, Tri]
    taken: Tuple[Tri, Tri]  # did an earlier branch of the group get taken?
    wave_outer: Optional[int]
    group: int
    branch_wave: Optional[int] = None  # a branch of this group tested for a wave64/wave32 arch


@dataclass
class Preprocessed:
    lexed: Lexed
    directives: List[Directive]
    regions: List[Region]
    macros: Dict[str, List[MacroDef]] = field(default_factory=dict)
    # the file's own status before any #if: (True, True), or the platform its directory gets from
    # the project's build (rocm_lint.build.context): (False, True) ROCm-only, (True, False)
    # never built for ROCm
    base: Tuple[Tri, Tri] = (True, True)
    # the platform macros this analysis knew beyond the built-in ones: the configuration's,
    # the build's (rocm_lint.build.context.macro_facts) and the file's own (cpp.vocabulary)
    platform_terms: FrozenSet[str] = frozenset()
    _region_lines: List[int] = field(default_factory=list)

    def status(self, line: int) -> Region:
        if not self._region_lines:
            self._region_lines = [r.line for r in self.regions]
        i = bisect_right(self._region_lines, line) - 1
        return self.regions[i] if i >= 0 else Region(1, self.base[0], self.base[1], None)

    def nvidia_only(self, line: int) -> bool:
        """Never compiled on ROCm (NVIDIA-only branch, or dead code like ``#if 0``)."""
        return self.status(line).rocm is False

    def rocm_only(self, line: int) -> bool:
        r = self.status(line)
        return r.cuda is False and r.rocm is not False

    def rocm_branch(self, line: int) -> bool:
        """ROCm-only through the file's own ``#if`` tests, where a fix may edit in place.  A file only
        its directory makes ROCm-only (``base``) is edited as NVIDIA-visible code (``#ifdef USE_ROCM``
        ... ``#else`` original): the fix check compares the NVIDIA view of the file itself."""
        return self.base[0] is not False and self.rocm_only(line)

    def macro(self, name: str, line: int, world: str = ROCM) -> Optional[MacroDef]:
        """The object-like definition of ``name`` in effect at ``line`` on ``world``."""
        best = None
        for d in self.macros.get(name, ()):
            if d.line >= line:
                break
            if (d.rocm if world == ROCM else d.cuda) is not False:
                best = d
        return best


def _directive_spans(code: str) -> Iterable[Tuple[re.Match, int, int]]:
    """Each directive with its extent: (the match of ``#`` and its name, the offset of its line's
    start, the end of its last line); lines continued with a backslash belong to it (a ``#x``
    stringification on a continuation line is not a directive).  The ``#`` is found by a literal
    search and its line checked for nothing but blanks before it (a ``^``-anchored pattern tried
    every position of the text)."""
    last_end = -1
    find, rfind = code.find, code.rfind
    start = scanned = 0  # the start of the line of the last `#` met, and where that search stopped
    for m in _HASH.finditer(code):
        at = m.start()
        if at < last_end:
            continue
        newline = rfind("\n", scanned, at)  # only the text since the last `#`: linear
        if newline != -1:
            start = newline + 1
        scanned = at
        if start != at and code[start:at].strip(" \t"):
            continue  # not the first thing on its line
        end = find("\n", m.end())
        while end != -1 and (code[end - 1:end] == "\\" or code[end - 2:end] == "\\\r"):
            end = find("\n", end + 1)
        if end == -1:
            end = len(code)
        last_end = end
        yield m, start, end


_GUARD_TEST = re.compile(r"\s*(?:!\s*defined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*)))\s*$")
_FIRST_NAME = re.compile(r"\s*([A-Za-z_]\w*)")


def include_guard(code: str) -> Optional[str]:
    """The include guard of a header (lexed code): its first conditional is ``#ifndef G`` (or
    ``#if !defined(G)``) and the directive right after it is ``#define G``; ``#pragma`` lines
    before it are allowed.  None when the file has no such guard."""
    first: Optional[str] = None
    for m, start, end in _directive_spans(code):
        name = m.group(1) or ""
        arg = code[m.end():end]
        if first is None:
            if name == "pragma":
                continue
            if name == "ifndef":
                word = _FIRST_NAME.match(arg)
                first = word.group(1) if word else ""
            elif name == "if":
                test = _GUARD_TEST.match(arg)
                first = (test.group(1) or test.group(2)) if test else ""
            else:
                return None
            if not first:
                return None
            continue
        word = _FIRST_NAME.match(arg)
        return first if name == "define" and word and word.group(1) == first else None
    return None


def analyse(text: str, lexed: Optional[Lexed] = None, rocm_macros: Iterable[str] = (),
            cuda_macros: Iterable[str] = (), seed: Iterable[tuple] = (),
            base: Tuple[Tri, Tri] = (True, True)) -> Preprocessed:
    """The file model.  ``seed``: (name, (defined, body) on NVIDIA, (defined, body) on ROCm)
    for macros the file's own headers define (``rocm_lint.cpp.includes``).  ``base``: whether
    each platform compiles the file at all (NVIDIA, ROCm), as the project's build decides
    (``rocm_lint.build.context``): ``(False, True)`` makes every line what a line under
    ``#ifdef USE_ROCM`` is, ``(True, False)`` what a line under ``#ifndef USE_ROCM`` is."""
    lexed = lexed or lex(text)
    code = lexed.code
    rocm_extra, cuda_extra = frozenset(rocm_macros), frozenset(cuda_macros)
    worlds = (Platform(CUDA, rocm_extra, cuda_extra), Platform(ROCM, rocm_extra, cuda_extra))
    seeded = tuple(seed)
    for name, on_cuda, on_rocm in seeded:
        worlds[0].local[name] = on_cuda
        worlds[1].local[name] = on_rocm
    guard = include_guard(code)
    if guard is not None and guard not in worlds[0].local:
        # `#ifndef MYLIB_COMPAT_H` / `#define MYLIB_COMPAT_H`: the first inclusion, the one that
        # counts, takes the branch on both platforms (else every line of a guarded header is
        # "maybe", and `#define MYLIB_HIP 1` under `__HIP_PLATFORM_AMD__` no ROCm fact)
        for w in worlds:
            w.local[guard] = (False, None)
    directives: List[Directive] = []
    regions: List[Region] = [Region(1, base[0], base[1], None)]
    macros: Dict[str, List[MacroDef]] = {}
    stack: List[_Frame] = []
    expandable: set = set()  # the object-like macros with a body, as _expand_names reads them
    current = base
    wave: Optional[int] = None
    groups = 0
    line = 1
    pos = 0
    for m, start, end in _directive_spans(code):
        line += code.count("\n", pos, start)
        pos = start
        name = m.group(1) or ""
        arg_start = m.end()
        arg = code[arg_start:end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        end_line = line + code.count("\n", start, end)
        d = Directive(name, line, end_line, start, end, arg_start, arg)
        directives.append(d)
        if name in _CONDITIONALS:
            new_state = None
            if name in ("if", "ifdef", "ifndef"):
                groups += 1
                frame = _Frame(current, (False, False), wave, groups)
                stack.append(frame)
            elif not stack:
                continue  # unbalanced #elif/#else/#endif: ignore, as a recovering compiler would
            frame = stack[-1]
            d.group, d.outer = frame.group, frame.outer
            if name == "endif":
                stack.pop()
                new_state, wave = frame.outer, frame.wave_outer
            else:
                if name in ("if", "elif"):
                    d.condition = parse_condition(arg)
                elif name in ("ifdef", "ifndef", "elifdef", "elifndef"):
                    word = re.match(r"\s*([A-Za-z_]\w*)", arg)
                    if word:
                        node = Node("defined", word.group(1))
                        d.condition = Node("unary", "!", (node,)) if name.endswith("ndef") else node
                if name == "else":
                    taken0 = taken1 = True
                elif d.condition is None:
                    taken0 = taken1 = None
                else:
                    taken0 = truth(worlds[0].evaluate(d.condition))
                    taken1 = truth(worlds[1].evaluate(d.condition))
                (outer0, outer1), (before0, before1) = frame.outer, frame.taken
                d.reached = (tri_and(outer0, tri_not(before0)), tri_and(outer1, tri_not(before1)))
                new_state = (tri_and(outer0, tri_and(tri_not(before0), taken0)),
                             tri_and(outer1, tri_and(tri_not(before1), taken1)))
                frame.taken = (tri_or(before0, taken0), tri_or(before1, taken1))
                wave = frame.wave_outer
                if name not in ("else", "ifndef", "elifndef"):
                    # object-like macros are spliced in only where the condition names one
                    text = _expand_names(arg, macros) if expandable and not expandable.isdisjoint(
                        _NAMES.findall(arg)) else arg
                    if WAVE64_CONDITION.search(text):
                        wave = frame.branch_wave = 64
                    elif WAVE32_CONDITION.search(text):
                        wave = frame.branch_wave = 32
                elif name == "else" and frame.branch_wave:
                    # the other side of an arch test: `#if IS_CDNA` 64 `#else` 32 (RDNA) is deliberate
                    wave = 96 - frame.branch_wave
            # the directive's own lines belong to the enclosing code, what follows to the branch
            regions.append(Region(line, frame.outer[0], frame.outer[1], frame.wave_outer))
            current = new_state
            regions.append(Region(end_line + 1, current[0], current[1], wave))
        elif name in ("define", "undef"):
            mm = re.match(r"\s*([A-Za-z_]\w*)(\([^)]*\))?", arg)
            if not mm:
                continue
            macro = mm.group(1)
            if name == "define":
                body = arg[mm.end():].strip()
                md = MacroDef(macro, line, body, mm.group(2), current[0], current[1])
                macros.setdefault(macro, []).append(md)
                if md.params is None and md.body:
                    expandable.add(macro)
                else:
                    expandable.discard(macro)
                if md.params is None:
                    node = parse_condition(body) if body else Node("num", 1)
                    for w, state in zip(worlds, current):
                        if state is True:
                            w.local[macro] = (True, node)
                        elif state is None:
                            w.local[macro] = (None, None)
                        elif macro not in w.local and current != (False, False):
                            # defined here only in code the other platform compiles
                            # (``#if __CUDACC_VER_MAJOR__ >= 11`` ``#define X_CP_ASYNC_ENABLED``):
                            # as the file reads it, undefined on this one
                            w.local[macro] = (False, None)
            else:
                for w, state in zip(worlds, current):
                    if state is True:
                        w.local[macro] = (False, None)
                    elif state is None:
                        w.local[macro] = (None, None)
    terms = rocm_extra | cuda_extra | frozenset(name for name, on_cuda, on_rocm in seeded if on_cuda != on_rocm)
    return Preprocessed(lexed, directives, _merge(regions), macros, base, terms)


def _expand_names(text: str, macros: Dict[str, List[MacroDef]], depth: int = 0) -> str:
    """``text`` with object-like macros defined in the file spliced in (for reading arch tests
    such as ``#if IS_CDNA`` where ``IS_CDNA`` lists the gfx macros)."""
    if depth > 4 or not macros:
        return text

    def repl(m: "re.Match[str]") -> str:
        defs = macros.get(m.group(0))
        if defs and defs[-1].params is None and defs[-1].body:
            return "(" + _expand_names(defs[-1].body, macros, depth + 1) + ")"
        return m.group(0)

    return re.sub(r"[A-Za-z_]\w*", repl, text)


def _merge(regions: List[Region]) -> List[Region]:
    out: List[Region] = []
    for r in regions:
        if out and out[-1].line == r.line:
            out[-1] = r
        elif out and (out[-1].cuda, out[-1].rocm, out[-1].wave) == (r.cuda, r.rocm, r.wave):
            continue
        else:
            out.append(r)
    return out


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
    for m, start, end in _directive_spans(code):
        name = m.group(1) or ""
        if name not in ("if", "elif", "define"):
            continue
        arg = code[m.end():end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        if name == "define":
            mm = re.match(r"\s*[A-Za-z_]\w*(?:\([^)]*\))?", arg)
            arg = arg[mm.end():] if mm else ""
            if not arg.strip():
                continue
        node = parse_condition(arg)
        if node is None:  # unparsable: any ROCm name in it may be read by value
            out.update(n for n in re.findall(r"[A-Za-z_]\w*", arg) if is_rocm_macro(n, extra))
            continue
        out.update(n for n, by_value in macro_tests(node) if by_value and is_rocm_macro(n, extra))
    return frozenset(out)


def _fold(node: Optional[Node], rocm_extra: FrozenSet[str], zero: FrozenSet[str] = frozenset()) -> Union[int, str, None]:
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
            v = _binary(op, a, b)
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


def nvidia_view(text: str, rocm_macros: Iterable[str] = (), zero: Iterable[str] = (),
                lines: bool = False) -> List[str]:
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
        if not live:
            return
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

    for m, start, end in _directive_spans(code):
        segment = code[pos:start]
        emit_code(segment, line)
        line += segment.count("\n")
        directive_lines = code.count("\n", start, end)
        pos = end
        name = m.group(1) or ""
        arg = code[m.end():end].replace("\\\r\n", " ").replace("\\\n", " ").strip()
        if name not in _CONDITIONALS:
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
            if name in ("if", "elif"):
                node = parse_condition(arg)
                folded = _fold(node, rocm_extra, zero_set) if node is not None else "?" + _SPACE.sub("", arg)
            else:
                word = re.match(r"\s*([A-Za-z_]\w*)", arg)
                node = Node("defined", word.group(1) if word else "")
                if name.endswith("ndef"):
                    node = Node("unary", "!", (node,))
                folded = _fold(node, rocm_extra, zero_set)
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
