"""ROC1: PyTorch switches and APIs that only mean something on NVIDIA."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.registry import python_checker, register

register(
    "ROC101", "ungated-tf32-switch",
    "TF32 switch set without a ROCm gate: ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1",
    triggers=("allow_tf32", "set_float32_matmul_precision", "fp32_precision"),
    fix=Applicability.SAFE,
)

# Boolean switches: setting them to anything but a literal False is the hazard.
TF32_FLAGS = {
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cudnn.allow_tf32",
}
# The torch >= 2.9 spelling: ``fp32_precision = "tf32"``.
TF32_PRECISION = {
    "torch.backends.fp32_precision",
    "torch.backends.cuda.matmul.fp32_precision",
    "torch.backends.cudnn.fp32_precision",
    "torch.backends.cudnn.conv.fp32_precision",
    "torch.backends.cudnn.rnn.fp32_precision",
}
_MATMUL_PRECISIONS = ("high", "medium")


def _tf32_message(what: str) -> str:
    return (f"TF32 switch `{what}` is ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1 "
            "(and unsupported on some GPUs): gate it with `if not is_rocm:`")


def _reads_tf32_switch(node: ast.AST, ctx) -> bool:
    return ctx.qualname(node) in TF32_FLAGS | TF32_PRECISION


def _is_restore(value: ast.AST, ctx) -> bool:
    """``allow_tf32 = saved`` where ``saved`` only ever holds a TF32 switch's earlier value."""
    if _reads_tf32_switch(value, ctx):
        return True
    if isinstance(value, (ast.Name, ast.Attribute)):
        bindings = ctx.bound_values(value)
        return bool(bindings) and all(_reads_tf32_switch(b, ctx) for b in bindings)
    return False


def _enables(attr: str, value: ast.AST, ctx) -> bool:
    """Could this assignment turn TF32 on where ROCm runs it?"""
    if _is_restore(value, ctx):
        return False
    known = ctx.constant(value)
    if known is ...:
        return True  # unknown values (``args.tf32``) may well turn it on
    if attr in TF32_FLAGS:
        return bool(known)
    return isinstance(known, str) and known.lower() == "tf32"


@python_checker(ast.Assign, ast.AnnAssign, codes=("ROC101",))
def find_ungated_tf32_assignments(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if not isinstance(target, ast.Attribute):
            continue
        qual = ctx.qualname(target)
        if (qual in TF32_FLAGS or qual in TF32_PRECISION) and node.value is not None \
                and _enables(qual, node.value, ctx):
            yield target, "ROC101", _tf32_message(qual)


@python_checker(ast.Call, codes=("ROC101",))
def find_ungated_tf32_calls(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    qual = ctx.qualname(node.func)
    if qual == "torch.set_float32_matmul_precision":
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "precision"), None)
        precision = ctx.constant(arg) if arg is not None else None
        if isinstance(precision, str) and precision in _MATMUL_PRECISIONS:
            yield node, "ROC101", (
                f'`torch.set_float32_matmul_precision("{precision}")` asks for TF32, which ROCm '
                "ignores unless HIPBLASLT_ALLOW_TF32=1: gate it with `if not is_rocm:`")
    elif qual == "setattr" and len(node.args) == 3:
        owner, name, value = node.args
        attr = f"{ctx.qualname(owner)}.{ctx.constant(name)}"
        if (attr in TF32_FLAGS or attr in TF32_PRECISION) and _enables(attr, value, ctx):
            yield node, "ROC101", _tf32_message(attr)
