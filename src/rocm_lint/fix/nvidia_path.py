"""The golden-rule checker: does a fix leave the NVIDIA program exactly as it was?

It is independent of the fixer: it is given the original and the fixed source (and the file's
path, for its package), never the fixer's plan, and works out on its own what the fix added.

1. **Scopes.**  Every name is resolved where it is read, as Python resolves it: a function's
   locals (parameters, assignments, imports, ``def``/``class`` names, ``except ... as``, loop and
   ``with`` targets), enclosing functions, then the module.  A read is *sound* only when one
   binding of that name, in the scope the read resolves to, is unconditionally executed before it
   on every path (an earlier statement of the same block or of an enclosing block of that scope)
   and every other binding of it in that scope binds the same thing.
2. **What NVIDIA sees.**  ``A.version.hip`` is ``None`` and ``A.version.cuda`` a version string
   where ``A`` soundly reads the torch module; a *ROCm flag* is a name bound exactly once in the
   whole module (every scope), at module level, to such a test (``A.version.hip is not None``,
   ``IS_HIP_EXTENSION`` of ``torch.utils.cpp_extension``, or a predicate the check's gate
   analysis knows), or a single-name ``from M import F`` where this checker reads ``M`` itself and
   finds ``F`` bound once to ``A.version.hip is not None`` (``_imported_hip_test``, never the
   project model the fixer used); its sound reads are ``False``.  Reads that are not sound are
   left as they are.  The name walks here (``_identifiers``, ``_dotted``) repeat the fixer's
   (``fix.scopes``, ``python.names``) on purpose: the checker shares none of the fixer's code.
3. **What the fix added.**  A module-level ``F = A.version.hip is not None`` or ``import torch``
   whose name the original never mentions is dropped only when it is inert on NVIDIA: every name
   it reads is soundly bound there, ``import torch`` comes after an unconditional module-level
   import of torch or right before one (so it imports nothing that import would not import
   first, only binds a name), and a new flag is not exported
   (``__all__``, or a star import of the module by its package's ``__init__.py`` when the name is
   public) and not a name the package's ``__init__.py`` uses.  Neither is dropped where code can
   see a new module-level name (``fix.nvidia_namespace``: the module reads its own namespace, a
   project module star-imports it, a star import of the module may bind the name); an existing
   predicate that may be rebound after its definition (a later star import, a dynamic write to
   the namespace) is no flag: its reads are not folded.
4. Constant tests are decided (``if not False: S`` is ``S``, ``x if False else y`` is ``y``) and
   the two folded ASTs must be equal.  The inserted lines are kept until proven inert, so a flag
   read before it is bound, a shadowed name or an added import makes the comparison fail.

:func:`check_nvidia_path` returns why a fix fails (``None`` when it passes).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from rocm_lint.discovery import read_bounded
from rocm_lint.fix.nvidia_namespace import NamespaceView

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody")
CUDA_VERSION = "12.8"


def _identifiers(tree: ast.AST) -> Set[str]:
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
            if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
                    and isinstance(self.parent.get(id(node)), ast.NamedExpr):
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
_BINDERS = frozenset(t for t in (ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias,
                                 ast.ExceptHandler, getattr(ast, "MatchAs", None), getattr(ast, "MatchStar", None),
                                 getattr(ast, "MatchMapping", None)) if t is not None)


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


def _is_torch_import(stmt: ast.stmt) -> bool:
    """A statement that imports torch unconditionally (any form: ``import torch.nn``, ``from
    torch.x import y``, ``t = pytest.importorskip("torch")``)."""
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return not stmt.level and bool(stmt.module) and (stmt.module == "torch" or stmt.module.startswith("torch."))
    return _importorskip_torch(stmt)


def _importorskip_torch(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(value, ast.Call) and _dotted(value.func) in ("pytest.importorskip", "importorskip")
            and len(value.args) >= 1 and isinstance(value.args[0], ast.Constant) and value.args[0].value == "torch")


def _binds_torch_module(stmt: ast.stmt, name: str) -> bool:
    """``stmt`` binds ``name`` to the torch module itself."""
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.asname == name and a.name == "torch":
                return True
            if a.asname is None and name == "torch" and (a.name == "torch" or a.name.startswith("torch.")):
                return True
        return False
    return _importorskip_torch(stmt) and stmt.targets[0].id == name


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


# -- the analysis of one module ---------------------------------------------------------------------
class _Module:
    def __init__(self, tree: ast.Module, original_names: Set[str], rocm_names: Dict[str, object],
                 exports: "_PackageExports", path: Optional[str] = None, source: Optional[str] = None) -> None:
        self.tree = tree
        self.path = path
        self.scopes = Scopes(tree, source)
        self.reasons: List[str] = []
        self.flags: Dict[str, ast.stmt] = {}  # flag name -> its binding statement
        self.drop: Set[int] = set()  # ids of module-level statements proven inert
        # Predicates left unfolded because something may rebind them (said when the ASTs differ).
        self.notes: List[str] = []
        views: List[NamespaceView] = []

        def view() -> NamespaceView:  # what code sees of the namespace; built when asked
            if not views:
                views.append(NamespaceView(tree, path, source))
            return views[0]

        top = tree.body
        torch_seen = False
        for i, stmt in enumerate(top):
            fresh = [n for n in _stmt_names(stmt) if n not in original_names]
            if isinstance(stmt, ast.Import) and len(stmt.names) == 1 and stmt.names[0].name == "torch" and fresh:
                following = top[i + 1] if i + 1 < len(top) else None
                # right before an import of torch (or of a submodule), it imports nothing that
                # statement would not import first
                if torch_seen or (isinstance(following, (ast.Import, ast.ImportFrom))
                                  and _is_torch_import(following)):
                    seen_by = view().why_new_name("torch")
                    if seen_by is None:
                        self.drop.add(id(stmt))
                    else:
                        self.reasons.append(seen_by)
                else:
                    self.reasons.append("the fix adds an import of torch to a module that does not import it "
                                        "unconditionally before that point")
            flag = self._flag_of(stmt, rocm_names)
            if flag is not None:
                if self.scopes.all_bindings.get(flag, 0) != 1:
                    if fresh:
                        self.reasons.append(f"the flag `{flag}` is bound elsewhere in the module")
                elif fresh:
                    why = exports.why_not(flag, tree) or view().why_new_name(flag)
                    if why:
                        self.reasons.append(why)
                    elif self._hip_test_is_sound(stmt.value):
                        self.flags[flag] = stmt
                        self.drop.add(id(stmt))
                    else:
                        self.reasons.append(f"the flag `{flag}` reads torch where it is not surely imported")
                else:
                    why = view().why_rebindable(flag, i)
                    if why:
                        self.notes.append(why)
                    else:
                        self.flags[flag] = stmt
            elif fresh and isinstance(stmt, ast.Assign):
                self.reasons.append(f"the fix binds `{fresh[0]}` where it cannot be shown to be inert")
            torch_seen = torch_seen or _is_torch_import(stmt)

    def _flag_of(self, stmt: ast.stmt, rocm_names: Dict[str, object]) -> Optional[str]:
        from rocm_lint.python.gates import ON_ROCM

        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                name = targets[0].id
                if _is_hip_test(stmt.value) or rocm_names.get(name) == ON_ROCM:
                    return name
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "torch.utils.cpp_extension":
            for a in stmt.names:
                if a.name == "IS_HIP_EXTENSION" and len(stmt.names) == 1:
                    return a.asname or a.name
        elif isinstance(stmt, ast.ImportFrom) and len(stmt.names) == 1 and self.path:
            alias = stmt.names[0]
            if rocm_names.get(alias.asname or alias.name) == ON_ROCM \
                    and _imported_hip_test(self.path, stmt.level or 0, stmt.module, alias.name):
                return alias.asname or alias.name
        return None

    def _hip_test_is_sound(self, value: ast.AST) -> bool:
        reads = [n for n in ast.walk(value) if isinstance(n, ast.Name)]
        return bool(reads) and all(self.torch_at(n) for n in reads)

    def torch_at(self, name_node: ast.Name) -> bool:
        """The name read here is surely the torch module."""
        return self.scopes.sound_read(name_node, name_node.id,
                                      lambda s: _binds_torch_module(s, name_node.id)) is not None

    def flag_at(self, name_node: ast.Name) -> bool:
        stmt = self.flags.get(name_node.id)
        return stmt is not None and self.scopes.sound_read(name_node, name_node.id, lambda s: s is stmt) is not None

    def decide(self, statements: Optional[List[ast.stmt]] = None) -> None:
        """What folds in ``statements`` (top-level ones; all by default), decided on the whole
        unmodified tree (folding rewrites blocks): the scopes and bindings are the whole
        module's either way."""
        self.false_names: Set[int] = set()
        self.versions: Dict[int, object] = {}
        nodes = [n for s in statements for n in ast.walk(s)] if statements is not None else list(ast.walk(self.tree))
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in self.flags \
                    and self.flag_at(node):
                self.false_names.add(id(node))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in ("hip", "cuda") \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "version" \
                    and isinstance(node.value.value, ast.Name) and self.torch_at(node.value.value):
                self.versions[id(node)] = None if node.attr == "hip" else CUDA_VERSION
        self.builtin_bool = {id(n) for n in nodes if isinstance(n, ast.Name) and n.id == "bool"
                             and self.scopes.resolving_scope(n, "bool") is None}


