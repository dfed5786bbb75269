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
   finds ``F`` bound once to ``A.version.hip is not None`` (``nvidia_package.imported_hip_test``,
   never the project model the fixer used); its sound reads are ``False``.  Reads that are not sound are
   left as they are.  The name walks (``nvidia_scopes.identifiers``, ``dotted``) repeat the fixer's
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
from typing import Dict, Iterable, List, Optional, Set, Tuple

from rocm_lint.fix.nvidia_fold import Fold
from rocm_lint.fix.nvidia_namespace import NamespaceView
from rocm_lint.fix.nvidia_package import PackageExports, imported_hip_test, is_hip_test
from rocm_lint.fix.nvidia_regions import changed_regions
from rocm_lint.fix.nvidia_scopes import Scopes, dotted, identifiers

CUDA_VERSION = "12.8"


def _is_torch_import(stmt: ast.stmt) -> bool:
    """A statement that imports torch unconditionally (any form: ``import torch.nn``, ``from
    torch.x import y``, ``t = pytest.importorskip("torch")``)."""
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return (
            not stmt.level
            and bool(stmt.module)
            and (stmt.module == "torch" or stmt.module.startswith("torch."))
        )
    return _importorskip_torch(stmt)


def _importorskip_torch(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(value, ast.Call)
        and dotted(value.func) in ("pytest.importorskip", "importorskip")
        and len(value.args) >= 1
        and isinstance(value.args[0], ast.Constant)
        and value.args[0].value == "torch"
    )


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


# -- the analysis of one module ---------------------------------------------------------------------
class _Module:
    def __init__(
        self,
        tree: ast.Module,
        original_names: Set[str],
        rocm_names: Dict[str, object],
        exports: "PackageExports",
        path: Optional[str] = None,
        source: Optional[str] = None,
    ) -> None:
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
            if (
                isinstance(stmt, ast.Import)
                and len(stmt.names) == 1
                and stmt.names[0].name == "torch"
                and fresh
            ):
                following = top[i + 1] if i + 1 < len(top) else None
                # right before an import of torch (or of a submodule), it imports nothing that
                # statement would not import first
                if torch_seen or (
                    isinstance(following, (ast.Import, ast.ImportFrom)) and _is_torch_import(following)
                ):
                    seen_by = view().why_new_name("torch")
                    if seen_by is None:
                        self.drop.add(id(stmt))
                    else:
                        self.reasons.append(seen_by)
                else:
                    self.reasons.append(
                        "the fix adds an import of torch to a module that does not import it "
                        "unconditionally before that point"
                    )
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
                if is_hip_test(stmt.value) or rocm_names.get(name) == ON_ROCM:
                    return name
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "torch.utils.cpp_extension":
            for a in stmt.names:
                if a.name == "IS_HIP_EXTENSION" and len(stmt.names) == 1:
                    return a.asname or a.name
        elif isinstance(stmt, ast.ImportFrom) and len(stmt.names) == 1 and self.path:
            alias = stmt.names[0]
            if rocm_names.get(alias.asname or alias.name) == ON_ROCM and imported_hip_test(
                self.path, stmt.level or 0, stmt.module, alias.name
            ):
                return alias.asname or alias.name
        return None

    def _hip_test_is_sound(self, value: ast.AST) -> bool:
        reads = [n for n in ast.walk(value) if isinstance(n, ast.Name)]
        return bool(reads) and all(self.torch_at(n) for n in reads)

    def torch_at(self, name_node: ast.Name) -> bool:
        """The name read here is surely the torch module."""
        return (
            self.scopes.sound_read(name_node, name_node.id, lambda s: _binds_torch_module(s, name_node.id))
            is not None
        )

    def flag_at(self, name_node: ast.Name) -> bool:
        stmt = self.flags.get(name_node.id)
        return (
            stmt is not None
            and self.scopes.sound_read(name_node, name_node.id, lambda s: s is stmt) is not None
        )

    def decide(self, statements: Optional[List[ast.stmt]] = None) -> None:
        """What folds in ``statements`` (top-level ones; all by default), decided on the whole
        unmodified tree (folding rewrites blocks): the scopes and bindings are the whole
        module's either way."""
        self.false_names: Set[int] = set()
        self.versions: Dict[int, object] = {}
        nodes = (
            [n for s in statements for n in ast.walk(s)]
            if statements is not None
            else list(ast.walk(self.tree))
        )
        for node in nodes:
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in self.flags
                and self.flag_at(node)
            ):
                self.false_names.add(id(node))
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Load)
                and node.attr in ("hip", "cuda")
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "version"
                and isinstance(node.value.value, ast.Name)
                and self.torch_at(node.value.value)
            ):
                self.versions[id(node)] = None if node.attr == "hip" else CUDA_VERSION
        self.builtin_bool = {
            id(n)
            for n in nodes
            if isinstance(n, ast.Name) and n.id == "bool" and self.scopes.resolving_scope(n, "bool") is None
        }


