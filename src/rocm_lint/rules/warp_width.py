"""ROC802: a warp width of 32 hard-coded in Python (``WARP_SIZE = 32``, ``threads // 32``, Triton
``num_warps`` above 16): AMD's CDNA GPUs run 64-wide wavefronts."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.patterns import uses_nvidia_interconnect
from rocm_lint.rule import PyHit, Rule
from rocm_lint.rules.hardware import IMPORTS_NVIDIA_DSL

_WARP = (
    " assumes 32 threads per warp, but CDNA GPUs (MI200/MI300) run 64-wide "
    "wavefronts: read the width from the device (`torch.cuda.get_device_properties(d)."
    "warp_size`, or Triton's `triton.runtime.driver.active.get_current_target().warp_size`)"
)


def _source(node: ast.AST, ctx: ModuleContext) -> str:
    text = ctx.segment(node)
    return text if text is not None else ast.dump(node)


ROC802 = Rule(
    "ROC802",
    "hard-coded-warp-size",
    "warp size 32 assumed in Python/Triton code (a warp-width constant, threads from warps, or Triton "
    "`num_warps` above 16): CDNA GPUs (MI200/MI300) run 64-wide wavefronts",
    # A warp-width name, the arithmetic forms (`num_warps * 32`, `B // 32`), or Triton's `num_warps`
    # (`num_warps=32`, `"num_warps": 32`, `NUM_WARPS = 32`). "warp" alone would send any file to the parser.
    triggers=(
        "num_warps",
        "NUM_WARPS",
        "WARP_SIZE",
        "warp_size",
        "WarpSize",
        "warpSize",
        "THREADS_PER_WARP",
        "threads_per_warp",
        "ThreadsPerWarp",
        "WARP_WIDTH",
        "warp_width",
        "LANES_PER_WARP",
        "lanes_per_warp",
        "* 32",
        "*32",
        "32 *",
        "32*",
        "// 32",
        "//32",
    ),
    precheck=r"[Ww][Aa][Rr][Pp]",  # every finding names a warp (`num_warps * 32`, `WARP_SIZE = 32`)
    facts=(IMPORTS_NVIDIA_DSL,),
    messages={
        "bound": "`{name} = 32`" + _WARP,
        "computed": "`{name}` computed as threads // 32" + _WARP,
        "parameter": "`{name}=32`" + _WARP,
        "math": "`{name} * 32`" + _WARP,
        "num_warps": "`num_warps={value}` asks for {value} warps of 64 threads on CDNA GPUs (MI200/MI300): "
        "{threads} threads is more than the 1024 a block may hold, so the launch fails (`Triton "
        "Error [HIP]: invalid argument`; `OutOfResources` in recent Triton); cap it at 16 where "
        "`triton.runtime.driver.active.get_current_target().warp_size` is 64",
        "num_warps_sweep": "`num_warps={value}` among autotuning configs asks for {value} warps of 64 threads on "
        "CDNA GPUs (MI200/MI300), {threads} threads where a block holds 1024: Triton before "
        "3.4 fails the whole tuning run (`Triton Error [HIP]: invalid argument`), later "
        "releases skip the config as `OutOfResources`; build the list from "
        "`get_current_target().warp_size`",
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)


# -- ROC802: warp width ----------------------------------------------------------------------
# Names that hold the width of a warp (not a count of warps such as ``num_warps``).
_WARP_SIZE_NAME = LazyPattern(r"warp_?size|threads_?per_?warp|warp_?width|lanes_?per_?warp", re.I)
_WARP_NAME = LazyPattern(r"warp", re.I)


def _name_of(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # kwargs["num_warps"], meta["NUM_WARPS"]
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return None


def _is_32(node: ast.AST, ctx: ModuleContext) -> bool:
    """The constant 32 on ROCm: ``32``, a name bound once to 32, ``tl.constexpr(32)``;
    ``64 if is_rocm else 32`` picks the ROCm arm."""
    resolved = ctx.resolve(node)
    if isinstance(resolved, ast.Call) and len(resolved.args) == 1 and not resolved.keywords:
        func = ctx.qualname(resolved.func) or ""
        if func.rsplit(".", 1)[-1] == "constexpr":
            resolved = resolved.args[0]
    value = ctx.constant(resolved)
    return type(value) is int and value == 32


def _is_32_use(node: ast.AST, ctx: ModuleContext) -> bool:
    """As :func:`_is_32`, but a warp-size constant (``WARP_SIZE``) is reported where it is
    bound, not again at each use."""
    name = _name_of(node)
    if name and _WARP_SIZE_NAME.search(name):
        return False
    return _is_32(node, ctx)


@ROC802.checker(ast.Assign, ast.AnnAssign)
def warp_size_binding(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    if node.value is None or ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        name = _name_of(target)
        if name and _WARP_SIZE_NAME.search(name) and _is_32(node.value, ctx):
            yield PyHit(target, ROC802.message("bound", name=name))
        elif name and _WARP_NAME.search(name) and _divides_by_32(node.value, ctx):
            yield PyHit(target, ROC802.message("computed", name=name))


def _divides_by_32(value: ast.AST, ctx: ModuleContext) -> bool:
    """``BLOCK // 32`` somewhere in a value (threads turned into warps)."""
    for sub in ast.walk(value):
        if (
            isinstance(sub, ast.BinOp)
            and isinstance(sub.op, (ast.FloorDiv, ast.Div))
            and _is_32_use(sub.right, ctx)
        ):
            return True
    return False


