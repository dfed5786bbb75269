"""ROC1: PyTorch switches and APIs that only mean something on NVIDIA."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability, GateStatement, WrapExpression, span_of
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


# -- ROC106-ROC107: CUDA compute capability and version strings -------------------------------
register(
    "ROC106", "capability-sm-check",
    "get_device_capability() compared with NVIDIA SM numbers without a CUDA gate: "
    "ROCm reports the gfx version (MI300 is 9.4), so Hopper/Ampere paths run on AMD GPUs",
    # The comparison is often on a later line than the call (`major, minor = ...` then
    # `if major >= 9:`), so the usual names of a capability are trigger words too; the
    # precheck keeps the rule to files that read a capability at all.
    triggers=("get_device_capability", "get_device_properties", "major", "cap", "CAP", "cc", "CC",
              "sm", "SM", "arch", "ARCH"),
    precheck=r"get_device_capability|get_device_properties",
    fix=Applicability.UNSAFE,
)
register(
    "ROC107", "cuda-version-parsed",
    "torch.version.cuda parsed or compared without a None check: it is None on ROCm "
    "(TypeError/AttributeError)",
    triggers=("version.cuda", "torch.version"),
    precheck=r"version\.cuda|torch\.version\s*,\s*[\"']cuda",
    fix=Applicability.DISPLAY,
)

_CAPABILITY_CALLS = {"torch.cuda.get_device_capability"}
_PROPERTIES_CALLS = {"torch.cuda.get_device_properties"}
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
_FLIP = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq,
         ast.NotEq: ast.NotEq}


def _capability_bindings(ctx) -> dict:
    """Names bound to a capability in code that may run on ROCm, by (function id, name).

    Filled during the walk by :func:`record_capability_bindings`: the walker never runs
    checkers in NVIDIA-only code, so a capability read under `if torch.version.cuda:` is
    not recorded and comparisons of it elsewhere stay silent.
    """
    return ctx.memo("roc106.bindings", dict)


def _binding_key(node: ast.AST, ctx, function):
    if isinstance(node, ast.Name):
        return (id(function) if function is not None else None, node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        return ("self", node.attr)
    return None


def _capability_kind(node: ast.AST, ctx, depth: int = 0):
    """What a capability expression holds: "tuple" (major, minor), "major", "minor",
    "cc" (major * 10 + minor), "float" (major + minor / 10), "props"; None otherwise."""
    if depth > 6 or node is None:
        return None
    if isinstance(node, ast.IfExp):
        resolved = ctx.resolve(node)
        if resolved is not node:
            return _capability_kind(resolved, ctx, depth + 1)
        return _capability_kind(node.body, ctx, depth + 1) or _capability_kind(node.orelse, ctx, depth + 1)
    if isinstance(node, ast.Call):
        qual = ctx.qualname(node.func)
        if qual in _CAPABILITY_CALLS:
            return "tuple"
        if qual in _PROPERTIES_CALLS:
            return "props"
        if qual == "tuple" and len(node.args) == 1:
            return "tuple" if _capability_kind(node.args[0], ctx, depth + 1) == "tuple" else None
        if qual in ("int", "float") and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr):
                parts = [_capability_kind(v.value, ctx, depth + 1) for v in arg.values
                         if isinstance(v, ast.FormattedValue)]
                text = "".join(v.value for v in arg.values if isinstance(v, ast.Constant))
                if parts == ["major", "minor"]:
                    return "float" if text == "." else "cc" if text == "" else None
            inner = _capability_kind(arg, ctx, depth + 1)
            return inner if inner in ("major", "minor", "cc", "float") else None
        return None
    if isinstance(node, ast.Tuple):  # (major, minor)
        kinds = [_capability_kind(e, ctx, depth + 1) for e in node.elts]
        return "tuple" if kinds == ["major", "minor"] else None
    if isinstance(node, ast.Subscript):
        if _capability_kind(node.value, ctx, depth + 1) != "tuple":
            return None
        index = node.slice
        if isinstance(index, ast.Constant) and index.value in (0, 1, -1, -2):
            return "major" if index.value in (0, -2) else "minor"
        return None
    if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
        if _capability_kind(node.value, ctx, depth + 1) == "props":
            return node.attr
    if isinstance(node, ast.BinOp):
        left = _capability_kind(node.left, ctx, depth + 1)
        right = _capability_kind(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mult):
            if left == "major" and _is_int(node.right, 10) or right == "major" and _is_int(node.left, 10):
                return "cc10"
        if isinstance(node.op, ast.Add):
            kinds = {left, right}
            if kinds == {"cc10", "minor"}:
                return "cc"
            if kinds == {"major", "tenth"}:
                return "float"
        if isinstance(node.op, (ast.Div, ast.Mult)) and left == "minor" and (
                _is_int(node.right, 10) if isinstance(node.op, ast.Div) else _is_float(node.right, 0.1)):
            return "tenth"
        return None
    key = _binding_key(node, ctx, ctx.function)
    if key is not None:
        bindings = _capability_bindings(ctx)
        found = bindings.get(key)
        if found is None and isinstance(node, ast.Name) and node.id not in _local_names(ctx.function, ctx):
            found = bindings.get((None, node.id))  # a module-level binding
        return found
    return None


def _local_names(function, ctx) -> set:
    """Parameters and assigned names of a function (they shadow module-level bindings)."""
    if function is None:
        return set()
    cache = ctx.memo("roc106.locals", dict)
    names = cache.get(id(function))
    if names is None:
        args = function.args
        names = {a.arg for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs,
                                 *filter(None, [args.vararg, args.kwarg])]}
        names |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        cache[id(function)] = names
    return names


def _is_int(node: ast.AST, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _is_float(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value - value) < 1e-9


@python_checker(ast.Assign, ast.AnnAssign, codes=("ROC106",))
def record_capability_bindings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    """Remember names that hold a capability (reports nothing itself)."""
    if node.value is None:
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    bindings = _capability_bindings(ctx)
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            value = ctx.resolve(node.value)
            if len(target.elts) == 2 and _capability_kind(value, ctx) == "tuple":
                for element, kind in zip(target.elts, ("major", "minor")):
                    key = _binding_key(element, ctx, ctx.function)
                    if key is not None:
                        bindings[key] = kind
            continue
        key = _binding_key(target, ctx, ctx.function)
        if key is None:
            continue
        kind = _capability_kind(node.value, ctx)
        if kind is not None and kind not in ("cc10", "tenth"):
            bindings[key] = kind
        else:
            bindings.pop(key, None)  # rebound to something else
    return
    yield  # a generator, like every checker


def _amd_value(kind: str, cap):
    major, minor = cap
    return {"tuple": cap, "major": major, "cc": major * 10 + minor, "float": major + minor / 10}.get(kind)


def _sm_constants(node: ast.AST, kind: str, ctx, many: bool):
    """The SM-like constant(s) of a comparison's other side, or None if it is no SM number."""
    node = ctx.resolve(node)
    if many:
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
            return None
        values = [_sm_constants(e, kind, ctx, False) for e in node.elts]
        return None if any(v is None for v in values) else [v[0] for v in values]
    if kind == "tuple":
        if isinstance(node, ast.Tuple) and 1 <= len(node.elts) <= 2 and all(
                isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
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


def _affected_gpus(kind: str, op: ast.cmpop, constants) -> list:
    """Which AMD GPUs an SM test with an NVIDIA FP8/Hopper/Blackwell meaning also selects."""
    if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return [name for cap, name in _AMD_CAPABILITIES
                if any(_amd_value(kind, cap) == c for c in constants)]
    (c,) = constants
    if kind == "tuple" and len(c) == 1:
        c = (c[0], 0)
    if isinstance(op, (ast.Gt, ast.LtE)):  # x > c is x >= next(c)
        c = (c[0], c[1] + 1) if kind == "tuple" else c + 1 if isinstance(c, int) else c + 1e-9
    if _as_capability(kind, c) < _FIRST_HAZARDOUS_SM:
        return []  # a Volta/Turing/Ampere test: AMD GPUs pass it, as they should
    return [name for cap, name in _AMD_CAPABILITIES if _amd_value(kind, cap) >= c]


def _picks_an_error(node: ast.AST, ctx) -> bool:
    """``if major < 9: raise ValueError(...) else: raise ImportError(...)``: the test only
    chooses which error to raise."""
    parent = ctx.parent_of(node)
    return isinstance(parent, ast.If) and parent.test is node and bool(parent.orelse) \
        and isinstance(parent.body[-1], ast.Raise) and isinstance(parent.orelse[-1], ast.Raise)


def _only_logged(node: ast.AST, ctx) -> bool:
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, (ast.JoinedStr, ast.FormattedValue)):
            return True
        if isinstance(parent, ast.Call) and child is not parent.func:
            name = parent.func.attr if isinstance(parent.func, ast.Attribute) else getattr(parent.func, "id", None)
            if name in _LOGGING_CALLS:
                return True
        if isinstance(parent, ast.stmt):
            return False
    return False


