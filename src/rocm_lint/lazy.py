"""Deferred patterns for the rule families.

The registry imports every family module, and a family may hold rules for several languages
(ROC3 reads Python and shell, ROC5 Python and CMake).  A one-file Python check must not pay for
the C++ and config-file machinery those modules use, nor compile their patterns: that was a
third of its start-up.  A family imports a reader inside the function that calls it (a plain
``from rocm_lint.cpp.scanner import calls`` at the top of the checker); ``LazyPattern`` compiles
a pattern on first use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

_PATTERN_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "pattern",
    "flags",
    "groups",
    "groupindex",
    "scanner",
)


class _LazyPattern:
    """``re.compile(pattern, flags)`` compiled on first use: its methods and attributes are the
    compiled pattern's (copied onto the instance then, so later calls cost a plain lookup)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_source":
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attribute in _PATTERN_ATTRIBUTES:
            self.__dict__[attribute] = getattr(compiled, attribute)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


if TYPE_CHECKING:  # to a type checker a LazyPattern is the compiled pattern it stands for

    def LazyPattern(pattern: str, flags: int = 0) -> "re.Pattern[str]": ...
else:
    LazyPattern = _LazyPattern
