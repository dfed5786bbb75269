"""ROC2: torch.compile modes and Inductor settings that rely on CUDA graphs or
GEMM autotuning, both unstable on ROCm."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.python.patterns import env_settings, inductor_settings, is_truthy_constant
from rocm_lint.registry import python_checker, register

register(
    "ROC201", "reduce-overhead-compile",
    'torch.compile(mode="reduce-overhead") without a ROCm gate: HIP-graph capture has hang and crash reports',
    triggers=("reduce-overhead",),
    fix=Applicability.SAFE,
)
register(
    "ROC202", "max-autotune-compile",
    'torch.compile(mode="max-autotune") without a ROCm gate: GEMM autotuning has memory-fault and hang reports',
    triggers=("max-autotune",),
    fix=Applicability.SAFE,
)
register(
    "ROC203", "inductor-cudagraphs",
    "Inductor triton.cudagraphs / cudagraph_trees enabled without a ROCm gate",
    triggers=("cudagraphs", "cudagraph_trees"),
    fix=Applicability.SAFE,
)
register(
    "ROC204", "inductor-max-autotune",
    "Inductor max_autotune enabled (config or TORCHINDUCTOR_MAX_AUTOTUNE) without a ROCm gate",
    triggers=("max_autotune", "MAX_AUTOTUNE"),
    fix=Applicability.SAFE,
)
register(
    "ROC205", "inductor-memory-planning",
    "Inductor's experimental memory_planning enabled without a ROCm gate",
    triggers=("memory_planning",),
    fix=Applicability.SAFE,
)

# Inductor config key -> (code, why it hurts on ROCm)
INDUCTOR_KEYS = {
    "triton.cudagraphs": ("ROC203", "HIP-graph capture has hang and memory-fault reports on ROCm"),
    "triton.cudagraph_trees": ("ROC203", "HIP-graph capture has hang and memory-fault reports on ROCm"),
    "max_autotune": ("ROC204", "GEMM autotuning has memory faults, GPU hangs and timeouts reported on ROCm"),
    "max_autotune_gemm": ("ROC204", "GEMM autotuning has memory faults, GPU hangs and timeouts reported on ROCm"),
    "max_autotune_pointwise": ("ROC204", "autotuning has memory faults, GPU hangs and timeouts reported on ROCm"),
    "memory_planning": ("ROC205", "this experimental, inference-only pass is partly disabled in ROCm CI"),
}
AUTOTUNE_ENV = {"TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM",
                "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE"}


@python_checker(ast.Call, codes=("ROC201",))
def find_reduce_overhead_compile(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    qual = ctx.qualname(node.func)
    if qual != "torch.compile":
        # functools.partial(torch.compile, mode=...)
        if qual not in ("functools.partial", "partial") or not node.args \
                or ctx.qualname(node.args[0]) != "torch.compile":
            return
    for kw in node.keywords:
        if kw.arg == "mode" and ctx.constant(kw.value) == "reduce-overhead":
            yield kw.value, "ROC201", (
                'torch.compile(mode="reduce-overhead") captures CUDA graphs; HIP-graph capture on '
                'ROCm has hang and crash reports: use `mode="default" if is_rocm else "reduce-overhead"`')


_AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")


@python_checker(ast.Call, codes=("ROC202",))
def find_max_autotune_compile(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    qual = ctx.qualname(node.func)
    if qual != "torch.compile":
        # functools.partial(torch.compile, mode=...)
        if qual not in ("functools.partial", "partial") or not node.args \
                or ctx.qualname(node.args[0]) != "torch.compile":
            return
    for kw in node.keywords:
        mode = ctx.constant(kw.value) if kw.arg == "mode" else None
        if mode in _AUTOTUNE_MODES:
            yield kw.value, "ROC202", (
                f'torch.compile(mode="{mode}") autotunes GEMMs with Triton; on ROCm that has '
                'memory-fault, hang and endless-autotune reports: use '
                f'`mode="default" if is_rocm else "{mode}"`')


@python_checker(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call,
                codes=("ROC203", "ROC204", "ROC205"))
def find_unsafe_inductor_settings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for where, key, value in inductor_settings(node, ctx):
        if key in INDUCTOR_KEYS and is_truthy_constant(value, ctx):
            code, why = INDUCTOR_KEYS[key]
            yield where, code, (f"Inductor `{key}` enabled: {why}; "
                                f"gate it with `if not is_rocm:`")


@python_checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict, codes=("ROC204",))
def find_autotune_env(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for where, name, value in env_settings(node, ctx):
        if name in AUTOTUNE_ENV and is_truthy_constant(value, ctx):
            yield where, "ROC204", (f"`{name}=1` set from Python turns on Inductor autotuning, which has "
                                    "memory faults, hangs and timeouts reported on ROCm: set it only "
                                    "`if not is_rocm:`")
