"""Name resolution: which qualified name does an expression refer to?

``import torch._inductor.config as cfg`` makes ``cfg.max_autotune`` resolve to
``torch._inductor.config.max_autotune``; ``from torch import compile`` makes
``compile(m)`` a call of ``torch.compile``; ``cfg = torch._inductor.config``
(a module-level alias of an imported name) is followed too.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional


class ImportMap:
    def __init__(self) -> None:
        self.names: Dict[str, str] = {}  # local name -> qualified name

    def add_import(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    self.names[top] = top
        elif isinstance(node, ast.ImportFrom):
            # Relative imports keep their leading dots (``..utils.is_hip``): they name this
            # project's modules, never torch; the project model resolves them.
            prefix = "." * (node.level or 0) + (f"{node.module}." if node.module else "")
            if not prefix:
                return
            for alias in node.names:
                if alias.name != "*":
                    self.names[alias.asname or alias.name] = f"{prefix}{alias.name}"

    def add_alias(self, name: str, value: ast.AST) -> None:
        """``name = <dotted expression>`` makes ``name`` an alias when the value resolves."""
        qual = self.qualname(value)
        if qual is not None and qual.split(".", 1)[0] in ("torch", "os", "pynvml"):
            self.names[name] = qual

    def qualname(self, node: ast.AST) -> Optional[str]:
        """Dotted name of a Name/Attribute chain, resolved through imports.

        An unimported name resolves to itself, so snippets that use ``torch``
        without importing it still match; builtins such as ``compile`` stay
        ``compile`` and never become ``torch.compile``.
        """
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.names.get(node.id, node.id))
        return ".".join(reversed(parts))


def dotted(node: ast.AST) -> Optional[str]:
    """Dotted text of a Name/Attribute chain, unresolved (``self.cfg.is_rocm``)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        inner = dotted(node.func)
        if inner is None:
            return None
        parts.append(inner + "()")
    else:
        return None
    return ".".join(reversed(parts))
