"""ROC504: Python builds that drop the GPU on ROCm, or stop there: a module-level call of a function
that, evaluated for a ROCm install, raises (``raise_if_cuda_home_none(...)`` whose body raises unless
``CUDA_HOME`` is set), and a ``setup.py`` whose every ``CUDAExtension`` is built only under an
NVIDIA-only condition (``if CUDA_HOME is not None:``, ``if "cu" in torch.__version__:``) with no ROCm
path anywhere in the module."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple, Union

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.analyzer import walk_gated
from rocm_lint.python.context import ModuleContext, ModuleFacts, State, handler_catches

from rocm_lint.rule import PyHit, Rule

ROC504 = Rule(
    "ROC504",
    "gpu-build-dropped-on-rocm",
    "a Python build that stops or drops the GPU on ROCm: a module-level call of a function that raises "
    "when `CUDA_HOME` is unset, or every `CUDAExtension` built only under an NVIDIA-only condition",
    triggers=("CUDA_HOME", "cuda_home", "__version__", "CUDAExtension"),
    precheck=r"CUDA_HOME|cuda_home|CUDAExtension",
    messages={
        "raises": "`{call}` runs when this module is loaded, and `{function}` raises on a ROCm install "
        "({why}): ROCm torch leaves `CUDA_HOME` unset (there is no nvcc), so `pip install`/import stops on "
        "every AMD host; test `torch.utils.cpp_extension.ROCM_HOME`/`IS_HIP_EXTENSION` as well, or call it "
        "only on the NVIDIA path",
        "dropped": "every `CUDAExtension` of this build is built only when `{gate}`, which is false on ROCm, "
        "and nothing in the module builds it for ROCm: on an AMD host the package installs without its GPU "
        "extension, silently (a CPU fallback or an import error later); build it when "
        "`torch.utils.cpp_extension.ROCM_HOME` or `IS_HIP_EXTENSION` is set too (CUDAExtension hipifies "
        "the sources)",
    },
)

# A module that names ROCm's build at all has a ROCm path (or a deliberate choice): no "dropped".
_ROCM_BUILD = LazyPattern(r"ROCM_HOME|IS_HIP_EXTENSION|version\.hip|rocm|\bhip\b|hipcc|HIP_", 0)
_MAX_STEPS = 200


def _false_on_rocm(test: ast.AST, ctx: ModuleContext) -> Optional[bool]:
    """True: the test is false on a ROCm install; False: true there; None: not known."""
    if isinstance(test, ast.Constant):
        return not test.value
    t, f = ctx.gates.facts(test)
    if t == NVIDIA or f == ROCM:
        return True
    if f == NVIDIA or t == ROCM:
        return False
    return None


def _run_on_rocm(body: List[ast.stmt], ctx: ModuleContext, steps: List[int]) -> Tuple[str, str]:
    """Evaluate a function body for a ROCm install: ("raises", why), ("returns", ""), ("falls", "")
    (it ends without either), or ("unknown", "") where a test is not decided or a statement could
    change the flow in a way not followed (loops, try, with)."""
    for stmt in body:
        steps[0] += 1
        if steps[0] > _MAX_STEPS:
            return "unknown", ""
        if isinstance(stmt, ast.Raise):
            return "raises", "it reaches `raise`"
        if isinstance(stmt, ast.Return):
            return "returns", ""
        if isinstance(stmt, ast.Assert):
            false = _false_on_rocm(stmt.test, ctx)
            if false:
                return "raises", f"`assert {ctx.snippet(stmt.test, 'its condition', 40)}` fails"
            if false is None:
                return "unknown", ""
            continue
        if isinstance(stmt, ast.If):
            false = _false_on_rocm(stmt.test, ctx)
            if false is None:
                return "unknown", ""
            outcome, why = _run_on_rocm(stmt.orelse if false else stmt.body, ctx, steps)
            if outcome != "falls":
                return outcome, why
            continue
        if isinstance(
            stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass, ast.Import, ast.ImportFrom)
        ):
            continue  # (a call may raise or exit too: then the answer is only later than said)
        return "unknown", ""
    return "falls", ""


def _raising_functions(ctx: ModuleContext) -> Dict[str, str]:
    """Module-level functions defined once whose body, run on ROCm, raises -> why."""
    defs: Dict[str, List[Union[ast.FunctionDef, ast.AsyncFunctionDef]]] = {}
    for stmt in ctx.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(stmt.name, []).append(stmt)
    out: Dict[str, str] = {}
    for name, found in defs.items():
        if len(found) != 1 or found[0].decorator_list or isinstance(found[0], ast.AsyncFunctionDef):
            continue
        outcome, why = _run_on_rocm(found[0].body, ctx, [0])
        if outcome == "raises":
            out[name] = why
    return out


RAISING = ModuleFacts("ROC504.raising_functions", _raising_functions)


def _cuda_extensions(ctx: ModuleContext) -> Tuple[int, int]:
    """(CUDAExtension calls, those reached on ROCm) over the whole module, with its gates."""
    counts = [0, 0]

    def visit(node: ast.AST, state: State) -> None:
        if isinstance(node, ast.Call):
            qual = ctx.qualname(node.func) or ""
            if qual == "CUDAExtension" or qual.endswith(".CUDAExtension"):
                counts[0] += 1
                if not state.nvidia_only:
                    counts[1] += 1

    walk_gated(ctx, visit)
    return counts[0], counts[1]


EXTENSIONS = ModuleFacts("ROC504.cuda_extensions", _cuda_extensions)


_CATCHES = {
    "RuntimeError",
    "Exception",
    "BaseException",
    "AssertionError",
    "OSError",
    "EnvironmentError",
    "SystemExit",
}


def _module_level_calls(ctx: ModuleContext) -> List[Tuple[ast.Call, str, str]]:
    """(call, function, why) for each call, in module-level code a ROCm install runs, of a module
    function that raises there: the module's statements are followed as ROCm runs them (an `if`
    whose test is decided takes its branch, an undecided one both), not into functions or classes,
    not inside a `try` that catches the error."""
    raising = ctx.facts(RAISING)
    out: List[Tuple[ast.Call, str, str]] = []
    if not raising:
        return out

    def block(stmts: List[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                false = _false_on_rocm(stmt.test, ctx)
                calls(stmt.test)
                if false is not True:
                    block(stmt.body)
                if false is not False:
                    block(stmt.orelse)
                continue
            if isinstance(stmt, ast.Try):
                if not any(handler_catches(h, _CATCHES) for h in stmt.handlers):
                    block(stmt.body)
                block(stmt.orelse)
                block(stmt.finalbody)
                continue
            if isinstance(stmt, (ast.With, ast.For, ast.While)):
                block(stmt.body)
                continue
            calls(stmt)

    def calls(node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in raising:
                out.append((sub, sub.func.id, raising[sub.func.id]))

    block(ctx.tree.body)
    return out


CALLS = ModuleFacts("ROC504.module_level_calls", _module_level_calls)


@ROC504.checker(ast.FunctionDef)
def module_level_call_raises_on_rocm(node: ast.FunctionDef, ctx: ModuleContext) -> Iterator[PyHit]:
    """Reported from the function's definition (the walk visits it: its body names `CUDA_HOME`), at
    each module-level call of it."""
    if ctx.function is not None and ctx.function is not node:
        return
    for call, name, why in ctx.facts(CALLS):
        if name == node.name:
            text = ctx.snippet(call, name + "(...)", 60)
            yield PyHit(call, ROC504.message("raises", call=text, function=name, why=why))


def _holds_cuda_extension(node: ast.AST, ctx: ModuleContext) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            qual = ctx.qualname(sub.func) or ""
            if qual == "CUDAExtension" or qual.endswith(".CUDAExtension"):
                return True
    return False


@ROC504.checker(ast.If, ast.IfExp)
def cuda_extension_only_on_nvidia(node: Union[ast.If, ast.IfExp], ctx: ModuleContext) -> Iterator[PyHit]:
    if ctx.state.rocm_only or _false_on_rocm(node.test, ctx) is not True:
        return
    body = node.body if isinstance(node, ast.IfExp) else ast.Module(body=node.body, type_ignores=[])
    if not _holds_cuda_extension(body, ctx):
        return
    total, on_rocm = ctx.facts(EXTENSIONS)
    if total == 0 or on_rocm > 0:
        return
    if ctx.memo("ROC504.rocm_build", lambda: bool(_ROCM_BUILD.search(ctx.text or ""))):
        return
    if ctx.memo("ROC504.reported", lambda: [False])[0]:
        return  # one finding per module: its first NVIDIA-only gate
    ctx.memo("ROC504.reported", lambda: [False])[0] = True
    gate = ctx.snippet(node.test, "its condition", 50)
    yield PyHit(node.test, ROC504.message("dropped", gate=gate))
