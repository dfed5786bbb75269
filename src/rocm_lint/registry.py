"""The rule registry: the one list that docs, CLI, flake8 and LSP all read.

A rule family is one module under ``rocm_lint.rules``; it declares each rule
once with :func:`register` and its checkers with :func:`python_checker`.  The
registry holds metadata only; analysers ask it which checkers to run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple, Type

from rocm_lint.finding import Applicability

DOCS_URL = "https://github.com/rocm-lint/rocm-lint/blob/main/docs/rules/{code}.md"

FAMILIES = {
    "ROC1": "NVIDIA-only PyTorch switches and APIs",
    "ROC2": "torch.compile and Inductor",
    "ROC3": "Allocator and environment",
    "ROC4": "NVIDIA-only packages and tools",
    "ROC5": "Build configuration",
    "ROC6": "Warp and wavefront width",
    "ROC7": "CUDA C++ portability",
    "ROC8": "Hardware-dependent",
    "ROC9": "Runtime host state",
}


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    languages: Tuple[str, ...]
    fix: Optional[Applicability]
    # Literal words one of which must occur in a file for the rule to fire there:
    # the analyser skips parsing files that hold none of the enabled rules' triggers.
    triggers: Tuple[str, ...]
    # Python code that only runs on ROCm was written for ROCm on purpose ("explicitly
    # handled", DESIGN.md): most rules stay silent there.  Rules about ROCm-side mistakes
    # (fnuz fp8 on the wrong GPU, wave64 hard-coded) set this to fire there too.
    rocm_side: bool = False
    # Optional regex that every file with a finding of this rule matches (a cheap, sound
    # over-approximation, e.g. the switch *assigned* rather than merely mentioned): files
    # that hold a trigger word but not this pattern are not parsed for the rule.
    precheck: Optional[str] = None

    @property
    def family(self) -> str:
        return self.code[:4]

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def body(self) -> str:
        """The hand-written part of the rule's page, shipped inside the package."""
        from importlib import resources

        return (resources.files("rocm_lint") / "docs" / f"{self.code}.md").read_text("utf-8")

    @property
    def doc(self) -> str:
        """The whole page: registry header plus body (what ``rocm-lint rule`` prints)."""
        from rocm_lint.docgen import render_rule

        return render_rule(self)

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "summary": self.summary,
            "family": self.family,
            "family_name": FAMILIES.get(self.family, ""),
            "languages": list(self.languages),
            "fix": self.fix.value if self.fix else None,
            "url": self.url,
        }


# A checker looks at one kind of AST node and yields (node, code, message) triples;
# the analyser turns them into Findings after gate analysis and suppression.
CheckerFn = Callable[..., Iterator[Tuple[ast.AST, str, str]]]


@dataclass(frozen=True)
class PythonChecker:
    fn: CheckerFn
    node_types: Tuple[Type[ast.AST], ...]
    codes: FrozenSet[str]


# Languages (rocm_lint.discovery): C++ with device code, and the small config files.
CPP_LANGUAGES = ("cuda", "cpp")
CONFIG_LANGUAGES = ("shell", "dockerfile", "yaml", "dotenv", "cmake")


@dataclass(frozen=True)
class SourceChecker:
    """A checker of a non-Python file: ``fn(unit)`` yields :class:`Hit` objects, where
    ``unit`` is the scanner's view of the file (``rocm_lint.cpp.scanner.CppUnit`` or
    ``rocm_lint.config_files.ConfigUnit``).  The scanner applies gates and suppressions."""

    fn: Callable[..., Iterator["Hit"]]
    languages: Tuple[str, ...]
    codes: FrozenSet[str]


@dataclass(frozen=True)
class Hit:
    """A finding of a text scanner, as offsets into the file's text."""

    start: int
    end: int
    code: str
    message: str
    # The repair, as (start offset, end offset, replacement) edits of the file's text, and
    # what it does; its applicability is the rule's.  Empty: nothing to apply.
    edits: Tuple[Tuple[int, int, str], ...] = ()
    fix_message: str = ""


_RULES: Dict[str, Rule] = {}
_PY_CHECKERS: List[PythonChecker] = []
_SOURCE_CHECKERS: List[SourceChecker] = []


def register(code: str, name: str, summary: str, *, triggers: Iterable[str],
             fix: Optional[Applicability] = None, languages: Tuple[str, ...] = ("python",),
             rocm_side: bool = False, precheck: Optional[str] = None) -> Rule:
    if code in _RULES:
        raise ValueError(f"rule {code} registered twice")
    rule = Rule(code, name, summary, tuple(languages), fix, tuple(triggers), rocm_side, precheck)
    _RULES[code] = rule
    return rule


def python_checker(*node_types: Type[ast.AST], codes: Iterable[str]):
    """Decorator: register ``fn(node, ctx)`` to run on every node of ``node_types``."""

    def deco(fn: CheckerFn) -> CheckerFn:
        _PY_CHECKERS.append(PythonChecker(fn, tuple(node_types), frozenset(codes)))
        return fn

    return deco


def source_checker(*languages: str, codes: Iterable[str]):
    """Decorator: register ``fn(unit)`` to run on every file of ``languages``."""

    def deco(fn):
        _SOURCE_CHECKERS.append(SourceChecker(fn, tuple(languages), frozenset(codes)))
        return fn

    return deco


@lru_cache(maxsize=None)
def _load() -> None:
    import rocm_lint.rules  # noqa: F401  (importing registers every family)


def all_rules() -> List[Rule]:
    _load()
    return sorted(_RULES.values(), key=lambda r: r.code)


def get_rule(code: str) -> Optional[Rule]:
    _load()
    return _RULES.get(code.upper())


def python_checkers() -> List[PythonChecker]:
    _load()
    return list(_PY_CHECKERS)


def source_checkers(language: str, codes: FrozenSet[str]) -> List[SourceChecker]:
    _load()
    return [c for c in _SOURCE_CHECKERS if language in c.languages and c.codes & codes]


def expand_codes(selectors: Iterable[str]) -> List[str]:
    """Codes matched by selectors (codes or prefixes such as ROC, ROC6, ROC601)."""
    sel = [s.strip().upper() for s in selectors if s.strip()]
    return [r.code for r in all_rules() if any(r.code.startswith(s) for s in sel)]
