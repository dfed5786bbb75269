"""The NVIDIA-path checker's view of a module's namespace (issue 27), independent of the fixer.

``rocm_lint.fix.nvidia_path`` asks two questions here, and the answers are worked out without
the fixer's code (``fix.namespace``) or its plan:

* :meth:`NamespaceView.why_new_name` — may a module-level name the fix added be seen by code?
  Yes when the module reads its own namespace (``globals()`` in any scope; ``dir()``,
  ``vars()``, ``locals()`` with no argument outside functions and classes; the module object
  through ``sys.modules[__name__]``; a frame's ``f_globals``/``f_locals``; ``exec``/``eval``
  without a namespace), when a module of the project star-imports it and it has no
  ``__all__``, or when a star import of the module itself may bind the name over it.
* :meth:`NamespaceView.why_rebindable` — may a predicate the module already binds be rebound
  after its definition?  Yes when a later star import's source may bind it (a source this
  checker cannot read may), or the module may write its namespace dynamically (a write through
  ``globals()``, ``vars()``/``locals()`` at module level, ``sys.modules[__name__]``,
  ``f_globals``, ``exec``).  Such a predicate's reads are not folded.

The project's star imports are found by reading its Python files (from the directory above the
module's top package, or the nearest directory above it holding ``pyproject.toml``,
``setup.py``, ``setup.cfg`` or ``.git``), parsing only those whose text holds ``import *`` and
resolving each import as Python would from that file.
"""

from __future__ import annotations

import ast
import os
import re
import time
from typing import Dict, Iterator, List, Optional, Tuple

from rocm_lint.discovery import read_bounded

FILE_LIMIT = 20000
BYTES_LIMIT = 2 * 1024 * 1024
REUSE_SECONDS = 30.0
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_HAS_STAR = re.compile(rb"import[ \t\\\r\n]*\*")
_CALL_HINT = re.compile(
    r"(?:globals|vars|locals|dir|exec|eval)\s*\(|f_globals|f_locals|modules|__import__"
    r"|import_module"
)
_NON_SCOPE_PARENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SAFE_METHODS = ("items", "keys", "values", "get", "copy", "__contains__", "__getitem__")
_SAFE_FUNCTIONS = (
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "sorted",
    "len",
    "iter",
    "enumerate",
    "print",
    "any",
    "all",
    "dir",
    "repr",
    "str",
)


def _name_of(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name_of(node.value)
        return None if base is None else base + "." + node.attr
    return None


class _Walker(ast.NodeVisitor):
    """Records the module's reads and possible writes of its own namespace."""

    def __init__(self) -> None:
        self.depth = 0  # functions and classes around the node
        self.stack: List[ast.AST] = []
        self.reads: List[Tuple[int, str]] = []
        self.writes: List[Tuple[int, str]] = []

    def generic_visit(self, node: ast.AST) -> None:
        nested = isinstance(node, _NON_SCOPE_PARENTS)
        self.depth += nested
        self.stack.append(node)
        super().generic_visit(node)
        self.stack.pop()
        self.depth -= nested

    def _note(self, node: ast.AST, what: str, written: bool) -> None:
        line = getattr(node, "lineno", 0)
        self.reads.append((line, what))
        if written:
            self.writes.append((line, what))

    def visit_Call(self, node: ast.Call) -> None:
        func = _name_of(node.func)
        if func == "globals" and not node.args:
            self._note(node, "globals()", not self._only_read(node))
        elif func in ("vars", "locals", "dir") and not node.args and self.depth == 0:
            self._note(node, func + "()", func != "dir" and not self._only_read(node))
        elif func in ("exec", "eval") and len(node.args) + len(node.keywords) < 2:
            self._note(node, func + "() without a namespace", True)
        elif (
            func in ("sys.modules.get", "importlib.import_module", "__import__")
            and node.args
            and _name_of(node.args[0]) == "__name__"
        ):
            self._note(node, "sys.modules[__name__]", not self._only_read(node))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _name_of(node.value) == "sys.modules" and _name_of(node.slice) == "__name__":
            self._note(node, "sys.modules[__name__]", not self._only_read(node))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in ("f_globals", "f_locals"):
            self._note(node, node.attr, True)
        self.generic_visit(node)

    def _only_read(self, node: ast.AST) -> bool:
        """The namespace (or module object) at ``node`` is read where it stands, never kept or
        written through."""
        parent = self.stack[-1] if self.stack else None
        grand = self.stack[-2] if len(self.stack) > 1 else None
        if isinstance(parent, ast.Attribute):
            if isinstance(grand, ast.Call) and grand.func is parent:
                return parent.attr in _SAFE_METHODS
            return isinstance(parent.ctx, ast.Load) and parent.attr != "__dict__"
        if isinstance(parent, ast.Subscript):
            return isinstance(parent.ctx, ast.Load)
        if isinstance(parent, ast.Compare):
            return all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops) and parent.left is not node
        if isinstance(parent, (ast.For, ast.comprehension)):
            return parent.iter is node
        if isinstance(parent, ast.Call) and parent.func is not node:
            func = _name_of(parent.func)
            if func in ("getattr", "hasattr", "inspect.getmembers"):
                return True
            return func in _SAFE_FUNCTIONS
        return False


