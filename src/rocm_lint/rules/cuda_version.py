"""ROC1, ROC107: ``torch.version.cuda`` parsed or compared as if it were always a string.

It is None on ROCm (and CPU-only) builds: ``float(torch.version.cuda)``, ``Version(...)``,
``re.match(..., torch.version.cuda)``, ``.split(".")``, ``[0]``, ordering comparisons and ``in``
raise TypeError or AttributeError there, unless a handler around them catches it.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from rocm_lint.python.context import ModuleContext
from rocm_lint.rule import PyHit, Rule

ROC107 = Rule(
    "ROC107",
    "cuda-version-parsed",
    "torch.version.cuda parsed or compared without a None check: it is None on ROCm "
    "(TypeError/AttributeError)",
    triggers=("version.cuda", "torch.version"),
    # literal-led form of `version\.cuda|torch\.version\s*,\s*["']cuda` (tests/test_registry_index.py)
    precheck=r"version(?:\.cuda|(?<=torch\.version)\s*,\s*[\"']cuda)",
    messages={
        "default": "`{what}` raises {error} on ROCm (and CPU-only) builds, where `torch.version.cuda` "
        "is None: test `torch.version.cuda is not None` first, or read `torch.version.hip` "
        "for ROCm"
    },
)

_CUDA_VERSION = "torch.version.cuda"
# Callables that raise on None (float/int/Version/parse: TypeError).
_PARSERS = {"float", "int", "Version", "parse", "parse_version", "version_parse"}
# distutils' classes accept None and fail once compared (``self.version`` was never set).
_LAZY_PARSERS = {"LooseVersion", "StrictVersion"}
_REGEX_CALLS = {"re.match", "re.search", "re.fullmatch", "re.findall", "re.split"}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# The errors None raises here: a ``try:`` whose handler catches one of them absorbs it.
_NONE_ERRORS = {"TypeError", "AttributeError", "Exception", "BaseException"}


def _is_cuda_version(node: ast.AST, ctx: ModuleContext) -> bool:
    """``torch.version.cuda`` itself, or ``getattr(torch.version, "cuda"[, default])``
    (the attribute exists on ROCm and is None, so a default never applies)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return ctx.qualname(node) == _CUDA_VERSION
    if isinstance(node, ast.Call) and ctx.qualname(node.func) == "getattr" and len(node.args) >= 2:
        return ctx.qualname(node.args[0]) == "torch.version" and ctx.constant(node.args[1]) == "cuda"
    return False


def _raises(node: ast.AST, ctx: ModuleContext) -> Optional[Tuple[str, ast.AST]]:
    """The error ``node`` raises when ``torch.version.cuda`` is None, and the expression to
    quote in the message; None if it does not use the version that way."""
    if isinstance(node, ast.Call):
        qual = ctx.qualname(node.func) or ""
        last = qual.rsplit(".", 1)[-1]
        if node.args and last in _PARSERS | _LAZY_PARSERS and _is_cuda_version(node.args[0], ctx):
            return ("AttributeError once compared" if last in _LAZY_PARSERS else "TypeError", node)
        if qual in _REGEX_CALLS and len(node.args) >= 2 and _is_cuda_version(node.args[1], ctx):
            return ("TypeError", node)
    elif isinstance(node, ast.Attribute):
        if _is_cuda_version(node.value, ctx):
            parent = ctx.parent_of(node)
            shown = parent if isinstance(parent, ast.Call) and parent.func is node else node
            return ("AttributeError", shown)
    elif isinstance(node, ast.Subscript):
        if _is_cuda_version(node.value, ctx):
            return ("TypeError", node)
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            if (
                isinstance(op, _ORDERING)
                and (_is_cuda_version(left, ctx) or _is_cuda_version(right, ctx))
                or isinstance(op, (ast.In, ast.NotIn))
                and _is_cuda_version(right, ctx)
            ):
                return ("TypeError", node)
    return None


@ROC107.checker(ast.Call, ast.Attribute, ast.Subscript, ast.Compare)
def cuda_version_parsed(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    hit = _raises(node, ctx)
    if hit is None or ctx.caught(node, _NONE_ERRORS):
        return
    error, shown = hit
    yield PyHit(node, ROC107.message(what=ctx.snippet(shown), error=error))
