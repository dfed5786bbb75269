"""The engine: read a file, pick its analyser, apply suppressions, collect findings.

Every front end (CLI, flake8, LSP) goes through here or through
:func:`analyse_python_tree`, so a rule runs the same way everywhere.  The run over many paths
(the walk, phase 0, the cache, the worker processes) is :mod:`rocm_lint.engine_paths`.
"""

from __future__ import annotations

import ast
import codecs
import io
import os
import tokenize
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Sequence, Tuple, Union

from rocm_lint import noqa, unused_noqa
from rocm_lint.config import Config
from rocm_lint.discovery import language_of, read_bounded
from rocm_lint.finding import Applicability, FileError, Finding, Fix
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import Hit, Rule, SourceChecker, findings_from_hits
from rocm_lint.words import find_words
from rocm_lint.registry import (
    all_codes,
    exported_facts,
    python_checkers,
    python_observers,
    rule_infos,
    source_checkers,
    superseding_rules,
)

if TYPE_CHECKING:  # pragma: no cover
    from rocm_lint.python.project import Project
    from rocm_lint.workspace import Workspace

MAX_FILE_BYTES = 16 * 1024 * 1024  # larger files are reported and skipped


@dataclass
class Report:
    findings: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    files_checked: int = 0


# -- rule selection ----------------------------------------------------------------------
@lru_cache(maxsize=512)
def _triggers(codes: FrozenSet[str], language: str) -> Tuple[str, ...]:
    return tuple(
        sorted({t for r in rule_infos() if r.code in codes and language in r.languages for t in r.triggers})
    )


@lru_cache(maxsize=64)
def _prefilters(codes: FrozenSet[str], language: str):
    """Per rule: (trigger words, precheck regex or None)."""
    return tuple(
        (r.triggers, LazyPattern(r.precheck) if r.precheck else None)
        for r in rule_infos()
        if r.code in codes and language in r.languages and r.triggers
    )


@lru_cache(maxsize=64)
def _rule_filters(codes: FrozenSet[str], language: str):
    """Per rule: (code, trigger words, precheck regex or None); rules without triggers always run."""
    return tuple(
        (r.code, r.triggers, LazyPattern(r.precheck) if r.precheck else None)
        for r in rule_infos()
        if r.code in codes and language in r.languages
    )


def present_words(text: str, codes: FrozenSet[str], language: str = "python") -> FrozenSet[str]:
    """The trigger words of the enabled rules that occur in ``text`` (substrings).  One pass
    over the text: the pre-filter, the rule narrowing and the lines of interest are handed its
    answer (``found``) instead of searching again."""
    return find_words(text, _triggers(codes, language))


def _rules_in(text: str, codes: FrozenSet[str], language: str, found: FrozenSet[str]) -> FrozenSet[str]:
    """The enabled rules that could fire in ``text`` (the per-rule form of :func:`worth_parsing`)."""
    return frozenset(
        code
        for code, words, precheck in _rule_filters(codes, language)
        if not words or any(w in found for w in words) and (precheck is None or precheck.search(text))
    )


@lru_cache(maxsize=64)
def _exporting_rules(codes: FrozenSet[str]) -> FrozenSet[str]:
    return frozenset(r.code for r in rule_infos() if r.code in codes and r.export_triggers)


def worth_parsing(
    text: str, codes: FrozenSet[str], language: str = "python", found: Optional[FrozenSet[str]] = None
) -> bool:
    """Could any enabled rule fire in ``text``? (Most files are answered here, unparsed.)
    ``found``: :func:`present_words` of the text, when the caller has it."""
    if found is None:
        found = present_words(text, codes, language)
    if not found:
        return False
    for words, precheck in _prefilters(codes, language):
        if any(w in found for w in words) and (precheck is None or precheck.search(text)):
            return True
    return False


@lru_cache(maxsize=16)
def selected_codes(config: Config) -> FrozenSet[str]:
    codes = config.enabled_codes(all_codes())
    # ROC001 (unused suppressions) is off by default: only a selector naming it turns it on.
    return codes if unused_noqa.explicitly_selected(config) else codes - {unused_noqa.CODE}