def _module_all(tree: ast.Module) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            names = [_name_of(t) for t in stmt.targets]
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            names = [_name_of(stmt.target)]
        else:
            continue
        if "__all__" in names:
            return True
    return False


def _stars(tree: ast.Module) -> Iterator[Tuple[int, ast.ImportFrom]]:
    """(index of the top-level statement, node) of each ``from X import *`` (only at module
    level: compound statements are entered, functions and classes are not)."""
    for index, stmt in enumerate(tree.body):
        pending: List[ast.AST] = [stmt]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.ImportFrom):
                if [a.name for a in node.names] == ["*"]:
                    yield index, node
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                pending.extend(getattr(node, field, None) or ())


def _package_top(folder: str) -> str:
    for _ in range(64):
        if not os.path.exists(os.path.join(folder, "__init__.py")):
            break
        up = os.path.dirname(folder)
        if up == folder:
            break
        folder = up
    return folder


def _project_root(path: str) -> str:
    """The directory above the top package, or the nearest one up holding a project marker."""
    folder = os.path.dirname(os.path.abspath(path))
    top = _package_top(folder)
    probe = folder
    for _ in range(64):
        if any(os.path.exists(os.path.join(probe, m)) for m in _MARKERS):
            return probe if len(probe) < len(top) else top
        up = os.path.dirname(probe)
        if up == probe:
            break
        probe = up
    return top


def _target(importer: str, node: ast.ImportFrom, extra_roots: List[str]) -> Optional[str]:
    """The file ``node`` (a star import in ``importer``) imports, resolved as Python would."""
    here = os.path.dirname(os.path.abspath(importer))
    parts = node.module.split(".") if node.module else []
    if node.level:
        base = here
        for _ in range(node.level - 1):
            base = os.path.dirname(base)
        bases = [base]
    else:
        if not parts:
            return None
        bases = [here, _package_top(here)] + extra_roots
    for base in bases:
        stem = os.path.join(base, *parts)
        options = [os.path.join(stem, "__init__.py")] + ([stem + ".py"] if parts else [])
        for candidate in options:
            if os.path.isfile(candidate):
                return os.path.realpath(candidate)
    return None