def _stmt_names(stmt: ast.stmt) -> List[str]:
    if isinstance(stmt, ast.Import):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _is_hip_test(value: ast.AST) -> bool:
    """``A.version.hip is not None`` / ``bool(A.version.hip)`` / ``A.version.hip`` (A: a name)."""
    def hip(node):
        return isinstance(node, ast.Attribute) and node.attr == "hip" and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "version" and isinstance(node.value.value, ast.Name)
    if isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.IsNot):
        return hip(value.left) and isinstance(value.comparators[0], ast.Constant) and value.comparators[0].value is None
    if isinstance(value, ast.Call) and _dotted(value.func) == "bool" and len(value.args) == 1 and not value.keywords:
        return hip(value.args[0])
    return hip(value)


def _imported_hip_test(path: str, level: int, module: Optional[str], name: str) -> bool:
    """Independently of the checker's project model: does the module ``from <module> import
    name`` reads (a relative one, or one beside the file or under its package root) bind
    ``name`` once, at module level, to ``torch.version.hip is not None``?"""
    folder = os.path.dirname(os.path.abspath(path))
    parts = module.split(".") if module else []
    if level:
        base = folder
        for _ in range(level - 1):
            base = os.path.dirname(base)
        roots = [base]
    else:
        top = folder
        while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
            top = os.path.dirname(top)
        roots = [folder, top]
    for root in roots:
        stem = os.path.join(root, *parts) if parts else root
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if not parts and candidate == stem + ".py":
                continue
            try:
                data = read_bounded(candidate, 1 << 20)
            except OSError:
                continue
            if isinstance(data, str):
                continue
            try:
                tree = ast.parse(data.decode("utf-8"))
            except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
                return False
            values = [s.value for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                      and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
            rebound = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                          and isinstance(n.ctx, ast.Store))
            return len(values) == 1 and rebound == 1 and _is_hip_test(values[0])
    return False


