"""What the value-flow layer (:mod:`rocm_lint.python.values`) knows of a module's scopes.

Built once per module, on the layer's first question, from one walk of the tree: for every
scope (the module, each ``def``) the bindings of each name (a value expression, or a marker:
an import, a ``def``, or "unknown" for anything the layer does not follow: augmented
assignments, loop and ``with`` targets, ``global``/``nonlocal``, walrus, comprehension
variables), the innermost scope of every position (``def`` and ``lambda`` by their spans), the
enclosing ``def`` of each ``def``, and every reference to a module-level function (a call, or
any other use, which opens the function to callers the layer cannot see).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from rocm_lint.domain import NVIDIA_ONLY_IMPORTS
from rocm_lint.words import line_numbers, whole_word_positions

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
UNKNOWN_BINDING = ("unknown",)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Callers(NamedTuple):
    """A module-level function's call sites in the module: (call, the scope holding it); ``open``
    when something else may call it (a public name, a use that is no call, a decorator)."""

    calls: List[Tuple[ast.Call, Optional[ast.AST]]]
    open: bool


def nvidia_only_import(stmt: ast.AST) -> bool:
    """Does this import statement load a module that only imports on NVIDIA
    (:data:`rocm_lint.domain.NVIDIA_ONLY_IMPORTS`)?"""
    if isinstance(stmt, ast.Import):
        names = [a.name for a in stmt.names]
    elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        names = [stmt.module] + [f"{stmt.module}.{a.name}" for a in stmt.names]
    else:
        return False
    return any(n == m or n.startswith(m + ".") for n in names for m in NVIDIA_ONLY_IMPORTS)


def _names_in(target: ast.AST) -> List[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


class Scopes:
    """The module's scopes (see the module docstring), each read on first use: the ``def``
    outline (statements only) at once, a scope's bindings when a name in it is asked, the call
    sites of the module's functions when a parameter is."""

    def __init__(self, tree: ast.Module, script: bool, text: str = "") -> None:
        self.tree = tree
        self.text = text  # the module's source: where a function's name is written
        self.script = script
        self.bindings: Dict[Optional[int], Dict[str, list]] = {}
        self.outer: Dict[int, Optional[ast.AST]] = {}
        # (body start, end, def) of every def, lambdas added as their scope is read
        self.spans: List[Tuple[Tuple[int, int], Tuple[int, int], ast.AST]] = []
        self._lambdas: Dict[Optional[int], List[Tuple[Tuple[int, int], Tuple[int, int], ast.AST]]] = {}
        self.star = False
        self.module_functions: Dict[str, ast.AST] = {}
        self._calls: Dict[str, Tuple[List[ast.Call], bool]] = {}
        self._opened: Dict[str, bool] = {}
        self._globals: List[str] = []  # names a ``global``/``nonlocal`` rebinds from a function
        for stmt in tree.body:
            if isinstance(stmt, FUNCTIONS):
                self.module_functions[stmt.name] = stmt
        self._outline(tree.body, None)

    # -- building ------------------------------------------------------------------------
    def _outline(self, body: List[ast.stmt], scope: Optional[ast.AST]) -> None:
        """Every ``def`` (its span and enclosing scope) and ``global`` statement: statements only."""
        stack = [(s, scope) for s in reversed(body)]
        while stack:
            stmt, scope = stack.pop()
            if isinstance(stmt, FUNCTIONS):
                self.outer[id(stmt)] = scope
                self.spans.append((_start(stmt.body), _end(stmt), stmt))
                stack.extend((s, stmt) for s in reversed(stmt.body))
                continue
            if isinstance(stmt, (ast.Global, ast.Nonlocal)):
                self._globals.extend(stmt.names)
            for field in ("body", "orelse", "finalbody"):
                stack.extend((s, scope) for s in reversed(getattr(stmt, field, None) or ()))
            for clause in [*(getattr(stmt, "handlers", None) or ()), *(getattr(stmt, "cases", None) or ())]:
                stack.extend((s, scope) for s in reversed(clause.body))

    def _bind(self, scope: Optional[ast.AST], name: str, value) -> None:
        table = self.bindings.setdefault(id(scope) if scope is not None else None, {})
        table.setdefault(name, []).append(value)

    def _read(self, scope: Optional[ast.AST]) -> None:
        """The bindings of one scope: its own nodes, not those of nested scopes."""
        key = id(scope) if scope is not None else None
        self.bindings.setdefault(key, {})
        lambdas = self._lambdas.setdefault(key, [])
        if scope is None:
            roots: list = list(self.tree.body)
            for name in self._globals:
                self._bind(None, name, UNKNOWN_BINDING)  # rebound from a function
        elif isinstance(scope, ast.Lambda):
            roots = [scope.body]
        else:
            roots = list(scope.body)
        stack: List[Tuple[ast.AST, bool]] = [(r, False) for r in reversed(roots)]
        while stack:
            node, in_class = stack.pop()
            if isinstance(node, SCOPES):
                if not isinstance(node, ast.Lambda):
                    self._bind(scope, node.name, ("def", node) if not in_class else UNKNOWN_BINDING)
                    heads = [*node.decorator_list, *([node.returns] if node.returns is not None else [])]
                else:
                    self.outer[id(node)] = scope
                    lambdas.append(((node.body.lineno, node.body.col_offset), _end(node), node))
                    heads = []
                heads += [*node.args.defaults, *(k for k in node.args.kw_defaults if k is not None)]
                stack.extend((h, in_class) for h in heads)
                continue
            if isinstance(node, ast.ClassDef):
                self._bind(scope, node.name, UNKNOWN_BINDING)
                for child in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                    stack.append((child, in_class))
                stack.extend((child, True) for child in reversed(node.body))
                continue
            self._learn(node, scope, in_class)
            stack.extend((child, in_class) for child in reversed(list(ast.iter_child_nodes(node))))

    def _learn(self, node: ast.AST, scope: Optional[ast.AST], in_class: bool) -> None:
        def bind(name: str, value) -> None:
            # a class body's names are the class's: at module level they only make a name unknown
            self._bind(scope, name, UNKNOWN_BINDING if in_class else value)

        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bind(target.id, node.value)
                elif (
                    isinstance(target, (ast.Tuple, ast.List))
                    and isinstance(node.value, ast.Tuple)
                    and len(target.elts) == len(node.value.elts)
                    and not any(isinstance(e, ast.Starred) for e in [*target.elts, *node.value.elts])
                ):
                    for t, v in zip(target.elts, node.value.elts):
                        for name in _names_in(t):
                            bind(name, v if isinstance(t, ast.Name) else UNKNOWN_BINDING)
                else:
                    for name in (
                        _names_in(target) if not isinstance(target, (ast.Attribute, ast.Subscript)) else ()
                    ):
                        bind(name, UNKNOWN_BINDING)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            bind(node.target.id, node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            bind(node.target.id, UNKNOWN_BINDING)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in _names_in(node.target):
                bind(name, UNKNOWN_BINDING)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in _names_in(node.optional_vars):
                bind(name, UNKNOWN_BINDING)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, UNKNOWN_BINDING)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            bind(node.target.id, UNKNOWN_BINDING)
        elif isinstance(node, _COMPREHENSIONS):
            for gen in node.generators:
                for name in _names_in(gen.target):
                    bind(name, UNKNOWN_BINDING)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name, UNKNOWN_BINDING)
                self._bind(None, name, UNKNOWN_BINDING)  # rebound from a function
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                bind(local, ("import", alias.name if alias.asname else local))
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * (node.level or 0) + (f"{node.module}." if node.module else "")
            for alias in node.names:
                if alias.name == "*":
                    self.star = True
                else:
                    bind(alias.asname or alias.name, ("import", prefix + alias.name))
        elif type(node).__name__.startswith("Match") and hasattr(node, "name") and node.name:
            bind(node.name, UNKNOWN_BINDING)

    # -- questions -----------------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> Optional[ast.AST]:
        """The innermost ``def`` or ``lambda`` whose body holds ``node`` (None: the module)."""
        pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        best = _innermost(self.spans, pos, node)
        self.table(best)  # its lambdas
        inner = _innermost(self._lambdas.get(id(best) if best is not None else None, []), pos, node)
        while inner is not None:  # a lambda inside a lambda
            best = inner
            self.table(best)
            inner = _innermost(self._lambdas.get(id(best), []), pos, node)
        return best

    def table(self, scope: Optional[ast.AST]) -> Dict[str, list]:
        key = id(scope) if scope is not None else None
        if key not in self.bindings:
            self._read(scope)
        return self.bindings[key]

    def callers(self, fn: ast.AST) -> Callers:
        """Where the module calls ``fn`` (a module-level ``def``), and whether others may."""
        name = getattr(fn, "name", "")
        if self.module_functions.get(name) is not fn or fn.decorator_list:
            return Callers([], True)
        if len(self.table(None).get(name, ())) != 1:
            return Callers([], True)  # rebound: a call may reach another function
        if name not in self._calls:
            self._calls[name] = self._uses(name)
        calls, opened = self._calls[name]
        public = not name.startswith("_") and not self.script
        return Callers([(c, self.scope_of(c)) for c in calls], public or opened)

    def _uses(self, name: str) -> Tuple[List[ast.Call], bool]:
        """The calls of a module-level function, and whether it is used otherwise: only the
        statements on the lines the name is written on are walked (its text is searched)."""
        opened = False
        if self.text:
            lines = sorted(set(line_numbers(self.text, whole_word_positions(self.text, name))))
            nodes = []
            for line in lines:
                found = list(self._at_line(line))
                # no statement there: a comment, or a block the partial parse blanked (its
                # calls unseen): open, to be sound
                opened = opened or not found
                nodes += found
        else:
            nodes = list(ast.walk(self.tree))
        calls: List[ast.Call] = []
        called = set()
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                if id(node) not in called:
                    calls.append(node)
                    called.add(id(node))
                called.add(id(node.func))
        for node in nodes:
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                opened = opened or id(node) not in called  # passed as a value: unseen callers
        return calls, opened

    def _at_line(self, line: int) -> Iterator[ast.AST]:
        """The nodes of the innermost statement holding ``line`` (a compound statement's own
        header and fields, not its nested blocks)."""
        body: List[ast.stmt] = self.tree.body
        stmt = None
        while body:
            inner = next((s for s in body if _first_line(s) <= line <= (s.end_lineno or s.lineno)), None)
            if inner is None:
                break
            stmt = inner
            body = [
                s
                for field in ("body", "orelse", "finalbody")
                for s in (getattr(inner, field, None) or [])
                if isinstance(s, ast.stmt)
            ]
            body += [
                s
                for c in [*(getattr(inner, "handlers", None) or ()), *(getattr(inner, "cases", None) or ())]
                for s in c.body
            ]
        if stmt is None:
            return
        for field, value in ast.iter_fields(stmt):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.AST) and not isinstance(item, (ast.stmt, ast.excepthandler)):
                    yield from ast.walk(item)
                elif isinstance(item, ast.ExceptHandler) and item.type is not None:
                    yield from ast.walk(item.type)


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or ()
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _start(body: List[ast.stmt]) -> Tuple[int, int]:
    # the header (defaults, annotations, decorators) is evaluated in the enclosing scope
    return (body[0].lineno, body[0].col_offset)


