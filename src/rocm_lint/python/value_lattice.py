"""The value-flow layer's lattice (:mod:`rocm_lint.python.values`): what an expression may be on
one platform (:class:`Value`: a set of options and whether it is complete) and on both
(:class:`Denotation`).  An option is an atom: ``("c", type name, constant)``, ``("t", qualified
name)`` for a torch object, or :data:`TRUTHY`/:data:`FALSY` for a value of no known identity."""

from __future__ import annotations

from typing import FrozenSet, Iterable, List, NamedTuple, Optional

from rocm_lint.domain import NVIDIA, ROCM

MAX_OPTIONS = 8  # a value with more possible results is unknown
PLATFORMS = (NVIDIA, ROCM)
TRUTHY = ("truthy",)
FALSY = ("falsy",)
# torch attributes whose value depends on the build: (on NVIDIA, on ROCm)
_BUILD_VALUES = {
    "torch.version.hip": (("c", "NoneType", None), TRUTHY),
    "torch.version.cuda": (TRUTHY, ("c", "NoneType", None)),
    "torch.utils.cpp_extension.IS_HIP_EXTENSION": (("c", "bool", False), ("c", "bool", True)),
}


def atom(v: object) -> tuple:
    return ("c", type(v).__name__, v)  # the type keeps True and 1 apart


def truth_of(atom: tuple) -> Optional[bool]:
    if atom[0] == "c":
        try:
            return bool(atom[2])
        except Exception:  # pragma: no cover - constants are plain data
            return None
    return atom is not FALSY and atom != FALSY


class Value(NamedTuple):
    """What an expression may be on one platform (see the module docstring)."""

    options: FrozenSet[tuple] = frozenset()
    complete: bool = False

    def truth(self) -> Optional[bool]:
        """True/False when every option agrees and nothing else is possible."""
        if not self.complete or not self.options:
            return None
        truths = {truth_of(a) for a in self.options}
        return truths.pop() if len(truths) == 1 else None

    def constants(self) -> List[object]:
        """The constant options (the value may be something else unless ``complete``)."""
        return [a[2] for a in self.options if a[0] == "c"]

    def constant(self) -> object:
        """The one constant it certainly is, else ``...``."""
        if self.complete and len(self.options) == 1:
            (atom,) = self.options
            if atom[0] == "c":
                return atom[2]
        return ...

    def alias(self) -> Optional[str]:
        """The torch object it certainly is (``torch.backends.cuda.matmul``), else None."""
        if self.complete and len(self.options) == 1:
            (atom,) = self.options
            if atom[0] == "t":
                return atom[1]
        return None


UNKNOWN = Value()


def const(v: object) -> Value:
    return Value(frozenset({atom(v)}), True)


def join(values: Iterable[Value]) -> Value:
    options: set = set()
    complete = True
    for v in values:
        options |= v.options
        complete = complete and v.complete
    if len(options) > MAX_OPTIONS:
        return UNKNOWN
    return Value(frozenset(options), complete)


def torch_value(qual: str, platform: str) -> Value:
    build = _BUILD_VALUES.get(qual)
    if build is not None:
        return Value(frozenset({build[PLATFORMS.index(platform)]}), True)
    return Value(frozenset({("t", qual)}), True)


class Denotation(NamedTuple):
    nvidia: Value
    rocm: Value

    def on(self, platform: str) -> Value:
        return self.rocm if platform == ROCM else self.nvidia

    def alias(self) -> Optional[str]:
        """The torch object it is on both platforms, else None."""
        a = self.nvidia.alias()
        return a if a is not None and a == self.rocm.alias() else None


def apply_constants(fn, parts: List[Value]) -> Value:
    """``fn`` over every combination of constant options (all parts complete)."""
    if not all(p.complete and p.options and all(a[0] == "c" for a in p.options) for p in parts):
        return UNKNOWN
    combos: List[tuple] = [()]
    for p in parts:
        combos = [c + (a[2],) for c in combos for a in p.options]
        if len(combos) > MAX_OPTIONS:
            return UNKNOWN
    results = set()
    for combo in combos:
        try:
            result = fn(*combo)
            hash(result)
        except Exception:
            return UNKNOWN
        if isinstance(result, str) and len(result) > 4096:
            return UNKNOWN
        results.add(atom(result))
    return Value(frozenset(results), True)
