"""ROC1: PyTorch switches and APIs that only mean something on NVIDIA."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.fix.recipes import GateStatement
from rocm_lint.registry import python_checker, register

GATE = GateStatement()

register(
    "ROC101", "ungated-tf32-switch",
    "TF32 switch set without a ROCm gate: ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1",
    triggers=("allow_tf32", "set_float32_matmul_precision", "fp32_precision"),
    precheck=r"(?:allow_tf32|fp32_precision)\s*=(?!=)|set_float32_matmul_precision\s*\(|setattr\s*\(",
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


@python_checker(ast.Assign, ast.AnnAssign, codes=("ROC101",))
def find_ungated_tf32_assignments(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if not isinstance(target, ast.Attribute):
            continue
        qual = ctx.qualname(target)
        if (qual in TF32_FLAGS or qual in TF32_PRECISION) and node.value is not None \
                and _enables(qual, node.value, ctx):
            only_switches = all(ctx.qualname(t) in TF32_FLAGS | TF32_PRECISION for t in targets)
            yield target, "ROC101", _tf32_message(qual), GATE if only_switches else None


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
                "ignores unless HIPBLASLT_ALLOW_TF32=1: gate it with `if not is_rocm:`"), \
                GATE if ctx.is_whole_statement(node) else None
    elif qual == "setattr" and len(node.args) == 3:
        owner, name, value = node.args
        attr = f"{ctx.qualname(owner)}.{ctx.constant(name)}"
        if (attr in TF32_FLAGS or attr in TF32_PRECISION) and _enables(attr, value, ctx):
            yield node, "ROC101", _tf32_message(attr), GATE if ctx.is_whole_statement(node) else None


# -- ROC102-ROC105 -------------------------------------------------------------------------
register(
    "ROC102", "ungated-reduced-precision-reduction",
    "allow_fp16/bf16_reduced_precision_reduction turned off without a ROCm gate: ROCm GEMMs ignore it",
    triggers=("reduced_precision_reduction",),
    fix=Applicability.SAFE,
)
register(
    "ROC103", "forced-fused-sdpa-backend",
    "SDPA restricted to fused backends (flash/efficient/cuDNN) with no math fallback: arch-dependent on ROCm",
    triggers=("enable_math_sdp", "sdp_kernel", "sdpa_kernel"),
    fix=Applicability.DISPLAY,
)
register(
    "ROC104", "cufft-plan-cache-size",
    "cufft_plan_cache.max_size set above 1023 without a ROCm gate: ROCm builds reject larger hipFFT caches",
    triggers=("cufft_plan_cache",),
    fix=Applicability.SAFE,
)
register(
    "ROC105", "unsupported-distributed-backend",
    'init_process_group with a backend ROCm does not provide (only "nccl"/RCCL and "gloo" are supported)',
    triggers=("init_process_group",),
    # a finding names mpi/ucc (any case, also Backend.MPI) or a "cuda:<backend>" pair
    precheck=r"(?i)mpi|ucc|cuda:",
    fix=Applicability.DISPLAY,
)

REDUCTION_FLAGS = {
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
}


def _reads_reduction_flag(node: ast.AST, ctx) -> bool:
    return ctx.qualname(node) in REDUCTION_FLAGS


def _disallows_reduction(value: ast.AST, ctx) -> bool:
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
    short = attr.rsplit(".", 1)[-1]
    return (f"turning off `{short}` is ignored by ROCm's rocBLAS/hipBLASLt GEMMs, so reduced-precision "
            "reductions stay allowed there: gate it with `if not is_rocm:` and check GEMM accuracy "
            "on ROCm separately")


_CUFFT_CACHE = "torch.backends.cuda.cufft_plan_cache"
_HIPFFT_MAX_PLANS = 1023  # CUFFT_MAX_PLAN_NUM in ROCm builds of CuFFTPlanCache.h


def _is_cufft_max_size(target: ast.AST, ctx) -> bool:
    """``torch.backends.cuda.cufft_plan_cache.max_size`` or ``...cufft_plan_cache[i].max_size``."""
    if not isinstance(target, ast.Attribute) or target.attr != "max_size":
        return False
    owner = target.value
    if isinstance(owner, ast.Subscript):
        owner = owner.value
    return ctx.qualname(owner) == _CUFFT_CACHE


def _raises_on_rocm(value: ast.AST, ctx) -> bool:
    if ctx.state.import_guarded:
        return False  # ``try: ... except Exception: pass`` already absorbs the RuntimeError
    resolved = ctx.resolve(value)
    if isinstance(resolved, ast.UnaryOp) and isinstance(resolved.op, ast.USub):
        return False  # negative sizes raise on CUDA too
    known = ctx.constant(value)
    if isinstance(known, bool) or not isinstance(known, int):
        return True  # unknown: may exceed the ROCm cap
    return known > _HIPFFT_MAX_PLANS  # negative sizes raise on CUDA too


@python_checker(ast.Assign, ast.AnnAssign, codes=("ROC102", "ROC104"))
def find_rocm_ignored_backend_settings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if node.value is None:
        return
    for target in targets:
        if not isinstance(target, ast.Attribute):
            continue
        if ctx.qualname(target) in REDUCTION_FLAGS and _disallows_reduction(node.value, ctx):
            yield target, "ROC102", _reduction_message(ctx.qualname(target)), GATE if len(targets) == 1 else None
        elif _is_cufft_max_size(target, ctx) and _raises_on_rocm(node.value, ctx):
            yield target, "ROC104", (
                "`cufft_plan_cache.max_size` cannot be configured on ROCm: the hipFFT plan cache is "
                f"fixed at {_HIPFFT_MAX_PLANS} plans and larger values raise RuntimeError; set it "
                "only `if not is_rocm:`"), GATE if len(targets) == 1 else None


@python_checker(ast.Call, codes=("ROC102",))
def find_reduction_setattr(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    if ctx.qualname(node.func) == "setattr" and len(node.args) == 3:
        owner, name, value = node.args
        attr = f"{ctx.qualname(owner)}.{ctx.constant(name)}"
        if attr in REDUCTION_FLAGS and _disallows_reduction(value, ctx):
            yield node, "ROC102", _reduction_message(attr), GATE if ctx.is_whole_statement(node) else None


# SDPA backends that are fused kernels: on ROCm, flash and memory-efficient attention come
# from AOTriton/CK and exist only for some GPUs, dtypes and head sizes; cuDNN attention is
# NVIDIA-only.  MATH always runs, so any selection that keeps MATH is safe.
_FUSED_SDPA = {"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"}
_SDPA_KERNEL = {"torch.nn.attention.sdpa_kernel"}
_SDP_KERNEL = {"torch.backends.cuda.sdp_kernel"}  # deprecated, boolean keywords
_ENABLE_MATH = {"torch.backends.cuda.enable_math_sdp"}


def _arg(node: ast.Call, index: int, name: str):
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[:index + 1]):
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == name), None)


def _sdpa_backends(node: ast.AST, ctx):
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


def _is_false(node, ctx) -> bool:
    return node is not None and ctx.constant(node) is False


@python_checker(ast.Call, codes=("ROC103", "ROC105"))
def find_rocm_fragile_backend_calls(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    qual = ctx.qualname(node.func)
    if qual in _SDPA_KERNEL:
        arg = _arg(node, 0, "backends")
        names = _sdpa_backends(arg, ctx) if arg is not None else None
        if names and all(n in _FUSED_SDPA for n in names):
            chosen = ", ".join(f"SDPBackend.{n}" for n in names)
            yield node, "ROC103", (
                f"`sdpa_kernel({chosen})` allows only fused attention kernels, which ROCm builds "
                "provide only for some GPUs and shapes (cuDNN attention not at all): add "
                "`SDPBackend.MATH` to the list so SDPA can fall back instead of raising "
                "'No available kernel'")
    elif qual in _SDP_KERNEL:
        if _is_false(_arg(node, 1, "enable_math"), ctx):
            yield node, "ROC103", (
                "`sdp_kernel(enable_math=False)` leaves only fused attention kernels, which ROCm "
                "builds provide only for some GPUs and shapes: keep `enable_math=True` (or use "
                "`torch.nn.attention.sdpa_kernel([..., SDPBackend.MATH])`)")
    elif qual in _ENABLE_MATH:
        if _is_false(_arg(node, 0, "enabled"), ctx):
            yield node, "ROC103", (
                "`enable_math_sdp(False)` removes the SDPA fallback, leaving fused kernels that ROCm "
                "builds provide only for some GPUs and shapes: keep the math backend enabled on ROCm")
    elif qual in _INIT_PROCESS_GROUP:
        arg = _arg(node, 0, "backend")
        if arg is None:
            return
        for backend in _unsupported_backends(arg, ctx):
            yield arg, "ROC105", (
                f'torch.distributed backend "{backend}" is not available on ROCm, which supports only '
                '"nccl" (RCCL) and "gloo": use backend="nccl" for GPU tensors there')


_INIT_PROCESS_GROUP = {"torch.distributed.init_process_group",
                       "torch.distributed.distributed_c10d.init_process_group"}
_ROCM_BACKENDS = {"nccl", "gloo", "undefined"}
# Backends that exist for NVIDIA GPUs (or only in NVIDIA/HPC builds) but not in ROCm builds.
# Other vendors' backends (hccl, xccl, ccl, cncl, mccl ...) are chosen for their own devices
# and are no ROCm porting hazard, so they are not listed; unknown plugin names stay silent.
_NOT_ON_ROCM = {"mpi", "ucc"}


def _unsupported_backends(arg: ast.AST, ctx) -> Iterator[str]:
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
