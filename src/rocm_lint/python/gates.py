"""Gate analysis: does a test expression tell us we are on ROCm, or on NVIDIA?

``facts(expr)`` answers with a pair ``(when_true, when_false)``, each ROCM,
NVIDIA or None (nothing known).  ``torch.version.hip is not None`` gives
``(ROCM, NVIDIA)``; ``torch.version.cuda`` gives ``(NVIDIA, ROCM)``; ``not``
swaps; ``and``/``or`` combine as logic says.  NVIDIA here means "not ROCm":
code that only runs where the test says NVIDIA is never flagged, and code that
only runs on ROCm was written for ROCm on purpose (only rules registered with
``rocm_side=True`` report there).

``torch.cuda.is_available()`` and ``tensor.is_cuda`` are *not* gates: both are
True on ROCm, where HIP masquerades as CUDA.  ``torch.cuda.is_available()`` being
*False* does tell us something: there is no GPU, so no ROCm hazard can happen
there; it counts as NVIDIA ("not on a ROCm GPU") when false.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from typing import Callable, Dict, Iterable, Iterator, Optional, Set, Tuple

from rocm_lint.python.names import ImportMap, dotted
from rocm_lint.python.predicates import binding_kind, constant_only, function_scope, shape, summarize
from rocm_lint.domain import NVIDIA, ROCM  # noqa: F401  (re-exported for the rules)
from rocm_lint.python.gate_control import ControlFlow, match_entry

Fact = Optional[str]
Facts = Tuple[Fact, Fact]
UNKNOWN: Facts = (None, None)
ON_ROCM: Facts = (ROCM, NVIDIA)
ON_NVIDIA: Facts = (NVIDIA, ROCM)

_HIP = "torch.version.hip"
_CUDA = "torch.version.cuda"
_CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
# Environment variables only a CUDA build sets (``FORCE_CUDA=1``, ``CUDA_VERSION`` of the
# nvidia/cuda images, ``TORCH_CUDA_ARCH_LIST``): a test of one is an NVIDIA fact when true.
# Deliberately not CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING and friends, which HIP honours too.
CUDA_BUILD_ENV = frozenset(
    {
        "FORCE_CUDA",
        "CUDA_VERSION",
        "CUDA_HOME",
        "CUDA_PATH",
        "TORCH_CUDA_ARCH_LIST",
        "CUDAARCHS",
        "CUDA_ARCH_LIST",
    }
)
_VERSION_STRINGS = ("torch.__version__", "torch.version.__version__")


def swap(f: Facts) -> Facts:
    return (f[1], f[0])


class GateAnalysis(ControlFlow):
    def __init__(
        self,
        imports: ImportMap,
        rocm_predicates: Iterable[str],
        cuda_predicates: Iterable[str],
        external: Optional[Callable[[str], Optional[Tuple[str, Optional[Facts]]]]] = None,
    ) -> None:
        self.imports = imports
        # Predicates another project module defines (``from .utils import on_amd``).
        self.external = external
        self.rocm_predicates = tuple(rocm_predicates)
        self.cuda_predicates = tuple(cuda_predicates)
        # Inferred from the module: ``IS_HIP = torch.version.hip is not None``,
        # ``self.is_rocm = ...``, ``def is_hip(): return torch.version.hip is not None``.
        self.bound_names: Dict[str, Facts] = {}
        self.bound_attrs: Dict[str, Facts] = {}
        self.bound_functions: Dict[str, Facts] = {}
        # Platform names: values that are "hip" on ROCm (``DEVICE_TYPE = get_device_type()`` with
        # ``if is_hip(): return "hip"``), and the functions returning them.
        self.device_names: Set[str] = set()
        self.device_functions: Set[str] = set()
        # Module-level functions that return a constant (no predicate, whatever their name).
        self.constant_functions: Set[str] = set()
        self._cache: Dict[int, Tuple[ast.AST, Facts]] = {}
        # A function's locals while its body is summarised (``local_scope``).
        self._scope: Optional[Dict[str, Optional[ast.AST]]] = None
        self._scope_facts: Dict[str, Facts] = {}
        self._shapes: Dict[int, Tuple[ast.AST, Optional[Dict[str, Optional[ast.AST]]]]] = {}

    # -- learning the module's own predicates -------------------------------------
    def learn_assignment(self, target: ast.AST, value: ast.AST) -> None:
        f = self.facts(value)
        if f == UNKNOWN:
            return
        self._cache.clear()  # a new predicate name can change earlier answers
        if isinstance(target, ast.Name):
            self.bound_names.setdefault(target.id, f)
        elif isinstance(target, ast.Attribute):
            self.bound_attrs.setdefault(target.attr, f)

    def learn_flag(self, name: str, facts: Facts) -> None:
        """A module flag only a platform branch turns on (:func:`predicates.platform_flags`)."""
        self._cache.clear()
        self.bound_names.setdefault(name, facts)

    def learn_named_predicate(self, fn: ast.AST) -> None:
        """``def rocm_build() -> bool:`` (any body): a boolean function named for ROCm/HIP/AMD is
        taken for a ROCm predicate, as a reader would."""
        if fn.name in self.bound_functions or fn.args.args and len(fn.args.defaults) < len(fn.args.args):
            return
        tokens = set(re.split(r"_+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", fn.name).lower()))
        if not tokens & {"rocm", "hip", "amd"}:
            return
        returns = fn.returns
        annotated = (
            isinstance(returns, ast.Name)
            and returns.id == "bool"
            or isinstance(returns, ast.Constant)
            and returns.value == "bool"
        )
        values = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)]
        boolish = values and all(
            v is not None
            and (
                isinstance(v, ast.Constant)
                and isinstance(v.value, bool)
                or isinstance(v, (ast.Compare, ast.UnaryOp))
                or isinstance(v, ast.Call)
                and dotted(v.func) == "bool"
            )
            for v in values
        )
        if annotated or boolish:
            self._cache.clear()
            self.bound_functions[fn.name] = ON_ROCM

    def learn_device_function(self, fn: ast.AST) -> None:
        """A function that returns the string "hip" somewhere names the platform."""
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Return)
                and isinstance(node.value, ast.Constant)
                and node.value.value == "hip"
            ):
                self.device_functions.add(fn.name)
                return

    def learn_device_name(self, target: ast.AST, value: ast.AST) -> None:
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Call)
            and not value.args
            and isinstance(value.func, ast.Name)
            and value.func.id in self.device_functions
        ):
            self.device_names.add(target.id)

    def is_device_name(self, e: ast.AST) -> bool:
        """Is ``e`` a platform name ("hip" on ROCm, "cuda" on NVIDIA)?"""
        if (
            isinstance(e, ast.Attribute)
            and e.attr == "backend"
            and isinstance(e.value, ast.Call)
            and isinstance(e.value.func, ast.Attribute)
            and e.value.func.attr == "get_current_target"
        ):
            return True  # Triton's target: ``driver.active.get_current_target().backend`` is "hip" on ROCm
        if isinstance(e, ast.Call) and not e.args and isinstance(e.func, ast.Name):
            if e.func.id in self.device_functions:
                return True
            e = e.func
        if isinstance(e, ast.Name) and e.id in self.device_names:
            return True
        if self.external is not None and isinstance(e, (ast.Name, ast.Attribute)):
            qual = self.imports.qualname(e)
            if qual is not None and qual != dotted(e):
                found = self.external(qual)
                return found is not None and found[0] == "device"
        return False

    def learn_functions(
        self,
        functions: Iterable[ast.AST],
        may_matter: Callable[[ast.AST], bool],
        text_of: Optional[Callable[[ast.AST], Optional[str]]] = None,
    ) -> bool:
        """Functions and properties that compute a platform test in any shape
        (:func:`rocm_lint.python.predicates.summarize`): ``def _is_hip(): hip = ...; return hip``,
        ``@functools.cache``d ones, ``@property def is_amd(self)`` (read as ``self.is_amd``).
        A name defined more than once binds only when every definition agrees.  True when a
        new predicate was learned."""
        by_name: Dict[str, list] = {}
        for fn in functions:
            by_name.setdefault(fn.name, []).append(fn)
        learned = False
        for name, defs in by_name.items():
            if name in self.bound_functions or name in self.bound_attrs:
                continue
            if not all(self._may_summarize(fn, may_matter) for fn in defs):
                continue  # (what _summary answers UNKNOWN for, asked first: most functions end here)
            kinds = {binding_kind(fn) for fn in defs}
            if len(kinds) != 1 or None in kinds:
                continue
            found: Set[Facts] = set()
            for fn in defs:
                found.add(self._summary(fn, may_matter, text_of))
                if UNKNOWN in found or len(found) > 1:
                    break
            if len(found) != 1 or UNKNOWN in found:
                continue
            self._cache.clear()
            (self.bound_attrs if kinds == {"attr"} else self.bound_functions)[name] = found.pop()
            learned = True
        return learned

    def _may_summarize(self, fn: ast.AST, may_matter: Callable[[ast.AST], bool]) -> bool:
        """Could ``_summary`` find a fact: a shape already read, or a platform word in it?"""
        known = self._shapes.get(id(fn))
        if known is not None and known[0] is fn:
            return known[1] is not None
        return may_matter(fn)

    def _summary(
        self,
        fn: ast.AST,
        may_matter: Callable[[ast.AST], bool],
        text_of: Optional[Callable[[ast.AST], Optional[str]]],
    ) -> Facts:
        """``summarize(fn)``; the function's shape is read once (learning runs a few rounds)."""
        key = id(fn)
        known = self._shapes.get(key)
        if known is None or known[0] is not fn:
            if not may_matter(fn):
                return UNKNOWN  # no platform word yet: asked again once a predicate is learned
            statements = shape(fn)
            if statements is None:
                self._shapes[key] = (fn, None)
                return UNKNOWN
            known = self._shapes[key] = (fn, function_scope(fn, statements, text_of(fn) if text_of else None))
        return UNKNOWN if known[1] is None else summarize(fn, self, known[1])

    def learn_constant_function(self, fn: ast.AST) -> None:
        """``def is_hip(): return False``: no platform test, whatever its name says (asked only
        of names the configured predicates would match)."""
        if constant_only(fn) and (
            match_entry(fn.name, self.rocm_predicates) or match_entry(fn.name, self.cuda_predicates)
        ):
            self._cache.clear()
            self.constant_functions.add(fn.name)

    @contextmanager
    def local_scope(self, scope: Dict[str, Optional[ast.AST]]) -> Iterator[None]:
        """Evaluate tests inside a function: ``scope`` maps its local names to the value they
        are bound to once (None: unknown, a parameter or a name bound twice)."""
        saved = (self._scope, self._scope_facts, self._cache)
        self._scope, self._scope_facts, self._cache = scope, {}, {}
        try:
            yield
        finally:
            self._scope, self._scope_facts, self._cache = saved

    def _local(self, name: str) -> Facts:
        facts = self._scope_facts.get(name)
        if facts is None:
            self._scope_facts[name] = UNKNOWN  # while computing (a = b; b = a): unknown
            value = self._scope[name]
            facts = self._scope_facts[name] = self.facts(value) if value is not None else UNKNOWN
        return facts

    # -- evaluating a test ----------------------------------------------------------
    def facts(self, e: ast.AST) -> Facts:
        """(when_true, when_false) for a test expression; memoised per node (the walk asks
        about the same tests again when it tracks early exits)."""
        key = id(e)
        cached = self._cache.get(key)
        if cached is not None and cached[0] is e:
            return cached[1]
        result = self._facts(e)
        self._cache[key] = (e, result)
        return result

    def _facts(self, e: ast.AST) -> Facts:
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return swap(self.facts(e.operand))
        if isinstance(e, ast.BoolOp):
            parts = [self.facts(v) for v in e.values]
            if isinstance(e.op, ast.And):
                # true: every operand true, so any operand's truth fact holds;
                # false: some operand false, known only if all agree.
                return (_any(p[0] for p in parts), _all(p[1] for p in parts))
            return (_all(p[0] for p in parts), _any(p[1] for p in parts))
        if isinstance(e, ast.NamedExpr):
            return self.facts(e.value)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return self._compare(e.left, e.ops[0], e.comparators[0])
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, (ast.Name, ast.Attribute)):
            return self._reference(e)
        if isinstance(e, ast.Subscript):
            if self._cuda_env(e):
                return (NVIDIA, None)
            # torch.version.hip.split(".")[0] only evaluates without error on ROCm.
            return (self._root_fact(e), None)
        return UNKNOWN

    def _cuda_env(self, e: ast.AST) -> bool:
        """``os.getenv("FORCE_CUDA")``, ``os.environ.get("CUDA_VERSION")``, ``os.environ["CUDA_HOME"]``:
        a build setting only a CUDA build sets (see :data:`CUDA_BUILD_ENV`)."""
        if isinstance(e, ast.Call) and e.args and isinstance(e.args[0], ast.Constant):
            qual = self.imports.qualname(e.func)
            return qual in ("os.getenv", "os.environ.get") and e.args[0].value in CUDA_BUILD_ENV
        if isinstance(e, ast.Subscript) and self.imports.qualname(e.value) == "os.environ":
            key = e.slice
            return isinstance(key, ast.Constant) and key.value in CUDA_BUILD_ENV
        return False

    def _reference(self, e: ast.AST, called: bool = False) -> Facts:
        if isinstance(e, ast.Name):
            if self._scope is not None and e.id in self._scope:
                return UNKNOWN if called else self._local(e.id)  # a local of the function summarised
            if called and e.id in self.constant_functions:
                return UNKNOWN
        qual = self.imports.qualname(e)
        if qual == _HIP:
            return ON_ROCM
        if qual == _CUDA:
            return ON_NVIDIA
        if isinstance(e, ast.Name) and e.id in self.bound_names:
            return self.bound_names[e.id]
        if isinstance(e, ast.Attribute) and e.attr in self.bound_attrs:
            return self.bound_attrs[e.attr]
        if qual == _CUDA_HOME:
            # torch sets it only on CUDA builds (``... if torch.version.cuda else None``); None
            # says nothing (a CUDA build without a toolkit).
            return (NVIDIA, None)
        tail = dotted(e)
        if self.external is not None and qual is not None and tail is not None and qual != tail:
            found = self.external(qual)  # an imported name: what its module binds it to
            if found is not None and found[0] == ("call" if called else "value") and found[1] != UNKNOWN:
                return found[1]
        if tail is not None:
            if match_entry(tail, self.rocm_predicates):
                return ON_ROCM
            if match_entry(tail, self.cuda_predicates):
                return ON_NVIDIA
        return UNKNOWN

    def _call(self, e: ast.Call) -> Facts:
        func = e.func
        qual = self.imports.qualname(func)
        if self._cuda_env(e):
            return (NVIDIA, None)
        if qual in ("bool",) and len(e.args) == 1:
            return self.facts(e.args[0])
        if qual == "getattr" and len(e.args) >= 2 and self.imports.qualname(e.args[0]) == "torch.version":
            attr = e.args[1]
            if isinstance(attr, ast.Constant) and attr.value == "hip":
                return ON_ROCM
            if isinstance(attr, ast.Constant) and attr.value == "cuda":
                return ON_NVIDIA
            return UNKNOWN
        if (
            qual == "hasattr"
            and len(e.args) == 2
            and self.imports.qualname(e.args[0]) == "torch.version"
            and isinstance(e.args[1], ast.Constant)
            and e.args[1].value == "hip"
        ):
            # True on every modern torch; False only on builds that predate ROCm support.
            return (None, NVIDIA)
        if qual == "torch.cuda.is_available" and not e.args:
            return (None, NVIDIA)  # False: no GPU at all, so no ROCm hazard either
        if not e.args and not e.keywords:
            if isinstance(func, ast.Name) and self._scope is not None and func.id in self._scope:
                return UNKNOWN  # a local callable
            if isinstance(func, ast.Name) and func.id in self.bound_functions:
                return self.bound_functions[func.id]
            if isinstance(func, ast.Attribute) and func.attr in self.bound_functions:
                return self.bound_functions[func.attr]
            ref = self._reference(func, called=True)
            if ref != UNKNOWN:
                return ref
        # torch.version.hip.startswith("6"): evaluates (truthily) only on ROCm.
        return (self._root_fact(func), None)

    def _compare(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> Facts:
        platform = self._platform_name_test(left, op, right)
        if platform is not None:
            return platform
        if isinstance(op, (ast.Eq, ast.NotEq)):
            for a, b in ((left, right), (right, left)):
                if self._cuda_env(a) and isinstance(b, ast.Constant):
                    unset = b.value in (None, "", "0", "false", "False", "OFF", "off")
                    if isinstance(op, ast.Eq) != unset:  # == "1" / != "0": a CUDA build asked for
                        return (NVIDIA, None)
                    return (None, NVIDIA)
        if isinstance(op, (ast.Is, ast.Eq, ast.IsNot, ast.NotEq)):
            for a, b in ((left, right), (right, left)):
                if isinstance(b, ast.Constant) and b.value is None:
                    f = self.facts(a)
                    return swap(f) if isinstance(op, (ast.Is, ast.Eq)) else f
                if isinstance(b, ast.Constant) and isinstance(b.value, bool):
                    f = self.facts(a)
                    positive = b.value == isinstance(op, (ast.Is, ast.Eq))
                    return f if positive else swap(f)
        if (
            isinstance(op, (ast.In, ast.NotIn))
            and isinstance(left, ast.Constant)
            and left.value in ("rocm", "hip", "+rocm")
            and self.imports.qualname(right) in _VERSION_STRINGS
        ):
            return ON_ROCM if isinstance(op, ast.In) else swap(ON_ROCM)
        if (
            isinstance(op, (ast.In, ast.NotIn))
            and isinstance(left, ast.Constant)
            and left.value in ("cu", "+cu")
            and self.imports.qualname(right) in _VERSION_STRINGS
        ):
            # a CUDA build's local label (`2.4.0+cu121`): true only on NVIDIA (PyPI's default CUDA
            # wheel has no label, so false says nothing)
            return (NVIDIA, None) if isinstance(op, ast.In) else (None, NVIDIA)
        # torch.version.hip >= "6.0", version.parse(torch.version.cuda) >= ...:
        # true only where the version string exists.
        fact = self._root_fact(left) or self._root_fact(right)
        return (fact, None)

    def _platform_name_test(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> Optional[Facts]:
        """``DEVICE_TYPE == "hip"`` (ROCm), ``backend != "rocm"``; ``DEVICE_TYPE == "cuda"`` and
        ``DEVICE_TYPE in ("xpu", "hip")`` where the name is a platform name (a plain
        ``device.type == "cuda"`` is True on ROCm too: no fact)."""
        if isinstance(op, (ast.Eq, ast.NotEq)):
            for a, b in ((left, right), (right, left)):
                if isinstance(b, ast.Constant) and isinstance(b.value, str):
                    if b.value in ("hip", "rocm"):
                        return ON_ROCM if isinstance(op, ast.Eq) else swap(ON_ROCM)
                    if b.value == "cuda" and self.is_device_name(a):
                        return (NVIDIA, None) if isinstance(op, ast.Eq) else (None, NVIDIA)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            values = {e.value for e in right.elts if isinstance(e, ast.Constant)}
            facts: Optional[Facts] = None
            if values & {"hip", "rocm"}:
                facts = (ROCM if values <= {"hip", "rocm"} else None, NVIDIA)  # absent: not ROCm
            elif "cuda" in values and self.is_device_name(left):
                facts = (NVIDIA, None)
            if facts is not None:
                return facts if isinstance(op, ast.In) else swap(facts)
        return None

    def _root_fact(self, e: ast.AST, depth: int = 4) -> Fact:
        """ROCM/NVIDIA when ``e`` reads torch.version.hip/cuda: directly, through a method or
        subscript chain (``torch.version.hip.split(".")[0]``), or as a call argument
        (``float(torch.version.cuda)``, ``version.parse(torch.version.cuda)``), a few levels deep."""
        if depth < 0:
            return None
        if isinstance(e, ast.Attribute):
            qual = self.imports.qualname(e)
            if qual == _HIP:
                return ROCM
            if qual == _CUDA:
                return NVIDIA
            return self._root_fact(e.value, depth - 1)
        if isinstance(e, ast.Subscript):
            return self._root_fact(e.value, depth - 1)
        if isinstance(e, ast.Call):
            for child in [e.func, *e.args]:
                fact = self._root_fact(child, depth - 1)
                if fact is not None:
                    return fact
        return None


def _any(facts: Iterable[Fact]) -> Fact:
    for f in facts:
        if f is not None:
            return f
    return None


def _all(facts: Iterable[Fact]) -> Fact:
    facts = list(facts)
    first = facts[0] if facts else None
    return first if first is not None and all(f == first for f in facts) else None
