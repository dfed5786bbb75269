"""What a rule may ask the fix engine to do. Recipes are data; the engine applies them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

Span = Tuple[int, int, int, int]  # (line, col, end_line, end_col) as ast reports them


@dataclass(frozen=True)
class GateStatement:
    """Wrap the statement holding the finding in ``if not <is_rocm>:``."""

    message: str = "Run it only when not on ROCm (`if not is_rocm:`)"
    gates_statement = True  # needs the statement alone on its lines (checked when the finding is made)


@dataclass(frozen=True)
class RocmValue:
    """Replace the expression at ``span`` with ``<rocm_source> if <is_rocm> else <original>``."""

    span: Span
    rocm_source: str
    message: str = "Give ROCm its own value"


@dataclass(frozen=True)
class WrapExpression:
    """Replace the expression at ``span`` with ``template`` ({expr}: the original, {torch}: the
    module's torch alias), e.g. ``{torch}.version.cuda is not None and ({expr})``."""

    span: Span
    template: str
    message: str = "Test the platform first"


@dataclass(frozen=True)
class GuardImport:
    """Wrap the import in ``try: ... except ImportError: <names> = None`` (never safe)."""

    message: str = "Guard the import with try/except ImportError"


def span_of(node) -> Span:
    return (node.lineno, node.col_offset, getattr(node, "end_lineno", None) or node.lineno,
            getattr(node, "end_col_offset", None) or node.col_offset)


Recipe = Optional[object]
