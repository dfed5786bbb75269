"""Where a build module runs at all: the platform of the places that import it.

A package that picks its extension by platform (``if torch.version.cuda: from .cuda import *``
/ ``elif torch.version.hip: from .hip import *``) builds ``cuda/``'s extension only on NVIDIA:
the module that declares it runs only there.  So::

    import_gate(ws, path, root) -> (Worlds where the module runs, importer files read)

is NVIDIA-only (``(None, False, False)``) when the module has at least one importer in the
project and every import of it is in code the Python gate analysis (``rocm_lint.python``: the
gated walk, ``walk_gated``, with its predicates and early exits) says runs only on NVIDIA, or in
a module that is itself NVIDIA-only the same way (through the importers' importers, at most
``MAX_DEPTH`` deep, cycle-safe); the mirror image for ROCm; everywhere otherwise.  An import
counts when it executes the module: ``import a.b.c``/``from a.b import c``/``from .c import *``
name it, and importing a submodule of a package runs the package's ``__init__.py``.  Imports
from inside the module's own package tree (when it is an ``__init__.py``) run after it and do not
count.  No importer, a tree too large to index, or an importer that cannot be read: no fact.

The project's Python imports are indexed once per root: one bounded pass over its ``.py`` files
(hidden directories skipped), each file kept under the words of its import lines; only the
files holding the module's name there are parsed.  The importers looked at are the answer's
cache dependencies.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, List, Optional, Set, Tuple

from rocm_lint.build.logic import Worlds
from rocm_lint.config import Config
from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.workspace import Workspace, memoized

__all__ = ["import_gate", "EVERYWHERE", "NVIDIA_ONLY", "ROCM_ONLY"]

EVERYWHERE: Worlds = (True, True, True)
NVIDIA_ONLY: Worlds = (None, False, False)
ROCM_ONLY: Worlds = (False, None, False)
MAX_FILES = 20_000
MAX_DIRS = 10_000
MAX_MODULE_BYTES = 2 * 1024 * 1024
MAX_IMPORTERS = 64
MAX_DEPTH = 3
_SKIP_DIRS = frozenset(("node_modules", "__pycache__", "site-packages"))
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import\b[^\n]*|import[ \t]+[^\n]*)", re.M)
_WORD = re.compile(rb"[A-Za-z_]\w*")


@memoized(maxsize=16)
def _import_index(ws: Workspace, root: str) -> Optional[Dict[str, Tuple[str, ...]]]:
    """{word of an import line: files holding it} over the Python files under ``root``; None
    for a tree too large."""
    index: Dict[str, List[str]] = {}
    files = dirs = 0
    for here, subdirs, names in os.walk(root):
        dirs += 1
        if dirs > MAX_DIRS:
            return None
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            files += 1
            if files > MAX_FILES:
                return None
            path = os.path.join(here, name)
            try:
                data = ws.read_bounded(path, MAX_MODULE_BYTES, note=False)
            except OSError:
                continue
            if not isinstance(data, bytes) or b"import" not in data:
                continue
            words: Set[str] = set()
            for line in _IMPORT_LINE.finditer(data):
                text = line.group(0)
                if text.rstrip().endswith(b"("):  # ``from . import (`` ... ``)``: the next lines too
                    end = data.find(b")", line.end())
                    text = data[line.start() : end if end > 0 else line.end()]
                words.update(w.decode() for w in _WORD.findall(text))
            for word in words:
                index.setdefault(word, []).append(path)
    return {word: tuple(paths) for word, paths in index.items()}


def _executes(stmt: ast.AST, importer: str, module: str, roots: List[str]) -> bool:
    """Does ``stmt`` (in file ``importer``) run the module file ``module``?"""
    targets: List[Tuple[str, List[str]]] = []  # (directory, dotted parts from it)
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            targets.extend((r, alias.name.split(".")) for r in roots)
    elif isinstance(stmt, ast.ImportFrom):
        parts = (stmt.module or "").split(".") if stmt.module else []
        if stmt.level:
            base = os.path.dirname(importer)
            for _ in range(stmt.level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = roots
        for b in bases:
            if parts:
                targets.append((b, parts))
            for alias in stmt.names:
                if alias.name != "*":
                    targets.append((b, parts + [alias.name]))
    for base, parts in targets:
        here = base
        for k, part in enumerate(parts):
            here = os.path.join(here, part)
            if os.path.join(here, "__init__.py") == module:
                return True
            if k == len(parts) - 1 and here + ".py" == module:
                return True
    return False


def _roots(importer: str, top: str) -> List[str]:
    """Directories an absolute import of ``importer`` may be resolved from: its own, every one
    above it up to ``top``, and ``top/src``."""
    out = []
    here = os.path.dirname(importer)
    while True:
        out.append(here)
        if here == top or len(out) > 32:
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    out.append(os.path.join(top, "src"))
    return out


def _sites(ws: Workspace, importer: str, module: str, top: str) -> Optional[List[Tuple[str, bool]]]:
    """The imports of ``module`` in ``importer``: (gate fact or None, in a function?) each;
    None when the importer cannot be read."""
    try:
        data = ws.read_bounded(importer, MAX_MODULE_BYTES, note=False)
    except OSError:
        return None
    if not isinstance(data, bytes):
        return None
    text = data.decode("utf-8", errors="replace")
    try:
        tree = ast.parse(text, importer)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    roots = _roots(importer, top)
    wanted = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _executes(node, importer, module, roots)
    ]
    if not wanted:
        return []
    ids = {id(node) for node in wanted}
    config = Config()
    # Python's reader, imported when a builder module's importers are asked (a C++ check that
    # meets no builder loads none of it: tests/test_import_hygiene.py)
    from rocm_lint.python.analyzer import walk_gated
    from rocm_lint.python.context import ModuleContext
    from rocm_lint.python.project import Project

    ctx = ModuleContext(importer, tree, config, text, Project(config, workspace=ws))
    found: List[Tuple[Optional[str], bool]] = []

    def visit(node: ast.AST, state) -> None:
        if id(node) in ids:
            fact = NVIDIA if state.nvidia_only else ROCM if state.rocm_only else None
            found.append((fact, state.in_function))  # type: ignore[arg-type]

    try:
        walk_gated(ctx, visit)
    except RecursionError:
        return None
    return found  # type: ignore[return-value]


def _package_tree(module: str) -> Optional[str]:
    """The directory of a package's ``__init__.py`` (files below it run after it)."""
    return os.path.dirname(module) if os.path.basename(module) == "__init__.py" else None


