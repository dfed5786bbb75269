"""Which module-level names a program can observe: the fixer's side of issue 27 (the checker,
``fix.nvidia_namespace``, works the same rules out on its own).

A fix that adds a module-level name (the flag ``is_rocm``, an ``import torch``) changes the
NVIDIA program when code can see the name:

* **the module reads its own namespace**: ``globals()`` anywhere (it is the module's dict in
  every scope), ``dir()``/``vars()``/``locals()`` with no argument outside any function or class,
  ``sys.modules[__name__]``, a frame's ``f_globals``/``f_locals``, or ``exec``/``eval`` given no
  namespace (the code they run reads the module's).  nanoGPT's ``train.py`` builds its config
  from ``globals().items()``: a new flag lands in every checkpoint;
* **a project module star-imports it** (``from pkg.train import *``, found by reading the
  project's files and resolving each star import through the project model) and the module has
  no ``__all__``: the new name reaches the importer and may replace one it had.

There the fix adds nothing: it tests ``torch.version.hip`` in place, or reuses a predicate the
module binds.  A predicate (reused, or a new flag) must also be a name nothing can rebind: no
star import whose source may bind it (after its definition, for a reused one; anywhere, for a new
one) and no dynamic write to the module's namespace (``globals()[...] = ...``,
``setattr(sys.modules[__name__], ...)``, ``exec(..., globals())``).
"""

from __future__ import annotations

import ast
import os
import re
import time
from typing import Dict, List, Optional, Set, Tuple

from rocm_lint.discovery import read_bounded

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# What reading a namespace dict through does not change: ``globals().items()``, ``k in globals()``.
_READ_METHODS = frozenset(
    {"items", "keys", "values", "get", "copy", "__contains__", "__getitem__", "__iter__", "__len__"}
)
_READ_CALLS = frozenset(
    {
        "dict",
        "list",
        "tuple",
        "set",
        "frozenset",
        "sorted",
        "len",
        "iter",
        "enumerate",
        "any",
        "all",
        "reversed",
        "print",
        "repr",
        "str",
        "dir",
        "getattr",
        "hasattr",
        "inspect.getmembers",
    }
)
MAX_SCAN_FILES = 20000  # Python files read to find the project's star imports
MAX_FILE_BYTES = 2 * 1024 * 1024
SCAN_TTL = 30.0  # seconds a project's star imports are reused (the language server runs long)
_STAR = re.compile(rb"(?m)(?:^|;)[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]*\*")
_ANY_STAR = re.compile(rb"import[ \t]*\*")  # a literal prefix: searched fast, before _STAR runs
# What a use of the module's namespace needs in the text (no walk of a module without it).
_USE_HINT = re.compile(
    r"\b(?:globals|vars|locals|dir|exec|eval)\s*\(|\bf_globals\b|\bf_locals\b|\bmodules\b"
    r"|\bimport_module\b|\b__import__\b"
)
_WORD = re.compile(r"[A-Za-z_]\w*")


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else ""


def _is_own_module(node: ast.AST) -> bool:
    """``sys.modules[__name__]``, ``sys.modules.get(__name__)``, ``importlib.import_module(__name__)``."""
    if isinstance(node, ast.Subscript) and _dotted(node.value) == "sys.modules":
        return isinstance(node.slice, ast.Name) and node.slice.id == "__name__"
    if isinstance(node, ast.Call) and _dotted(node.func) in (
        "sys.modules.get",
        "importlib.import_module",
        "__import__",
    ):
        return bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "__name__"
    return False


_LAST: List[object] = [None, None]  # (tree, its uses): the plan asks once per name and finding


def namespace_uses(tree: ast.Module, text: Optional[str] = None) -> List[Tuple[ast.AST, str, bool]]:
    """Every place the module reaches its own namespace: (node, what, whether it may write).
    ``text``, the module's source when known, spares the walk where no word of a use occurs."""
    if _LAST[0] is tree:
        return _LAST[1]  # type: ignore[return-value]
    uses = _namespace_uses(tree) if text is None or _USE_HINT.search(text) else []
    _LAST[:] = [tree, uses]
    return uses