def _parse_file(path: str) -> Optional[ast.Module]:
    try:
        data = read_bounded(path, BYTES_LIMIT)
    except OSError:
        return None
    if isinstance(data, str):
        return None
    try:
        return ast.parse(data.decode("utf-8", "replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_PROJECTS: Dict[str, Tuple[float, Optional[List[Tuple[str, ast.ImportFrom]]]]] = {}


def _project_stars(root: str) -> Optional[List[Tuple[str, ast.ImportFrom]]]:
    """Every star import of the project's Python files (None: more files than the limit)."""
    known = _PROJECTS.get(root)
    if known is not None and time.monotonic() - known[0] <= REUSE_SECONDS:
        return known[1]
    stars: Optional[List[Tuple[str, ast.ImportFrom]]] = []
    seen = 0
    for folder, subdirs, files in os.walk(root):
        subdirs[:] = sorted(
            d
            for d in subdirs
            if d[:1] != "."
            and d not in ("__pycache__", "node_modules", "site-packages")
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        for name in files:
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > FILE_LIMIT:
                stars = None
                break
            path = os.path.join(folder, name)
            try:
                data = read_bounded(path, BYTES_LIMIT)
            except OSError:
                continue
            if isinstance(data, str) or not _HAS_STAR.search(data):
                continue
            tree = _parse_file(path)
            if tree is not None:
                stars.extend((path, node) for _, node in _stars(tree))
        if stars is None:
            break
    if len(_PROJECTS) > 16:
        _PROJECTS.clear()
    _PROJECTS[root] = (time.monotonic(), stars)
    return stars


_ASKED: Dict[Tuple[str, str], Tuple[float, Optional[List[Tuple[str, ast.Module]]]]] = {}


def _project_files_naming(root: str, name: str) -> Optional[List[Tuple[str, ast.Module]]]:
    """The project's Python files whose text holds ``name`` as a word, parsed (None: more files
    than the limit)."""
    known = _ASKED.get((root, name))
    if known is not None and time.monotonic() - known[0] <= REUSE_SECONDS:
        return known[1]
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    found: Optional[List[Tuple[str, ast.Module]]] = []
    seen = 0
    for folder, subdirs, files in os.walk(root):
        subdirs[:] = sorted(
            d
            for d in subdirs
            if d[:1] != "."
            and d not in ("__pycache__", "node_modules", "site-packages")
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        for file in files:
            if not file.endswith(".py"):
                continue
            seen += 1
            if seen > FILE_LIMIT:
                found = None
                break
            path = os.path.join(folder, file)
            try:
                data = read_bounded(path, BYTES_LIMIT)
            except OSError:
                continue
            if isinstance(data, str) or not word.search(data):
                continue
            tree = _parse_file(path)
            if tree is not None:
                found.append((path, tree))
        if found is None:
            break
    if len(_ASKED) > 32:
        _ASKED.clear()
    _ASKED[(root, name)] = (time.monotonic(), found)
    return found


def _asked_for(path: str, name: str) -> Optional[str]:
    """Why another module of the project may ask the module at ``path`` for ``name`` by itself:
    ``from <module> import name`` (a `try/except ImportError` fallback stops running once the
    name exists), or ``getattr``/``hasattr``/an attribute ``.name`` in a module that imports it."""
    root = _project_root(path)
    files = _project_files_naming(root, name)
    if files is None:
        return f"the project has too many files to rule out an import of `{name}`"
    me = os.path.realpath(path)
    roots = [root, os.path.join(root, "src")]
    for importer, tree in files:
        if os.path.realpath(importer) == me:
            continue
        where = os.path.relpath(importer, root)
        imports_me = False
        for node in ast.walk(tree):
            asked: List[Tuple[ast.ImportFrom, List[str]]] = []
            if isinstance(node, ast.ImportFrom):
                asked.append((node, [a.name for a in node.names]))
                for a in node.names:  # `from pkg import utils`: the module itself
                    sub = (node.module + "." if node.module else "") + a.name
                    asked.append((ast.ImportFrom(module=sub, names=[], level=node.level), []))
            elif isinstance(node, ast.Import):
                asked += [(ast.ImportFrom(module=a.name, names=[], level=0), []) for a in node.names]
            for imp, names in asked:
                if _target(importer, imp, roots) != me:
                    continue
                if name in names:
                    return f"`{where}` imports `{name}` from the module (line {node.lineno})"
                imports_me = True
        if not imports_me:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == name
            ) or (isinstance(node, ast.Attribute) and node.attr == name):
                return f"`{where}` asks the module for `{name}` (line {node.lineno})"
    return None


def _source_may_bind(tree: Optional[ast.Module], name: str) -> bool:
    """May ``from <tree's module> import *`` bind ``name``?"""
    if tree is None:
        return True
    literal = None
    mentions = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__all__":
            mentions += 1
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and _name_of(stmt.targets[0]) == "__all__"
            and isinstance(stmt.value, (ast.List, ast.Tuple))
        ):
            values = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
            if len(values) == len(stmt.value.elts) and all(isinstance(v, str) for v in values):
                literal = values
    if literal is not None and mentions == 1:
        return name in literal
    if mentions == 0 and name.startswith("_"):
        return False
    walker = _Walker()
    walker.visit(tree)
    if walker.reads or any(True for _ in _stars(tree)):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
    return False


class NamespaceView:
    """What code can see of one module's namespace (the fixed module's tree and its path)."""

    def __init__(self, tree: ast.Module, path: Optional[str], source: Optional[str] = None) -> None:
        self.tree = tree
        self.path = path
        walker = _Walker()
        # no walk where the source holds no word a namespace use is made of
        if source is None or _CALL_HINT.search(source):
            walker.visit(tree)
        self.reads, self.writes = sorted(walker.reads), sorted(walker.writes)

    def _star_binding(self, name: str, after: int) -> Optional[str]:
        for index, node in _stars(self.tree):
            if index <= after:
                continue
            source = None
            if self.path:
                root = _project_root(self.path)
                source = _target(self.path, node, [root, os.path.join(root, "src")])
            if source is None or _source_may_bind(_parse_file(source), name):
                return (
                    f"`from {'.' * node.level}{node.module or ''} import *` (line {node.lineno}) "
                    f"may bind `{name}`"
                )
        return None

    def why_new_name(self, name: str) -> Optional[str]:
        """Why a module-level ``name`` the fix added can be seen (None: it cannot)."""
        if self.reads:
            line, what = self.reads[0]
            return (
                f"the fix adds `{name}` to a module that reads its own namespace (`{what}`, line {line}): "
                "code would see the new name"
            )
        why = self._star_binding(name, -1)
        if why:
            return f"the fix adds `{name}`, but {why}"
        asked = _asked_for(self.path, name) if self.path else None
        if asked:
            return f"the fix adds `{name}`, but {asked}: it would find the new name"
        if not self.path or _module_all(self.tree):
            return None
        root = _project_root(self.path)
        stars = _project_stars(root)
        if stars is None:
            return f"the fix adds `{name}` and the project has too many files to rule out a star import of it"
        me = os.path.realpath(self.path)
        for importer, node in stars:
            if (
                os.path.realpath(importer) != me
                and _target(importer, node, [root, os.path.join(root, "src")]) == me
            ):
                return (
                    f"the fix adds `{name}` to a module that `{os.path.relpath(importer, root)}` star-imports "
                    f"(line {node.lineno}): the name would reach it"
                )
        return None

    def why_rebindable(self, name: str, index: int) -> Optional[str]:
        """Why the predicate ``name`` bound by top-level statement ``index`` may be rebound later."""
        if self.writes:
            line, what = self.writes[0]
            return f"the predicate `{name}` may be rebound: the module writes its namespace (`{what}`, line {line})"
        why = self._star_binding(name, index)
        return f"the predicate `{name}` may be rebound: {why}" if why else None
