"""ROC1, ROC106: the CUDA compute capability compared with NVIDIA SM numbers.

``torch.cuda.get_device_capability()`` on ROCm returns the gfx version (gfx942 -> 9.4), so a
test written for Hopper (``>= (9, 0)``) or Blackwell sends AMD GPUs down NVIDIA paths.  This
module models what a capability expression holds (:func:`_capability_kind`: the tuple, the
major or minor number, ``major * 10 + minor``, ``major + minor / 10``, the device properties),
follows it through names bound during the walk (:func:`record_capability_bindings`, an
observer) and reports the comparisons with SM numbers that AMD GPUs also satisfy.
"""

from __future__ import annotations

import ast
from typing import Dict, Hashable, Iterator, List, Optional, Set, Tuple

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.finding import Applicability, WrapExpression, span_of
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.project import ExportedFacts
from rocm_lint.rule import FixAvailability, PyHit, Rule

# Phase 0: capability wrappers and values other modules import (``from .env import get_cc``).
CAPABILITY_EXPORTS = ExportedFacts(
    "ROC106.capability", ("get_device_capability", "get_device_properties"),
    lambda ctx: _exported_capabilities(ctx), triggers=True)

ROC106 = Rule(
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
    fix_availability=FixAvailability.ALWAYS,
    exports=(CAPABILITY_EXPORTS,),
    messages={"default": "`{snippet}` reads an NVIDIA SM number, but ROCm reports the gfx version as the "
                         "capability ({gpus}), so AMD GPUs take this NVIDIA-architecture path: "
                         "test `torch.version.cuda is not None and ...` first"},
)
# The fix: test the platform before the capability.
_CUDA_FIRST = "{torch}.version.cuda is not None and ({expr})"
_CUDA_FIRST_MESSAGE = "Test `torch.version.cuda is not None` first (AMD GPUs then skip the NVIDIA path)"

# PaddlePaddle's twin (its ROCm/DCU builds report the gfx version the same way).
_CAPABILITY_CALLS = {"torch.cuda.get_device_capability", "paddle.device.cuda.get_device_capability"}
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

BindingKey = Tuple[Hashable, str]


# -- what a capability expression holds -----------------------------------------------------------
def _capability_bindings(ctx: ModuleContext) -> Dict[BindingKey, str]:
    """Names bound to a capability in code that may run on ROCm, by (function id, name).

    Filled during the walk by :func:`record_capability_bindings`: the walker never runs
    observers in NVIDIA-only code, so a capability read under `if torch.version.cuda:` is
    not recorded and comparisons of it elsewhere stay silent.  While a module's exports are
    computed (:func:`_exported_capabilities`) the bindings of that computation are used.
    """
    exporting = _exporting(ctx)
    return exporting[-1][0] if exporting else ctx.memo("ROC106.bindings", dict)


def _exporting(ctx: ModuleContext) -> List[Tuple[Dict[BindingKey, str], Dict[str, str]]]:
    """(bindings, wrappers found so far) of the export computations of ``ctx``'s module in
    progress, innermost last (another module's are on its own context)."""
    return ctx.memo("ROC106.exporting", list)


def _exported_capabilities(ctx: ModuleContext) -> Dict[str, str]:
    """What the module exports that holds a capability: module-level names bound to one
    (``CAP = torch.cuda.get_device_capability()``: "tuple") and functions that return one on
    ROCm (``def get_cc(): props = ...get_device_properties(0); return (props.major,
    props.minor)``: "call:tuple").  A function whose ROCm path returns something else
    (``if torch.version.hip: return (0, 0)``) exports nothing."""
    bindings: Dict[BindingKey, str] = {}
    found: Dict[str, str] = {}
    _exporting(ctx).append((bindings, found))
    saved = ctx.function
    try:
        words = list(CAPABILITY_EXPORTS.words)
        lines = ctx.source_lines()
        for _ in range(3):  # a wrapper of a wrapper (get_cc() -> _get_cc(device)) in a few rounds
            before = len(found)
            for stmt in ctx.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in found:
                    body = "".join(lines[stmt.lineno - 1:stmt.end_lineno or stmt.lineno])
                    if not any(w in body for w in words):
                        continue  # reads no capability: wraps none
                    ctx.function = stmt
                    kinds: Set[Optional[str]] = set()
                    _returns(stmt.body, ctx, bindings, kinds, nvidia_only=False)
                    ctx.function = saved
                    kinds.discard("none")
                    if len(kinds) == 1:
                        (kind,) = kinds
                        if kind in ("tuple", "major", "minor", "cc", "float", "props"):
                            found[stmt.name] = "call:" + kind
                            words.append(stmt.name)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    ctx.function = None
                    _bind(stmt, ctx, bindings)
            if len(found) == before:
                break
        for (owner, name), kind in bindings.items():
            if owner is None and kind not in ("cc10", "tenth"):
                found.setdefault(name, kind)
        return found
    finally:
        ctx.function = saved
        _exporting(ctx).pop()


