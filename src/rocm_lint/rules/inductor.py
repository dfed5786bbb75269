"""ROC2: torch.compile modes and Inductor settings that rely on CUDA graphs or
GEMM autotuning, both unstable on ROCm."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from rocm_lint.domain import AUTOTUNE_ENV
from rocm_lint.finding import Applicability, GateStatement, RocmValue, span_of
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.patterns import env_settings, inductor_settings, is_truthy_constant
from rocm_lint.rule import FixAvailability, PyHit, Rule


def _setting(why: str) -> str:
    """The message of an Inductor setting enabled in Python."""
    return f"Inductor `{{setting}}` enabled: {why}; gate it with `if not is_rocm:`"


ROC201 = Rule(
    "ROC201",
    "reduce-overhead-compile",
    'torch.compile(mode="reduce-overhead") without a ROCm gate: HIP-graph capture has hang and crash reports',
    triggers=("reduce-overhead",),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.ALWAYS,
    messages={
        "default": 'torch.compile(mode="reduce-overhead") captures CUDA graphs; HIP-graph capture on '
        'ROCm has hang and crash reports: use `mode="default" if is_rocm else "reduce-overhead"`'
    },
)
ROC202 = Rule(
    "ROC202",
    "max-autotune-compile",
    'torch.compile(mode="max-autotune") without a ROCm gate: GEMM autotuning has memory-fault and hang reports',
    triggers=("max-autotune",),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.ALWAYS,
    messages={
        "default": 'torch.compile(mode="{mode}") autotunes GEMMs with Triton; on ROCm that has '
        "memory-fault, hang and endless-autotune reports: use "
        '`mode="default" if is_rocm else "{mode}"`'
    },
)
ROC203 = Rule(
    "ROC203",
    "inductor-cudagraphs",
    "Inductor triton.cudagraphs / cudagraph_trees enabled without a ROCm gate",
    triggers=("cudagraphs", "cudagraph_trees"),
    # set (`... = True`, `patch(...)`) or named as a key: a read such as `if config.triton.cudagraphs:` is not
    # literal-led form of `cudagraph(?:s|_trees)\s*=(?!=)|["']triton\.cudagraph` (tests/test_registry_index.py)
    precheck=r"cudagraph(?:(?:s|_trees)\s*=(?!=)|(?<=[\"']triton\.cudagraph))",
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    messages={"default": _setting("HIP-graph capture has hang and memory-fault reports on ROCm")},
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC204 = Rule(
    "ROC204",
    "inductor-max-autotune",
    "Inductor max_autotune enabled (config or TORCHINDUCTOR_MAX_AUTOTUNE) without a ROCm gate",
    triggers=("max_autotune", "MAX_AUTOTUNE"),
    precheck=r"max_autotune\w*\s*=(?!=)|[\"']max_autotune|MAX_AUTOTUNE",
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    messages={
        "gemm": _setting("GEMM autotuning has memory faults, GPU hangs and timeouts reported on ROCm"),
        "pointwise": _setting("autotuning has memory faults, GPU hangs and timeouts reported on ROCm"),
        "env": "`{name}=1` set from Python turns on Inductor autotuning, which has memory faults, hangs "
        "and timeouts reported on ROCm: set it only `if not is_rocm:`",
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
ROC205 = Rule(
    "ROC205",
    "inductor-memory-planning",
    "Inductor's experimental memory_planning enabled without a ROCm gate",
    triggers=("memory_planning",),
    # literal-led form of `memory_planning\s*=(?!=)|["']memory_planning` (tests/test_registry_index.py)
    precheck=r"memory_planning(?:\s*=(?!=)|(?<=[\"']memory_planning))",
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    messages={"default": _setting("this experimental, inference-only pass is partly disabled in ROCm CI")},
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)

GATE = GateStatement()


# -- ROC201, ROC202: torch.compile modes -------------------------------------------------------
def _compile_modes(node: ast.Call, ctx: ModuleContext) -> Iterator[Tuple[ast.AST, object]]:
    """(mode expression, constant mode on ROCm) for ``mode=`` of torch.compile, also through
    ``functools.partial(torch.compile, mode=...)`` and decorators. A mode read from the
    environment with a literal default (``os.environ.get("X", "max-autotune")``) is that
    default, and the expression reported (and given a ROCm value) is the default itself, so
    a variable set on purpose still wins."""
    qual = ctx.qualname(node.func)
    if qual != "torch.compile" and not (
        qual in ("functools.partial", "partial")
        and node.args
        and ctx.qualname(node.args[0]) == "torch.compile"
    ):
        return
    for kw in node.keywords:
        if kw.arg == "mode":
            mode = ctx.constant(kw.value)
            default = _env_default(kw.value, ctx) if mode is ... else None
            if default is not None:
                yield default, default.value
            else:
                yield kw.value, mode


def _env_default(node: ast.AST, ctx: ModuleContext) -> Optional[ast.Constant]:
    """The literal default of ``os.environ.get("X", "max-autotune")`` / ``os.getenv("X", ...)``
    written in the ``mode=`` argument itself: the mode every run gets, ROCm included, unless
    someone sets the variable."""
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 2
        and not node.keywords
        and ctx.qualname(node.func) in ("os.environ.get", "os.getenv")
    ):
        default = node.args[1]
        if isinstance(default, ast.Constant) and isinstance(default.value, str):
            return default
    return None


_AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")


def _default_on_rocm(value: ast.AST) -> RocmValue:
    return RocmValue(span_of(value), '"default"', 'Use mode="default" on ROCm')


@ROC201.checker(ast.Call)
def reduce_overhead_mode(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    for value, mode in _compile_modes(node, ctx):
        if mode == "reduce-overhead":
            yield PyHit(value, ROC201.message(), _default_on_rocm(value))


@ROC202.checker(ast.Call)
def max_autotune_mode(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    for value, mode in _compile_modes(node, ctx):
        if mode in _AUTOTUNE_MODES:
            yield PyHit(value, ROC202.message(mode=mode), _default_on_rocm(value))


# -- ROC203-ROC205: Inductor config settings ---------------------------------------------------
# Inductor config key -> (rule, message key)
INDUCTOR_KEYS = {
    "triton.cudagraphs": (ROC203, "default"),
    "triton.cudagraph_trees": (ROC203, "default"),
    "max_autotune": (ROC204, "gemm"),
    "max_autotune_gemm": (ROC204, "gemm"),
    "max_autotune_pointwise": (ROC204, "pointwise"),
    "memory_planning": (ROC205, "default"),
}
_SETTING_NODES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call)


def _enabled_settings(node: ast.AST, ctx: ModuleContext, rule: Rule) -> Iterator[PyHit]:
    """The rule's Inductor settings turned on in ``node`` (config assignments, ``patch(...)``,
    ``options={...}``)."""
    for where, key, value in inductor_settings(node, ctx):
        entry = INDUCTOR_KEYS.get(key)
        if entry is not None and entry[0] is rule and is_truthy_constant(value, ctx):
            if isinstance(node, ast.Call):  # patch({...}) / options={...}: ROCm gets False
                recipe = RocmValue(span_of(value), "False", f"Set `{key}` False on ROCm")
            else:
                recipe = (
                    GATE if ctx.is_whole_statement(node) and len(getattr(node, "targets", [0])) == 1 else None
                )
            yield PyHit(where, rule.message(entry[1], setting=key), recipe)


@ROC203.checker(*_SETTING_NODES)
def cudagraphs_setting(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    return _enabled_settings(node, ctx, ROC203)


@ROC204.checker(*_SETTING_NODES)
def max_autotune_setting(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    return _enabled_settings(node, ctx, ROC204)


@ROC204.checker(ast.Assign, ast.AnnAssign, ast.Call, ast.Dict)
def max_autotune_env(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    for where, name, value in env_settings(node, ctx):
        if name in AUTOTUNE_ENV and is_truthy_constant(value, ctx):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                or isinstance(node, ast.Call)
                and ctx.is_whole_statement(node)
                and node.func is not None
                and getattr(node.func, "attr", None) != "update"
            ):
                recipe = GATE
            else:  # a mapping entry or keyword: ROCm gets "0"
                recipe = RocmValue(span_of(value), '"0"', f"Set {name}=0 on ROCm")
            yield PyHit(where, ROC204.message("env", name=name), recipe)


@ROC205.checker(*_SETTING_NODES)
def memory_planning_setting(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    return _enabled_settings(node, ctx, ROC205)
