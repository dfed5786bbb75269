"""ROC2: torch.compile modes and Inductor settings that rely on CUDA graphs or
GEMM autotuning, both unstable on ROCm."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability, GateStatement, RocmValue, span_of
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
    # set (`... = True`, `patch(...)`) or named as a key: a read such as `if config.triton.cudagraphs:` is not
    precheck=r"cudagraph(?:s|_trees)\s*=(?!=)|[\"']triton\.cudagraph",
    fix=Applicability.SAFE,
)
register(
    "ROC204", "inductor-max-autotune",
    "Inductor max_autotune enabled (config or TORCHINDUCTOR_MAX_AUTOTUNE) without a ROCm gate",
    triggers=("max_autotune", "MAX_AUTOTUNE"),
    precheck=r"max_autotune\w*\s*=(?!=)|[\"']max_autotune|MAX_AUTOTUNE",
    fix=Applicability.SAFE,
)
register(
    "ROC205", "inductor-memory-planning",
    "Inductor's experimental memory_planning enabled without a ROCm gate",
    triggers=("memory_planning",),
    precheck=r"memory_planning\s*=(?!=)|[\"']memory_planning",
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
GATE = GateStatement()
AUTOTUNE_ENV = {"TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM",
                "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE"}


def _compile_modes(node: ast.Call, ctx) -> Iterator[Tuple[ast.keyword, object]]:
    """(keyword, constant mode on ROCm) for ``mode=`` of torch.compile, also through
    ``functools.partial(torch.compile, mode=...)`` and decorators."""
    qual = ctx.qualname(node.func)
    if qual != "torch.compile" and not (
            qual in ("functools.partial", "partial") and node.args
            and ctx.qualname(node.args[0]) == "torch.compile"):
        return
    for kw in node.keywords:
        if kw.arg == "mode":
            yield kw, ctx.constant(kw.value)


_AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")
_DEFAULT_ON_ROCM = '"default"'


@python_checker(ast.Call, codes=("ROC201", "ROC202"))
def find_cudagraph_and_autotune_modes(node: ast.Call, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for kw, mode in _compile_modes(node, ctx):
        recipe = RocmValue(span_of(kw.value), _DEFAULT_ON_ROCM, 'Use mode="default" on ROCm')
        if mode == "reduce-overhead":
            yield kw.value, "ROC201", (
                'torch.compile(mode="reduce-overhead") captures CUDA graphs; HIP-graph capture on '
                'ROCm has hang and crash reports: use `mode="default" if is_rocm else "reduce-overhead"`'), recipe
        elif mode in _AUTOTUNE_MODES:
            yield kw.value, "ROC202", (
                f'torch.compile(mode="{mode}") autotunes GEMMs with Triton; on ROCm that has '
                'memory-fault, hang and endless-autotune reports: use '
                f'`mode="default" if is_rocm else "{mode}"`'), recipe


@python_checker(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call,
                codes=("ROC203", "ROC204", "ROC205"))
def find_unsafe_inductor_settings(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for where, key, value in inductor_settings(node, ctx):
        if key in INDUCTOR_KEYS and is_truthy_constant(value, ctx):
            code, why = INDUCTOR_KEYS[key]
            if isinstance(node, ast.Call):  # patch({...}) / options={...}: ROCm gets False
                recipe = RocmValue(span_of(value), "False", f"Set `{key}` False on ROCm")
            else:
                recipe = GATE if ctx.is_whole_statement(node) and len(getattr(node, "targets", [0])) == 1 else None
            yield where, code, (f"Inductor `{key}` enabled: {why}; "
                                f"gate it with `if not is_rocm:`"), recipe


@python_checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict, codes=("ROC204",))
def find_autotune_env(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    for where, name, value in env_settings(node, ctx):
        if name in AUTOTUNE_ENV and is_truthy_constant(value, ctx):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 or \
                    isinstance(node, ast.Call) and ctx.is_whole_statement(node) and node.func is not None \
                    and getattr(node.func, "attr", None) != "update":
                recipe = GATE
            else:  # a mapping entry or keyword: ROCm gets "0"
                recipe = RocmValue(span_of(value), '"0"', f"Set {name}=0 on ROCm")
            yield where, "ROC204", (f"`{name}=1` set from Python turns on Inductor autotuning, which has "
                                    "memory faults, hangs and timeouts reported on ROCm: set it only "
                                    "`if not is_rocm:`"), recipe