class _PackageExports:
    """What the module's package does with its names (``__init__.py`` beside it)."""

    def __init__(self, path: Optional[str]) -> None:
        self.init_names: Set[str] = set()
        self.star = False
        self.siblings: Set[str] = set()
        if not path:
            return
        folder, base = os.path.split(os.path.abspath(path))
        init = os.path.join(folder, "__init__.py")
        stem = os.path.splitext(base)[0]
        try:
            self.siblings = {os.path.splitext(n)[0] for n in os.listdir(folder)}
        except OSError:
            pass
        if stem == "__init__" or not os.path.isfile(init):
            return
        try:
            data = read_bounded(init, 1 << 20)
            if isinstance(data, str):
                raise OSError(data)
            text = data.decode("utf-8", "replace")
        except OSError:
            return
        self.init_names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        try:
            init_tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.star = "*" in text
            return
        for node in ast.walk(init_tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) and node.module \
                    and node.module.split(".")[-1] == stem:
                self.star = True

    def why_not(self, name: str, tree: ast.Module) -> Optional[str]:
        if name in self.init_names:
            return f"the flag `{name}` is a name the package's __init__.py uses"
        if name in self.siblings:
            return f"the flag `{name}` is the name of a module of the package"
        has_all = any(isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and "__all__" in
                      [t.id for t in getattr(s, "targets", [getattr(s, "target", None)]) if isinstance(t, ast.Name)]
                      for s in tree.body)
        if self.star and not has_all and not name.startswith("_"):
            return f"the flag `{name}` would be exported by the package's `from ... import *`"
        return None


