"""Shapes that several rule families look for: settings written to the process
environment, and Inductor config keys set through any of their spellings."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional, Tuple

INDUCTOR_CONFIG = "torch._inductor.config"
_ENV_SETTERS = {"setdefault", "putenv", "setenv"}  # os.environ.setdefault, os.putenv, monkeypatch.setenv


def _key(node: Optional[ast.AST], ctx) -> Optional[str]:
    if node is None:
        return None
    value = ctx.constant(node)
    return value if isinstance(value, str) else None


def env_settings(node: ast.AST, ctx) -> Iterator[Tuple[ast.AST, str, ast.AST]]:
    """(where, NAME, value) for each environment variable this node sets.

    Matches ``os.environ[NAME] = v`` (and any ``env[NAME] = v``), ``os.environ.setdefault``,
    ``os.putenv``, ``monkeypatch.setenv``, ``os.environ.update(NAME=v)``, ``dict(NAME=v)`` and
    ``{NAME: v}`` literals (subprocess ``env=`` mappings).  Reads are never matched.
    """
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                name = _key(target.slice, ctx)
                if name is not None and node.value is not None:
                    yield target, name, node.value
    elif isinstance(node, ast.Call):
        func = node.func
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if attr in _ENV_SETTERS and len(node.args) >= 2:
            name = _key(node.args[0], ctx)
            if name is not None:
                yield node, name, node.args[1]
        elif attr == "update" or ctx.qualname(func) == "dict":
            for kw in node.keywords:
                if kw.arg is not None:
                    yield kw.value, kw.arg, kw.value
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            name = _key(k, ctx)
            if name is not None:
                yield k, name, v


def inductor_settings(node: ast.AST, ctx) -> Iterator[Tuple[ast.AST, str, ast.AST]]:
    """(where, key, value) for each Inductor config key this node sets.

    Keys are dotted as Inductor spells them (``triton.cudagraphs``, ``max_autotune``):
    ``torch._inductor.config.triton.cudagraphs = True`` (through any import alias),
    ``config.patch({"k": v})``, ``config.patch("k", v)``, ``config.patch(k=v)``,
    and ``torch.compile(..., options={"k": v})``.
    """
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            qual = ctx.qualname(target) if isinstance(target, ast.Attribute) else None
            if qual and qual.startswith(INDUCTOR_CONFIG + ".") and node.value is not None:
                yield target, qual[len(INDUCTOR_CONFIG) + 1 :], node.value
        return
    if not isinstance(node, ast.Call):
        return
    qual = ctx.qualname(node.func)
    if qual == INDUCTOR_CONFIG + ".patch":
        if len(node.args) >= 2:
            key = _key(node.args[0], ctx)
            if key is not None:
                yield node.args[0], key, node.args[1]
        elif len(node.args) == 1:
            yield from _dict_items(node.args[0], ctx)
        for kw in node.keywords:
            if kw.arg is None:
                yield from _dict_items(kw.value, ctx)
            else:
                yield kw, kw.arg, kw.value
    elif qual == "torch.compile":
        for kw in node.keywords:
            if kw.arg == "options":
                yield from _dict_items(kw.value, ctx)


def _nvidia_only_values(ctx) -> "set":
    """Ids of the dict values the module builds only where ROCm is not in use (computed once,
    on first use, with the analyser's gated walk)."""

    def compute() -> set:
        from rocm_lint.python.analyzer import walk_gated

        found: set = set()

        def visit(node: ast.AST, state) -> None:
            if state.nvidia_only and isinstance(node, ast.Dict):
                found.add(id(node))

        walk_gated(ctx, visit)
        return found

    return ctx.memo("patterns:nvidia-only-dicts", compute)


def _dict_items(node: ast.AST, ctx) -> Iterator[Tuple[ast.AST, str, ast.AST]]:
    node = ctx.resolve(node)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    ):
        # ``self.compile_opts = {...}`` in __init__, passed later as ``options=self.compile_opts``
        values = ctx.bound_values(node)
        if len(values) == 1 and id(values[0]) not in _nvidia_only_values(ctx):
            node = ctx.resolve(values[0])
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            key = _key(k, ctx)
            if key is not None:
                yield k, key, v
    elif isinstance(node, ast.Call) and ctx.qualname(node.func) == "dict":
        for kw in node.keywords:
            if kw.arg is not None:
                yield kw, kw.arg, kw.value


def is_truthy_constant(node: ast.AST, ctx) -> bool:
    """True for ``True``, ``1``, ``"1"``, ``"true"`` (also through a name bound once)."""
    value = ctx.constant(node)
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    if value is ...:
        return False
    return bool(value) and value is not None


# Modules built on NVIDIA-only interconnect features (NVLink SHARP multicast, NVSHMEM): their PTX
# and warp counts run only where `is_device_nvls_capable()`-style checks pass (ROC701, ROC802).
NVIDIA_INTERCONNECT = re.compile(r"(?i)\b(?:nvls|multimem|nvshmem)")


def uses_nvidia_interconnect(ctx) -> bool:
    """Does the module use NVLS/multimem/NVSHMEM (once per module)?"""
    return ctx.memo("patterns:nvidia-interconnect", lambda: bool(NVIDIA_INTERCONNECT.search(ctx.text or "")))
