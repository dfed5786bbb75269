"""ROC1, ROC101-ROC105: PyTorch backend switches and APIs that only mean something on NVIDIA.

TF32 switches (ROC101), reduced-precision reductions (ROC102), SDPA restricted to fused
kernels (ROC103), the cuFFT plan cache size (ROC104) and process-group backends ROCm does not
build (ROC105).  The rest of the family has modules of its own: the compute-capability model
(ROC106) in :mod:`rocm_lint.rules.capability`, ``torch.version.cuda`` parsed (ROC107) in
:mod:`rocm_lint.rules.cuda_version`.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from rocm_lint.domain import ROCM
from rocm_lint.finding import Applicability, GateStatement
from rocm_lint.python.context import ModuleContext
from rocm_lint.rule import FixAvailability, PyHit, Rule

GATE = GateStatement()
_GATE_IT = "gate it with `if not is_rocm:`"

ROC101 = Rule(
    "ROC101",
    "ungated-tf32-switch",
    "TF32 switch set without a ROCm gate: ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1",
    triggers=("allow_tf32", "set_float32_matmul_precision", "fp32_precision"),
    precheck=r"(?:allow_tf32|fp32_precision)\s*=(?!=)|set_float32_matmul_precision\s*\(|setattr\s*\(",
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    messages={
        "switch": "TF32 switch `{what}` is ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1 "
        "(and unsupported on some GPUs): " + _GATE_IT,
        "precision": '`torch.set_float32_matmul_precision("{precision}")` asks for TF32, which ROCm '
        "ignores unless HIPBLASLT_ALLOW_TF32=1: " + _GATE_IT,
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)

_HIPFFT_MAX_PLANS = 1023  # CUFFT_MAX_PLAN_NUM in ROCm builds of CuFFTPlanCache.h

ROC102 = Rule(
    "ROC102",
    "ungated-reduced-precision-reduction",
    "allow_fp16/bf16_reduced_precision_reduction turned off without a ROCm gate: ROCm GEMMs ignore it",
    triggers=("reduced_precision_reduction",),
    # No autofix: a gate would skip a request for full precision that Inductor honours on ROCm.
    fix=Applicability.DISPLAY,
    fix_availability=FixAvailability.ALWAYS,
    messages={
        "default": "turning off `{flag}` is ignored by ROCm's rocBLAS/hipBLASLt GEMMs, so "
        "reduced-precision reductions stay allowed there: " + _GATE_IT + " and check GEMM "
        "accuracy on ROCm separately"
    },
)
ROC103 = Rule(
    "ROC103",
    "forced-fused-sdpa-backend",
    "SDPA restricted to fused backends (flash/efficient/cuDNN) with no math fallback: arch-dependent on ROCm",
    triggers=("enable_math_sdp", "sdp_kernel", "sdpa_kernel"),
    messages={
        "sdpa_kernel": "`sdpa_kernel({chosen})` allows only fused attention kernels, which ROCm builds "
        "provide only for some GPUs and shapes (cuDNN attention not at all): add "
        "`SDPBackend.MATH` to the list so SDPA can fall back instead of raising "
        "'No available kernel'",
        "sdp_kernel": "`sdp_kernel(enable_math=False)` leaves only fused attention kernels, which ROCm "
        "builds provide only for some GPUs and shapes: keep `enable_math=True` (or use "
        "`torch.nn.attention.sdpa_kernel([..., SDPBackend.MATH])`)",
        "enable_math": "`enable_math_sdp(False)` removes the SDPA fallback, leaving fused kernels that ROCm "
        "builds provide only for some GPUs and shapes: keep the math backend enabled on ROCm",
    },
)
ROC104 = Rule(
    "ROC104",
    "cufft-plan-cache-size",
    "cufft_plan_cache.max_size set above 1023 without a ROCm gate: ROCm builds reject larger hipFFT caches",
    triggers=("cufft_plan_cache",),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    messages={
        "default": "`cufft_plan_cache.max_size` cannot be configured on ROCm: the hipFFT plan cache is "
        f"fixed at {_HIPFFT_MAX_PLANS} plans and larger values raise RuntimeError; set it "
        "only `if not is_rocm:`"
    },
)
ROC105 = Rule(
    "ROC105",
    "unsupported-distributed-backend",
    'init_process_group with a backend ROCm does not provide (only "nccl"/RCCL and "gloo" are supported)',
    triggers=("init_process_group",),
    # a finding names mpi/ucc (any case, also Backend.MPI) or a "cuda:<backend>" pair
    precheck=r"(?i)mpi|ucc|cuda:",
    messages={
        "default": 'torch.distributed backend "{backend}" is not available on ROCm, which supports only '
        '"nccl" (RCCL) and "gloo": use backend="nccl" for GPU tensors there'
    },
)


def _targets(node: ast.AST) -> List[ast.expr]:
    """The targets of an ``Assign`` or ``AnnAssign``."""
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _setattr(node: ast.Call, ctx: ModuleContext) -> Optional[Tuple[str, ast.AST]]:
    """``setattr(owner, "name", value)``: the attribute's qualified name and the value."""
    if ctx.qualname(node.func) == "setattr" and len(node.args) == 3:
        owner, name, value = node.args
        return f"{ctx.qualname(owner)}.{ctx.constant(name)}", value
    return None


