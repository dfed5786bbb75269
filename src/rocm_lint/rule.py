"""A rule is one unit: its metadata, message templates, triggers, fix and checkers.

A rule family is one module under ``rocm_lint.rules``; each rule is a module-level
:class:`Rule` and its checkers are attached to it with a decorator::

    ROC101 = Rule("ROC101", "ungated-tf32-switch", "TF32 switch set without a ROCm gate ...",
                  triggers=("allow_tf32",), fix=Applicability.SAFE,
                  fix_availability=FixAvailability.SOMETIMES,
                  messages={"switch": "TF32 switch `{what}` is ignored by ROCm builds ..."})

    @ROC101.checker(ast.Assign, ast.AnnAssign)
    def tf32_assignment(node: ast.Assign, ctx: ModuleContext) -> Iterator[PyHit]:
        yield PyHit(node.targets[0], ROC101.message("switch", what="allow_tf32"), GATE)

A Python checker sees every node of its types that the walk reaches outside NVIDIA-only code
and yields :class:`PyHit` objects; a source checker sees a whole C++ or config file (its
scanner's unit) and yields :class:`Hit` objects.  Either reports its own rule's code only:
the engine applies gates, selection and suppressions.  ``rocm_lint.registry`` collects the
rules of every family module; nothing else needs to know a rule exists (docs, CLI, flake8,
LSP and the fixture tests all read the registry).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Type

from rocm_lint.finding import Applicability, Edit, Finding, Fix, Recipe
from rocm_lint.lines import LineIndex

DOCS_URL = "https://github.com/rocm-lint/rocm-lint/blob/main/docs/rules/{code}.md"

FAMILIES = {
    "ROC0": "rocm-lint itself",
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

# Languages (rocm_lint.discovery): C++ with device code, and the small config files: those that hold
# settings and tool arguments, and the dependency manifests (requirements files, pyproject.toml,
# setup.cfg: rules/dependencies.py).
CPP_LANGUAGES = ("cuda", "cpp")
SETTINGS_LANGUAGES = ("shell", "dockerfile", "yaml", "dotenv", "cmake")
CONFIG_LANGUAGES = (*SETTINGS_LANGUAGES, "manifest")


class FixAvailability(str, Enum):
    """Whether a rule's findings come with a fix (ruff's ``FixAvailability``)."""

    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True)
class PyHit:
    """What a Python checker reports: the node to point at, the message, and optionally
    the structural repair (a :data:`rocm_lint.finding.Recipe`)."""

    node: ast.AST
    message: str
    recipe: Optional[Recipe] = None
    no_fix: str = ""  # why there is no recipe, where the rule has fixes (else a general reason)


@dataclass(frozen=True)
class Hit:
    """What a source (C++ or config-file) checker reports, as offsets into the file's text.

    Made with :meth:`Rule.hit`, which stamps the rule's code."""

    start: int
    end: int
    code: str
    message: str
    # The repair, as (start offset, end offset, replacement) edits of the file's text, and
    # what it does; its applicability is the rule's.  Empty: nothing to apply.
    edits: Tuple[Tuple[int, int, str], ...] = ()
    fix_message: str = ""
    # Why there is no repair here, where the rule has one elsewhere: shown as a display-only fix
    # (JSON ``fix.applicability: display``), so no finding of a fixable rule goes without a word.
    no_fix: str = ""


PyCheckerFn = Callable[..., Iterator[PyHit]]
SourceCheckerFn = Callable[..., Iterator[Hit]]


@dataclass(frozen=True)
class PythonChecker:
    """``fn(node, ctx)``, run on every node of ``node_types`` (``ctx``: a
    :class:`rocm_lint.python.context.ModuleContext`)."""

    fn: PyCheckerFn
    node_types: Tuple[Type[ast.AST], ...]
    rule: "Rule"


@dataclass(frozen=True)
class SourceChecker:
    """``fn(unit)``, run once per file of ``languages`` (``unit``: the scanner's view of the
    file, :class:`rocm_lint.cpp.scanner.CppUnit` or :class:`rocm_lint.configfiles.scanner.ConfigUnit`)."""

    fn: SourceCheckerFn
    languages: Tuple[str, ...]
    rule: "Rule"


