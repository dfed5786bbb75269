"""The ``#if`` expressions of the preprocessor model, on two platforms: what each platform defines
(``ROCM_DEFINED``, ``CUDA_ONLY`` ...), the condition parser (``parse_condition``, ``Node``), the
three-valued evaluator of one platform (``Platform``) and Kleene's logic (``tri_and`` ...).
``rocm_lint.cpp.preproc`` applies them to a file's directives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

Tri = Optional[bool]  # True, False, or None (unknown)
Value = Optional[int]  # an integer, or None (unknown)

# -- what each platform defines ---------------------------------------------------------------
# Defined in ROCm builds only (``defined(X)`` is 1 on ROCm, 0 on NVIDIA).
ROCM_DEFINED = frozenset(
    {
        "USE_ROCM",
        "__HIP_PLATFORM_AMD__",
        "__HIP_PLATFORM_HCC__",
        "__HIPCC__",
        "__HIP__",
        "HIP_VERSION",
        "HIP_VERSION_MAJOR",
        "HIP_VERSION_MINOR",
        "HIP_VERSION_PATCH",
        "ROCM_VERSION",
        "ROCM_VERSION_MAJOR",
        "TORCH_HIP_VERSION",
        "__HIP_ROCclr__",
        "USE_ROCM_ATTENTION",
    }
)
# Only in some ROCm compilations (the device pass, one GPU arch): 0 on NVIDIA, unknown on ROCm.
ROCM_SOMETIMES = frozenset(
    {
        "__HIP_DEVICE_COMPILE__",
        "__AMDGCN__",
        "__AMDGPU__",
        "__AMDGCN_WAVEFRONT_SIZE",
        "__AMDGCN_WAVEFRONT_SIZE__",
        "__GFX8__",
        "__GFX9__",
        "__GFX10__",
        "__GFX11__",
        "__GFX12__",
    }
)
# Of those, the on/off flags: a ROCm build that defines one gives it a nonzero value
# (``-DUSE_ROCM`` is ``-DUSE_ROCM=1``), so ``#if USE_ROCM`` is taken there.
ROCM_FLAGS = frozenset(
    {
        "USE_ROCM",
        "__HIP_PLATFORM_AMD__",
        "__HIP_PLATFORM_HCC__",
        "__HIPCC__",
        "__HIP__",
        "__HIP_ROCclr__",
        "USE_ROCM_ATTENTION",
    }
)
_GFX_MACRO = re.compile(r"__gfx\w+__$")
# Defined (in some compilations) on NVIDIA only: unknown there, 0 under HIP-Clang.
CUDA_ONLY = frozenset(
    {
        "__CUDA_ARCH__",
        "__CUDA_ARCH_LIST__",
        "CUDA_VERSION",
        "CUDART_VERSION",
        "__CUDACC_VER_MAJOR__",
        "__CUDACC_VER_MINOR__",
        "__CUDACC_VER_BUILD__",
        "__NVCC__",
        "__CUDACC_RDC__",
        "__NVCOMPILER",
        "__HIP_PLATFORM_NVIDIA__",
        "__HIP_PLATFORM_NVCC__",
        "CUDNN_VERSION",
        "CUBLAS_VERSION",
        "NCCL_VERSION_CODE",
        "__CUDA_ARCH_SPECIFIC__",
        "__CUDA_ARCH_FAMILY_SPECIFIC__",
        "__CUDA__",
    }
)
_CUDA_FEATURE_MACRO = re.compile(r"__CUDA_ARCH_FEAT_\w+$")
# A branch taken only on wave64 hardware (gfx9: GCN5/CDNA) or only on wave32 hardware
# (gfx10+: RDNA): the matching hard-coded wave size is right there.
WAVE64_CONDITION = re.compile(
    r"(?<!!)\b(?:defined\s*(?:\(\s*)?)?(?:__GFX9__|__gfx9\w*__|\w*CDNA\w*)"
    r"|__AMDGCN_WAVEFRONT_SIZE(?:__)?\s*==\s*64"
)
WAVE32_CONDITION = re.compile(
    r"(?<!!)\b(?:defined\s*(?:\(\s*)?)?(?:__GFX1[0-2]__|__gfx1[0-2]\w*__|\w*RDNA\w*)"
    r"|__AMDGCN_WAVEFRONT_SIZE(?:__)?\s*==\s*32"
)

CUDA, ROCM = "cuda", "rocm"


def is_rocm_macro(name: str, extra: Iterable[str] = ()) -> bool:
    return name in ROCM_DEFINED or name in ROCM_SOMETIMES or bool(_GFX_MACRO.match(name)) or name in extra


def is_cuda_macro(name: str, extra: Iterable[str] = ()) -> bool:
    return name in CUDA_ONLY or bool(_CUDA_FEATURE_MACRO.match(name)) or name in extra


# -- expressions ----------------------------------------------------------------------------
_EXPR_TOKEN = re.compile(
    r"""
    (?P<num>0[xX][0-9a-fA-F']+|\d[\d']*)[uUlL]*
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),])
  | (?P<char>'(?:[^'\\]|\\.)*')
  | (?P<other>\S)
""",
    re.X,
)


@dataclass(frozen=True)
class Node:
    kind: str  # num, name, defined, call, unary, binary, ternary
    value: object = None  # int (num), str (name/defined/call text), operator
    args: Tuple["Node", ...] = ()


class _Parser:
    BINARY = [
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
    ]

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
            return Node(
                "num",
                int(text, 16)
                if text[:2].lower() == "0x"
                else int(text, 8 if text.startswith("0") and len(text) > 1 else 10),
            )
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


def apply_binary(op: str, a: Value, b: Value) -> Value:
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
        return {
            "|": lambda: a | b,
            "^": lambda: a ^ b,
            "&": lambda: a & b,
            "==": lambda: int(a == b),
            "!=": lambda: int(a != b),
            "<": lambda: int(a < b),
            ">": lambda: int(a > b),
            "<=": lambda: int(a <= b),
            ">=": lambda: int(a >= b),
            "<<": lambda: a << min(b, 64),
            ">>": lambda: a >> min(b, 64),
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "/": lambda: int(a / b) if b else None,
            "%": lambda: a % b if b else None,
        }[op]()
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
            return apply_binary(
                node.value, self.evaluate(node.args[0], depth), self.evaluate(node.args[1], depth)
            )
        if k == "ternary":
            c = self.evaluate(node.args[0], depth)
            a, b = self.evaluate(node.args[1], depth), self.evaluate(node.args[2], depth)
            if c is None:
                return a if a == b else None
            return a if c else b
        return None


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