def _stmt_names(stmt: ast.stmt) -> List[str]:
    if isinstance(stmt, ast.Import):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def fold(
    tree: ast.Module,
    original_names: Set[str],
    rocm_names: Dict[str, object],
    path: Optional[str] = None,
    assume_imports_succeed: bool = False,
    notes: Optional[List[str]] = None,
    source: Optional[str] = None,
) -> Tuple[ast.Module, List[str]]:
    """The module as it runs on NVIDIA, and the reasons found on the way (what cannot be proven);
    ``notes`` gets the predicates left unfolded (they may be rebound)."""
    module = _Module(tree, original_names, rocm_names, PackageExports(path), path, source)
    if notes is not None:
        notes.extend(module.notes)
    module.decide()
    folded = Fold(module, assume_imports_succeed).visit(tree)  # `tree` is the caller's copy
    return ast.fix_missing_locations(folded), module.reasons


def fold_regions(
    tree: ast.Module,
    regions: List[List[ast.stmt]],
    original_names: Set[str],
    rocm_names: Dict[str, object],
    path: Optional[str] = None,
    assume_imports_succeed: bool = False,
    notes: Optional[List[str]] = None,
    source: Optional[str] = None,
) -> Tuple[List[str], List[str]]:
    """:func:`fold` of the statements of each region only (runs of statements of one block of
    ``tree``), analysed in the whole module (its scopes, bindings and flags): (the dump of each
    folded region, the reasons found on the way)."""
    module = _Module(tree, original_names, rocm_names, PackageExports(path), path, source)
    if notes is not None:
        notes.extend(module.notes)
    module.decide([s for region in regions for s in region])
    folder = Fold(module, assume_imports_succeed)
    return [
        ast.dump(folder.visit(ast.Module(body=list(region), type_ignores=[]))) for region in regions
    ], module.reasons


def check_nvidia_path(
    original: str,
    fixed: str,
    *,
    path: Optional[str] = None,
    rocm_names: Optional[Dict[str, object]] = None,
    assume_imports_succeed: bool = False,
) -> Optional[str]:
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
    names = identifiers(old_tree)
    try:
        regions = changed_regions(old_tree, new_tree, original, fixed)
        # Both trees were parsed here for this check alone: folded in place, no copy.
        a, _ = fold_regions(
            old_tree,
            [x for x, _ in regions],
            names,
            rocm_names,
            path,
            assume_imports_succeed,
            source=original,
        )
        notes: List[str] = []
        b, reasons = fold_regions(
            new_tree,
            [y for _, y in regions],
            names,
            rocm_names,
            path,
            assume_imports_succeed,
            notes,
            source=fixed,
        )
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


def same_on_nvidia(
    original: str,
    fixed: str,
    flags: Iterable[str] = (),
    torch_names: Iterable[str] = (),
    inserted: Iterable[str] = (),
    *,
    path: Optional[str] = None,
    rocm_names: Optional[Dict[str, object]] = None,
) -> bool:
    """True when ``fixed`` runs on NVIDIA as ``original`` does.  ``flags``, ``torch_names`` and
    ``inserted`` (what the fixer says it did) are accepted for compatibility and ignored: the
    check works out on its own what the fix added."""
    return check_nvidia_path(original, fixed, path=path, rocm_names=rocm_names) is None