def _arg(node: ast.Call, index: int, name: str) -> Optional[ast.AST]:
    """The argument passed at position ``index`` or as keyword ``name`` (None if not known:
    absent, or behind a ``*args``)."""
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == name), None)


# -- ROC101 ---------------------------------------------------------------------------------
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
_TF32_SWITCHES = TF32_FLAGS | TF32_PRECISION
_MATMUL_PRECISIONS = ("high", "medium")


def _reads_tf32_switch(node: ast.AST, ctx: ModuleContext) -> bool:
    return ctx.qualname(node) in _TF32_SWITCHES


def _is_restore(value: ast.AST, ctx: ModuleContext) -> bool:
    """``allow_tf32 = saved`` where ``saved`` only ever holds a TF32 switch's earlier value."""
    if _reads_tf32_switch(value, ctx):
        return True
    if isinstance(value, (ast.Name, ast.Attribute)):
        bindings = ctx.bound_values(value)
        return bool(bindings) and all(_reads_tf32_switch(b, ctx) for b in bindings)
    return False


def _enables(attr: str, value: ast.AST, ctx: ModuleContext) -> bool:
    """Could this assignment turn TF32 on where ROCm runs it?"""
    if _is_restore(value, ctx):
        return False
    default = ctx.parameter_default(value)
    if default is not None:
        # A helper that forwards its caller's choice (`def enable_tf32(enable): ...allow_tf32 =
        # enable`): the decision is at the call site, unless the helper defaults to True.
        return default is not ... and bool(default)
    known = ctx.constant(value)
    if known is ...:
        return True  # unknown values (``args.tf32``) may well turn it on
    if attr in TF32_FLAGS:
        return bool(known)
    return isinstance(known, str) and known.lower() == "tf32"


# -- observed settings ----------------------------------------------------------------------
# A gate skips the setter on ROCm.  That keeps the ROCm program what it was only when nothing
# there observes the setting: the module reads it back (an assert, a saved value restored in a
# `finally:` or by a context manager, a value passed on), the value may turn the switch *off*
# (forcing IEEE precision must still happen on ROCm), or the code exists for ROCm (TunableOp).
# Decided by data flow over the module: the reads of the same setting, and the value assigned.

# Settings torch couples: each read observes the setters of its channels.
_CHANNELS = {
    "torch.backends.cuda.matmul.allow_tf32": ("matmul",),
    "torch.backends.cuda.matmul.fp32_precision": ("matmul",),
    "torch.backends.cudnn.allow_tf32": ("cudnn",),
    "torch.backends.cudnn.fp32_precision": ("cudnn",),
    "torch.backends.cudnn.conv.fp32_precision": ("cudnn",),
    "torch.backends.cudnn.rnn.fp32_precision": ("cudnn",),
    "torch.backends.fp32_precision": ("matmul", "cudnn"),
    "torch.set_float32_matmul_precision": ("matmul",),
    "torch.get_float32_matmul_precision": ("matmul",),
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": ("fp16",),
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": ("bf16",),
}
_GETTERS = {"torch.get_float32_matmul_precision"}
_ROCM_PURPOSE = "torch.cuda.tunable"  # TunableOp: GEMM tuning that exists mainly for ROCm


def _reads_of_settings(ctx: ModuleContext) -> dict:
    """{channel: line of the first read} for every read of a setting in the module: a load of
    the attribute, ``getattr(owner, "name")``, or a getter call."""

    def compute() -> dict:
        found: dict = {}

        def note(qual: Optional[str], line: int) -> None:
            for channel in _CHANNELS.get(qual or "", ()):
                found[channel] = min(found.get(channel, line), line)

        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                if node.attr in ("allow_tf32", "fp32_precision") or node.attr.endswith("precision_reduction"):
                    note(ctx.qualname(node), node.lineno)
            elif isinstance(node, ast.Call):
                qual = ctx.qualname(node.func)
                if qual in _GETTERS:
                    note(qual, node.lineno)
                elif qual == "getattr" and len(node.args) >= 2:
                    name = ctx.constant(node.args[1])
                    if isinstance(name, str):
                        note(f"{ctx.qualname(node.args[0])}.{name}", node.lineno)
        return found

    return ctx.memo("ROC10x:setting reads", compute)


