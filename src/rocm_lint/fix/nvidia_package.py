"""What the NVIDIA-path checker reads of a module's package, on its own (``fix.nvidia_path``).

``imported_hip_test``: whether ``from M import F`` imports a ROCm test (``F`` bound once, at
module level of ``M``, to ``torch.version.hip is not None``), read from ``M`` itself and never
from the project model the fixer used; ``PackageExports``: what the package's ``__init__.py``
does with the module's names (uses them, star-imports the module).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Optional, Set

from rocm_lint.discovery import read_bounded
from rocm_lint.fix.nvidia_scopes import dotted


def is_hip_test(value: ast.AST) -> bool:
    """``A.version.hip is not None`` / ``bool(A.version.hip)`` / ``A.version.hip`` (A: a name)."""

    def hip(node):
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "hip"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "version"
            and isinstance(node.value.value, ast.Name)
        )

    if isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.IsNot):
        return (
            hip(value.left)
            and isinstance(value.comparators[0], ast.Constant)
            and value.comparators[0].value is None
        )
    if (
        isinstance(value, ast.Call)
        and dotted(value.func) == "bool"
        and len(value.args) == 1
        and not value.keywords
    ):
        return hip(value.args[0])
    return hip(value)


def imported_hip_test(path: str, level: int, module: Optional[str], name: str) -> bool:
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
            values = [
                s.value
                for s in tree.body
                if isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and s.targets[0].id == name
            ]
            rebound = sum(
                1
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            )
            return len(values) == 1 and rebound == 1 and is_hip_test(values[0])
    return False


class PackageExports:
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
            if (
                isinstance(node, ast.ImportFrom)
                and any(a.name == "*" for a in node.names)
                and node.module
                and node.module.split(".")[-1] == stem
            ):
                self.star = True

    def why_not(self, name: str, tree: ast.Module) -> Optional[str]:
        if name in self.init_names:
            return f"the flag `{name}` is a name the package's __init__.py uses"
        if name in self.siblings:
            return f"the flag `{name}` is the name of a module of the package"
        has_all = any(
            isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            and "__all__"
            in [t.id for t in getattr(s, "targets", [getattr(s, "target", None)]) if isinstance(t, ast.Name)]
            for s in tree.body
        )
        if self.star and not has_all and not name.startswith("_"):
            return f"the flag `{name}` would be exported by the package's `from ... import *`"
        return None