def _namespace_uses(tree: ast.Module) -> List[Tuple[ast.AST, str, bool]]:
    parents: Dict[int, ast.AST] = {}
    out: List[Tuple[ast.AST, str, bool]] = []
    stack: List[Tuple[ast.AST, bool]] = [(tree, True)]
    while stack:
        node, top = stack.pop()
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            stack.append((child, top and not isinstance(node, _SCOPES)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name == "globals" or (top and name in ("vars", "locals", "dir") and not node.args):
                out.append((node, f"{name}()", name != "dir" and not _read_only(node, parents)))
            elif name in ("exec", "eval") and len(node.args) < 2 and not node.keywords:
                out.append((node, f"{name}() without a namespace", True))
        elif isinstance(node, ast.Attribute) and node.attr in ("f_globals", "f_locals"):
            out.append((node, node.attr, True))
        if _is_own_module(node):
            out.append((node, "sys.modules[__name__]", not _read_only(node, parents)))
    return sorted(out, key=lambda u: (getattr(u[0], "lineno", 0), getattr(u[0], "col_offset", 0)))


def _read_only(node: ast.AST, parents: Dict[int, ast.AST]) -> bool:
    """Is ``node`` (a namespace, or the module object) only read where it stands?"""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
        if isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent:
            return parent.attr in _READ_METHODS
        return parent.attr != "__dict__"
    if isinstance(parent, ast.Subscript):
        return parent.value is node and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Compare):
        return any(c is node for c in parent.comparators) and all(
            isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops
        )
    if isinstance(parent, (ast.comprehension, ast.For)):
        return parent.iter is node
    if isinstance(parent, ast.Call):
        return (
            parent.func is not node
            and _dotted(parent.func) in _READ_CALLS
            and not (
                _dotted(parent.func) in ("getattr", "hasattr") and parent.args and parent.args[0] is not node
            )
        )
    return False


def reads_own_namespace(tree: ast.Module, text: Optional[str] = None) -> Optional[str]:
    uses = namespace_uses(tree, text)
    if not uses:
        return None
    node, what, _ = uses[0]
    return f"the module reads its own namespace (`{what}`, line {getattr(node, 'lineno', '?')})"


def writes_own_namespace(tree: ast.Module, text: Optional[str] = None) -> Optional[str]:
    for node, what, writes in namespace_uses(tree, text):
        if writes:
            return f"the module may write its namespace dynamically (`{what}`, line {getattr(node, 'lineno', '?')})"
    return None


def has_all(tree: ast.Module) -> bool:
    """A top-level ``__all__`` binding: a star import then takes only the names it lists."""
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in targets
        ):
            return True
    return False


# -- star imports -----------------------------------------------------------------------------------
def _project(config):
    """A project model for module resolution alone (``Project.find_module``: no facts)."""
    from rocm_lint.config import Config
    from rocm_lint.python.project import Project

    return Project(config if config is not None else Config())


def _resolve(project, importer: str, module: str) -> Optional[str]:
    """The file ``from <module> import *`` in ``importer`` reads (the project model's resolution;
    ``from . import *`` reads the package's ``__init__.py``)."""
    if module and not module.strip("."):
        base = os.path.dirname(os.path.abspath(importer))
        for _ in range(len(module) - 1):
            base = os.path.dirname(base)
        init = os.path.join(base, "__init__.py")
        return init if os.path.isfile(init) else None
    return project.find_module(importer, module)


def _read_text(path: str) -> Optional[str]:
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except OSError:
        return None
    if isinstance(data, str):
        return None
    return data.decode("utf-8", "replace")


def _python_files(root: str) -> Optional[List[Tuple[str, bytes]]]:
    """(file, bytes) of the readable Python files under ``root`` (hidden, cache, virtual
    environment and site-packages folders skipped); None past MAX_SCAN_FILES files."""
    out: List[Tuple[str, bytes]] = []
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".")
            and d not in ("__pycache__", "node_modules", "site-packages")
            and not os.path.isfile(os.path.join(folder, d, "pyvenv.cfg"))
        ]
        for name in files:
            if not name.endswith(".py"):
                continue
            count += 1
            if count > MAX_SCAN_FILES:
                return None
            path = os.path.join(folder, name)
            try:
                data = read_bounded(path, MAX_FILE_BYTES)
            except OSError:
                continue
            if not isinstance(data, str):
                out.append((path, data))
    return out


_SCANS: Dict[str, Tuple[float, Optional[List[Tuple[str, str]]]]] = {}