def _short_circuited(node: ast.AST, ctx) -> bool:
    """``cap >= (9, 0) and torch.version.cuda is not None``: the whole test is False on ROCm
    (the walker already covers a CUDA test to the *left*)."""
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, ast.BoolOp):
            want = "nvidia" if isinstance(parent.op, ast.And) else "rocm"
            if any(v is not child and ctx.gates.facts(v)[0] == want for v in parent.values):
                return True
        elif not (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            return False
    return False


def _snippet(node: ast.AST, ctx) -> str:
    text = " ".join((ctx.segment(node) or "this comparison").split())
    return text if len(text) <= 70 else text[:67] + "..."


@python_checker(ast.Compare, codes=("ROC106",))
def find_sm_capability_checks(node: ast.Compare, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    operands = [node.left, *node.comparators]
    for i, op in enumerate(node.ops):
        left, right = operands[i], operands[i + 1]
        many = isinstance(op, (ast.In, ast.NotIn))
        kind = _capability_kind(left, ctx)
        other = right
        if kind is None and not many:
            kind, other = _capability_kind(right, ctx), left
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
        yield node, "ROC106", (
            f"`{_snippet(node, ctx)}` reads an NVIDIA SM number, but ROCm reports the gfx version as the "
            f"capability ({', '.join(gpus)}), so AMD GPUs take this NVIDIA-architecture path: "
            "test `torch.version.cuda is not None and ...` first"), WrapExpression(
                span_of(node), "{torch}.version.cuda is not None and ({expr})",
                "Test `torch.version.cuda is not None` first (AMD GPUs then skip the NVIDIA path)")
        return


# -- ROC107 ---------------------------------------------------------------------------------
_CUDA_VERSION = "torch.version.cuda"
# Callables that raise on None (float/int/Version/parse: TypeError).
_PARSERS = {"float", "int", "Version", "parse", "parse_version", "version_parse"}
# distutils' classes accept None and fail once compared (``self.version`` was never set).
_LAZY_PARSERS = {"LooseVersion", "StrictVersion"}
_REGEX_CALLS = {"re.match", "re.search", "re.fullmatch", "re.findall", "re.split"}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_NONE_ERRORS = {"TypeError", "AttributeError", "Exception", "BaseException"}


def _is_cuda_version(node: ast.AST, ctx) -> bool:
    """``torch.version.cuda`` itself, or ``getattr(torch.version, "cuda"[, default])``
    (the attribute exists on ROCm and is None, so a default never applies)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return ctx.qualname(node) == _CUDA_VERSION
    if isinstance(node, ast.Call) and ctx.qualname(node.func) == "getattr" and len(node.args) >= 2:
        return ctx.qualname(node.args[0]) == "torch.version" and ctx.constant(node.args[1]) == "cuda"
    return False


def _caught(node: ast.AST, ctx) -> bool:
    """Inside ``try:`` whose handler catches the TypeError/AttributeError None raises."""
    return ctx.caught(node, _NONE_ERRORS)
    return False


def _version_message(what: str, error: str) -> str:
    return (f"`{what}` raises {error} on ROCm (and CPU-only) builds, where `torch.version.cuda` is None: "
            "test `torch.version.cuda is not None` first, or read `torch.version.hip` for ROCm")


@python_checker(ast.Call, ast.Attribute, ast.Subscript, ast.Compare, codes=("ROC107",))
def find_unchecked_cuda_version(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    hit = None
    if isinstance(node, ast.Call):
        qual = ctx.qualname(node.func) or ""
        last = qual.rsplit(".", 1)[-1]
        if node.args and last in _PARSERS | _LAZY_PARSERS and _is_cuda_version(node.args[0], ctx):
            hit = ("AttributeError once compared" if last in _LAZY_PARSERS else "TypeError", node)
        elif qual in _REGEX_CALLS and len(node.args) >= 2 and _is_cuda_version(node.args[1], ctx):
            hit = ("TypeError", node)
    elif isinstance(node, ast.Attribute):
        if _is_cuda_version(node.value, ctx):
            parent = ctx.parent_of(node)
            shown = parent if isinstance(parent, ast.Call) and parent.func is node else node
            hit = ("AttributeError", shown)
    elif isinstance(node, ast.Subscript):
        if _is_cuda_version(node.value, ctx):
            hit = ("TypeError", node)
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            if isinstance(op, _ORDERING) and (_is_cuda_version(left, ctx) or _is_cuda_version(right, ctx)) \
                    or isinstance(op, (ast.In, ast.NotIn)) and _is_cuda_version(right, ctx):
                hit = ("TypeError", node)
                break
    if hit is None or _caught(node, ctx):
        return
    error, shown = hit
    yield node, "ROC107", _version_message(_snippet(shown, ctx), error)