@ROC802.checker(ast.arguments)
def warp_size_default(node: ast.arguments, ctx: ModuleContext) -> Iterator[PyHit]:
    """``def kernel(..., WARP_SIZE: tl.constexpr = 32)``."""
    if ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    positional = list(getattr(node, "posonlyargs", [])) + list(node.args)
    pairs = list(zip(positional[len(positional) - len(node.defaults) :], node.defaults))
    pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
    for arg, default in pairs:
        if _WARP_SIZE_NAME.search(arg.arg) and _is_32(default, ctx):
            yield PyHit(default, ROC802.message("parameter", name=arg.arg))


@ROC802.checker(ast.BinOp)
def warp_thread_math(node: ast.BinOp, ctx: ModuleContext) -> Iterator[PyHit]:
    """``num_warps * 32`` / ``32 * num_warps``: threads per block from a warp count."""
    if ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    if isinstance(node.op, ast.Mult):
        for const, other in ((node.right, node.left), (node.left, node.right)):
            name = _name_of(other)
            if (
                name
                and _WARP_NAME.search(name)
                and not _WARP_SIZE_NAME.search(name)
                and _is_32_use(const, ctx)
            ):
                yield PyHit(node, ROC802.message("math", name=name))
                return


# -- ROC802: Triton num_warps above 16 ---------------------------------------------------------------
# 1024 threads per block at most, on every GPU: 32 warps of 32 threads on NVIDIA, 16 of 64 on CDNA.
_MAX_WAVE64_WARPS = 16
_NUM_WARPS_NAME = LazyPattern(r"(?:num_?|n_?)?warps", re.I)


def _too_many(node: ast.AST, ctx: ModuleContext, at: Optional[ast.AST] = None) -> Optional[int]:
    """The warp count above 16 that ``node`` may take on ROCm: a literal, a name bound once, the ROCm
    arm of a platform ternary, a reachable arm of a size ternary (``32 if B >= 32768 else 16``), or
    the first such item of the literal list that a loop or comprehension variable runs over
    (``for w in [4, 8, 16, 32]``) when nothing filters the items (``if w * warp_size <= 1024``)."""
    resolved = ctx.resolve(node)
    if isinstance(resolved, ast.Constant):
        value = resolved.value
        return value if type(value) is int and value > _MAX_WAVE64_WARPS else None
    if isinstance(resolved, ast.IfExp):
        if _other_device(resolved.test, ctx):
            return None
        body = None if _unreachable(resolved.test, False, ctx) else _too_many(resolved.body, ctx)
        return body or (None if _unreachable(resolved.test, True, ctx) else _too_many(resolved.orelse, ctx))
    if isinstance(resolved, ast.Name) and at is not None and node is resolved:
        for _, parent in ctx.ancestors(at):
            loops = (
                parent.generators
                if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
                else [parent]
            )
            for loop in loops:
                if (
                    isinstance(loop, (ast.comprehension, ast.For))
                    and isinstance(loop.target, ast.Name)
                    and loop.target.id == resolved.id
                    and isinstance(loop.iter, (ast.List, ast.Tuple))
                ):
                    if _filtered(loop):
                        return None
                    return next((v for v in (_too_many(e, ctx) for e in loop.iter.elts) if v), None)
    return None