def _star_imports_under(root: str) -> Optional[List[Tuple[str, str]]]:
    """(file, imported module) for every ``from X import *`` in the Python files under ``root``;
    None when there are too many files to read."""
    cached = _SCANS.get(root)
    if cached is not None and time.monotonic() - cached[0] < SCAN_TTL:
        return cached[1]
    files = _python_files(root)
    found: Optional[List[Tuple[str, str]]] = None
    if files is not None:
        found = [
            (path, m.group(1).decode("ascii", "replace"))
            for path, data in files
            if _ANY_STAR.search(data)
            for m in _STAR.finditer(data)
        ]
    if len(_SCANS) > 16:
        _SCANS.clear()
    _SCANS[root] = (time.monotonic(), found)
    return found


def star_importers(path: str, config=None) -> Optional[List[str]]:
    """The project modules that ``from ... import *`` the module at ``path`` (None: the project
    has too many files to tell).  The project is read from the directory above the module's top
    package and the configuration's root."""
    project = _project(config)
    me = os.path.realpath(path)
    roots = [_top_package_parent(path), _marked_root(path)] + [r for r in project.roots if os.path.isdir(r)]
    roots = [r for r in dict.fromkeys(os.path.realpath(r) for r in roots)]
    roots = [r for r in roots if not any(o != r and r.startswith(o.rstrip(os.sep) + os.sep) for o in roots)]
    out: List[str] = []
    for root in roots:
        stars = _star_imports_under(root)
        if stars is None:
            return None
        for importer, module in stars:
            if os.path.realpath(importer) == me:
                continue
            target = _resolve(project, importer, module)
            if target is None and not module.startswith("."):  # run from the project's root
                target = next(
                    (
                        t
                        for t in (
                            _module_file(r, module)
                            for root in roots
                            for r in (root, os.path.join(root, "src"))
                        )
                        if t
                    ),
                    None,
                )
            if target is not None and os.path.realpath(target) == me:
                out.append(importer)
    return out


def _module_file(root: str, module: str) -> Optional[str]:
    base = os.path.join(root, *module.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _marked_root(path: str) -> str:
    """The nearest directory above ``path`` holding a project file (``pyproject.toml``,
    ``setup.py``, ``setup.cfg``, ``.git``), when it is above the module's top package."""
    top = _top_package_parent(path)
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(64):
        if any(
            os.path.exists(os.path.join(directory, m))
            for m in ("pyproject.toml", "setup.py", "setup.cfg", ".git")
        ):
            return directory if len(directory) < len(top) else top
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return top


def _top_package_parent(path: str) -> str:
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(32):
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def star_may_bind(
    name: str, tree: ast.Module, path: Optional[str], config=None, after: int = -1
) -> Optional[str]:
    """Why a star import of the module (in a top-level statement after index ``after``) may bind
    ``name``; None when none can: its source, read through the project model, lists an ``__all__``
    without it, or has none and never mentions it (a private name, none at all)."""
    project = None
    for i, stmt in enumerate(tree.body):
        if i <= after:
            continue
        for node in module_level_statements(stmt):
            if not (isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)):
                continue
            module = "." * (node.level or 0) + (node.module or "")
            why = f"`from {module} import *` (line {node.lineno}) may bind `{name}`"
            if not path:
                return why
            project = project or _project(config)
            source = _resolve(project, path, module)
            text = _read_text(source) if source else None
            if text is None or _may_export(text, name):
                return why
    return None


