"""ROC1, ROC106: the CUDA compute capability compared with NVIDIA SM numbers.

``torch.cuda.get_device_capability()`` on ROCm returns the gfx version (gfx942 -> 9.4), so a
test written for Hopper (``>= (9, 0)``) or Blackwell sends AMD GPUs down NVIDIA paths.  This
module reports the comparisons with SM numbers that AMD GPUs also satisfy; what a capability
expression holds, and the names bound to one, is :mod:`rocm_lint.rules.capability_model`.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.finding import Applicability, WrapExpression, span_of
from rocm_lint.python.context import ModuleContext
from rocm_lint.rule import FixAvailability, PyHit, Rule
from rocm_lint.rules.capability_model import CAPABILITY_EXPORTS, capability_kind, record_capability_bindings

ROC106 = Rule(
    "ROC106",
    "capability-sm-check",
    "get_device_capability() compared with NVIDIA SM numbers without a CUDA gate: "
    "ROCm reports the gfx version (MI300 is 9.4), so Hopper/Ampere paths run on AMD GPUs",
    # The comparison is often on a later line than the call (`major, minor = ...` then
    # `if major >= 9:`), so the usual names of a capability are trigger words too; the
    # precheck keeps the rule to files that read a capability at all.
    triggers=(
        "get_device_capability",
        "get_device_properties",
        "major",
        "cap",
        "CAP",
        "cc",
        "CC",
        "sm",
        "SM",
        "arch",
        "ARCH",
    ),
    precheck=r"get_device_capability|get_device_properties",
    fix=Applicability.UNSAFE,
    fix_availability=FixAvailability.ALWAYS,
    exports=(CAPABILITY_EXPORTS,),
    messages={
        "default": "`{snippet}` reads an NVIDIA SM number, but ROCm reports the gfx version as the "
        "capability ({gpus}), so AMD GPUs take this NVIDIA-architecture path: "
        "test `torch.version.cuda is not None and ...` first"
    },
)
# the walk records what names hold a capability (rules.capability_model) before the checker reads them
ROC106.observer(ast.Assign, ast.AnnAssign)(record_capability_bindings)
# The fix: test the platform before the capability, so that on ROCm the test says "this NVIDIA
# architecture is absent" whatever the GPU reports.  Which way that is depends on what the test's
# True means: ``cap >= (9, 0)``, ``major == 9``, ``cc in (90, 100)`` hold when the architecture is
# present (an optimisation that is enabled, or a requirement that is met): ROCm must get False
# (``cuda is not None and ...``).  ``cap < (9, 0)``, ``major != 9``, ``cc not in (...)`` hold when
# it is absent (the guard that raises, returns, skips, or the fallback): ROCm must get True
# (``cuda is None or ...``).  Either way a guard that refuses GPUs without the architecture still
# refuses AMD GPUs, and an optional fast path is left to NVIDIA; never the other way round.
_CUDA_FIRST = "{torch}.version.cuda is not None and {expr}"
_CUDA_FIRST_MESSAGE = "Test `torch.version.cuda is not None` first (AMD GPUs then skip the NVIDIA path)"
_ROCM_LACKS = "{torch}.version.cuda is None or {expr}"
_ROCM_LACKS_MESSAGE = (
    "Test `torch.version.cuda is None` first (AMD GPUs then count as lacking the NVIDIA "
    "architecture: a guard that refuses such GPUs refuses them too)"
)
# ``cap OP constant`` whose True means "the architecture is present".
_PRESENT_WHEN_TRUE = (ast.Gt, ast.GtE, ast.Eq, ast.In)

# PaddlePaddle's twin (its ROCm/DCU builds report the gfx version the same way).
# What torch.cuda.get_device_capability() returns on ROCm: hipDeviceProp major/minor, which
# HIP derives from the gfx version (gfx90a -> 9.0, gfx942 -> 9.4, gfx1100 -> 11.0).
_AMD_CAPABILITIES = (
    ((9, 0), "MI100/MI200 9.0"),
    ((9, 4), "MI300 9.4"),
    ((9, 5), "MI350 9.5"),
    ((10, 3), "RDNA2 10.3"),
    ((11, 0), "RDNA3 11.0"),
    ((12, 0), "RDNA4 12.0"),
)
_LOGGING_CALLS = {"print", "debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
_FLIP = {
    ast.Lt: ast.Gt,
    ast.Gt: ast.Lt,
    ast.LtE: ast.GtE,
    ast.GtE: ast.LtE,
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
}


# -- the comparison -------------------------------------------------------------------------------
def _amd_value(kind: str, cap: Tuple[int, int]) -> object:
    major, minor = cap
    return {"tuple": cap, "major": major, "cc": major * 10 + minor, "float": major + minor / 10}.get(kind)


def _sm_constants(node: ast.AST, kind: str, ctx: ModuleContext, many: bool) -> Optional[list]:
    """The SM-like constant(s) of a comparison's other side, or None if it is no SM number."""
    node = ctx.resolve(node)
    if not isinstance(node, (ast.Constant, ast.Tuple, ast.List, ast.Set)):
        # a local tuple, a parameter's default, a helper's return: the value-flow layer
        literal = _literal(ctx.values.value(node, ROCM).constant())
        if literal is None:
            return None
        node = literal
    if many:
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
            return None
        values = [_sm_constants(e, kind, ctx, False) for e in node.elts]
        return None if any(v is None for v in values) else [v[0] for v in values]
    if kind == "tuple":
        if (
            isinstance(node, ast.Tuple)
            and 1 <= len(node.elts) <= 2
            and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
        ):
            value = tuple(e.value for e in node.elts)
            return [value] if 5 <= value[0] <= 13 else None
        return None
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float):
        return None
    value = node.value
    if kind == "major" and type(value) is int and 5 <= value <= 13:
        return [value]
    if kind == "float" and 5 <= value <= 13:
        return [value]
    if kind == "cc" and type(value) is int and 50 <= value <= 130:
        return [value]
    return None