def _serves_rocm(ctx: ModuleContext) -> bool:
    """Does the enclosing function (the module, at top level) call ROCm's own machinery
    (``torch.cuda.tunable``: TunableOp)?"""
    scope = ctx.function if ctx.function is not None else ctx.tree

    def compute() -> bool:
        for node in ast.walk(scope):
            if isinstance(node, (ast.Attribute, ast.Name)):
                qual = ctx.qualname(node) or ""
                if qual == _ROCM_PURPOSE or qual.startswith(_ROCM_PURPOSE + "."):
                    return True
        return False

    return ctx.memo(f"ROC10x:serves rocm:{id(scope)}", compute)


def _observed(setting: str, ctx: ModuleContext, turns_on: bool) -> str:
    """Why gating the setter of ``setting`` would change what ROCm does ("" if nothing would)."""
    short = setting.rsplit(".", 1)[-1]
    if not turns_on:
        if short.endswith("precision_reduction"):
            return (
                f"turning `{short}` off asks for full-precision reductions, and Inductor's Triton "
                "matmul templates honour that on ROCm too (only the BLAS libraries ignore it): a "
                "gate would drop the request there; keep it and check BLAS accuracy on ROCm"
            )
        return (
            f"the value assigned to `{short}` is not known to turn TF32 on: where it is False it "
            "forces IEEE precision, which must still happen on ROCm, and a gate would skip it; "
            "gate only the code that turns it on"
        )
    reads = _reads_of_settings(ctx)
    lines = [reads[c] for c in _CHANNELS.get(setting, ()) if c in reads]
    if lines:
        return (
            f"the module reads the setting back (line {min(lines)}: a saved value restored, an "
            "assert, a value passed on): on ROCm it would see another value once the gate skips "
            "the setter; gate the whole save/set/restore by hand, or leave it"
        )
    if _serves_rocm(ctx):
        return (
            "this code calls `torch.cuda.tunable` (TunableOp, which exists mainly for ROCm): a "
            "ROCm gate here would switch off what the code is for on ROCm"
        )
    return ""


def _known_to_enable(attr: str, value: ast.AST, ctx: ModuleContext) -> bool:
    """Is the assigned value surely one that turns TF32 on (a constant, not a parameter)?"""
    if ctx.parameter_default(value) is not None:
        return False
    known = ctx.constant(value)
    if known is ...:
        return False
    if attr in TF32_FLAGS:
        return known is True
    return isinstance(known, str) and known.lower() == "tf32"


def _tf32_fix(setting: str, value: Optional[ast.AST], ctx: ModuleContext, whole: bool):
    """(recipe, why not) for a TF32 setter."""
    if not whole:
        return None, ""
    turns_on = value is None or _known_to_enable(setting, value, ctx)
    why = _observed(setting, ctx, turns_on)
    return (None, why) if why else (GATE, "")


@ROC101.checker(ast.Assign, ast.AnnAssign)
def tf32_assignment(node: ast.Assign, ctx: ModuleContext) -> Iterator[PyHit]:
    targets = _targets(node)
    for target in targets:
        if not isinstance(target, ast.Attribute):
            continue
        qual = ctx.qualname(target)
        if qual in _TF32_SWITCHES and node.value is not None and _enables(qual, node.value, ctx):
            only_switches = all(ctx.qualname(t) in _TF32_SWITCHES for t in targets)
            recipe, why = _tf32_fix(qual, node.value, ctx, only_switches)
            yield PyHit(target, ROC101.message("switch", what=qual), recipe, why)


def _tf32_precision(arg: ast.AST, ctx: ModuleContext) -> Optional[str]:
    """The TF32 precision ("high"/"medium") ``arg`` may be on ROCm: a constant, or one of the
    values the value-flow layer finds (a parameter's default a caller relies on, what a call
    site passes, a helper's return)."""
    precision = ctx.constant(arg)
    if isinstance(precision, str):
        return precision if precision in _MATMUL_PRECISIONS else None
    possible = ctx.values.value(arg, ROCM).constants()
    return next(
        (p for p in sorted(x for x in possible if isinstance(x, str)) if p in _MATMUL_PRECISIONS), None
    )