def module_level_statements(stmt: ast.stmt):
    """``stmt`` and the statements of its blocks, not entering functions or classes (where a
    star import is a syntax error)."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(
                    b for b in block if isinstance(b, (ast.stmt, ast.excepthandler)) or hasattr(b, "body")
                )


def _may_export(text: str, name: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    listed: Optional[Set[str]] = None
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and [getattr(t, "id", None) for t in stmt.targets] == ["__all__"]
            and isinstance(stmt.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.value.elts)
        ):
            listed = {e.value for e in stmt.value.elts}
    words = set(_WORD.findall(text))
    if listed is not None and sum(1 for w in _WORD.findall(text) if w == "__all__") == 1:
        return name in listed
    if name.startswith("_") and "__all__" not in words:
        return False
    return (
        name in words
        or namespace_uses(tree, text) != []
        or any(
            isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
            for stmt in tree.body
            for n in module_level_statements(stmt)
        )
    )


def observed_namespace(
    tree: ast.Module, path: Optional[str], config=None, text: Optional[str] = None
) -> Optional[str]:
    """Why code can see a module-level name the fix would add (None: it cannot)."""
    why = reads_own_namespace(tree, text)
    if why is not None or not path or has_all(tree):
        return why
    importers = star_importers(path, config)
    if importers is None:
        return "the project has too many files to rule out a `from ... import *` of the module"
    if importers:
        where = os.path.relpath(importers[0], os.path.dirname(os.path.abspath(path)))
        return f"`{where}` star-imports the module (`from ... import *`)"
    return None


# -- names other modules ask the module for -----------------------------------------------------
# A new flag is a new attribute of the module.  Another project module that asks the module for
# that name by itself sees it: `from pkg.utils import is_rocm` (in `try:` with an
# `except ImportError:` fallback `def is_rocm(): ...`, the fallback stops running and the
# importer gets a bool where it called a function), `getattr(utils, "is_rocm", None)`,
# `hasattr(...)`, `utils.is_rocm`.  Found by reading the project's files that mention the name.
_ASKED: Dict[Tuple[str, bytes], Tuple[float, Optional[List[Tuple[str, bytes]]]]] = {}


def _files_mentioning(root: str, word: bytes) -> Optional[List[Tuple[str, bytes]]]:
    """(file, content) of the Python files under ``root`` whose text holds ``word``; None when
    there are too many files to read."""
    key = (root, word)
    cached = _ASKED.get(key)
    if cached is not None and time.monotonic() - cached[0] < SCAN_TTL:
        return cached[1]
    files = _python_files(root)
    found = None if files is None else [(path, data) for path, data in files if word in data]
    if len(_ASKED) > 32:
        _ASKED.clear()
    _ASKED[key] = (time.monotonic(), found)
    return found


def _project_roots(path: str, project) -> List[str]:
    roots = [_top_package_parent(path), _marked_root(path)] + [r for r in project.roots if os.path.isdir(r)]
    roots = [r for r in dict.fromkeys(os.path.realpath(r) for r in roots)]
    return [r for r in roots if not any(o != r and r.startswith(o.rstrip(os.sep) + os.sep) for o in roots)]


def _imported_file(project, importer: str, module: str, roots: List[str]) -> Optional[str]:
    target = _resolve(project, importer, module)
    if target is None and not module.startswith("."):  # run from the project's root
        for root in roots:
            for r in (root, os.path.join(root, "src")):
                target = _module_file(r, module)
                if target:
                    return target
    return target


def asked_by_other_modules(name: str, path: Optional[str], config=None) -> Optional[str]:
    """Why another project module may ask the module at ``path`` for ``name`` (None: none does):
    ``from <it> import name``, or, in a module that imports it, ``getattr(m, "name")``,
    ``hasattr(m, "name")`` or ``m.name``."""
    if not path:
        return None
    project = _project(config)
    me = os.path.realpath(path)
    stem = os.path.splitext(os.path.basename(me))[0]
    if stem == "__init__":  # a package: imported by its directory's name
        stem = os.path.basename(os.path.dirname(me))
    roots = _project_roots(path, project)
    for root in roots:
        files = _files_mentioning(root, name.encode())
        if files is None:
            return "the project has too many files to rule out an import of the name"
        for importer, data in files:
            if os.path.realpath(importer) == me:
                continue
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            where = os.path.relpath(importer, os.path.dirname(me))
            imports_me = False
            for node in ast.walk(tree):
                modules: List[Tuple[str, List[str]]] = []
                if isinstance(node, ast.ImportFrom):
                    base = "." * (node.level or 0) + (node.module or "")
                    names = [a.name for a in node.names]
                    modules.append((base, names))
                    # `from pkg import utils`: the module itself
                    modules += [
                        (base.rstrip(".") + "." + n if base.strip(".") else base + n, []) for n in names
                    ]
                elif isinstance(node, ast.Import):
                    modules += [(a.name, []) for a in node.names]
                for module, names in modules:
                    if stem not in module and not (names and stem in names):
                        continue
                    target = _imported_file(project, importer, module, roots)
                    if target is None or os.path.realpath(target) != me:
                        continue
                    if name in names:
                        return f"`{where}` imports `{name}` from the module (line {node.lineno})"
                    imports_me = True
            if imports_me:
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
