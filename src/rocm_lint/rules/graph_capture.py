"""ROC206: host synchronisation and RNG-state calls inside a CUDA-graph capture."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

from rocm_lint.python.analyzer import walk_gated
from rocm_lint.python.context import ModuleContext, ModuleFacts, State
from rocm_lint.rule import PyHit, Rule

CAPTURE_FACTS: "ModuleFacts[CaptureFacts]" = ModuleFacts("ROC206.capture", lambda ctx: _learn(ctx))

ROC206 = Rule(
    "ROC206",
    "graph-capture-host-sync-or-rng",
    "host sync (.item(), .cpu(), .tolist(), .numpy(), torch.cuda.synchronize) or RNG-state call "
    "(get_rng_state, set_rng_state, manual_seed) inside a CUDA-graph capture without a ROCm gate: "
    "HIP may record no error and the graph replays wrong results",
    triggers=("graph", "capture_begin", "make_graphed_callables"),
    # (not every `graph(`: torch.fx and Inductor say it everywhere; a capture names CUDA graphs)
    precheck=r"cuda\.graph\s*\(|cuda\.graphs\b|CUDAGraph|capture_begin|make_graphed_callables"
    r"|from\s+torch\.cuda\s+import\b[^\n]*\bgraph\b",
    facts=(CAPTURE_FACTS,),
    messages={
        "sync": "`{op}` inside a CUDA-graph capture ({region}) waits for the GPU on the host: a capture "
        "records GPU work only, so the replayed graph never repeats this step; CUDA stops the "
        "capture with an error, but HIP may not, and the graph then replays stale values on ROCm; "
        "move it before or after the capture (or skip it while "
        "`torch.cuda.is_current_stream_capturing()`)",
        "rng": "`{op}` inside a CUDA-graph capture ({region}) reads or resets the generator state, which "
        "a capture cannot record (a RuntimeError on CUDA, and HIP may not raise: the replayed "
        "graph then reuses one random stream on ROCm); seed and save RNG state outside the capture "
        "(`torch.cuda.graph` registers the generator for replay)",
        "helper": "`{name}()` is called inside a CUDA-graph capture ({region}) and runs `{op}` (line {line}), "
        "{what} that a capture cannot record: CUDA stops with an error, HIP may not (wrong results "
        "on replay on ROCm); keep it out of the captured region",
    },
)

_RNG = {
    "torch.cuda.get_rng_state",
    "torch.cuda.set_rng_state",
    "torch.cuda.get_rng_state_all",
    "torch.cuda.set_rng_state_all",
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.cuda.seed",
    "torch.cuda.seed_all",
    "torch.cuda.random.get_rng_state",
    "torch.cuda.random.set_rng_state",
    "torch.cuda.random.manual_seed",
    "torch.cuda.random.manual_seed_all",
    "torch.manual_seed",
    "torch.seed",
    "torch.get_rng_state",
    "torch.set_rng_state",
    "torch.random.manual_seed",
    "torch.random.seed",
    "torch.random.get_rng_state",
    "torch.random.set_rng_state",
}
_SYNC_CALLS = {"torch.cuda.synchronize"}
_SYNC_METHODS = {"item", "cpu", "tolist", "numpy"}
_STREAM_GETTERS = {"torch.cuda.current_stream", "torch.cuda.default_stream"}
_GRAPH_CONTEXTS = {"torch.cuda.graph", "torch.cuda.graphs.graph"}
_GRAPHED_CALLABLES = {"torch.cuda.make_graphed_callables", "torch.cuda.graphs.make_graphed_callables"}
_CAPTURING_CHECK = "is_current_stream_capturing"


def hazard_of(node: ast.Call, ctx: ModuleContext) -> Optional[Tuple[str, str]]:
    """(kind, text) when the call is a host sync or an RNG-state call."""
    qual = ctx.qualname(node.func)
    if qual in _RNG:
        return "rng", qual + "()"
    if qual in _SYNC_CALLS:
        return "sync", qual + "()"
    func = node.func
    if isinstance(func, ast.Attribute) and not node.args and not node.keywords:
        if func.attr in _SYNC_METHODS:
            inner = func.value
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr in _SYNC_METHODS
            ):
                return None  # `x.cpu().numpy()`: one host sync, reported on `.cpu()`
            return "sync", f".{func.attr}()"
        if (
            func.attr == "synchronize"
            and isinstance(func.value, ast.Call)
            and ctx.qualname(func.value.func) in _STREAM_GETTERS
        ):
            return "sync", f"{ctx.qualname(func.value.func)}().synchronize()"
    return None


def _mentions_capturing(test: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Attribute)
        and n.attr == _CAPTURING_CHECK
        or isinstance(n, ast.Name)
        and n.id == _CAPTURING_CHECK
        for n in ast.walk(test)
    )


@dataclass
class _Hazard:
    node: ast.Call
    kind: str
    text: str
    function: Optional[ast.AST]  # the innermost enclosing def (None: module level)
    capture_checked: bool  # under an `if` that asks whether the stream is capturing


@dataclass
class CaptureFacts:
    hazards: List[_Hazard] = field(default_factory=list)
    # calls of the module's own top-level functions, ungated: (call, name, enclosing def)
    calls: List[Tuple[ast.Call, str, Optional[ast.AST]]] = field(default_factory=list)
    functions: Dict[str, ast.AST] = field(default_factory=dict)  # top-level defs
    classes: Dict[str, ast.ClassDef] = field(default_factory=dict)


def _learn(ctx: ModuleContext) -> CaptureFacts:
    facts = CaptureFacts()
    for stmt in ctx.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            facts.classes[stmt.name] = stmt

    def see(node: ast.AST, state: State) -> None:
        if not isinstance(node, ast.Call) or state.nvidia_only or state.rocm_only:
            return
        found = hazard_of(node, ctx)
        if found is not None:
            checked = any(
                isinstance(p, (ast.If, ast.While)) and f in ("body", "orelse") and _mentions_capturing(p.test)
                for p, f in ctx.enclosing_statements(ctx.statement)
            )
            facts.hazards.append(_Hazard(node, found[0], found[1], ctx.function, checked))
        elif isinstance(node.func, ast.Name) and node.func.id in facts.functions:
            facts.calls.append((node, node.func.id, ctx.function))

    walk_gated(ctx, see)
    return facts


def _span(stmts: List[ast.stmt]) -> Tuple[int, int]:
    return stmts[0].lineno, max(getattr(s, "end_lineno", None) or s.lineno for s in stmts)


def _inside(node: ast.AST, span: Tuple[int, int]) -> bool:
    return span[0] <= node.lineno <= span[1]


def _report(
    ctx: ModuleContext, spans: List[Tuple[int, int]], function: Optional[ast.AST], region: str
) -> Iterator[PyHit]:
    """The hazards of ``spans`` (lines of statements that run in ``function``), and the calls
    there of module functions whose bodies hold one."""
    facts = ctx.facts(CAPTURE_FACTS)
    for h in facts.hazards:
        if h.function is function and not h.capture_checked and any(_inside(h.node, s) for s in spans):
            yield PyHit(h.node, ROC206.message(h.kind, op=h.text, region=region))
    for call, name, fn in facts.calls:
        if fn is not function or not any(_inside(call, s) for s in spans):
            continue
        helper = facts.functions[name]
        if helper is function or _mentions_capturing(helper):
            continue
        inner = next((h for h in facts.hazards if h.function is helper and not h.capture_checked), None)
        if inner is not None:
            what = "a host sync" if inner.kind == "sync" else "an RNG-state call"
            yield PyHit(
                call,
                ROC206.message(
                    "helper", name=name, op=inner.text, line=inner.node.lineno, region=region, what=what
                ),
            )


@ROC206.checker(ast.With, ast.AsyncWith)
def capture_context(node: ast.With, ctx: ModuleContext) -> Iterator[PyHit]:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and ctx.qualname(call.func) in _GRAPH_CONTEXTS and node.body:
            yield from _report(
                ctx, [_span(node.body)], ctx.function, f"`with torch.cuda.graph(...)` at line {node.lineno}"
            )
            return


def _capture_call(stmt: ast.stmt, method: str) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == method
    )


@ROC206.checker(ast.Expr)
def capture_begin(node: ast.Expr, ctx: ModuleContext) -> Iterator[PyHit]:
    if not _capture_call(node, "capture_begin"):
        return
    for parent, fld in ctx.enclosing_statements(node):
        stmts = getattr(parent, fld)
        break
    else:
        stmts = ctx.tree.body if ctx.function is None else getattr(ctx.function, "body", [])
    if node not in stmts:
        return
    i = stmts.index(node)
    end = next((j for j in range(i + 1, len(stmts)) if _capture_call(stmts[j], "capture_end")), len(stmts))
    if end > i + 1:
        yield from _report(
            ctx, [_span(stmts[i + 1 : end])], ctx.function, f"`capture_begin()` at line {node.lineno}"
        )


def _graphed_functions(node: ast.Call, ctx: ModuleContext) -> List[ast.AST]:
    """The module's own functions (or `forward` methods of its classes) that
    ``make_graphed_callables`` captures."""
    facts = ctx.facts(CAPTURE_FACTS)
    if not node.args:
        return []
    first = node.args[0]
    items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
    out: List[ast.AST] = []
    seen: Set[int] = set()
    for item in items:
        target: Optional[ast.AST] = None
        if isinstance(item, ast.Name) and item.id in facts.functions:
            target = facts.functions[item.id]
        else:
            value = ctx.resolve(item)
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in facts.classes
            ):
                cls = facts.classes[value.func.id]
                target = next(
                    (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None
                )
        if target is not None and id(target) not in seen:
            seen.add(id(target))
            out.append(target)
    return out


@ROC206.checker(ast.Call)
def graphed_callables(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    if ctx.qualname(node.func) not in _GRAPHED_CALLABLES:
        return
    for fn in _graphed_functions(node, ctx):
        body = getattr(fn, "body", [])
        if body and not _mentions_capturing(fn):
            yield from _report(
                ctx,
                [_span(body)],
                fn,
                f"`make_graphed_callables` at line {node.lineno} captures `{getattr(fn, 'name', '?')}`",
            )
