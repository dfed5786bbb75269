"""The rule registry: the one list that docs, CLI, flake8, LSP and the tests all read.

Every module of the ``rocm_lint.rules`` package is a rule family; the registry imports them
all and collects their module-level :class:`~rocm_lint.rule.Rule` objects.  Adding a rule
means adding it (and its checkers) to a family module, a page and fixtures: nothing here.

A check needs less than every family: the codes (selection), each rule's languages, trigger
words and precheck (the pre-filter), and the checkers of the rules a file can trigger.  The
first three are in ``rocm_lint.rule_index``, a table generated from the families
(``python -m rocm_lint.registry --write-index``) with a checksum of their source: while it
matches, a check imports only the families whose rules it runs (a one-file check of a file
without trigger words imports none); when it does not (a family edited, the table not yet
regenerated), the table is built from the imported families, as before.  Same answers either
way: ``tests/test_registry_index.py`` holds the table to the families.
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover - imported with the first family
    from rocm_lint.rule import PythonChecker, Rule, SourceChecker

_HERE = os.path.dirname(os.path.abspath(__file__))


class RuleInfo:
    """What the pre-filter and the selection read of a rule, without importing its family."""

    __slots__ = (
        "code",
        "module",
        "languages",
        "triggers",
        "precheck",
        "source_languages",
        "python_checked",
        "exports",
        "export_triggers",
        "supersedes",
    )

    def __init__(
        self,
        code: str,
        module: str,
        languages: Tuple[str, ...],
        triggers: Tuple[str, ...],
        precheck: Optional[str],
        source_languages: Tuple[str, ...],
        python_checked: bool,
        exports: bool,
        export_triggers: bool,
        supersedes: bool,
    ) -> None:
        self.code, self.module, self.languages, self.triggers = code, module, languages, triggers
        self.precheck, self.source_languages, self.python_checked = precheck, source_languages, python_checked
        self.exports, self.export_triggers, self.supersedes = exports, export_triggers, supersedes

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)


def _sources() -> List[str]:
    """``rule.py`` and every ``.py`` file under ``rules/`` (a subpackage's too), in a fixed order."""
    found = [os.path.join(_HERE, "rule.py")]
    for folder, dirs, names in os.walk(os.path.join(_HERE, "rules")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return found


@lru_cache(maxsize=1)
def _catalogue() -> Tuple[Dict[str, Rule], Tuple[str, ...], Dict[str, str]]:
    """Every family imported: (rules by code, family modules, module by code)."""
    import pkgutil

    import rocm_lint.rules as package
    from rocm_lint.rule import Rule

    rules: Dict[str, Rule] = {}
    where: Dict[str, str] = {}
    modules = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        modules.append(module.__name__)
        for value in vars(module).values():
            if isinstance(value, Rule):
                if value.code in rules and rules[value.code] is not value:
                    raise ValueError(f"rule {value.code} defined twice")
                rules[value.code] = value
                where.setdefault(value.code, module.__name__)
    return dict(sorted(rules.items())), tuple(modules), where


def fingerprint() -> str:
    """A checksum of the sources the index is generated from: the families and ``rule.py``."""
    import zlib

    crc = 0
    for path in _sources():
        with open(path, "rb") as handle:
            name = os.path.relpath(path, _HERE).replace(os.sep, "/")
            crc = zlib.crc32(handle.read(), zlib.crc32(name.encode(), crc))
    return f"{crc:08x}"


def _info(rule: Rule, module: str) -> RuleInfo:
    return RuleInfo(
        rule.code,
        module,
        tuple(rule.languages),
        tuple(rule.triggers),
        rule.precheck,
        tuple(sorted({lang for c in rule.source_checkers for lang in c.languages})),
        bool(rule.python_checkers or rule.observers),
        bool(rule.exports),
        any(f.triggers for f in rule.exports),
        rule.supersedes is not None,
    )


def built_index() -> Tuple[RuleInfo, ...]:
    """The index made from the imported families (the generator's and the fallback's)."""
    rules, _, where = _catalogue()
    return tuple(_info(rule, where[code]) for code, rule in rules.items())


@lru_cache(maxsize=1)
def _index() -> Tuple[Tuple[RuleInfo, ...], bool]:
    """(the rules' index, whether it came from the generated table)."""
    try:
        from rocm_lint import rule_index

        if rule_index.FINGERPRINT == fingerprint():
            return tuple(RuleInfo(*row) for row in rule_index.RULES), True
    except (ImportError, OSError, AttributeError, TypeError):
        pass
    return built_index(), False


def rule_infos() -> Tuple[RuleInfo, ...]:
    """Every rule's :class:`RuleInfo`, in code order (no family imported while the table holds)."""
    return _index()[0]


@lru_cache(maxsize=1)
def all_codes() -> Tuple[str, ...]:
    return tuple(info.code for info in rule_infos())


@lru_cache(maxsize=64)
def _family(module: str) -> Dict[str, Rule]:
    """The rules a family module defines (imported on first use)."""
    from rocm_lint.rule import Rule

    return {v.code: v for v in vars(importlib.import_module(module)).values() if isinstance(v, Rule)}


def _rule(info: RuleInfo) -> Rule:
    if not _index()[1]:
        return _catalogue()[0][info.code]
    return _family(info.module)[info.code]


def all_rules() -> List[Rule]:
    return list(_catalogue()[0].values())


def get_rule(code: str) -> Optional[Rule]:
    wanted = code.upper()
    info = next((i for i in rule_infos() if i.code == wanted), None)
    return _rule(info) if info is not None else None


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
    return tuple(
        c for i in rule_infos() if i.code in codes and i.python_checked for c in _rule(i).python_checkers
    )


@lru_cache(maxsize=64)
def python_observers(codes: FrozenSet[str]) -> Tuple[PythonChecker, ...]:
    """The walk-time observers of the rules in ``codes``."""
    return tuple(c for i in rule_infos() if i.code in codes and i.python_checked for c in _rule(i).observers)


@lru_cache(maxsize=64)
def source_checkers(language: str, codes: FrozenSet[str]) -> Tuple[SourceChecker, ...]:
    """The checkers of ``language`` files of the rules in ``codes``, in code order."""
    return tuple(
        c
        for i in rule_infos()
        if i.code in codes and language in i.source_languages
        for c in _rule(i).source_checkers
        if language in c.languages
    )


@lru_cache(maxsize=16)
def superseding_rules(language: str) -> Tuple[Rule, ...]:
    """The rules of ``language`` files with a ``supersedes`` predicate, selected or not."""
    return tuple(_rule(i) for i in rule_infos() if i.supersedes and language in i.source_languages)


@lru_cache(maxsize=64)
def exported_facts(codes: FrozenSet[str]) -> Tuple[Any, ...]:
    """The facts modules export that the enabled Python rules read (the project pre-pass)."""
    seen: Dict[str, Any] = {}
    for info in rule_infos():
        if info.code in codes and "python" in info.languages and info.exports:
            for fact in _rule(info).exports:
                seen.setdefault(fact.name, fact)
    return tuple(seen.values())


def render_index() -> str:
    """The text of ``rocm_lint/rule_index.py`` for the families as they are."""
    rows = "".join(f"    {info.as_tuple()!r},\n" for info in built_index())
    return (
        '"""Generated by ``python -m rocm_lint.registry --write-index`` from the rule families: what the\n'
        "pre-filter and the selection read of each rule, so a check imports only the families it runs\n"
        '(``rocm_lint.registry``).  Not edited by hand; stale (another FINGERPRINT), it is not used."""\n\n'
        f"FINGERPRINT = {fingerprint()!r}\n\n"
        f"# {', '.join(RuleInfo.__slots__)}\n"
        f"RULES = (\n{rows})\n"
    )


if __name__ == "__main__":  # pragma: no cover - the generator
    import sys

    if sys.argv[1:] != ["--write-index"]:
        sys.exit("usage: python -m rocm_lint.registry --write-index")
    with open(os.path.join(_HERE, "rule_index.py"), "w", encoding="utf-8") as out:
        out.write(render_index())
