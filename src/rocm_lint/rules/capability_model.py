"""What a capability expression holds, for ROC106 (``rocm_lint.rules.capability``): the tuple, the
major or minor number, ``major * 10 + minor``, ``major + minor / 10``, the device properties
(:func:`capability_kind`), followed through names bound during the walk
(:func:`record_capability_bindings`, ROC106's observer) and through other modules' exports
(``CAPABILITY_EXPORTS``: wrappers such as ``get_cc()``)."""

from __future__ import annotations

import ast
import bisect
import re
from typing import Dict, Hashable, Iterator, List, Optional, Set, Tuple

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.python.context import ModuleContext
from rocm_lint.python.project import ExportedFacts


BindingKey = Tuple[Hashable, str]

_CAPABILITY_CALLS = {"torch.cuda.get_device_capability", "paddle.device.cuda.get_device_capability"}
_PROPERTIES_CALLS = {"torch.cuda.get_device_properties"}

# Phase 0: capability wrappers and values other modules import (``from .env import get_cc``).
CAPABILITY_EXPORTS = ExportedFacts(
    "ROC106.capability",
    ("get_device_capability", "get_device_properties"),
    lambda ctx: _exported_capabilities(ctx),
    triggers=True,
)


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
                    body = "".join(lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno])
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


def _returns(
    body: List[ast.stmt],
    ctx: ModuleContext,
    bindings: Dict[BindingKey, str],
    kinds: Set[Optional[str]],
    nvidia_only: bool,
) -> bool:
    """Collect the kinds a function body returns where ROCm may run; True when the rest of
    the enclosing block is NVIDIA-only (a ROCm branch returned)."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            if not nvidia_only:
                value = stmt.value
                if value is None or isinstance(value, ast.Constant) and value.value is None:
                    kinds.add("none")
                else:
                    kinds.add(capability_kind(value, ctx))
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
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    ):
        return ("self", node.attr)
    return None


def capability_kind(node: Optional[ast.AST], ctx: ModuleContext, depth: int = 0) -> Optional[str]:
    """What a capability expression holds: "tuple" (major, minor), "major", "minor",
    "cc" (major * 10 + minor), "float" (major + minor / 10), "props"; None otherwise.
    ("cc10", major * 10, and "tenth", minor / 10, are the halves of "cc" and "float".)"""
    if depth > 6 or node is None:
        return None
    if isinstance(node, ast.IfExp):
        resolved = ctx.resolve(node)
        if resolved is not node:
            return capability_kind(resolved, ctx, depth + 1)
        return capability_kind(node.body, ctx, depth + 1) or capability_kind(node.orelse, ctx, depth + 1)
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
            return "tuple" if capability_kind(node.args[0], ctx, depth + 1) == "tuple" else None
        if qual in ("int", "float") and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr):
                parts = [
                    capability_kind(v.value, ctx, depth + 1)
                    for v in arg.values
                    if isinstance(v, ast.FormattedValue)
                ]
                text = "".join(v.value for v in arg.values if isinstance(v, ast.Constant))
                if parts == ["major", "minor"]:
                    return "float" if text == "." else "cc" if text == "" else None
            joined = _joined_digits(arg)
            if joined is not None and qual == "int":
                # ``int("".join(str(i) for i in get_device_capability()))``: 9.0 -> 90
                return "cc" if capability_kind(joined, ctx, depth + 1) == "tuple" else None
            inner = capability_kind(arg, ctx, depth + 1)
            return inner if inner in ("major", "minor", "cc", "float") else None
        return None
    if isinstance(node, ast.Tuple):  # (major, minor)
        kinds = [capability_kind(e, ctx, depth + 1) for e in node.elts]
        return "tuple" if kinds == ["major", "minor"] else None
    if isinstance(node, ast.Subscript):
        if capability_kind(node.value, ctx, depth + 1) != "tuple":
            return None
        index = node.slice
        if isinstance(index, ast.Constant) and index.value in (0, 1, -1, -2):
            return "major" if index.value in (0, -2) else "minor"
        return None
    if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
        if capability_kind(node.value, ctx, depth + 1) == "props":
            return node.attr
    if isinstance(node, ast.BinOp):
        left = capability_kind(node.left, ctx, depth + 1)
        right = capability_kind(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mult):
            if left == "major" and _is_int(node.right, 10) or right == "major" and _is_int(node.left, 10):
                return "cc10"
        if isinstance(node.op, ast.Add):
            kinds = {left, right}
            if kinds == {"cc10", "minor"}:
                return "cc"
            if kinds == {"major", "tenth"}:
                return "float"
        if (
            isinstance(node.op, (ast.Div, ast.Mult))
            and left == "minor"
            and (_is_int(node.right, 10) if isinstance(node.op, ast.Div) else _is_float(node.right, 0.1))
        ):
            return "tenth"
        return None
    key = _binding_key(node, ctx.function)
    if key is not None:
        bindings = _capability_bindings(ctx)
        found = bindings.get(key)
        # A name neither bound at module level nor imported finds nothing below: its function's
        # locals (an ast.walk of the function) are only asked for the others.
        if (
            found is None
            and isinstance(node, ast.Name)
            and ((None, node.id) in bindings or node.id in ctx.imports.names)
            and node.id not in _local_names(ctx.function, ctx)
        ):
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
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and node.func.value.value == ""
        and len(node.args) == 1
    ):
        return None
    arg = node.args[0]
    if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) and len(arg.generators) == 1:
        element = arg.elt
        if isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id == "str":
            return arg.generators[0].iter
    if (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Name)
        and arg.func.id == "map"
        and len(arg.args) == 2
        and isinstance(arg.args[0], ast.Name)
        and arg.args[0].id == "str"
    ):
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
        names = {
            a.arg
            for a in [
                *getattr(args, "posonlyargs", []),
                *args.args,
                *args.kwonlyargs,
                *filter(None, [args.vararg, args.kwarg]),
            ]
        }
        names |= {
            n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        cache[id(function)] = names
    return names


def _is_int(node: ast.AST, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _is_float(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value - value) < 1e-9


def record_capability_bindings(node: ast.Assign, ctx: ModuleContext) -> None:
    """Remember names that hold a capability (and forget names rebound to something else):
    ROC106's observer (registered in ``rocm_lint.rules.capability``)."""
    _record(node, ctx, _capability_bindings(ctx))


