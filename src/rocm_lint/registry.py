"""The rule registry: the one list that docs, CLI, flake8, LSP and the tests all read.

Every module of the ``rocm_lint.rules`` package is a rule family; the registry imports them
all and collects their module-level :class:`~rocm_lint.rule.Rule` objects.  Adding a rule
means adding it (and its checkers) to a family module, a page and fixtures: nothing here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from rocm_lint.rule import PythonChecker, Rule, SourceChecker


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
    return dict(sorted(rules.items())), tuple(modules)


def all_rules() -> List[Rule]:
    return list(_catalogue()[0].values())


def get_rule(code: str) -> Optional[Rule]:
    return _catalogue()[0].get(code.upper())


def find_rules(query: str) -> List[Rule]:
    """``rocm-lint rule QUERY``: the rule whose code or name (``ungated-tf32-switch``) it is, else
    every rule whose code starts with it (``ROC1``: the family); empty when nothing matches."""
    wanted = query.strip()
    exact = get_rule(wanted) or next((r for r in all_rules() if r.name == wanted.lower()), None)
    if exact is not None:
        return [exact]
    prefix = wanted.upper()
    return [r for r in all_rules() if prefix.startswith("ROC") and r.code.startswith(prefix)]


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


@lru_cache(maxsize=64)
def exported_facts(codes: FrozenSet[str]) -> Tuple[Any, ...]:
    """The facts modules export that the enabled Python rules read (the project pre-pass)."""
    seen: Dict[str, Any] = {}
    for rule in all_rules():
        if rule.code in codes and "python" in rule.languages:
            for fact in rule.exports:
                seen.setdefault(fact.name, fact)
    return tuple(seen.values())