@ROC101.checker(ast.Call)
def tf32_call(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    message, setting, value = None, "torch.set_float32_matmul_precision", None
    if ctx.qualname(node.func) == "torch.set_float32_matmul_precision":
        arg = (
            node.args[0]
            if node.args
            else next((k.value for k in node.keywords if k.arg == "precision"), None)
        )
        precision = _tf32_precision(arg, ctx) if arg is not None else None
        if precision is not None:
            message = ROC101.message("precision", precision=precision)
    else:
        assigned = _setattr(node, ctx)
        if assigned is not None and assigned[0] in _TF32_SWITCHES and _enables(*assigned, ctx):
            message = ROC101.message("switch", what=assigned[0])
            setting, value = assigned
    if message is not None:
        recipe, why = _tf32_fix(setting, value, ctx, ctx.is_whole_statement(node))
        yield PyHit(node, message, recipe, why)


# -- ROC102 ---------------------------------------------------------------------------------
REDUCTION_FLAGS = {
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
}


def _reads_reduction_flag(node: ast.AST, ctx: ModuleContext) -> bool:
    return ctx.qualname(node) in REDUCTION_FLAGS


def _disallows_reduction(value: ast.AST, ctx: ModuleContext) -> bool:
    """Could this value turn reduced-precision reductions off on ROCm (the request ROCm ignores)?

    ``True`` is the default and changes nothing anywhere; ``False`` (or the torch >= 2.7
    tuple form ``(False, allow_splitk)``) asks for full-precision reductions, which only
    cuBLAS honours.  Unknown values may be False; restoring a saved value is not a request.
    """
    if _reads_reduction_flag(value, ctx):
        return False
    if isinstance(value, (ast.Name, ast.Attribute)):
        bindings = ctx.bound_values(value)
        if bindings and all(_reads_reduction_flag(b, ctx) for b in bindings):
            return False
    resolved = ctx.resolve(value)
    if isinstance(resolved, ast.Tuple) and resolved.elts:
        resolved = resolved.elts[0]
    known = ctx.constant(resolved)
    return known is ... or not known


def _reduction_message(attr: str) -> str:
    return ROC102.message(flag=attr.rsplit(".", 1)[-1])


def _no_reduction_gate(attr: str, ctx: ModuleContext) -> str:
    """Why a ROC102 setter is not gated: it asks for full-precision reductions (a value that may
    turn reduced precision off), which Inductor's Triton matmul templates honour on ROCm too."""
    return _observed(attr, ctx, turns_on=False)


@ROC102.checker(ast.Assign, ast.AnnAssign)
def reduction_assignment(node: ast.Assign, ctx: ModuleContext) -> Iterator[PyHit]:
    if node.value is None:
        return
    targets = _targets(node)
    for target in targets:
        if (
            isinstance(target, ast.Attribute)
            and ctx.qualname(target) in REDUCTION_FLAGS
            and _disallows_reduction(node.value, ctx)
        ):
            attr = ctx.qualname(target)
            assert attr is not None  # one of REDUCTION_FLAGS (above)
            yield PyHit(target, _reduction_message(attr), None, _no_reduction_gate(attr, ctx))


@ROC102.checker(ast.Call)
def reduction_setattr(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    assigned = _setattr(node, ctx)
    if assigned is not None:
        attr, value = assigned
        if attr in REDUCTION_FLAGS and _disallows_reduction(value, ctx):
            yield PyHit(node, _reduction_message(attr), None, _no_reduction_gate(attr, ctx))


# -- ROC103 ---------------------------------------------------------------------------------
# SDPA backends that are fused kernels: on ROCm, flash and memory-efficient attention come
# from AOTriton/CK and exist only for some GPUs, dtypes and head sizes; cuDNN attention is
# NVIDIA-only.  MATH always runs, so any selection that keeps MATH is safe.
_FUSED_SDPA = {"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"}
_SDPA_KERNEL = {"torch.nn.attention.sdpa_kernel"}
_SDP_KERNEL = {"torch.backends.cuda.sdp_kernel"}  # deprecated, boolean keywords
_ENABLE_MATH = {"torch.backends.cuda.enable_math_sdp"}


def _sdpa_backends(node: ast.AST, ctx: ModuleContext) -> Optional[List[str]]:
    """The SDPBackend member names a ``sdpa_kernel`` argument selects, or None if unknown."""
    node = ctx.resolve(node)
    items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
    names = []
    for item in items:
        qual = ctx.qualname(ctx.resolve(item)) or ""
        parts = qual.split(".")
        if len(parts) < 2 or parts[-2] != "SDPBackend":
            return None
        names.append(parts[-1])
    return names or None


def _is_false(node: Optional[ast.AST], ctx: ModuleContext) -> bool:
    return node is not None and ctx.constant(node) is False


@ROC103.checker(ast.Call)
def fused_sdpa_only(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    qual = ctx.qualname(node.func)
    if qual in _SDPA_KERNEL:
        arg = _arg(node, 0, "backends")
        names = _sdpa_backends(arg, ctx) if arg is not None else None
        if names and all(n in _FUSED_SDPA for n in names):
            chosen = ", ".join(f"SDPBackend.{n}" for n in names)
            yield PyHit(node, ROC103.message("sdpa_kernel", chosen=chosen))
    elif qual in _SDP_KERNEL:
        if _is_false(_arg(node, 1, "enable_math"), ctx):
            yield PyHit(node, ROC103.message("sdp_kernel"))
    elif qual in _ENABLE_MATH:
        if _is_false(_arg(node, 0, "enabled"), ctx):
            yield PyHit(node, ROC103.message("enable_math"))


# -- ROC104 ---------------------------------------------------------------------------------
_CUFFT_CACHE = "torch.backends.cuda.cufft_plan_cache"


def _is_cufft_max_size(target: ast.AST, ctx: ModuleContext) -> bool:
    """``torch.backends.cuda.cufft_plan_cache.max_size`` or ``...cufft_plan_cache[i].max_size``."""
    if not isinstance(target, ast.Attribute) or target.attr != "max_size":
        return False
    owner = target.value
    if isinstance(owner, ast.Subscript):
        owner = owner.value
    return ctx.qualname(owner) == _CUFFT_CACHE


def _raises_on_rocm(value: ast.AST, ctx: ModuleContext) -> bool:
    if ctx.state.import_guarded:
        return False  # ``try: ... except Exception: pass`` already absorbs the RuntimeError
    resolved = ctx.resolve(value)
    if isinstance(resolved, ast.UnaryOp) and isinstance(resolved.op, ast.USub):
        return False  # negative sizes raise on CUDA too
    known = ctx.constant(value)
    if isinstance(known, bool) or not isinstance(known, int):
        return True  # unknown: may exceed the ROCm cap
    return known > _HIPFFT_MAX_PLANS  # negative sizes raise on CUDA too


@ROC104.checker(ast.Assign, ast.AnnAssign)
def cufft_plan_cache_size(node: ast.Assign, ctx: ModuleContext) -> Iterator[PyHit]:
    if node.value is None:
        return
    targets = _targets(node)
    for target in targets:
        if _is_cufft_max_size(target, ctx) and _raises_on_rocm(node.value, ctx):
            yield PyHit(target, ROC104.message(), GATE if len(targets) == 1 else None)


# -- ROC105 ---------------------------------------------------------------------------------
_INIT_PROCESS_GROUP = {
    "torch.distributed.init_process_group",
    "torch.distributed.distributed_c10d.init_process_group",
}
_ROCM_BACKENDS = {"nccl", "gloo", "undefined"}
# Backends that exist for NVIDIA GPUs (or only in NVIDIA/HPC builds) but not in ROCm builds.
# Other vendors' backends (hccl, xccl, ccl, cncl, mccl ...) are chosen for their own devices
# and are no ROCm porting hazard, so they are not listed; unknown plugin names stay silent.
_NOT_ON_ROCM = {"mpi", "ucc"}


def _unsupported_backends(arg: ast.AST, ctx: ModuleContext) -> Iterator[str]:
    text = ctx.constant(arg)
    if not isinstance(text, str):
        qual = ctx.qualname(ctx.resolve(arg)) or ""
        parts = qual.split(".")
        if len(parts) >= 2 and parts[-2] == "Backend" and parts[0] == "torch":
            text = parts[-1]
        else:
            return
    for part in text.lower().replace(" ", "").split(","):
        device, _, name = part.rpartition(":")
        if name in _ROCM_BACKENDS or not name:
            continue
        if name in _NOT_ON_ROCM or device == "cuda":
            yield name


@ROC105.checker(ast.Call)
def unsupported_distributed_backend(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    if ctx.qualname(node.func) not in _INIT_PROCESS_GROUP:
        return
    arg = _arg(node, 0, "backend")
    if arg is None:
        return
    for backend in _unsupported_backends(arg, ctx):
        yield PyHit(arg, ROC105.message(backend=backend))
