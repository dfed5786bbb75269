"""The gate analysis's control flow (``rocm_lint.python.gates.GateAnalysis`` is a
:class:`ControlFlow`): which blocks always leave (early exits: ``return``, ``raise``,
``continue``, ``break``, ``sys.exit()``, ``pytest.skip()`` ...), what a skip decorator says
about the platform a test body runs on, and how a configured name matches a dotted one."""

from __future__ import annotations

import ast
from typing import Any, Iterable, Optional, Tuple

from rocm_lint.domain import NVIDIA
from rocm_lint.python.names import dotted

Facts = Tuple[Optional[str], Optional[str]]  # as rocm_lint.python.gates: (when true, when false)
UNKNOWN: Facts = (None, None)
# Calls that never return: a branch that ends in one is an early exit.
_NORETURN = {
    "sys.exit",
    "exit",
    "quit",
    "os._exit",
    "pytest.skip",
    "pytest.fail",
    "pytest.exit",
    "self.skipTest",
    "unittest.SkipTest",
    "os.abort",
}


def match_entry(tail: str, entries: Iterable[str]) -> bool:
    """A dotted entry must match the end of the dotted name exactly; a plain one matches the
    last name, ignoring case (``is_rocm``, ``IS_ROCM`` and torchao's ``is_ROCM`` alike)."""
    last = tail.rsplit(".", 1)[-1].lower()
    for entry in entries:
        if "." in entry:
            if tail == entry or tail.endswith("." + entry):
                return True
        elif last == entry.lower():
            return True
    return False


class ControlFlow:
    """Mixed into ``GateAnalysis``, which provides ``imports`` (an ``ImportMap``) and
    ``facts(expr)``."""

    imports: Any

    def facts(self, e: ast.AST) -> Facts:  # pragma: no cover - GateAnalysis's
        raise NotImplementedError

    # -- control flow -----------------------------------------------------------------
    def terminates(self, body: list) -> bool:
        """Does this block always leave the enclosing block (return/raise/continue/break)?"""
        if not body:
            return False
        last = body[-1]
        if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            tail = dotted(last.value.func)
            qual = self.imports.qualname(last.value.func)
            return (qual in _NORETURN) or (tail in _NORETURN)
        if isinstance(last, ast.If):
            return self.terminates(last.body) and self.terminates(last.orelse)
        return False

    def decorator_facts(self, decorator: ast.AST, skip_decorators: Iterable[str]) -> Facts:
        """Facts that hold inside a test decorated to skip on some platform.

        Returned as (fact-in-body, None): the body runs only when the skip did not.
        """
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        tail = dotted(target) or ""
        last = tail.rsplit(".", 1)[-1]
        if match_entry(tail, skip_decorators):
            return (NVIDIA, None)
        # @unittest.skip("...") / @pytest.mark.skip(...): the body never runs, on ROCm neither.
        if tail in ("unittest.skip", "skip", "pytest.mark.skip", "mark.skip"):
            return (NVIDIA, None)
        if isinstance(decorator, ast.Call) and decorator.args:
            if last in ("skipIf", "skipif"):
                return (self.facts(decorator.args[0])[1], None)
            if last in ("skipUnless",):
                return (self.facts(decorator.args[0])[0], None)
        return UNKNOWN
