"""The rule registry: the one list that docs, CLI, flake8, LSP and the tests all read.

Every module of the ``rocm_lint.rules`` package is a rule family; the registry imports them
all and collects their module-level :class:`~rocm_lint.rule.Rule` objects.  Adding a rule
means adding it (and its checkers) to a family module, a page and fixtures: nothing here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Tuple

from rocm_lint.rule import (CONFIG_LANGUAGES, CPP_LANGUAGES, FAMILIES, Hit, PythonChecker, Rule,  # noqa: F401
                            SourceChecker)


@lru_cache(maxsize=1)
def _catalogue() -> Tuple[Dict[str, Rule], Tuple[str, ...]]:
    import rocm_lint.rules as package

    rules: Dict[str, Rule] = {}
    modules = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        modules.append(module.__name__)
        for value in vars(module).values():
            if isinstance(value, Rule):
                if value.code in rules and rules[value.code] is not value:
                    raise ValueError(f"rule {value.code} defined twice")
                rules[value.code] = value
    rules.update(_LEGACY)
    return dict(sorted(rules.items())), tuple(modules)


def all_rules() -> List[Rule]:
    return list(_catalogue()[0].values())


def get_rule(code: str) -> Optional[Rule]:
    return _catalogue()[0].get(code.upper())


def family_modules() -> Tuple[str, ...]:
    """The modules that define rules (``rocm_lint.rules.<family>``)."""
    return _catalogue()[1]


@lru_cache(maxsize=64)
def python_checkers(codes: FrozenSet[str]) -> Tuple[PythonChecker, ...]:
    """The Python checkers of the rules in ``codes``, in code order."""
    return tuple(c for r in all_rules() if r.code in codes for c in r.python_checkers)


@lru_cache(maxsize=64)
def python_observers(codes: FrozenSet[str]) -> Tuple[PythonChecker, ...]:
    """The walk-time observers of the rules in ``codes``."""
    return tuple(c for r in all_rules() if r.code in codes for c in r.observers)


@lru_cache(maxsize=64)
def source_checkers(language: str, codes: FrozenSet[str]) -> Tuple[SourceChecker, ...]:
    """The checkers of ``language`` files of the rules in ``codes``, in code order."""
    return tuple(c for r in all_rules() if r.code in codes
                 for c in r.source_checkers if language in c.languages)


@lru_cache(maxsize=16)
def superseding_rules(language: str) -> Tuple[Rule, ...]:
    """The rules of ``language`` files with a ``supersedes`` predicate, selected or not."""
    return tuple(r for r in all_rules() if r.supersedes is not None
                 and any(language in c.languages for c in r.source_checkers))


# -- transition: the family modules not yet written as Rule objects --------------------------
_LEGACY: Dict[str, Rule] = {}


def register(code, name, summary, *, triggers, fix=None, languages=("python",), rocm_side=False,
             precheck=None) -> Rule:
    from rocm_lint.rule import FixAvailability

    rule = Rule(code, name, summary, tuple(triggers), precheck, tuple(languages), fix,
                FixAvailability.NONE if fix is None else FixAvailability.SOMETIMES, rocm_side)
    _LEGACY[code] = rule
    return rule


def python_checker(*node_types, codes):
    from rocm_lint.rule import PyHit

    def deco(fn):
        for code in codes:
            def one(node, ctx, fn=fn, code=code):
                for where, c, message, *recipe in fn(node, ctx):
                    if c == code:
                        yield PyHit(where, message, recipe[0] if recipe else None)
            _LEGACY[code].python_checkers.append(PythonChecker(one, tuple(node_types), _LEGACY[code]))
        return fn
    return deco


def source_checker(*languages, codes):
    def deco(fn):
        for code in codes:
            def one(unit, fn=fn, code=code):
                return (h for h in fn(unit) if h.code == code)
            _LEGACY[code].source_checkers.append(SourceChecker(one, tuple(languages), _LEGACY[code]))
        return fn
    return deco
