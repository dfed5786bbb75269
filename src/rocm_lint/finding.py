"""The data every analyser produces and every front end renders: findings and their fixes.

One fix model serves every language.  A :class:`Fix` has an applicability and either the text
edits themselves (C++ and config-file rules compute them at check time) or a :data:`Recipe`, a
typed description of a structural Python change that the fix engine (``rocm_lint.fix``) turns
into edits with LibCST.  ``rocm_lint.fix.edits_for`` and ``rocm_lint.fix.fix_text`` give every
front end the same edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional, Tuple, Union


class Applicability(str, Enum):
    """How far a fix may be trusted (ruff's vocabulary)."""

    SAFE = "safe"  # applied by --fix: the NVIDIA path is provably unchanged
    UNSAFE = "unsafe"  # needs --unsafe-fixes
    DISPLAY = "display"  # shown, never applied


@dataclass(frozen=True)
class Edit:
    """Replace the text between two (line, col) positions (1-based line, 0-based col)."""

    content: str
    start: Tuple[int, int]
    end: Tuple[int, int]


# -- recipes: structural Python fixes, as data ------------------------------------------------
Span = Tuple[int, int, int, int]  # (line, col, end_line, end_col) as ast reports them


def span_of(node) -> Span:
    """The ``ast`` span of a node (UTF-8 byte columns, as ``ast`` counts them)."""
    return (
        node.lineno,
        node.col_offset,
        getattr(node, "end_lineno", None) or node.lineno,
        getattr(node, "end_col_offset", None) or node.col_offset,
    )


@dataclass(frozen=True)
class GateStatement:
    """Wrap the statement holding the finding in ``if not <is_rocm>:``."""

    message: str = "Run it only when not on ROCm (`if not is_rocm:`)"
    # The gate needs the statement alone on its lines (checked when the finding is made).
    gates_statement = True


@dataclass(frozen=True)
class RocmValue:
    """Replace the expression at ``span`` with ``<rocm_source> if <is_rocm> else <original>``."""

    span: Span
    rocm_source: str
    message: str = "Give ROCm its own value"
    gates_statement = False


@dataclass(frozen=True)
class WrapExpression:
    """Replace the expression at ``span`` with ``template`` ({expr}: the original, {torch}: the
    module's torch alias), e.g. ``{torch}.version.cuda is not None and ({expr})``."""

    span: Span
    template: str
    message: str = "Test the platform first"
    gates_statement = False


@dataclass(frozen=True)
class GuardImport:
    """Wrap the import in ``try: ... except ImportError: <names> = None`` (never safe)."""

    message: str = "Guard the import with try/except ImportError"
    gates_statement = False


Recipe = Union[GateStatement, RocmValue, WrapExpression, GuardImport]
RECIPES = (GateStatement, RocmValue, WrapExpression, GuardImport)


@dataclass(frozen=True)
class Fix:
    """A repair: text ``edits``, or a ``recipe`` the fix engine turns into edits."""

    applicability: Applicability
    message: str
    edits: Tuple[Edit, ...] = ()
    recipe: Optional[Recipe] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Finding:
    """One hazard at one place.

    Lines are 1-based and columns 0-based (like ``ast``); renderers convert to
    whatever their format wants (flake8 and ruff print 1-based columns).
    """

    path: str
    line: int
    col: int
    code: str
    message: str = field(compare=False)
    end_line: int = field(default=0, compare=False)
    end_col: int = field(default=0, compare=False)
    fix: Optional[Fix] = field(default=None, compare=False)
    # Set by checks whose weight varies per case (the runtime doctor: critical/warning/info).
    severity: Optional[str] = field(default=None, compare=False)
    # "nvidia-only": in a source the project's ROCm build never compiles (reported only with
    # ``report-nvidia-only-sources``: the whole port, counted apart)
    scope: Optional[str] = field(default=None, compare=False)
    # A notebook's findings: the 1-based cell number (all cells counted, as ruff does); ``line``
    # is then the row inside that cell and ``col`` a character column.
    cell: Optional[int] = None

    def _key(self):
        return (self.path, self.cell or 0, self.line, self.col, self.code)

    def __lt__(self, other: "Finding") -> bool:
        return self._key() < other._key()

    def __le__(self, other: "Finding") -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: "Finding") -> bool:
        return self._key() > other._key()

    def __ge__(self, other: "Finding") -> bool:
        return self._key() >= other._key()

    @property
    def recipe(self) -> Optional[Recipe]:
        """The structural repair of a Python finding (``None`` for text edits or no fix)."""
        return self.fix.recipe if self.fix is not None else None


@dataclass(frozen=True)
class FileError:
    """A file that could not be analysed. Reported on its own line; exit code 2."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"
