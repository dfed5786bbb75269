"""The NVIDIA-path checker's scope pass and name walks (``fix.nvidia_path`` uses them).

``Scopes`` resolves every name where it is read, as Python resolves it: a function's locals
(parameters, assignments, imports, ``def``/``class`` names, ``except ... as``, loop and ``with``
targets), enclosing functions, then the module; ``sound_read`` says when one binding is surely
the one a read sees.  ``identifiers`` and ``dotted`` repeat the fixer's name walks
(``fix.scopes``, ``python.names``) on purpose: the checker shares none of the fixer's code.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody")


def identifiers(tree: ast.AST) -> Set[str]:
    """Every name the module mentions: bound, read, declared, imported, and string constants
    (``__all__``, ``globals()["x"]``)."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
        elif hasattr(ast, "MatchAs") and isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif hasattr(ast, "MatchMapping") and isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


class Scopes:
    """Which scope binds which name, and where (a small, conservative ``symtable``)."""

    def __init__(self, tree: ast.Module, source: Optional[str] = None) -> None:
        """``source``: the module's text, when known (no ``global`` in it: no walk for one)."""
        self.tree = tree
        self.parent: Dict[int, ast.AST] = {}
        self.scope_of: Dict[int, ast.AST] = {}  # node -> the scope node it is evaluated in
        self.bindings: Dict[Tuple[int, str], List[ast.AST]] = {}  # (scope, name) -> binding nodes
        self.declared_global: Dict[int, Set[str]] = {}
        self.all_bindings: Dict[str, int] = {}  # name -> number of bindings anywhere
        if source is None or "global" in source:
            self._globals(tree, [])
        self._visit(tree, tree)

    def _globals(self, node: ast.AST, owners: List[ast.AST]) -> None:
        """Every function or class gets the names a ``global`` statement anywhere inside it
        declares (nested ones included), in one walk of the module."""
        if isinstance(node, ast.Global):
            for owner in owners:
                self.declared_global.setdefault(id(owner), set()).update(node.names)
            return
        if isinstance(node, _FUNCTIONS + (ast.ClassDef,)):
            owners = owners + [node]
        for child in ast.iter_child_nodes(node):
            self._globals(child, owners)

    def _bind(self, scope: ast.AST, name: str, node: ast.AST) -> None:
        if name in self.declared_global.get(id(scope), ()):
            scope = self.tree
        self.bindings.setdefault((id(scope), name), []).append(node)
        self.all_bindings[name] = self.all_bindings.get(name, 0) + 1

    def _visit(self, node: ast.AST, scope: ast.AST) -> None:
        # `global` declarations were gathered first (``_globals``): they decide where the
        # scope's assignments go
        outer: Set[int] = set()
        is_scope = isinstance(node, _SCOPES)
        if is_scope:
            # decorators, defaults, bases and the first iterable run in the enclosing scope
            outer_parts = list(getattr(node, "decorator_list", [])) + list(getattr(node, "bases", []))
            outer_parts += [k.value for k in getattr(node, "keywords", [])]
            if isinstance(node, _FUNCTIONS):
                outer_parts += list(node.args.defaults) + [d for d in node.args.kw_defaults if d]
                if not isinstance(node, ast.Lambda):
                    outer_parts += [a.annotation for a in _all_args(node.args) if a.annotation]
                    outer_parts += [node.returns] if node.returns else []
            if hasattr(node, "generators") and node.generators:
                outer_parts.append(node.generators[0].iter)
            outer = {id(p) for p in outer_parts}
        parent, scope_of = self.parent, self.scope_of
        for child in _children(node):
            parent[id(child)] = node
            inner = node if is_scope and id(child) not in outer else scope
            scope_of[id(child)] = inner
            if type(child) in _BINDERS:
                self._binds(child, inner, scope)
            self._visit(child, inner)

    def _binds(self, node: ast.AST, scope: ast.AST, outer: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = scope
            if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and isinstance(
                self.parent.get(id(node)), ast.NamedExpr
            ):
                target = self._enclosing_function_or_module(scope)
            self._bind(target, node.id, node)
        elif isinstance(node, ast.arg):
            self._bind(scope, node.arg, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._bind(outer if scope is node else scope, node.name, node)
        elif isinstance(node, ast.alias):
            self._bind(scope, node.asname or node.name.split(".")[0], node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(scope, node.name, node)
        elif hasattr(ast, "MatchAs") and isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self._bind(scope, node.name, node)
        elif hasattr(ast, "MatchMapping") and isinstance(node, ast.MatchMapping) and node.rest:
            self._bind(scope, node.rest, node)

    def _enclosing_function_or_module(self, scope: ast.AST) -> ast.AST:
        while isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            scope = self.scope_of.get(id(scope), self.tree)
        return scope

    # -- resolution ---------------------------------------------------------------------------
    def resolving_scope(self, node: ast.AST, name: str) -> Optional[ast.AST]:
        """The scope whose binding of ``name`` a read at ``node`` sees (None: a builtin or unbound)."""
        scope = self.scope_of.get(id(node), self.tree)
        first = True
        while True:
            if (id(scope), name) in self.bindings and (first or not isinstance(scope, ast.ClassDef)):
                if name in self.declared_global.get(id(scope), ()):
                    scope = self.tree
                    continue
                return scope
            if scope is self.tree:
                return None
            first = False
            scope = self.scope_of.get(id(scope), self.tree)

    def statement_of(self, node: ast.AST) -> ast.AST:
        while not isinstance(node, ast.stmt):
            node = self.parent[id(node)]
        return node

    def dominating(self, node: ast.AST, scope: ast.AST) -> List[ast.stmt]:
        """The statements of ``scope`` that always run before ``node`` (earlier statements of the
        blocks that hold it, up to the scope)."""
        out: List[ast.stmt] = []
        child = node
        while child is not scope and id(child) in self.parent:
            parent = self.parent[id(child)]
            for field in _BLOCKS:
                block = getattr(parent, field, None)
                if isinstance(block, list) and any(s is child for s in block):
                    index = next(i for i, s in enumerate(block) if s is child)
                    if self.scope_of.get(id(child), self.tree) is scope:
                        out.extend(block[:index])
            child = parent
        return out

    def sound_read(self, node: ast.AST, name: str, is_good) -> Optional[ast.stmt]:
        """The binding statement a read of ``name`` at ``node`` surely sees, when every binding of
        ``name`` in the scope it resolves to passes ``is_good(binding_statement)`` and one of them
        dominates the read; else None."""
        scope = self.resolving_scope(node, name)
        if scope is None or not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if scope is not self.tree and self._function_of(node) is not scope:
            return None  # a closure variable: when it is bound depends on the call
        bound = self.bindings[(id(scope), name)]
        stmts = []
        for b in bound:
            if isinstance(b, ast.arg):
                return None
            stmt = self.statement_of(b)
            if not is_good(stmt):
                return None
            stmts.append(stmt)
        for stmt in self.dominating(node, scope):
            if any(stmt is s for s in stmts):
                return stmt
        return None

    def _function_of(self, node: ast.AST) -> ast.AST:
        scope = self.scope_of.get(id(node), self.tree)
        while isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            scope = self.scope_of.get(id(scope), self.tree)
        return scope


# The node types ``Scopes._binds`` looks at (every other node binds nothing).
_BINDERS = frozenset(
    t
    for t in (
        ast.Name,
        ast.arg,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.alias,
        ast.ExceptHandler,
        getattr(ast, "MatchAs", None),
        getattr(ast, "MatchStar", None),
        getattr(ast, "MatchMapping", None),
    )
    if t is not None
)


def _children(node: ast.AST) -> List[ast.AST]:
    """``ast.iter_child_nodes(node)`` as a list (the same nodes in the same order, without the
    generators: the scope pass visits every node of both modules)."""
    out: List[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(item for item in value if isinstance(item, ast.AST))
    return out


def _all_args(args: ast.arguments) -> List[ast.arg]:
    out = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
    return out + [a for a in (args.vararg, args.kwarg) if a]


def dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None