def _is_sweep(value: ast.AST, ctx: ModuleContext) -> bool:
    """Is the count one of several tried: a loop variable over a list that also holds counts up to
    16, or a ``triton.Config`` next to other configs in a list?"""
    if isinstance(value, ast.Name) and ctx.resolve(value) is value:  # a loop or comprehension variable
        for _, parent in ctx.ancestors(ctx.node):
            loops = getattr(parent, "generators", None) or [parent]
            for loop in loops:
                if (
                    isinstance(loop, (ast.comprehension, ast.For))
                    and isinstance(loop.target, ast.Name)
                    and loop.target.id == value.id
                    and isinstance(loop.iter, (ast.List, ast.Tuple))
                ):
                    return any(
                        type(ctx.constant(e)) is int and ctx.constant(e) <= _MAX_WAVE64_WARPS
                        for e in loop.iter.elts
                    )
        return False
    call = ctx.node
    parent = ctx.parent_of(call) if call is not None else None
    return isinstance(call, ast.Call) and isinstance(parent, (ast.List, ast.Tuple)) and len(parent.elts) > 1


# Tests that pick the warp count per device: another vendor's (`if x.device.type == "xpu":`, whose
# Triton backends have their own widths), or the AMD architecture or warp width in words the gate
# analysis does not know (`32 if not is_cdna() else 16`, `if warp_size == 64:`).
_OTHER_DEVICE = LazyPattern(
    r"\b(?:xpu|npu|hpu|mlu|musa|mps|intel|ascend|habana|gaudi)\b"
    r"|cdna|rdna|hip|rocm|amd|gfx\d|wave|warp_?size",
    re.I,
)


def _other_device(test: ast.AST, ctx: ModuleContext) -> bool:
    return bool(_OTHER_DEVICE.search(_source(test, ctx)))


def _int_value(node: ast.AST) -> Optional[int]:
    """``65536``, ``16 * 1024``, ``65536 // 4``, ``1 << 15``."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.LShift, ast.Add)):
        a, b = _int_value(node.left), _int_value(node.right)
        if a is None or b is None or b > 64 and isinstance(node.op, ast.LShift):
            return None
        if isinstance(node.op, ast.FloorDiv):
            return a // b if b else None
        return (
            a * b if isinstance(node.op, ast.Mult) else a << b if isinstance(node.op, ast.LShift) else a + b
        )
    return None


def _size_caps(ctx: ModuleContext) -> list:
    """The values the module binds to ``MAX_...`` names (``MAX_FUSED_SIZE = 65536 // 4``)."""

    def caps() -> list:
        out = []
        for values in (v for k, v in ctx.all_bindings.items() if "max" in k.lower()):
            out.extend(x for x in map(_int_value, values) if x is not None)
        return out

    return ctx.memo("ROC802.size_caps", caps)


def _unreachable(test: ast.AST, negated: bool, ctx: ModuleContext) -> bool:
    """Is the branch where ``test`` holds (``negated``: where it fails) a block size above a cap the
    module sets?  ``if BLOCK_SIZE >= 32768:`` after ``BLOCK_SIZE = min(MAX_FUSED_SIZE, ...)`` with
    ``MAX_FUSED_SIZE = 16384`` never runs."""
    caps = _size_caps(ctx)
    if not caps or not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    op, right = test.ops[0], _int_value(test.comparators[0])
    if right is None:
        return False
    at_least = isinstance(op, (ast.Gt, ast.GtE)) != negated  # the branch needs size >= (or >) right
    if not at_least or isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)):
        return False
    strict = isinstance(op, ast.Gt) if not negated else isinstance(op, ast.LtE)
    return all(c < right or strict and c == right for c in caps)