def enabled_codes(config: Config, path: Optional[str] = None) -> FrozenSet[str]:
    codes = selected_codes(config)
    if path is not None:
        off = config.ignored_for(path)
        if off:
            codes = frozenset(c for c in codes if not c.startswith(off))
    return codes


@lru_cache(maxsize=1)
def python_codes() -> FrozenSet[str]:
    """Every registered Python code (flake8 gets them all and selects itself)."""
    return frozenset(r.code for r in rule_infos() if "python" in r.languages)


# -- reading -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Decoded:
    """A file's text and the encoding it was decoded with (a fix writes it back in the same)."""

    text: str
    encoding: str


def read_source(path: str) -> Union[str, FileError]:
    """Decode a source file the way Python would (PEP 263 cookie, BOM), or say why not."""
    try:
        data = read_bounded(path, MAX_FILE_BYTES)  # regular files only, never past the limit
    except OSError as exc:
        return FileError(path, f"cannot read: {(exc.strerror or str(exc)).lower()}")
    if isinstance(data, str):
        return FileError(path, data)
    return decode_source(path, data)


def decode(path: str, data: bytes, language: Optional[str] = None) -> Union[Decoded, FileError]:
    """The one decoder (the check, ``--fix``'s writer and stdin go through it): a Python file
    (``language``, else by ``path``) as Python would (PEP 263 cookie, BOM); another file as
    UTF-8 (after a byte-order mark, which is kept apart), or Latin-1 for legacy bytes (C++ comments in old code bases), which round-trips every
    byte so a fix never corrupts the file.  Binary data (NUL bytes) is a FileError."""
    if b"\0" in data:
        return FileError(path, "binary file (contains NUL bytes); skipped")
    if (language or language_of(path)) not in (None, "python"):
        try:
            if data.startswith(codecs.BOM_UTF8):
                # a byte-order mark is no character of the text (compilers skip it): columns on
                # line 1 count from after it, and a fix writes it back (the encoding keeps it)
                return Decoded(data.decode("utf-8-sig"), "utf-8-sig")
            return Decoded(data.decode("utf-8"), "utf-8")
        except UnicodeDecodeError:
            return Decoded(data.decode("latin-1"), "latin-1")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if b"coding" in data[:400]:  # a bad PEP 263 cookie
            return FileError(path, f"cannot decode: {exc.msg if hasattr(exc, 'msg') else exc}")
        encoding = "utf-8"  # undecodable first lines: let the decoder say where
    try:
        return Decoded(data.decode(encoding), encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        return FileError(path, f"cannot decode as {encoding}{where}: {reason}")


def decode_source(path: str, data: bytes) -> Union[str, FileError]:
    """The text of :func:`decode`."""
    decoded = decode(path, data)
    return decoded if isinstance(decoded, FileError) else decoded.text


# -- Python ------------------------------------------------------------------------------
def analyse_python_tree(
    path: str,
    text: str,
    tree: ast.Module,
    config: Config,
    codes: FrozenSet[str],
    project: Optional["Project"] = None,
    found: Optional[FrozenSet[str]] = None,
) -> List[Finding]:
    """Run the enabled Python rules on an already parsed module (flake8 calls this with its
    own whole tree; the CLI and the server go through :func:`check_python_source`, which
    parses only the statements that can yield a finding).

    Phase 0 is the project model (``project``: what other modules export, see
    :mod:`rocm_lint.python.project`; the project of a fresh ``Workspace`` when not given: a
    front end passes the one its workspace holds, ``project_for(ws, config)``).  Phase 1 builds the module's context (imports, bindings, ROCm/NVIDIA predicates); the module
    facts rules declare (``Rule.facts``) belong to it too, computed once on first use, as they
    never depend on the walk's state (computing them up front cost 5% of a run on files where no
    checker needed them).  Phase 2 walks the module once, gated, running observers then checkers;
    the caller applies suppressions."""
    from rocm_lint.python.project import Project

    project = project if project is not None else Project(config)
    codes = frozenset(codes)
    if found is None:
        found = present_words(text, codes, "python")
    walk = _walk_words(path, text, codes, project, found)
    if walk is None:
        return []
    return _analyse_whole(path, text, tree, config, walk, project)


def _analyse_whole(
    path: str,
    text: str,
    tree: ast.Module,
    config: Config,
    walk: Tuple[FrozenSet[str], List[str]],
    project: "Project",
) -> List[Finding]:
    from rocm_lint.python.analyzer import trigger_lines

    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _analyse(path, text, tree, config, walk[0], trigger_lines(text, walk[1]), project)


def _walk_words(
    path: str, text: str, codes: FrozenSet[str], project: "Project", found: FrozenSet[str]
) -> Optional[Tuple[FrozenSet[str], List[str]]]:
    """The rules that can fire in ``text`` and the words whose lines the walk enters, or None
    when none can fire (the CLI's pre-filter, for flake8 and the language server too)."""
    exported = project.words_for(path, text, exported_facts(codes))  # wrappers other modules define
    if not exported and not (found and worth_parsing(text, codes, found=found)):
        return None
    # Only the rules whose trigger (and precheck) the file holds run; with an exported name in
    # it, the rules that read exports too.  The walk visits the lines of those rules' trigger
    # words only (a rule whose precheck failed adds no lines: `graph` in torch.fx is not ROC206's).
    codes = _rules_in(text, codes, "python", found) | (_exporting_rules(codes) if exported else frozenset())
    return codes, [w for w in _triggers(codes, "python") if w in found] + exported


def _analyse(
    path: str,
    text: str,
    tree: ast.Module,
    config: Config,
    codes: FrozenSet[str],
    lines: List[int],
    project: "Project",
    ctx=None,
) -> List[Finding]:
    from rocm_lint.python.analyzer import Analyzer, extend_with_bound_names
    from rocm_lint.python.context import ModuleContext

    if ctx is None:
        ctx = ModuleContext(path, tree, config, text, project)
        lines = extend_with_bound_names(text, lines, ctx)
    findings = Analyzer(ctx, python_checkers(codes), lines, python_observers(codes)).run()
    # One place can be reached twice (a dict constant handed to two compile calls).
    return sorted(set(findings))


def _check_partial(
    path: str, text: str, config: Config, codes: FrozenSet[str], words: List[str], project: "Project"
) -> Optional[Tuple[ast.Module, List[Finding]]]:
    """The findings of ``text`` from a parse of the statements that can yield one
    (:mod:`rocm_lint.python.partial`, the argument in docs/architecture.md "Partial parse"), or
    None where the whole module is to be parsed: a rule reading the whole module is active,
    most of the module would be kept anyway, or the kept text does not parse as the
    statements it was cut from."""
    from rocm_lint.python import partial
    from rocm_lint.python.analyzer import extend_with_bound_names, trigger_lines
    from rocm_lint.python.context import ModuleContext, platform_words

    if not partial.may_cut(text, codes):
        return None
    lines = trigger_lines(text, words)
    platform = platform_words(config)
    script = os.path.basename(path) == "setup.py" or "__main__" in text
    extra: List[int] = []
    for _ in range(3):  # a line the first parse shows is read may add a block: parse again
        plan = partial.plan(text, lines, codes, script, extra, platform)
        if plan is None:
            return None
        try:
            tree = ast.parse(plan.source, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # cut wrongly, or an error the whole parse will report
        if not partial.covers(plan, tree.body, lines):
            return None
        ctx = ModuleContext(path, tree, config, text, project)
        walked = extend_with_bound_names(text, lines, ctx)
        gates = ctx.gates
        learned = [
            *gates.bound_names,
            *gates.bound_attrs,
            *gates.bound_functions,
            *gates.device_names,
            *gates.device_functions,
        ]
        more = partial.uncovered(plan, text, tree.body, walked, script, learned)
        if not more:
            return tree, _analyse(path, text, tree, config, codes, walked, project, ctx)
        extra.extend(more)
    return None


_PARTIAL = "ROCM_LINT_PARTIAL_PARSE"  # the cut is opt-in (python/partial.py says why)


def _whole_parse_forced() -> bool:
    from rocm_lint.python.partial import whole_parse_forced

    return whole_parse_forced()


def check_python_source(
    path: str,
    text: str,
    config: Config,
    codes: Optional[FrozenSet[str]] = None,
    project: Optional["Project"] = None,
) -> Union[List[Finding], FileError]:
    from rocm_lint.python.project import Project

    codes = enabled_codes(config, path) if codes is None else codes
    project = project if project is not None else Project(config)
    found = present_words(text, codes, "python")
    if not worth_parsing(text, codes, found=found) and not project.words_for(
        path, text, exported_facts(codes)
    ):
        return []  # the fast path: most files never reach the parser
    walk = _walk_words(path, text, codes, project, found)
    try:
        if walk is not None and _PARTIAL in os.environ and not _whole_parse_forced():
            checked = _check_partial(path, text, config, walk[0], walk[1], project)
            if checked is not None:
                return apply_suppressions(checked[1], text, "python", checked[0])
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "unknown position"
        return FileError(path, f"syntax error at {where}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileError(path, f"cannot parse: {type(exc).__name__}: {exc}")
    try:
        findings = [] if walk is None else _analyse_whole(path, text, tree, config, walk, project)
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    return apply_suppressions(findings, text, "python", tree)


# -- C++ and config files ------------------------------------------------------------------
def check_source(
    path: str,
    text: str,
    config: Config,
    language: Optional[str] = None,
    codes: Optional[FrozenSet[str]] = None,
    project: Optional["Project"] = None,
    workspace: Optional["Workspace"] = None,
) -> Union[List[Finding], FileError]:
    """Check one file's text with the analyser of its language.  A defect of rocm-lint on one
    file (an exception in a rule) is that file's error line, never the end of the run.

    ``workspace``: the front end's caches (``rocm_lint.workspace``); ``project``: the project
    model to use (a pre-pass's), else the one the workspace holds for ``config``.  Neither given:
    a fresh workspace, as a fresh run."""
    if project is None:
        from rocm_lint.python.project import project_for
        from rocm_lint.workspace import Workspace

        project = project_for(workspace if workspace is not None else Workspace(), config)
    try:
        found = _check_source(path, text, config, language, codes, project)
        codes = enabled_codes(config, path) if codes is None else codes
        if unused_noqa.CODE in codes and isinstance(found, list):  # ROC001: the file once more, unsuppressed
            language = language or language_of(path)
            plain = unused_noqa.neutralized(text, language or "")
            raw = found if plain is None else _check_source(path, plain, config, language, codes, project)
            if isinstance(raw, list):
                found = found + unused_noqa.unused_suppressions(
                    path, text, language or "", raw, codes, all_codes()
                )
        return found
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    except Exception as exc:  # noqa: BLE001 - one file's bug must not cost the others
        return FileError(
            path,
            f"internal error while checking ({type(exc).__name__}: {exc}); please report it to rocm-lint",
        )


def _check_source(
    path: str,
    text: str,
    config: Config,
    language: Optional[str],
    codes: Optional[FrozenSet[str]],
    project: "Project",
) -> Union[List[Finding], FileError]:
    language = language or language_of(path)
    if language == "python":
        return check_python_source(path, text, config, codes, project)
    if language == "notebook":
        return _check_notebook(path, text, config, codes, project)
    codes = enabled_codes(config, path) if codes is None else codes
    if language is None:
        return []
    family = "cuda" if language in ("cuda", "cpp") else language
    found = present_words(text, codes, family)
    if not worth_parsing(
        text, codes, family, found
    ):  # before the checkers: their families import on first use
        return []
    checkers: Sequence[SourceChecker] = source_checkers(family, codes)
    if not checkers:
        return []
    if family == "cuda":
        from rocm_lint.cpp.narrowing import host_checkers, narrowed_checkers
        from rocm_lint.cpp.scanner import read_cpp_unit

        checkers = narrowed_checkers(checkers, found)
        unit = read_cpp_unit(path, text, config, language, project.workspace)
        if getattr(unit, "host_only", False):
            checkers = host_checkers(checkers)
    else:
        from rocm_lint.configfiles.scanner import read_unit

        unit = read_unit(path, text, config, language, project.workspace)
    if unit is None or isinstance(unit, FileError):
        return unit or []
    return unit_findings(unit, checkers, superseding_rules(family))


# -- a unit's findings: one loop for the C++ and config readers ----------------------------------------
def unit_findings(unit, checkers: Sequence[SourceChecker], superseders: Sequence[Rule] = ()) -> List[Finding]:
    """Run ``checkers`` on a reader's unit (``CppUnit``, ``ConfigUnit``) and make its findings:
    hits where the unit says the code never runs on ROCm are dropped (``unit.drops``: C++'s
    NVIDIA-only branches), a config unit keeps one hit per offset and rule, a rule whose
    ``supersedes`` predicate holds replaces the file's other findings (ROC707 on CUTLASS-bound
    files: the port is a rewrite, its line-level findings are noise), and the suppression
    comments apply (:func:`apply_suppressions`)."""
    hits: List[Tuple[Rule, Hit]] = []
    seen = set()
    for checker in checkers:
        for hit in checker.fn(unit):
            if unit.drops(hit.start):
                continue
            if unit.unique_hits:
                key = (hit.start, checker.rule.code)
                if key in seen:
                    continue
                seen.add(key)
            hits.append((checker.rule, hit))
    for superseder in superseders:
        if hits and superseder.supersedes is not None and superseder.supersedes(unit):
            hits = [(rule, hit) for rule, hit in hits if rule is superseder]
    findings = findings_from_hits(unit.path, hits, unit.index)
    if unit.scope is not None:
        findings = [replace(f, scope=unit.scope) for f in findings]
    if unit.keeps_fixes and unit.line_break != "\n" and any(f.fix is not None for f in findings):
        # a file whose lines end in CR alone: the fixes' new lines end as its lines do
        findings = [_with_line_break(f, unit.line_break) for f in findings]
    if not unit.keeps_fixes:
        # each finding says why it has no fix (a display-only fix carries the reason)
        why = unit.no_fix_reason or "not fixed: the fixes cannot be applied to this file's text"
        findings = [
            replace(f, fix=Fix(Applicability.DISPLAY, why)) if f.fix is not None else f for f in findings
        ]
    return apply_suppressions(findings, unit.text, unit.comment_style)


def _with_line_break(f: Finding, line_break: str) -> Finding:
    if f.fix is None or not f.fix.edits:
        return f
    edits = tuple(replace(e, content=e.content.replace("\n", line_break)) for e in f.fix.edits)
    return replace(f, fix=replace(f.fix, edits=edits))


def apply_suppressions(
    findings: List[Finding], text: str, style: str, tree: Optional[ast.Module] = None
) -> List[Finding]:
    """The findings no suppression comment of ``text`` covers (``rocm_lint.noqa``), the one place
    every language's suppressions apply: ``style`` ``"python"`` (``# noqa`` in the logical line,
    ``tree`` limiting the tokenizing), ``"//"`` (C++ comments) or ``"#"`` (config files)."""
    if style == "python":
        return noqa.filter_findings(findings, text, tree)
    return noqa.filter_comment_findings(findings, text, hash_comments=style == "#")


def _check_notebook(
    path: str, text: str, config: Config, codes: Optional[FrozenSet[str]], project: Optional["Project"]
) -> Union[List[Finding], FileError]:
    """A Jupyter notebook: its code cells checked as one Python module (:mod:`rocm_lint.notebook`)."""
    from rocm_lint.notebook import read_notebook, syntax_error_in_cells, to_cells

    notebook = read_notebook(path, text)
    if isinstance(notebook, FileError) or not notebook.python:
        return notebook if isinstance(notebook, FileError) else []
    result = check_python_source(path, notebook.module, config, codes, project)
    if isinstance(result, FileError):
        return syntax_error_in_cells(notebook, result)
    return to_cells(notebook, result)


# -- files -------------------------------------------------------------------------------
def check_file(
    path: str, config: Config, project: Optional["Project"] = None, workspace: Optional["Workspace"] = None
) -> Union[List[Finding], FileError]:
    text = read_source(path)
    if isinstance(text, FileError):
        return text
    return check_source(path, text, config, project=project, workspace=workspace)