# -- folding ----------------------------------------------------------------------------------------
class _Fold(ast.NodeTransformer):
    def __init__(self, module: _Module, assume_imports_succeed: bool) -> None:
        self.m = module
        self.assume_imports_succeed = assume_imports_succeed

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if id(node) in self.m.false_names:
            return ast.copy_location(ast.Constant(False), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if id(node) in self.m.versions:
            return ast.copy_location(ast.Constant(self.m.versions[id(node)]), node)
        return self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Constant):
            return ast.copy_location(ast.Constant(not node.operand.value), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.left, ast.Constant) \
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            op, left = node.ops[0], node.left.value
            if isinstance(op, ast.Is):
                return ast.copy_location(ast.Constant(left is None), node)
            if isinstance(op, ast.IsNot):
                return ast.copy_location(ast.Constant(left is not None), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if id(node.func) in self.m.builtin_bool and len(node.args) == 1 \
                and not node.keywords and isinstance(node.args[0], ast.Constant):
            return ast.copy_location(ast.Constant(bool(node.args[0].value)), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        keep = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                decides = (not value.value) if isinstance(node.op, ast.And) else bool(value.value)
                if decides:  # `False and ...` / `True or ...`: the result is this constant
                    if not keep:
                        return value
                    keep.append(value)
                    break
                continue  # `True and x` is x (only for a test: the fixes put these in tests)
            keep.append(value)
        if not keep:
            return node.values[-1]
        if len(keep) == 1:
            return keep[0]
        return ast.copy_location(ast.BoolOp(op=node.op, values=keep), node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return (node.body if node.test.value else node.orelse) or None
        return node

    def visit_Try(self, node: ast.Try):
        self.generic_visit(node)
        # `--unsafe-fixes` ROC401: on NVIDIA the guarded import succeeds
        if self.assume_imports_succeed and len(node.body) == 1 and isinstance(node.body[0], (ast.Import, ast.ImportFrom)) \
                and not node.orelse and not node.finalbody and len(node.handlers) == 1 \
                and _dotted(node.handlers[0].type) == "ImportError" \
                and all(isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and s.value.value is None
                        for s in node.handlers[0].body):
            return node.body[0]
        return node

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = [s for s in node.body if id(s) not in self.m.drop]
        return self.generic_visit(node)


def fold(tree: ast.Module, original_names: Set[str], rocm_names: Dict[str, object], path: Optional[str] = None,
         assume_imports_succeed: bool = False, notes: Optional[List[str]] = None,
         source: Optional[str] = None) -> Tuple[ast.Module, List[str]]:
    """The module as it runs on NVIDIA, and the reasons found on the way (what cannot be proven);
    ``notes`` gets the predicates left unfolded (they may be rebound)."""
    module = _Module(tree, original_names, rocm_names, _PackageExports(path), path, source)
    if notes is not None:
        notes.extend(module.notes)
    module.decide()
    folded = _Fold(module, assume_imports_succeed).visit(tree)  # `tree` is the caller's copy
    return ast.fix_missing_locations(folded), module.reasons


def fold_regions(tree: ast.Module, regions: List[List[ast.stmt]], original_names: Set[str],
                 rocm_names: Dict[str, object], path: Optional[str] = None, assume_imports_succeed: bool = False,
                 notes: Optional[List[str]] = None, source: Optional[str] = None) -> Tuple[List[str], List[str]]:
    """:func:`fold` of the statements of each region only (runs of statements of one block of
    ``tree``), analysed in the whole module (its scopes, bindings and flags): (the dump of each
    folded region, the reasons found on the way)."""
    module = _Module(tree, original_names, rocm_names, _PackageExports(path), path, source)
    if notes is not None:
        notes.extend(module.notes)
    module.decide([s for region in regions for s in region])
    folder = _Fold(module, assume_imports_succeed)
    return [ast.dump(folder.visit(ast.Module(body=list(region), type_ignores=[]))) for region in regions], \
        module.reasons


_NESTED = ("body", "orelse", "finalbody")


def _same_header(a: ast.stmt, b: ast.stmt) -> bool:
    """Two statements of one kind that differ only inside their blocks (the same decorators,
    signature, test, loop target, context managers, exception handlers' types and names)."""
    if type(a) is not type(b) or isinstance(a, getattr(ast, "Match", ())):
        return False
    for name, value in ast.iter_fields(a):
        other = getattr(b, name, None)
        if name in _NESTED:
            continue
        if name == "handlers":
            if len(value) != len(other):
                return False
            for h, g in zip(value, other):
                if h.name != g.name or (h.type is None) != (g.type is None) or \
                        (h.type is not None and ast.dump(h.type) != ast.dump(g.type)):
                    return False
            continue
        if _dump_field(value) != _dump_field(other):
            return False
    return True


def _dump_field(value: object) -> object:
    if isinstance(value, list):
        return [_dump_field(v) for v in value]
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def changed_regions(old: ast.Module, new: ast.Module, old_text: Optional[str] = None,
                    new_text: Optional[str] = None) -> List[Tuple[List[ast.stmt], List[ast.stmt]]]:
    """(old statements, new statements): runs of statements of one block that the fix changed;
    every statement outside them is the same statement (equal ASTs) in both, in the same place.
    A statement changed only inside its blocks (a ``def`` whose body gained an ``if``) is
    compared block by block.  With the two sources, statements are told equal by their text
    (the same lines and offsets parse to the same AST when both modules have the same
    ``__future__`` imports), which spares dumping every statement."""
    out: List[Tuple[List[ast.stmt], List[ast.stmt]]] = []
    keys = None
    if old_text is not None and new_text is not None and _futures(old) == _futures(new):
        keys = (_TextKeys(old_text), _TextKeys(new_text))
    _align(old.body, new.body, out, keys=keys)
    return out


def _futures(tree: ast.Module) -> List[str]:
    return [a.name for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__" for a in s.names]


class _TextKeys:
    """A statement's text: its lines as written and its offsets in them."""

    def __init__(self, text: str) -> None:
        self.lines = re.split(r"\r\n|\r|\n", text)  # as Python counts lines (not str.splitlines)

    def __call__(self, stmt: ast.stmt) -> object:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", None) or ()])
        last = getattr(stmt, "end_lineno", None) or stmt.lineno
        return (stmt.col_offset, getattr(stmt, "end_col_offset", None), "\n".join(self.lines[first - 1:last]))


def _header(stmt: ast.stmt) -> str:
    """A statement without its blocks (a simple statement whole)."""
    parts: List[object] = [type(stmt).__name__]
    for name, value in ast.iter_fields(stmt):
        if name in _NESTED:
            continue
        if name == "handlers":
            parts.append([(h.name, _dump_field(h.type)) for h in value])
        else:
            parts.append(_dump_field(value))
    return repr(parts)


def _align(a_body: List[ast.stmt], b_body: List[ast.stmt], out: List[Tuple[List[ast.stmt], List[ast.stmt]]],
           by_header: bool = False, keys=None) -> None:
    """Align two blocks statement by statement (equal ASTs), then the runs that differ by their
    statements' headers: a pair with the same header is compared block by block."""
    from difflib import SequenceMatcher

    if by_header:
        a, b = [_header(s) for s in a_body], [_header(s) for s in b_body]
    elif keys is not None:
        a, b = [keys[0](s) for s in a_body], [keys[1](s) for s in b_body]
    else:
        a, b = [ast.dump(s) for s in a_body], [ast.dump(s) for s in b_body]
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal" and not by_header:
            continue
        if tag != "equal":
            if not by_header and i1 < i2 and j1 < j2:
                _align(a_body[i1:i2], b_body[j1:j2], out, by_header=True, keys=keys)
            else:
                out.append((a_body[i1:i2], b_body[j1:j2]))
            continue
        for x, y in zip(a_body[i1:i2], b_body[j1:j2]):
            if not _same_header(x, y):
                out.append(([x], [y]))
                continue
            for name in _NESTED:
                if isinstance(getattr(x, name, None), list):
                    _align(getattr(x, name), getattr(y, name), out, keys=keys)
            for h, g in zip(getattr(x, "handlers", None) or (), getattr(y, "handlers", None) or ()):
                _align(h.body, g.body, out, keys=keys)


def check_nvidia_path(original: str, fixed: str, *, path: Optional[str] = None,
                      rocm_names: Optional[Dict[str, object]] = None,
                      assume_imports_succeed: bool = False) -> Optional[str]:
    """None when ``fixed`` runs on NVIDIA exactly as ``original`` does; else why not.

    Only the statements that differ are folded and compared (each run of them, old against new,
    block by block inside a statement whose header is unchanged); the analysis that decides what folds (scopes, bindings, flags, what the fix
    added, what code can see of the namespace) is the whole module's.  Why that is enough:
    ``docs/fixes.md``, "Only what changed is folded"."""
    rocm_names = rocm_names or {}
    try:
        old_tree = ast.parse(original)
        new_tree = ast.parse(fixed)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"cannot read the module ({type(exc).__name__})"
    names = _identifiers(old_tree)
    try:
        regions = changed_regions(old_tree, new_tree, original, fixed)
        # Both trees were parsed here for this check alone: folded in place, no copy.
        a, _ = fold_regions(old_tree, [x for x, _ in regions], names, rocm_names, path,
                            assume_imports_succeed, source=original)
        notes: List[str] = []
        b, reasons = fold_regions(new_tree, [y for _, y in regions], names, rocm_names, path,
                                  assume_imports_succeed, notes, source=fixed)
        same = a == b
    except RecursionError:
        return "the module is too deeply nested to verify a fix"
    if same and not reasons:
        return None
    if reasons:
        return reasons[0]
    if notes:
        return notes[0]
    return "the fix would change the NVIDIA program"


def same_on_nvidia(original: str, fixed: str, flags: Iterable[str] = (), torch_names: Iterable[str] = (),
                   inserted: Iterable[str] = (), *, path: Optional[str] = None,
                   rocm_names: Optional[Dict[str, object]] = None) -> bool:
    """True when ``fixed`` runs on NVIDIA as ``original`` does.  ``flags``, ``torch_names`` and
    ``inserted`` (what the fixer says it did) are accepted for compatibility and ignored: the
    check works out on its own what the fix added."""
    return check_nvidia_path(original, fixed, path=path, rocm_names=rocm_names) is None