def _end(node: ast.AST) -> Tuple[int, int]:
    return (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)


def _innermost(spans, pos: Tuple[int, int], node: ast.AST) -> Optional[ast.AST]:
    best = None
    for start, end, fn in spans:
        if start <= pos < end and fn is not node and (best is None or start >= best[0]):
            best = (start, fn)
    return best[1] if best is not None else None


MISSING = object()


def parameters(fn: ast.AST) -> Dict[str, Tuple[str, Optional[ast.AST]]]:
    """name -> (kind, default node) in signature order."""
    args = fn.args
    positional = list(getattr(args, "posonlyargs", [])) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found: Dict[str, Tuple[str, Optional[ast.AST]]] = {}
    for a, d in zip(positional, defaults):
        found[a.arg] = ("positional", d)
    if args.vararg is not None:
        found[args.vararg.arg] = ("vararg", None)
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        found[a.arg] = ("keyword", d)
    if args.kwarg is not None:
        found[args.kwarg.arg] = ("kwarg", None)
    return found


def argument(fn: ast.AST, call: ast.Call, name: str):
    """The expression a call passes for parameter ``name`` of ``fn``; ``MISSING`` when it
    passes none; None when unknown (a ``*args``/``**kwargs`` in the call)."""
    params = parameters(fn)
    kind = params[name][0]
    positional = [n for n, (k, _) in params.items() if k == "positional"]
    if isinstance(fn, FUNCTIONS) and isinstance(call.func, ast.Attribute):
        return None  # a method call: ``self`` shifts the positions
    starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), None)
    if kind == "positional":
        i = positional.index(name)
        if starred is not None and starred <= i:
            return None
        if i < len(call.args):
            return call.args[i]
    for k in call.keywords:
        if k.arg == name:
            return k.value
    if any(k.arg is None for k in call.keywords) or (kind == "positional" and starred is not None):
        return None
    return MISSING


def own_nodes(fn: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``fn``'s body, not those of nested functions and classes."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
                stack.append(child)
