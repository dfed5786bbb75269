"""The golden-rule checker: does a fix leave the NVIDIA program exactly as it was?

Fold both modules as NVIDIA sees them: the ROCm flag (and ``torch.version.hip``) is
False/None, ``torch.version.cuda`` a version string; constant tests are decided and
their dead branches dropped (``if not False: S`` becomes ``S``, ``x if False else y``
becomes ``y``); the flag assignment and ``import torch`` the fix inserted are removed.
The two folded ASTs must be equal.
"""

from __future__ import annotations

import ast
import copy
from typing import Iterable, List, Optional

from rocm_lint.python.names import ImportMap

_HIP = "torch.version.hip"
_CUDA = "torch.version.cuda"


class _Fold(ast.NodeTransformer):
    def __init__(self, flags: Iterable[str], torch_names: Iterable[str]) -> None:
        self.flags = set(flags)
        self.imports = ImportMap()
        self.imports.names.update({name: "torch" for name in torch_names})

    def _dotted(self, node: ast.AST) -> Optional[str]:
        return self.imports.qualname(node)

    # -- leaves ---------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.flags and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(False), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        dotted = self._dotted(node)
        if dotted == _HIP and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(None), node)
        if dotted == _CUDA and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant("12.8"), node)
        return self.generic_visit(node)

    # -- expressions ----------------------------------------------------------------------
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
            if isinstance(op, (ast.Is, ast.Eq)):
                return ast.copy_location(ast.Constant(left is None), node)
            if isinstance(op, (ast.IsNot, ast.NotEq)):
                return ast.copy_location(ast.Constant(left is not None), node)
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
                continue  # `True and x` is x
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

    # -- statements -----------------------------------------------------------------------
    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return (node.body if node.test.value else node.orelse) or None
        return node


def fold(tree: ast.Module, flags: Iterable[str], torch_names: Iterable[str] = ("torch",),
         inserted: Iterable[str] = ()) -> ast.Module:
    """The module as it runs on NVIDIA, with the fix's inserted statements dropped."""
    tree = copy.deepcopy(tree)
    drop = list(inserted)
    if drop:  # the first occurrence of each inserted statement (the module may bind it again later)
        body = []
        for stmt in tree.body:
            dump = ast.dump(stmt)
            if dump in drop:
                drop.remove(dump)
                continue
            body.append(stmt)
        tree.body = body
    tree = _Fold(flags, torch_names).visit(tree)
    return ast.fix_missing_locations(tree)


def same_on_nvidia(original: str, fixed: str, flags: Iterable[str],
                   torch_names: Iterable[str] = ("torch",), inserted: List[str] = ()) -> bool:
    """True when ``fixed`` folds to the same AST as ``original`` on NVIDIA.

    ``inserted`` are the statements the fix added at module level (source text), such as
    ``is_rocm = torch.version.hip is not None`` and ``import torch``.
    """
    inserted_dumps = [ast.dump(ast.parse(s).body[0]) for s in inserted]
    a = fold(ast.parse(original), flags, torch_names)
    b = fold(ast.parse(fixed), flags, torch_names, inserted_dumps)
    return ast.dump(a) == ast.dump(b)
