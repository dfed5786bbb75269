"""Deferred imports and patterns for the rule families.

The registry imports every family module, and a family may hold rules for several languages
(ROC3 reads Python and shell, ROC5 Python and CMake).  A one-file Python check must not pay for
the C++ and config-file machinery those modules use, nor compile their patterns: that was a
third of its start-up.  ``lazy_functions`` binds names that import their module on first call
(and then replace themselves with the real function); ``LazyPattern`` compiles on first use.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable, Dict

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


def lazy_functions(namespace: Dict[str, Any], module: str, *names: str) -> None:
    """Bind each of ``names`` in ``namespace`` (a module's globals) to a stand-in that imports
    ``module`` on first call and puts the real function in its place."""

    def stand_in(name: str) -> Callable[..., Any]:
        def load(*args: Any, **kwargs: Any) -> Any:
            real = getattr(importlib.import_module(module), name)
            namespace[name] = real
            return real(*args, **kwargs)

        load.__name__ = load.__qualname__ = name
        return load

    for name in names:
        namespace[name] = stand_in(name)


class LazyPattern:
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