def _returns(body: List[ast.stmt], ctx: ModuleContext, bindings: Dict[BindingKey, str],
             kinds: Set[Optional[str]], nvidia_only: bool) -> bool:
    """Collect the kinds a function body returns where ROCm may run; True when the rest of
    the enclosing block is NVIDIA-only (a ROCm branch returned)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            if not nvidia_only:
                value = stmt.value
                if value is None or isinstance(value, ast.Constant) and value.value is None:
                    kinds.add("none")
                else:
                    kinds.add(_capability_kind(value, ctx))
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not nvidia_only:
            _bind(stmt, ctx, bindings)
        elif isinstance(stmt, ast.If):
            t, f = ctx.gates.facts(stmt.test)
            _returns(stmt.body, ctx, bindings, kinds, nvidia_only or t == NVIDIA or f == ROCM)
            _returns(stmt.orelse, ctx, bindings, kinds, nvidia_only or f == NVIDIA or t == ROCM)
            if (t == ROCM or f == NVIDIA) and ctx.gates.terminates(stmt.body):
                nvidia_only = True  # ROCm left through the body: the rest runs on NVIDIA only
            elif (f == ROCM or t == NVIDIA) and ctx.gates.terminates(stmt.orelse):
                nvidia_only = True
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.While)):
            _returns(stmt.body, ctx, bindings, kinds, nvidia_only)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                _returns(block, ctx, bindings, kinds, nvidia_only)
    return nvidia_only


def _bind(stmt: ast.stmt, ctx: ModuleContext, bindings: Dict[BindingKey, str]) -> None:
    """:func:`record_capability_bindings` for an export computation."""
    _record(stmt, ctx, bindings)




def _binding_key(node: ast.AST, function: Optional[ast.AST]) -> Optional[BindingKey]:
    if isinstance(node, ast.Name):
        return (id(function) if function is not None else None, node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        return ("self", node.attr)
    return None


def _capability_kind(node: Optional[ast.AST], ctx: ModuleContext, depth: int = 0) -> Optional[str]:
    """What a capability expression holds: "tuple" (major, minor), "major", "minor",
    "cc" (major * 10 + minor), "float" (major + minor / 10), "props"; None otherwise.
    ("cc10", major * 10, and "tenth", minor / 10, are the halves of "cc" and "float".)"""
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
        exported = None
        if isinstance(node.func, ast.Name):  # a wrapper of the module whose exports are being computed
            exporting = _exporting(ctx)
            if exporting:
                exported = exporting[-1][1].get(node.func.id)
        exported = exported or ctx.exported(CAPABILITY_EXPORTS, node.func)  # a project wrapper: get_cc()
        if exported is not None and exported.startswith("call:"):
            return exported[5:]
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
            joined = _joined_digits(arg)
            if joined is not None and qual == "int":
                # ``int("".join(str(i) for i in get_device_capability()))``: 9.0 -> 90
                return "cc" if _capability_kind(joined, ctx, depth + 1) == "tuple" else None
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
    key = _binding_key(node, ctx.function)
    if key is not None:
        bindings = _capability_bindings(ctx)
        found = bindings.get(key)
        if found is None and isinstance(node, ast.Name) and node.id not in _local_names(ctx.function, ctx):
            found = bindings.get((None, node.id))  # a module-level binding
            if found is None and node.id in ctx.imports.names:  # from .env import CAPABILITY
                exported = ctx.exported(CAPABILITY_EXPORTS, node)
                found = exported if exported is not None and not exported.startswith("call:") else None
        return found
    if isinstance(node, ast.Attribute):  # env.CAPABILITY, a module's exported value
        exported = ctx.exported(CAPABILITY_EXPORTS, node)
        if exported is not None and not exported.startswith("call:"):
            return exported
    return None


def _joined_digits(node: ast.AST) -> Optional[ast.AST]:
    """``X`` of ``"".join(str(i) for i in X)``, ``"".join([str(i) for i in X])`` or
    ``"".join(map(str, X))``; None for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant) and node.func.value.value == "" and len(node.args) == 1):
        return None
    arg = node.args[0]
    if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) and len(arg.generators) == 1:
        element = arg.elt
        if isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id == "str":
            return arg.generators[0].iter
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "map" and len(arg.args) == 2 \
            and isinstance(arg.args[0], ast.Name) and arg.args[0].id == "str":
        return arg.args[1]
    return None


