"""One value-flow layer for Python: what an expression denotes on each platform.

Rules ask ``ctx.values.denote(node)`` (or ``ctx.values.value(node, ROCM)``) instead of walking
bindings themselves.  The answer is a :class:`Denotation`, one :class:`Value` per platform
(``NVIDIA``: a CUDA build of torch, ``ROCM``: a ROCm build).  A value is a small lattice element:
the set of things the expression may evaluate to (``options``: constants, aliases of torch
objects such as ``torch.cuda`` or ``torch.backends.cuda.matmul``, a truthy or falsy value of no
known identity) and whether that set is ``complete``.  An incomplete value may also be anything
else (:data:`UNKNOWN` is the empty incomplete one); a complete value holds what the program
computes, always: the property tests run generated modules under a stub torch per platform and
hold the layer to it.

What it follows, in one module (scopes from :mod:`rocm_lint.python.value_scopes`): every
binding of a name in its scope (a join: the order of statements is not followed; a binding the
layer does not read, such as ``x += 1``, makes the name unknown), closures, imports
(``torch`` and its submodules are aliases; ``torch.version.hip`` is ``None`` on NVIDIA and
a string on ROCm), attribute chains, ``getattr(obj, "name")``, calls of the module's functions
(their ``return`` values with the call's arguments bound, the ``if`` branches a platform does
not take pruned, at most :data:`MAX_DEPTH` calls deep), parameters (the default where a caller
may rely on it, and the arguments of every call site in the module, positional or keyword;
open to anything when callers outside the module may exist), ternaries, ``and``/``or``/``not``,
comparisons, tuples, subscripts and arithmetic on constants.  Names imported from project
modules are asked through the project model (:data:`VALUE_EXPORTS`).  An import of a module
that only imports on NVIDIA (``domain.NVIDIA_ONLY_IMPORTS``) raises on ROCm: a function whose
``True`` needs one (``try: import cudnn`` / ``return True`` / ``except ImportError: return
False``) is ``False`` there.

Computed lazily, per module, on the first question, and memoized in the module's context
(which the project model keeps in the front end's workspace).
"""

from __future__ import annotations

import ast
import operator
from typing import Dict, List, NamedTuple, Optional, Tuple, cast

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.python.predicates import binding_kind
from rocm_lint.python.project import ExportedFacts
from rocm_lint.python.project_text import importable
from rocm_lint.python.value_lattice import (
    FALSY,
    PLATFORMS,
    TRUTHY,
    UNKNOWN,
    Denotation,
    apply_constants,
    Value,
    atom,
    const,
    join,
    torch_value,
    truth_of,
)
from rocm_lint.python.value_scopes import MISSING, Scopes, argument, nvidia_only_import, own_nodes, parameters

MAX_DEPTH = 4  # calls and parameters followed through
MAX_NESTING = 150  # expressions nested deeper are unknown
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class Frame(NamedTuple):
    scope: Optional[ast.AST]  # the def being evaluated (None: the module)
    bound: Optional[Tuple[Tuple[str, Value], ...]]  # its parameters, when a call is evaluated


