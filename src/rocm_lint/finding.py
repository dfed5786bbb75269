"""The one data type every analyser produces and every front end renders."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional, Tuple


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


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: Tuple[Edit, ...] = ()


@dataclass(frozen=True, order=True)
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
    # The repair a rule asked for (rocm_lint.fix.recipes); the fix engine turns it into edits.
    recipe: Optional[object] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class FileError:
    """A file that could not be analysed. Reported on its own line; exit code 2."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"