@dataclass(eq=False)
class Rule:
    code: str
    name: str
    summary: str
    # Literal words one of which must occur in a file for the rule to fire there:
    # the engine skips parsing files that hold none of the enabled rules' triggers.
    triggers: Tuple[str, ...] = ()
    # Optional regex that every file with a finding of this rule matches (a cheap, sound
    # over-approximation, e.g. the switch *assigned* rather than merely mentioned): files
    # that hold a trigger word but not this pattern are not parsed for the rule.
    precheck: Optional[str] = None
    languages: Tuple[str, ...] = ("python",)
    # The applicability of the rule's fix, when a finding has one.
    fix: Optional[Applicability] = None
    fix_availability: FixAvailability = FixAvailability.NONE
    # Python code that only runs on ROCm was written for ROCm on purpose ("explicitly
    # handled"): most rules stay silent there.  Rules about ROCm-side mistakes
    # (fnuz fp8 on the wrong GPU, wave64 hard-coded) set this to fire there too.
    rocm_side: bool = False
    # ``supersedes(unit)`` true for a file: the rule's findings replace the file's other
    # findings (ROC707: a CUTLASS-bound kernel is a rewrite; its line-level hazards are noise).
    # The scanner asks it whether the rule is selected or not.
    supersedes: Optional[Callable[[Any], bool]] = field(default=None, repr=False)
    # Message templates (``str.format`` fields), by key; ``message()`` fills one in.
    messages: Mapping[str, str] = field(default_factory=dict)
    # Phase 1: per-module facts the rule's checkers read, computed once on first use
    # (:class:`rocm_lint.python.context.ModuleFacts`, read with ``ctx.facts(...)``).
    facts: Tuple[Any, ...] = ()
    # Phase 0: facts a module exports to its importers that the rule's checkers read
    # (:class:`rocm_lint.python.project.ExportedFacts`, read with ``ctx.exported(...)``).
    exports: Tuple[Any, ...] = ()
    # The rule's twins outside the linter, declared here so that the rule unit is closed (the
    # tests hold each side to the declaration):
    # ``semgrep``: the rule has entries in semgrep-rules/rocm-lint.yaml (ids ``rocm-lint.CODE``,
    # ``rocm-lint.CODE-*``) with annotated fixtures in semgrep-rules/tests/ (tests/test_semgrep.py).
    # None: the language's default (C++ rules have a twin, other rules none); False: no twin (the
    # scaffolder's C++ rule, until its entries are written).
    semgrep: Optional[bool] = None
    # ``runtime``: ``rocm_lint.runtime.check()`` (``rocm-lint doctor``) also reports this code
    # about the live process or host, in its own words (tests/test_runtime.py).
    runtime: bool = False
    python_checkers: List[PythonChecker] = field(default_factory=list, repr=False)
    # Phase 2, during the walk: functions that record what they see, in walk order, for the
    # checkers of later nodes (they report nothing; they also see ROCm-only code).
    observers: List[PythonChecker] = field(default_factory=list, repr=False)
    source_checkers: List[SourceChecker] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.triggers = tuple(self.triggers)
        self.languages = tuple(self.languages)
        self.facts = tuple(self.facts)
        self.exports = tuple(self.exports)
        if (self.fix is None) != (self.fix_availability == FixAvailability.NONE):
            raise ValueError(f"{self.code}: a fix applicability needs a fix availability and vice versa")

    @property
    def has_semgrep_twin(self) -> bool:
        """Does semgrep-rules/rocm-lint.yaml hold this rule's twin (``semgrep``, else C++ rules)?"""
        return self.semgrep if self.semgrep is not None else "cuda" in self.languages

    # -- checkers -------------------------------------------------------------------------
    def checker(self, *node_types: Type[ast.AST]) -> Callable[[PyCheckerFn], PyCheckerFn]:
        """Decorator: run ``fn(node, ctx)`` on every node of ``node_types``."""

        def deco(fn: PyCheckerFn) -> PyCheckerFn:
            self.python_checkers.append(PythonChecker(fn, tuple(node_types), self))
            return fn

        return deco

    def observer(self, *node_types: Type[ast.AST]) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Decorator: ``fn(node, ctx)`` records facts about nodes of ``node_types`` as the walk
        reaches them (outside NVIDIA-only code), before any checker sees the node.  One function
        may observe for several rules: it runs once per node."""

        def deco(fn: Callable[..., None]) -> Callable[..., None]:
            self.observers.append(PythonChecker(fn, tuple(node_types), self))  # type: ignore[arg-type]
            return fn

        return deco

    def source_checker(self, *languages: str) -> Callable[[SourceCheckerFn], SourceCheckerFn]:
        """Decorator: run ``fn(unit)`` on every file of ``languages`` (default: the rule's)."""

        def deco(fn: SourceCheckerFn) -> SourceCheckerFn:
            self.source_checkers.append(SourceChecker(fn, tuple(languages or self.languages), self))
            return fn

        return deco

    # -- reporting ------------------------------------------------------------------------
    def message(self, key: str = "default", /, **fields: object) -> str:
        """The message template ``key`` with ``fields`` filled in."""
        template = self.messages[key]
        return template.format(**fields) if fields else template

    def hit(
        self,
        start: int,
        end: int,
        message: str,
        *,
        edits: Iterable[Tuple[int, int, str]] = (),
        fix_message: str = "",
        no_fix: str = "",
    ) -> Hit:
        """A source checker's finding of this rule, as offsets into the file's text (``no_fix``:
        why it has no edits, where the rule has a fix)."""
        return Hit(start, end, self.code, message, tuple(edits), fix_message, no_fix)

    # -- metadata -------------------------------------------------------------------------
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

    def as_dict(self) -> Dict[str, object]:
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


def findings_from_hits(path: str, hits: Iterable[Tuple[Rule, Hit]], index: LineIndex) -> List[Finding]:
    """A text scanner's offset-based hits as Findings (a fix carries the hit's edits)."""
    out = []
    for rule, hit in hits:
        line, col = index.position(hit.start)
        end_line, end_col = index.position(max(hit.end, hit.start))
        fix = None
        if hit.edits and rule.fix is not None:
            edits = tuple(Edit(content, index.position(a), index.position(b)) for a, b, content in hit.edits)
            fix = Fix(rule.fix, hit.fix_message, edits)
        elif rule.fix is not None and hit.no_fix:
            fix = Fix(Applicability.DISPLAY, "not fixed: " + hit.no_fix)
        out.append(Finding(path, line, col, rule.code, hit.message, end_line, end_col, fix=fix))
    return sorted(set(out))
