"""Where a new ROCm flag goes: after the *whole* import block that holds torch's import.

A statement between two imports makes every later module-level import ``E402`` (pycodestyle,
ruff) and splits isort's block (``I001``): pytorch/benchmark's ``import torch`` is followed by
``import torch._dynamo``, ``import torch._export`` ... and a ``try:`` of imports with an
``except ImportError:`` of imports, then more imports; a flag right after ``import torch`` gave 17
new ``E402`` and an ``I001``.  So the flag goes after the run of module-level imports that starts
at torch's import, crossing:

* imports that do not rebind the torch name to something else (``import torch._dynamo`` binds
  ``torch`` to the same module, the torch package; ``from x import torch`` or
  ``import numpy as torch`` would not, and the run stops before them);
* ``try`` blocks made of imports only (and ``pass``, or ``name = None``-style fallbacks that do
  not bind the torch name), ``except ImportError:`` branches included: whatever branch runs,
  torch is still the module bound before, so the flag reads the same ``torch.version.hip``.

The independent NVIDIA-path check (``fix.nvidia_path``) still proves the flag reads torch soundly
bound there; this module only chooses the place.
"""

from __future__ import annotations

import ast
from typing import List, Sequence


def _binds_other(alias: str, stmt: ast.stmt) -> bool:
    """Does the import ``stmt`` bind ``alias`` to anything but the torch module?"""
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            bound = a.asname or a.name.split(".")[0]
            if bound != alias:
                continue
            if a.asname is None and a.name.split(".")[0] == "torch":
                continue  # ``import torch`` / ``import torch.x``: the torch package again
            if a.asname is not None and a.name == "torch":
                continue  # ``import torch as th`` again
            return True
        return False
    if isinstance(stmt, ast.ImportFrom):
        return any((a.asname or a.name) == alias or a.name == "*" for a in stmt.names)
    return True


def _names_bound(targets: Sequence[ast.expr]) -> List[str]:
    out: List[str] = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                out.append(node.id)
            elif not isinstance(node, (ast.Tuple, ast.List, ast.Store, ast.Starred)):
                out.append("")  # an attribute or subscript target: not a plain fallback
    return out


def _quiet(stmt: ast.stmt, alias: str) -> bool:
    """An import (not rebinding ``alias``), ``pass``, or a fallback assignment of constants or
    names to plain names other than ``alias``, inside a ``try`` of imports."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return not _binds_other(alias, stmt)
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Constant, ast.Name)):
        names = _names_bound(stmt.targets)
        return bool(names) and all(n and n != alias for n in names)
    return False


def _import_try(stmt: ast.stmt, alias: str) -> bool:
    """A ``try`` block of imports whose every branch binds nothing over ``alias``."""
    if not isinstance(stmt, ast.Try) or not stmt.body:
        return False
    if not all(isinstance(s, (ast.Import, ast.ImportFrom)) and not _binds_other(alias, s) for s in stmt.body):
        return False
    parts = [s for h in stmt.handlers for s in h.body] + list(stmt.orelse) + list(stmt.finalbody)
    if any(h.name == alias for h in stmt.handlers):
        return False
    return all(_quiet(s, alias) for s in parts)


def flag_index(body: Sequence[ast.stmt], torch_index: int, alias: str) -> int:
    """The index of the top-level statement after which the new flag (read as ``alias``, bound
    by ``body[torch_index]``) goes: the last of the import block holding torch's import."""
    at = torch_index
    for i in range(torch_index + 1, len(body)):
        stmt = body[i]
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if _binds_other(alias, stmt):
                break
        elif not _import_try(stmt, alias):
            break
        at = i
    return at