def _literal(value: object) -> Optional[ast.expr]:
    """A known value as the literal that writes it (numbers and tuples of them), else None."""
    if isinstance(value, (int, float)) and type(value) in (int, float):
        return ast.Constant(value)
    if isinstance(value, tuple):
        elts = [_literal(v) for v in value]
        known = [e for e in elts if e is not None]
        return None if len(known) != len(elts) else ast.Tuple(elts=known, ctx=ast.Load())
    return None


def _as_capability(kind: str, c) -> tuple:
    if kind == "tuple":
        return tuple(c)
    if kind == "cc":
        return (int(c) // 10, int(c) % 10)
    return (int(c), int(round((c - int(c)) * 10)))


# Thresholds below sm_89 (Volta, Turing, Ampere: tensor cores, bf16, TF32, cp.async) give the
# answer ROCm wants on every GPU it supports (gfx908 and newer), so only FP8 (Ada), Hopper and
# Blackwell tests are reported: those send MI200/MI300 (or RDNA) down paths they cannot run.
_FIRST_HAZARDOUS_SM = (8, 9)


def _affected_gpus(kind: str, op: ast.cmpop, constants: list) -> List[str]:
    """Which AMD GPUs an SM test with an NVIDIA FP8/Hopper/Blackwell meaning also selects."""
    if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return [name for cap, name in _AMD_CAPABILITIES if any(_amd_value(kind, cap) == c for c in constants)]
    (c,) = constants
    if kind == "tuple" and len(c) == 1:
        c = (c[0], 0)
    if isinstance(op, (ast.Gt, ast.LtE)):  # x > c is x >= next(c)
        c = (c[0], c[1] + 1) if kind == "tuple" else c + 1 if isinstance(c, int) else c + 1e-9
    if _as_capability(kind, c) < _FIRST_HAZARDOUS_SM:
        return []  # a Volta/Turing/Ampere test: AMD GPUs pass it, as they should
    return [name for cap, name in _AMD_CAPABILITIES if _amd_value(kind, cap) >= c]


def _picks_an_error(node: ast.AST, ctx: ModuleContext) -> bool:
    """``if major < 9: raise ValueError(...) else: raise ImportError(...)``: the test only
    chooses which error to raise."""
    parent = ctx.parent_of(node)
    return (
        isinstance(parent, ast.If)
        and parent.test is node
        and bool(parent.orelse)
        and isinstance(parent.body[-1], ast.Raise)
        and isinstance(parent.orelse[-1], ast.Raise)
    )


def _only_logged(node: ast.AST, ctx: ModuleContext) -> bool:
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, (ast.JoinedStr, ast.FormattedValue)):
            return True
        if isinstance(parent, ast.Call) and child is not parent.func:
            name = (
                parent.func.attr
                if isinstance(parent.func, ast.Attribute)
                else getattr(parent.func, "id", None)
            )
            if name in _LOGGING_CALLS:
                return True
        if isinstance(parent, ast.stmt):
            return False
    return False


def _short_circuited(node: ast.AST, ctx: ModuleContext) -> bool:
    """``cap >= (9, 0) and torch.version.cuda is not None``: the whole test is False on ROCm
    (the walker already covers a CUDA test to the *left*)."""
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, ast.BoolOp):
            want = NVIDIA if isinstance(parent.op, ast.And) else ROCM
            if any(v is not child and ctx.gates.facts(v)[0] == want for v in parent.values):
                return True
        elif not (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            return False
    return False


@ROC106.checker(ast.Compare)
def sm_capability_check(node: ast.Compare, ctx: ModuleContext) -> Iterator[PyHit]:
    operands = [node.left, *node.comparators]
    for i, op in enumerate(node.ops):
        left, right = operands[i], operands[i + 1]
        many = isinstance(op, (ast.In, ast.NotIn))
        kind = capability_kind(left, ctx)
        other = right
        if kind is None and not many:
            kind, other = capability_kind(right, ctx), left
            flipped = _FLIP.get(type(op))
            if flipped is None:
                continue
            op = flipped()
        if kind not in ("tuple", "major", "cc", "float"):
            continue
        constants = _sm_constants(other, kind, ctx, many)
        if constants is None:
            continue
        gpus = _affected_gpus(kind, op, constants)
        if not gpus or _only_logged(node, ctx) or _short_circuited(node, ctx) or _picks_an_error(node, ctx):
            continue
        message = ROC106.message(snippet=ctx.snippet(node), gpus=", ".join(gpus))
        if isinstance(op, _PRESENT_WHEN_TRUE):
            recipe = WrapExpression(span_of(node), _CUDA_FIRST, _CUDA_FIRST_MESSAGE)
        else:
            recipe = WrapExpression(span_of(node), _ROCM_LACKS, _ROCM_LACKS_MESSAGE)
        yield PyHit(node, message, recipe)
        return  # one finding per comparison