def _local_names(function: Optional[ast.AST], ctx: ModuleContext) -> Set[str]:
    """Parameters and assigned names of a function (they shadow module-level bindings)."""
    if function is None:
        return set()
    cache: Dict[int, Set[str]] = ctx.memo("ROC106.locals", dict)
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


@ROC106.observer(ast.Assign, ast.AnnAssign)
def record_capability_bindings(node: ast.Assign, ctx: ModuleContext) -> None:
    """Remember names that hold a capability (and forget names rebound to something else)."""
    _record(node, ctx, _capability_bindings(ctx))


def _record(node: ast.AST, ctx: ModuleContext, bindings: Dict[BindingKey, str]) -> None:
    if node.value is None:
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            value = ctx.resolve(node.value)
            if len(target.elts) == 2 and _capability_kind(value, ctx) == "tuple":
                for element, kind in zip(target.elts, ("major", "minor")):
                    key = _binding_key(element, ctx.function)
                    if key is not None:
                        bindings[key] = kind
            continue
        key = _binding_key(target, ctx.function)
        if key is None:
            continue
        kind = _capability_kind(node.value, ctx)
        if kind is not None and kind not in ("cc10", "tenth"):
            bindings[key] = kind
        elif key in bindings and id(node) in _except_fallbacks(ctx):
            pass  # ``except: cuda_arch = 0``: the no-GPU fallback; on a GPU the capability stays
        else:
            bindings.pop(key, None)  # rebound to something else


def _except_fallbacks(ctx: ModuleContext) -> Set[int]:
    """Assignments of a constant in an ``except`` handler (``try: cc = ... except: cc = 0``)."""
    def find() -> Set[int]:
        out: Set[int] = set()
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    out.update(id(stmt) for stmt in handler.body
                               if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Constant))
        return out
    return ctx.memo("ROC106.except-fallbacks", find)


# -- the comparison -------------------------------------------------------------------------------
def _amd_value(kind: str, cap: Tuple[int, int]) -> object:
    major, minor = cap
    return {"tuple": cap, "major": major, "cc": major * 10 + minor, "float": major + minor / 10}.get(kind)


def _sm_constants(node: ast.AST, kind: str, ctx: ModuleContext, many: bool) -> Optional[list]:
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


def _affected_gpus(kind: str, op: ast.cmpop, constants: list) -> List[str]:
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


def _picks_an_error(node: ast.AST, ctx: ModuleContext) -> bool:
    """``if major < 9: raise ValueError(...) else: raise ImportError(...)``: the test only
    chooses which error to raise."""
    parent = ctx.parent_of(node)
    return isinstance(parent, ast.If) and parent.test is node and bool(parent.orelse) \
        and isinstance(parent.body[-1], ast.Raise) and isinstance(parent.orelse[-1], ast.Raise)


def _only_logged(node: ast.AST, ctx: ModuleContext) -> bool:
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
        message = ROC106.message(snippet=ctx.snippet(node), gpus=", ".join(gpus))
        yield PyHit(node, message, WrapExpression(span_of(node), _CUDA_FIRST, _CUDA_FIRST_MESSAGE))
        return  # one finding per comparison