def _record(node: ast.AST, ctx: ModuleContext, bindings: Dict[BindingKey, str]) -> None:
    if node.value is None:
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            value = ctx.resolve(node.value)
            if len(target.elts) == 2 and capability_kind(value, ctx) == "tuple":
                for element, kind in zip(target.elts, ("major", "minor")):
                    key = _binding_key(element, ctx.function)
                    if key is not None:
                        bindings[key] = kind
            continue
        key = _binding_key(target, ctx.function)
        if key is None:
            continue
        kind = capability_kind(node.value, ctx)
        if kind is not None and kind not in ("cc10", "tenth"):
            bindings[key] = kind
        elif key in bindings and id(node) in _except_fallbacks(ctx):
            pass  # ``except: cuda_arch = 0``: the no-GPU fallback; on a GPU the capability stays
        else:
            bindings.pop(key, None)  # rebound to something else


def _compound_statements(body: List[ast.stmt], lines: Optional[List[int]] = None) -> Iterator[ast.AST]:
    """Every statement, nested ones included, and every ``except``/``case`` clause; no expressions.
    ``lines`` (sorted): only the statements and clauses that hold one of them, and what they nest."""
    stack: List[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if lines is not None and getattr(node, "lineno", None) is not None:
            i = bisect.bisect_left(lines, node.lineno)
            if i == len(lines) or lines[i] > (getattr(node, "end_lineno", None) or node.lineno):
                continue
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, name, None) or ())


def _try_lines(text: str) -> List[int]:
    """Lines that may start a ``try`` statement: they hold ``try``, or a non-ASCII character
    (the keyword is ASCII; the line count is the parser's, ``\r`` and ``\r\n`` included)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    offsets = [m.start() for m in re.finditer(r"[^\x00-\x7f]", text)] if not text.isascii() else []
    pos = text.find("try")
    while pos != -1:
        offsets.append(pos)
        pos = text.find("try", pos + 3)
    offsets.sort()
    lines: List[int] = []
    line, last = 1, 0
    for pos in offsets:
        line += text.count("\n", last, pos)
        last = pos
        lines.append(line)
    return lines


def _except_fallbacks(ctx: ModuleContext) -> Set[int]:
    """Assignments of a constant in an ``except`` handler (``try: cc = ... except: cc = 0``)."""

    def find() -> Set[int]:
        out: Set[int] = set()
        if "try" not in ctx.text:
            return out
        # A ``try`` is a statement (expressions hold none) whose first line says ``try``: only the
        # statements that hold such a line are entered (a statement's lines hold what it nests).
        lines = _try_lines(ctx.text) if ctx.tree.body and ctx.text else None
        for node in _compound_statements(ctx.tree.body, lines):
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    out.update(
                        id(stmt)
                        for stmt in handler.body
                        if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                        and isinstance(stmt.value, ast.Constant)
                    )
        return out

    return ctx.memo("ROC106.except-fallbacks", find)