class ValueFlow:
    """The layer for one module (``ctx.values``)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.scopes = Scopes(ctx.tree, script=not importable(ctx.path), text=ctx.text or "")
        self._memo: Dict[tuple, Value] = {}
        self._depth = 0  # expressions being evaluated
        self._calls = 0  # calls and parameters being followed

    # -- questions ---------------------------------------------------------------------
    def denote(self, node: ast.AST) -> Denotation:
        return Denotation(self.value(node, NVIDIA), self.value(node, ROCM))

    def value(self, node: ast.AST, platform: str) -> Value:
        return self._value(node, platform, Frame(self.scopes.scope_of(node), None))

    def callee(self, call: ast.Call) -> Optional[ast.AST]:
        """The ``def`` a call reaches, if the scope resolving its name binds it to that alone."""
        return self._function(call.func, Frame(self.scopes.scope_of(call), None))

    def default_relied_on(self, fn: ast.AST, name: str) -> bool:
        """May a call of ``fn`` leave parameter ``name`` to its default?"""
        callers = self.scopes.callers(fn)
        return callers.open or any(argument(fn, call, name) is MISSING for call, _ in callers.calls)

    # -- evaluation ----------------------------------------------------------------------
    def _value(self, node: ast.AST, platform: str, frame: Frame) -> Value:
        key = (id(node), platform, id(frame.scope), frame.bound)
        found = self._memo.get(key)
        if found is not None:
            return found
        if self._depth > MAX_NESTING:
            return UNKNOWN
        self._memo[key] = UNKNOWN  # while computing (a = b; b = a)
        self._depth += 1
        try:
            found = self._compute(node, platform, frame)
        except RecursionError:
            found = UNKNOWN
        finally:
            self._depth -= 1
        self._memo[key] = found
        return found

    def _compute(self, node: ast.AST, platform: str, frame: Frame) -> Value:
        if isinstance(node, ast.Constant):
            return const(node.value)
        if isinstance(node, ast.Name):
            return self._name(node.id, platform, frame)
        if isinstance(node, ast.Attribute):
            base = self._value(node.value, platform, frame)
            return self._attribute(base, node.attr, platform)
        if isinstance(node, ast.Call):
            return self._call(node, platform, frame)
        if isinstance(node, ast.NamedExpr):
            return self._value(node.value, platform, frame)
        if isinstance(node, ast.IfExp):
            test = self._value(node.test, platform, frame).truth()
            arms = [node.body] if test else [node.orelse] if test is False else [node.body, node.orelse]
            return join(self._value(a, platform, frame) for a in arms)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, platform, frame)
        if isinstance(node, ast.UnaryOp):
            inner = self._value(node.operand, platform, frame)
            if isinstance(node.op, ast.Not):
                truths = {truth_of(a) for a in inner.options}
                return join([Value(frozenset(atom(not t) for t in truths), inner.complete)])
            if isinstance(node.op, ast.USub):
                return apply_constants(operator.neg, [inner])
            return UNKNOWN
        if isinstance(node, ast.Tuple):
            return apply_constants(
                lambda *xs: tuple(xs), [self._value(e, platform, frame) for e in node.elts]
            )
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            parts = [self._value(node.left, platform, frame), self._value(node.right, platform, frame)]
            return apply_constants(_OPS[type(node.op)], parts)
        if isinstance(node, ast.Subscript):
            parts = [self._value(node.value, platform, frame), self._value(node.slice, platform, frame)]
            return apply_constants(operator.getitem, parts)
        if isinstance(node, ast.Compare):
            return self._compare(node, platform, frame)
        return UNKNOWN

    def _compare(self, node: ast.Compare, platform: str, frame: Frame) -> Value:
        parts = [self._value(e, platform, frame) for e in [node.left, *node.comparators]]
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            left, right = parts
            if right.options == {atom(None)} and right.complete and left.complete:
                is_none = set()
                for a in left.options:
                    if a == FALSY:
                        return self._gate(node, platform)
                    is_none.add(a == atom(None))
                flip = isinstance(node.ops[0], ast.IsNot)
                return Value(frozenset(atom(x != flip) for x in is_none), True)
        if len(node.ops) == 1 and type(node.ops[0]) in _OPS:
            found = apply_constants(_OPS[type(node.ops[0])], parts)
            if found.complete:
                return found
        return self._gate(node, platform)

    def _gate(self, node: ast.AST, platform: str) -> Value:
        """A test the layer cannot compute: what the gate analysis says of it (a ROCm test is
        falsy on NVIDIA ...), else unknown."""
        t, f = self.ctx.gates.facts(node)
        other = NVIDIA if platform == ROCM else ROCM
        if t == other:
            return Value(frozenset({FALSY}), True)
        if f == other:
            return Value(frozenset({TRUTHY}), True)
        return UNKNOWN

    def _boolop(self, node: ast.BoolOp, platform: str, frame: Frame) -> Value:
        stop = not isinstance(node.op, ast.And)  # ``or`` stops at a truthy operand
        options: set = set()
        complete = True
        for i, operand in enumerate(node.values):
            v = self._value(operand, platform, frame)
            complete = complete and v.complete
            if i == len(node.values) - 1:
                options |= v.options
                break
            options |= {a for a in v.options if truth_of(a) is stop}
            if v.complete and not any(truth_of(a) is not stop for a in v.options):
                break
        return join([Value(frozenset(options), complete)])

    def _attribute(self, base: Value, attr: str, platform: str) -> Value:
        if not base.complete or not base.options:
            return UNKNOWN
        results = []
        for option in base.options:
            if option[0] != "t":
                return UNKNOWN
            results.append(torch_value(f"{option[1]}.{attr}", platform))
        return join(results)

    # -- names -------------------------------------------------------------------------
    def _name(self, name: str, platform: str, frame: Frame) -> Value:
        scope = frame.scope
        while scope is not None:
            if isinstance(scope, ast.Lambda):
                return UNKNOWN  # lambda parameters and what a lambda closes over: not followed
            if name in parameters(scope):
                if frame.bound is not None and frame.scope is scope:
                    return dict(frame.bound).get(name, UNKNOWN)
                return self._parameter(scope, name, platform)
            table = self.scopes.table(scope)
            if name in table:
                own = frame if frame.scope is scope else Frame(scope, None)
                return self._bindings(table[name], platform, own)
            scope = self.scopes.outer.get(id(scope))
        bindings = self.scopes.table(None).get(name)
        if bindings is None:
            return UNKNOWN
        return self._bindings(bindings, platform, Frame(None, None), star=self.scopes.star)

    def _bindings(self, bindings: list, platform: str, frame: Frame, star: bool = False) -> Value:
        values = []
        for b in bindings:
            if isinstance(b, tuple) and b and b[0] == "import":
                values.append(self._imported(b[1], platform))
            elif isinstance(b, tuple):
                return UNKNOWN  # "unknown", or a def (a function object: not followed)
            else:
                values.append(self._value(b, platform, frame))
        found = join(values)
        return found._replace(complete=False) if star else found

    def _imported(self, qual: str, platform: str) -> Value:
        if qual == "torch" or qual.startswith("torch."):
            return torch_value(qual, platform)
        if "." not in qual.lstrip("."):
            return UNKNOWN
        exported = self.ctx.project.lookup(self.ctx.path, qual, VALUE_EXPORTS)
        if exported is None:
            return UNKNOWN
        return exported[0].on(platform) if exported[1] == "value" else UNKNOWN

    def _parameter(self, fn: ast.AST, name: str, platform: str) -> Value:
        """A parameter read inside ``fn`` with no call in view: its default where a caller may
        rely on it, and what every call site in the module passes."""
        params = parameters(fn)
        if params[name][0] in ("vararg", "kwarg"):
            return UNKNOWN
        callers = self.scopes.callers(fn)
        values = [] if not callers.open else [UNKNOWN]
        default = params[name][1]
        outer = Frame(self.scopes.outer.get(id(fn)), None)
        if default is not None and (
            callers.open or any(argument(fn, c, name) is MISSING for c, _ in callers.calls)
        ):
            values.append(self._value(default, platform, outer))
        if self._calls >= MAX_DEPTH:
            return UNKNOWN
        self._calls += 1
        try:
            return self._call_sites(fn, name, platform, callers, values, default)
        finally:
            self._calls -= 1

    def _call_sites(self, fn, name, platform, callers, values, default) -> Value:
        for call, scope in callers.calls:
            arg = argument(fn, call, name)
            if arg is None:
                return UNKNOWN  # behind *args / **kwargs
            if arg is not MISSING:
                values.append(self._value(arg, platform, Frame(scope, None)))
            elif default is None:
                continue  # a TypeError: no value
        return join(values) if values else UNKNOWN

    # -- calls -------------------------------------------------------------------------
    def _call(self, node: ast.Call, platform: str, frame: Frame) -> Value:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "bool") and self._builtin(func.id, frame):
            if func.id == "bool" and len(node.args) == 1:
                inner = self._value(node.args[0], platform, frame)
                truths = {truth_of(a) for a in inner.options}
                return join([Value(frozenset(atom(t) for t in truths), inner.complete)])
            if func.id == "getattr" and len(node.args) in (2, 3):
                name = self._value(node.args[1], platform, frame).constant()
                if isinstance(name, str):
                    return self._attribute(self._value(node.args[0], platform, frame), name, platform)
            return UNKNOWN
        target = self._function(func, frame)
        if target is not None:
            return self._returns(target, node, platform, frame)
        qual = self.ctx.imports.qualname(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if qual in ("importlib.import_module",) and len(node.args) == 1:
            name = self._value(node.args[0], platform, frame).constant()
            if isinstance(name, str) and (name == "torch" or name.startswith("torch.")):
                return torch_value(name, platform)
        if isinstance(func, ast.Name) and qual and "." in qual.lstrip(".") and not node.args:
            exported = self.ctx.project.lookup(self.ctx.path, qual, VALUE_EXPORTS)
            if exported is not None and exported[1] == "call":
                return exported[0].on(platform)
        return self._gate(node, platform)

    def _builtin(self, name: str, frame: Frame) -> bool:
        scope = frame.scope
        while scope is not None:
            if name in self.scopes.table(scope) or (
                not isinstance(scope, ast.Lambda) and name in parameters(scope)
            ):
                return False
            scope = self.scopes.outer.get(id(scope))
        return name not in self.scopes.table(None) and not self.scopes.star

    def _function(self, func: ast.AST, frame: Frame) -> Optional[ast.AST]:
        """The ``def`` a called name is bound to, alone, in the scope that resolves it."""
        if not isinstance(func, ast.Name):
            return None
        scope = frame.scope
        while scope is not None:
            if isinstance(scope, ast.Lambda) or func.id in parameters(scope):
                return None
            bindings = self.scopes.table(scope).get(func.id)
            if bindings is not None:
                break
            scope = self.scopes.outer.get(id(scope))
        else:
            bindings = self.scopes.table(None).get(func.id)
        if (
            not bindings
            or len(bindings) != 1
            or not isinstance(bindings[0], tuple)
            or bindings[0][0] != "def"
        ):
            return None
        return bindings[0][1]

    def _returns(self, fn: ast.AST, call: ast.Call, platform: str, frame: Frame) -> Value:
        """What a call of ``fn`` returns on ``platform``, its arguments bound."""
        if (
            isinstance(fn, ast.AsyncFunctionDef)
            or binding_kind(fn) != "call"
            or self._calls >= MAX_DEPTH
            or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fn))
        ):
            return UNKNOWN
        bound = []
        outer = Frame(self.scopes.outer.get(id(fn)), None)
        for name, (kind, default) in parameters(fn).items():
            arg = argument(fn, call, name)
            if arg is None or kind in ("vararg", "kwarg"):
                value = UNKNOWN
            elif arg is MISSING:
                value = self._value(default, platform, outer) if default is not None else UNKNOWN
            else:
                value = self._value(arg, platform, frame)
            bound.append((name, value))
        inner = Frame(fn, tuple(bound))
        results: List[Value] = []
        self._calls += 1
        try:
            if self._block(fn.body, platform, inner, results):
                results.append(const(None))  # falling off the end
        finally:
            self._calls -= 1
        return join(results) if results else UNKNOWN

    def _block(self, stmts: List[ast.stmt], platform: str, frame: Frame, out: List[Value]) -> bool:
        """Walk a block for its ``return``s; may it complete normally?"""
        for s in stmts:
            if isinstance(s, ast.Return):
                out.append(self._value(s.value, platform, frame) if s.value is not None else const(None))
                return False
            if isinstance(s, ast.Raise):
                return False
            if isinstance(s, (ast.Import, ast.ImportFrom)) and platform == ROCM and nvidia_only_import(s):
                return False  # ImportError on ROCm
            if isinstance(s, ast.If):
                test = self._value(s.test, platform, frame).truth()
                arms = [s.body] if test else [s.orelse] if test is False else [s.body, s.orelse]
                if not any([self._block(arm, platform, frame, out) for arm in arms]):
                    return False
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                s = cast(ast.Try, s)  # (a TryStar has a Try's fields)
                body = self._block(s.body, platform, frame, out)
                if body and s.orelse:
                    body = self._block(s.orelse, platform, frame, out)
                handlers = [self._block(h.body, platform, frame, out) for h in s.handlers]
                if s.finalbody and not self._block(s.finalbody, platform, frame, out):
                    return False
                if not body and not any(handlers):
                    return False
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                self._block(s.body, platform, frame, out)
                self._block(getattr(s, "orelse", []), platform, frame, out)
            elif type(s).__name__ == "Match":
                for case in getattr(s, "cases"):  # (ast.Match: Python 3.10 and later)
                    self._block(case.body, platform, frame, out)
        return True

    # -- what a module exports to its importers --------------------------------------------
    def exports(self) -> Dict[str, Tuple[Denotation, str]]:
        found: Dict[str, Tuple[Denotation, str]] = {}
        text = self.ctx.text or ""
        for name in VALUE_EXPORTS.candidates(text):
            fn = self.scopes.module_functions.get(name)
            if fn is not None:
                call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[], keywords=[])
                if all(d is not None or k in ("vararg", "kwarg") for k, d in parameters(fn).values()):
                    den = Denotation(*(self._returns(fn, call, p, Frame(None, None)) for p in PLATFORMS))
                    found[name] = (den, "call")
            elif name in self.scopes.table(None):
                found[name] = (
                    Denotation(*(self._name(name, p, Frame(None, None)) for p in PLATFORMS)),
                    "value",
                )
        return found


def _exported_values(ctx) -> Dict[str, Tuple[Denotation, str]]:
    return ctx.values.exports()


# Module-level names and zero-argument functions of a project module, with what they denote.
VALUE_EXPORTS: ExportedFacts = ExportedFacts("values", ("torch",), _exported_values)
