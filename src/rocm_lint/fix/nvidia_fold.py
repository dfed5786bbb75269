"""The NVIDIA-path checker's folding: a module (or runs of its statements) as it runs on NVIDIA.

``Fold`` rewrites what the analysis of ``fix.nvidia_path`` decided (its ``false_names``,
``versions``, ``builtin_bool`` and the inserted statements it may ``drop``) into constants, then
decides constant tests: ``if not False: S`` is ``S``, ``x if False else y`` is ``y``.
"""

from __future__ import annotations

import ast

from rocm_lint.fix.nvidia_scopes import dotted


class Fold(ast.NodeTransformer):
    def __init__(self, module, assume_imports_succeed: bool) -> None:
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
        if (
            len(node.ops) == 1
            and isinstance(node.left, ast.Constant)
            and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value is None
        ):
            op, left = node.ops[0], node.left.value
            if isinstance(op, ast.Is):
                return ast.copy_location(ast.Constant(left is None), node)
            if isinstance(op, ast.IsNot):
                return ast.copy_location(ast.Constant(left is not None), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (
            id(node.func) in self.m.builtin_bool
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Constant)
        ):
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
        if (
            self.assume_imports_succeed
            and len(node.body) == 1
            and isinstance(node.body[0], (ast.Import, ast.ImportFrom))
            and not node.orelse
            and not node.finalbody
            and len(node.handlers) == 1
            and dotted(node.handlers[0].type) == "ImportError"
            and all(
                isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and s.value.value is None
                for s in node.handlers[0].body
            )
        ):
            return node.body[0]
        return node

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = [s for s in node.body if id(s) not in self.m.drop]
        return self.generic_visit(node)