@memoized(maxsize=1024)
def import_gate(ws: Workspace, module: str, top: str) -> Tuple[Worlds, Tuple[str, ...]]:
    """Where ``module`` runs, from its importers under ``top`` (see the module docstring), and
    the importer files that decided it."""
    return _gate(ws, os.path.abspath(module), os.path.abspath(top), MAX_DEPTH, frozenset())


def _gate(ws: Workspace, module: str, top: str, depth: int, seen) -> Tuple[Worlds, Tuple[str, ...]]:
    index = _import_index(ws, top)
    if index is None or depth <= 0 or module in seen:
        return EVERYWHERE, ()
    name = os.path.basename(os.path.dirname(module)) if module.endswith("__init__.py") else module[:-3]
    name = os.path.basename(name)
    tree = _package_tree(module)
    candidates = [
        p
        for p in index.get(name, ())
        if p != module and not (tree is not None and p.startswith(tree + os.sep))
    ]
    if len(candidates) > MAX_IMPORTERS:
        return EVERYWHERE, ()
    facts: Set[Optional[str]] = set()
    read: List[str] = []
    for importer in candidates:
        sites = _sites(ws, importer, module, top)
        if sites is None:
            return EVERYWHERE, ()
        if not sites:
            continue
        read.append(importer)
        for fact, _ in sites:
            if fact is None and os.path.basename(importer) != "setup.py":
                # an import with no gate of its own: the importer's, when it has one
                outer, more = _gate(ws, importer, top, depth - 1, seen | {module})
                read.extend(more)
                fact = NVIDIA if outer == NVIDIA_ONLY else ROCM if outer == ROCM_ONLY else None
            facts.add(fact)
            if None in facts or len(facts) > 1:
                return EVERYWHERE, tuple(read)
    if facts == {NVIDIA}:
        return NVIDIA_ONLY, tuple(read)
    if facts == {ROCM}:
        return ROCM_ONLY, tuple(read)
    return EVERYWHERE, tuple(read)