def _filtered(loop: ast.AST) -> bool:
    if isinstance(loop, ast.comprehension):
        return bool(loop.ifs)
    return any(
        isinstance(sub, (ast.If, ast.IfExp, ast.Continue, ast.Break, ast.Assert))
        for stmt in loop.body
        for sub in ast.walk(stmt)
    )


# The module bounds warp counts itself: it compares them (`config.num_warps <= max_num_warps`, a
# config pruner) or reads the device's warp width.
_WARP_COUNT_CHECKED = LazyPattern(
    r"\bnum_warps\s*[<>]|[<>]=?\s*(?:\w+\.)?\w*num_warps\b"
    r"|get_current_target\(\)\.warp_size|properties\([^()\n]{0,80}\)\.warp_size"
    r"|\bwarpSize\b"
)


def _warp_size_aware(ctx: ModuleContext) -> bool:
    return uses_nvidia_interconnect(ctx) or ctx.memo(
        "ROC802.warp_count_checked", lambda: bool(_WARP_COUNT_CHECKED.search(ctx.text or ""))
    )


def _in_dead_or_other_branch(stmt: Optional[ast.AST], ctx: ModuleContext) -> bool:
    """Under ``if x.device.type == "xpu":``, or in a branch on a block size above the module's cap."""
    if stmt is None:
        return False
    for parent, field in ctx.enclosing_statements(stmt):
        if isinstance(parent, ast.If) and field in ("body", "orelse"):
            if _other_device(parent.test, ctx) or _unreachable(parent.test, field == "orelse", ctx):
                return True
    return False


def _warps_hit(where: ast.AST, value: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    if _warp_size_aware(ctx) or _in_dead_or_other_branch(ctx.statement, ctx):
        return
    name = _name_of(value)
    if name and _NUM_WARPS_NAME.fullmatch(name) and ctx.resolve(value) is not value:
        return  # `num_warps=num_warps`: reported where the name is bound
    count = _too_many(value, ctx, ctx.node)
    if count is not None:
        key = "num_warps_sweep" if _is_sweep(value, ctx) else "num_warps"
        yield PyHit(where, ROC802.message(key, value=count, threads=count * 64))


@ROC802.checker(ast.Call)
def triton_num_warps_call(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    """``triton.Config(..., num_warps=32)``, ``kernel[grid](..., num_warps=32)``."""
    if ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    for kw in node.keywords:
        if kw.arg == "num_warps":
            yield from _warps_hit(kw.value, kw.value, ctx)


@ROC802.checker(ast.Dict)
def triton_num_warps_dict(node: ast.Dict, ctx: ModuleContext) -> Iterator[PyHit]:
    """``{"num_warps": 32, ...}`` (launch kwargs, tuning tables)."""
    if ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Constant) and key.value == "num_warps":
            yield from _warps_hit(value, value, ctx)


@ROC802.checker(ast.Assign, ast.AnnAssign)
def triton_num_warps_binding(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    """``num_warps = 32``, ``meta["num_warps"] = 32``."""
    if node.value is None or ctx.facts(IMPORTS_NVIDIA_DSL):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        name = _name_of(target)
        if (
            name
            and _NUM_WARPS_NAME.fullmatch(name)
            and not _warp_size_aware(ctx)
            and not _in_dead_or_other_branch(node, ctx)
        ):
            count = _too_many(node.value, ctx, node)
            if count is not None:
                yield PyHit(target, ROC802.message("num_warps", value=count, threads=count * 64))
