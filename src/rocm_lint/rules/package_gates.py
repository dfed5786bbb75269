"""Where a statement of a package import or a tool call sits (ROC402-ROC404): in a branch of an
`if` that names the package (an availability or opt-in check), under an environment switch that
is off unless set, or in a file whose path names the backend."""

from __future__ import annotations

import ast
import os
import re
from typing import Optional, Set, Tuple

from rocm_lint.python.context import ModuleContext


def test_words(node: ast.AST) -> Set[str]:
    """Lower-cased names, attributes and strings in an expression (an `if` test)."""
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id.lower())
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr.lower())
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.add(sub.value.lower())
    return out


def under_if_naming(
    ctx: ModuleContext, stmt: Optional[ast.AST], keys: Tuple[str, ...], env_opt_in: bool = True
) -> bool:
    """Is the statement in either branch of an `if` whose test names one of ``keys``
    (an availability or opt-in check: `if is_flash_attn_available():`, `if NVTX_PROFILE:`,
    `if importlib.util.find_spec("flash_attn")`), or under `if TYPE_CHECKING:`?  With
    ``env_opt_in``, also in the body of a switch read from the environment that is off unless
    set (:func:`env_opt_in_switch`)."""
    if stmt is None:
        return False
    for parent, field in ctx.enclosing_statements(stmt):
        if isinstance(parent, ast.If) and field in ("body", "orelse"):
            words = test_words(parent.test)
            if "type_checking" in words or any(k in w for w in words for k in keys):
                return True
            test = parent.test
            if not env_opt_in:
                continue
            if field == "orelse":  # if not PROFILE: ... else: import nvtx
                if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                    continue
                test = test.operand
            elif isinstance(test, ast.UnaryOp):
                continue
            if env_opt_in_switch(ctx, test):
                return True
    return False


_OFF = ("", "0", "false", "no", "off", "none")
_ON = ("1", "true", "yes", "on", "y", "t")


def env_opt_in_switch(ctx: ModuleContext, test: ast.AST, depth: int = 0) -> bool:
    """Is ``test`` an opt-in switch read from the environment and off unless set, written in the
    module or bound to a module name (``_PROFILE = bool(int(os.environ.get("X_PROFILE", "0")))``
    then ``if _PROFILE:``; ``os.getenv("X") == "1"``; a helper named for the environment,
    ``get_bool_env_var("X")``)?  An import in its body runs only for who turned it on."""
    if depth > 4:
        return False
    test = ctx.resolve(test)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        right = test.comparators[0]
        on = (
            isinstance(right, ast.Constant)
            and str(right.value).lower() in _ON
            or isinstance(right, (ast.Tuple, ast.List, ast.Set))
            and right.elts
            and all(isinstance(e, ast.Constant) and str(e.value).lower() in _ON for e in right.elts)
        )
        return (
            isinstance(test.ops[0], (ast.Eq, ast.In)) and on and env_opt_in_switch(ctx, test.left, depth + 1)
        )
    if not isinstance(test, ast.Call):
        return False
    qual = ctx.qualname(test.func) or ""
    if qual in ("os.environ.get", "os.getenv"):
        if len(test.args) == 1 and not test.keywords:
            return True
        default = test.args[1] if len(test.args) == 2 else None
        return isinstance(default, ast.Constant) and str(default.value).lower() in _OFF
    if qual in ("bool", "int", "str") and len(test.args) == 1:
        return env_opt_in_switch(ctx, test.args[0], depth + 1)
    if isinstance(test.func, ast.Attribute) and test.func.attr in ("lower", "strip") and not test.args:
        return env_opt_in_switch(ctx, test.func.value, depth + 1)
    # the project's own reader: get_bool_env_var("X"), parse_flag_from_env("X", False)
    name = (qual or "").rsplit(".", 1)[-1].lower()
    if (
        "env" in name.split("_")
        and test.args
        and isinstance(test.args[0], ast.Constant)
        and isinstance(test.args[0].value, str)
    ):
        rest = [*test.args[1:], *(k.value for k in test.keywords)]
        return all(isinstance(v, ast.Constant) and str(v.value).lower() in _OFF for v in rest)
    return False


def path_tokens(ctx: ModuleContext) -> Set[str]:
    parts = re.split(r"[^a-z0-9]+", os.path.splitext(ctx.path.replace("\\", "/"))[0].lower())
    return {p for p in parts if p}
