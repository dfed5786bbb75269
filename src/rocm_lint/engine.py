"""The engine: read a file, pick its analyser, apply suppressions, collect findings.

Every front end (CLI, flake8, LSP) goes through here or through
:func:`analyse_python_tree`, so a rule runs the same way everywhere.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from rocm_lint import noqa
from rocm_lint.config import Config
from rocm_lint.discovery import iter_files, language_of, read_bounded
from rocm_lint.finding import FileError, Finding
from rocm_lint.words import find_words
from rocm_lint.registry import (all_rules, exported_facts, python_checkers, python_observers, source_checkers,
                                superseding_rules)

if TYPE_CHECKING:  # pragma: no cover
    from rocm_lint.python.project import Project

_FOLLOW_IMPORTS = 64  # runs of at most this many files also read the project modules they import
MAX_FILE_BYTES = 16 * 1024 * 1024  # larger files are reported and skipped


@dataclass
class Report:
    findings: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    files_checked: int = 0


# -- rule selection ----------------------------------------------------------------------
@lru_cache(maxsize=512)
def _triggers(codes: FrozenSet[str], language: str) -> Tuple[str, ...]:
    return tuple(sorted({t for r in all_rules() if r.code in codes and language in r.languages
                         for t in r.triggers}))


@lru_cache(maxsize=64)
def _prefilters(codes: FrozenSet[str], language: str):
    """Per rule: (trigger words, precheck regex or None)."""
    return tuple((r.triggers, re.compile(r.precheck) if r.precheck else None)
                 for r in all_rules() if r.code in codes and language in r.languages and r.triggers)


@lru_cache(maxsize=64)
def _rule_filters(codes: FrozenSet[str], language: str):
    """Per rule: (code, trigger words, precheck regex or None); rules without triggers always run."""
    return tuple((r.code, r.triggers, re.compile(r.precheck) if r.precheck else None)
                 for r in all_rules() if r.code in codes and language in r.languages)


# The trigger words a text holds, for the last text asked about: the pre-filter, the rule
# narrowing and the lines of interest all ask, and each search of every word cost a pass.
# (One tuple, read and replaced whole: safe with the language server's threads.)
_PRESENT: List[Tuple[object, object, FrozenSet[str]]] = [(None, None, frozenset())]


def present_words(text: str, codes: FrozenSet[str], language: str = "python") -> FrozenSet[str]:
    """The trigger words of the enabled rules that occur in ``text`` (substrings)."""
    last_text, key, found = _PRESENT[0]
    if last_text is text and key == (codes, language):
        return found
    found = find_words(text, _triggers(codes, language))
    _PRESENT[0] = (text, (codes, language), found)
    return found


def _rules_in(text: str, codes: FrozenSet[str], language: str) -> FrozenSet[str]:
    """The enabled rules that could fire in ``text`` (the per-rule form of :func:`worth_parsing`)."""
    found = present_words(text, codes, language)
    return frozenset(code for code, words, precheck in _rule_filters(codes, language)
                     if not words or any(w in found for w in words) and (precheck is None or precheck.search(text)))


@lru_cache(maxsize=64)
def _exporting_rules(codes: FrozenSet[str]) -> FrozenSet[str]:
    return frozenset(r.code for r in all_rules() if r.code in codes and any(f.triggers for f in r.exports))


def worth_parsing(text: str, codes: FrozenSet[str], language: str = "python") -> bool:
    """Could any enabled rule fire in ``text``? (Most files are answered here, unparsed.)"""
    found = present_words(text, codes, language)
    if not found:
        return False
    for words, precheck in _prefilters(codes, language):
        if any(w in found for w in words) and (precheck is None or precheck.search(text)):
            return True
    return False


@lru_cache(maxsize=16)
def _selected_codes(config: Config) -> FrozenSet[str]:
    return config.enabled_codes([r.code for r in all_rules()])


def enabled_codes(config: Config, path: Optional[str] = None) -> FrozenSet[str]:
    codes = _selected_codes(config)
    if path is not None:
        off = config.ignored_for(path)
        if off:
            codes = frozenset(c for c in codes if not c.startswith(off))
    return codes


@lru_cache(maxsize=1)
def python_codes() -> FrozenSet[str]:
    """Every registered Python code (flake8 gets them all and selects itself)."""
    return frozenset(r.code for r in all_rules() if "python" in r.languages)


# -- reading -----------------------------------------------------------------------------
def read_source(path: str) -> Union[str, FileError]:
    """Decode a source file the way Python would (PEP 263 cookie, BOM), or say why not."""
    try:
        data = read_bounded(path, MAX_FILE_BYTES)  # regular files only, never past the limit
    except OSError as exc:
        return FileError(path, f"cannot read: {(exc.strerror or str(exc)).lower()}")
    if isinstance(data, str):
        return FileError(path, data)
    return decode_source(path, data)


def source_encoding(path: str, data: bytes) -> str:
    """How a non-Python file is decoded: UTF-8, or Latin-1 for legacy bytes (C++ comments
    in old code bases), which round-trips every byte so a fix never corrupts the file."""
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "latin-1"


def decode_source(path: str, data: bytes) -> Union[str, FileError]:
    if b"\0" in data:
        return FileError(path, "binary file (contains NUL bytes); skipped")
    if language_of(path) not in (None, "python"):
        return data.decode(source_encoding(path, data))
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if b"coding" in data[:400]:  # a bad PEP 263 cookie
            return FileError(path, f"cannot decode: {exc.msg if hasattr(exc, 'msg') else exc}")
        encoding = "utf-8"  # undecodable first lines: let the decoder say where
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        return FileError(path, f"cannot decode as {encoding}{where}: {reason}")


# -- Python ------------------------------------------------------------------------------
def analyse_python_tree(path: str, text: str, tree: ast.Module, config: Config,
                        codes: FrozenSet[str], project: Optional["Project"] = None) -> List[Finding]:
    """Run the enabled Python rules on an already parsed module (flake8 calls this).

    Phase 0 is the project model (``project``: what other modules export, see
    :mod:`rocm_lint.python.project`; lazily filled when not given).  Phase 1 builds the module's context (imports, bindings, ROCm/NVIDIA predicates); the module
    facts rules declare (``Rule.facts``) belong to it too, computed once on first use, as they
    never depend on the walk's state (computing them up front cost 5% of a run on files where no
    checker needed them).  Phase 2 walks the module once, gated, running observers then checkers;
    the caller applies suppressions."""
    from rocm_lint.python.analyzer import Analyzer, extend_with_bound_names, trigger_lines
    from rocm_lint.python.context import ModuleContext
    from rocm_lint.python.project import project_for

    project = project if project is not None else project_for(config)
    codes = frozenset(codes)
    found = present_words(text, codes, "python")
    exported = project.words_for(path, text, exported_facts(codes))  # wrappers other modules define
    if not exported and not (found and worth_parsing(text, codes)):
        return []  # the CLI's pre-filter, for flake8 and the language server too (they parse first)
    # Only the rules whose trigger (and precheck) the file holds run; with an exported name in
    # it, the rules that read exports too.  The walk visits the lines of those rules' trigger
    # words only (a rule whose precheck failed adds no lines: `graph` in torch.fx is not ROC206's).
    codes = _rules_in(text, codes, "python") | (_exporting_rules(codes) if exported else frozenset())
    present = [w for w in _triggers(codes, "python") if w in found]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    ctx = ModuleContext(path, tree, config, text, project)
    lines = extend_with_bound_names(text, trigger_lines(text, present + exported), ctx)
    findings = Analyzer(ctx, python_checkers(codes), lines, python_observers(codes)).run()
    # One place can be reached twice (a dict constant handed to two compile calls).
    return sorted(set(findings))


def check_python_source(path: str, text: str, config: Config,
                        codes: Optional[FrozenSet[str]] = None,
                        project: Optional["Project"] = None) -> Union[List[Finding], FileError]:
    from rocm_lint.python.project import project_for

    codes = enabled_codes(config, path) if codes is None else codes
    project = project if project is not None else project_for(config)
    if not worth_parsing(text, codes) and not project.words_for(path, text, exported_facts(codes)):
        return []  # the fast path: most files never reach the parser
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "unknown position"
        return FileError(path, f"syntax error at {where}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileError(path, f"cannot parse: {type(exc).__name__}: {exc}")
    try:
        findings = analyse_python_tree(path, text, tree, config, codes, project)
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    return noqa.filter_findings(findings, text, tree)


# -- C++ and config files ------------------------------------------------------------------
def check_source(path: str, text: str, config: Config, language: Optional[str] = None,
                 codes: Optional[FrozenSet[str]] = None,
                 project: Optional["Project"] = None) -> Union[List[Finding], FileError]:
    """Check one file's text with the analyser of its language.  A defect of rocm-lint on one
    file (an exception in a rule) is that file's error line, never the end of the run."""
    try:
        return _check_source(path, text, config, language, codes, project)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    except Exception as exc:  # noqa: BLE001 - one file's bug must not cost the others
        return FileError(path, f"internal error while checking ({type(exc).__name__}: {exc}); "
                               "please report it to rocm-lint")


def _check_source(path: str, text: str, config: Config, language: Optional[str],
                  codes: Optional[FrozenSet[str]], project: Optional["Project"]) -> Union[List[Finding], FileError]:
    language = language or language_of(path)
    if language == "python":
        return check_python_source(path, text, config, codes, project)
    if language == "notebook":
        return _check_notebook(path, text, config, codes, project)
    codes = enabled_codes(config, path) if codes is None else codes
    if language in ("cuda", "cpp"):
        if not worth_parsing(text, codes, "cuda"):
            return []
        from rocm_lint.cpp.scanner import check_cpp_source

        return check_cpp_source(path, text, config, source_checkers("cuda", codes), language,
                                superseding_rules("cuda"))
    if language is not None:
        if not worth_parsing(text, codes, language):
            return []
        from rocm_lint.configfiles.scanner import check_config_source

        return check_config_source(path, text, config, source_checkers(language, codes), language)
    return []


def _check_notebook(path: str, text: str, config: Config, codes: Optional[FrozenSet[str]],
                    project: Optional["Project"]) -> Union[List[Finding], FileError]:
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
def check_file(path: str, config: Config, project: Optional["Project"] = None) -> Union[List[Finding], FileError]:
    text = read_source(path)
    if isinstance(text, FileError):
        return text
    return check_source(path, text, config, project=project)


_WORKER_PROJECT: List[object] = []  # (key, Project) of this worker process


def _worker_project(config: Config, seed: dict) -> "Project":
    """One project model per worker process and seed: the modules it summarised for one chunk
    serve the next (a model per chunk parsed the same imported modules 16 times)."""
    from rocm_lint.python.project import Project

    key = (id(config), repr(config), tuple(seed.get("roots", ())), tuple(seed.get("trigger_words", ())))
    if _WORKER_PROJECT and _WORKER_PROJECT[0] == key:
        return _WORKER_PROJECT[1]  # type: ignore[return-value]
    project = Project.from_seed(config, seed)
    _WORKER_PROJECT[:] = [key, project]
    return project


def _check_many(args: Tuple[Sequence[str], Config, dict, bool]):
    """A worker's share: (result, files read besides it) per path."""
    paths, config, seed, record = args
    project = _worker_project(config, seed)
    return [_check_recorded(p, config, project, record) for p in paths]


# -- phase 0: the project model ------------------------------------------------------------
def _python_sources(paths: Sequence[str], data: Optional[Dict[str, bytes]] = None):
    """(path, read) for the Python files; ``data`` holds bytes already read."""
    for path in paths:
        if language_of(path) == "python":
            def read(path: str = path) -> Optional[str]:
                raw = data.get(path) if data else None
                text = decode_source(path, raw) if raw is not None else read_source(path)
                return None if isinstance(text, FileError) else text
            yield path, read


def _prepass_many(args: Tuple[Sequence[str], Config, dict]) -> List[str]:
    from rocm_lint.python.project import Project

    paths, config, seed = args
    project = Project.from_seed(config, seed)
    project.prepass(_python_sources(paths), exported_facts(_selected_codes(config)))
    return sorted(project.trigger_words)


def _roots(paths: Sequence[str]) -> List[str]:
    """Directories named on the command line: import roots of the project model."""
    return [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]


def check_paths(paths: Sequence[str], config: Config, jobs: Optional[int] = None,
                progress: Optional[Callable[[int, int], None]] = None,
                cache_dir: Optional[str] = None) -> Report:
    """Check every file under ``paths``; ``progress(done, total)`` is called as files finish.

    With ``cache_dir`` the content cache (:mod:`rocm_lint.cache`) answers for every file whose
    content, dependencies and project trigger names are unchanged; only the others are checked."""
    report = Report()
    files: List[str] = []
    for item in iter_files(paths, config):
        if isinstance(item, FileError):
            report.errors.append(item)
        else:
            files.append(item)
    report.files_checked = len(files)
    jobs = jobs or os.cpu_count() or 1
    from rocm_lint.python.project import Project, use_project

    project = Project(config, _roots(paths))
    use_project(config, project)
    facts = exported_facts(_selected_codes(config))
    cache = None
    digests: Dict[str, str] = {}
    if cache_dir is not None:
        from rocm_lint.cache import Cache

        cache = Cache(cache_dir, config)
        digests, python_bytes = _digests(files, cache)
    parallel = jobs > 1 and len(files) >= 200
    results: Dict[str, Union[List[Finding], FileError]] = {}
    pool = None
    try:
        # Phase 0: the project's exported names (spread over the workers on big trees).
        if any(f.triggers for f in facts):
            if cache is not None:
                entries = cache.entries

                def known(path: str) -> Optional[List[str]]:
                    entry = entries.get(os.path.abspath(path))
                    if entry and entry.get("hash") == digests.get(path) and "candidates" in entry:
                        return list(entry["candidates"])
                    return None
                project.prepass(_python_sources(files, python_bytes), facts,
                                follow_imports=len(files) <= _FOLLOW_IMPORTS, known=known)
                python_bytes.clear()
            elif parallel:
                from concurrent.futures import ProcessPoolExecutor

                pool = ProcessPoolExecutor(max_workers=jobs)
                words: set = set()
                for batch_words in pool.map(_prepass_many, [(c, config, project.seed())
                                                            for c in _chunks(files, jobs)]):
                    words.update(batch_words)
                project.trigger_words = frozenset(words)
                project.prepassed = True
            else:
                # A few files (pre-commit's changed files): read the modules they import too.
                project.prepass(_python_sources(files), facts, follow_imports=len(files) <= _FOLLOW_IMPORTS)
        todo = files
        if cache is not None:
            triggers = project.trigger_key()
            todo = []
            for path in files:
                hit = cache.lookup(path, digests[path], triggers) if path in digests else None
                if hit is None:
                    todo.append(path)
                else:
                    results[path] = hit
            if progress is not None and results:
                progress(len(results), len(files))
        record = cache is not None
        # Processes pay for themselves only on bigger trees (start-up is ~50 ms each).
        if jobs > 1 and len(todo) >= 200:
            from concurrent.futures import ProcessPoolExecutor

            pool = pool or ProcessPoolExecutor(max_workers=jobs)
            seed = project.seed()
            chunks = _chunks(todo, jobs)
            batches = zip(chunks, pool.map(_check_many, [(c, config, seed, record) for c in chunks]))
        else:
            batches = (([path], [_check_recorded(path, config, project, record)]) for path in todo)
        for chunk, batch in batches:
            for path, (result, deps) in zip(chunk, batch):
                results[path] = result
                if cache is not None and path in digests:
                    cache.store(path, digests[path], triggers, deps, result)
            if progress is not None:
                progress(len(results), len(files))
    finally:
        if pool is not None:
            pool.shutdown()
    if cache is not None:
        for path, names in project.file_candidates.items():
            entry = cache.entries.get(os.path.abspath(path))
            if entry is not None and entry.get("hash") == digests.get(path):
                entry["candidates"] = names
        cache.save()
    for path in files:
        result = results[path]
        if isinstance(result, FileError):
            report.errors.append(result)
        else:
            report.findings.extend(result)
    report.findings.sort()
    report.errors.sort(key=lambda e: e.path)
    return report


def _chunks(files: Sequence[str], jobs: int) -> List[List[str]]:
    """Many small interleaved chunks: heavy files cluster in directories."""
    n = jobs * 16
    return [list(files[i::n]) for i in range(n)]


def _digests(files: Sequence[str], cache) -> Tuple[Dict[str, str], Dict[str, bytes]]:
    """Content hashes of the files to check (a file that cannot be read gets none: it is
    checked, and its error reported, every time), and the bytes of the Python files that had
    to be read for it (phase 0 reads no file twice)."""
    out: Dict[str, str] = {}
    python: Dict[str, bytes] = {}
    for path in files:
        digest, data = cache.digest(path, MAX_FILE_BYTES)
        if digest is not None:
            out[path] = digest
            if data is not None and language_of(path) == "python":
                python[path] = data
    return out, python


def _check_recorded(path: str, config: Config, project: "Project", record: bool):
    """(result, files the check read besides ``path``)."""
    if not record:
        return check_file(path, config, project), ()
    from rocm_lint.discovery import recording_reads

    with recording_reads() as reads:
        result = check_file(path, config, project)
    reads.discard(os.path.abspath(path))
    return result, sorted(reads)


def forget_read_files() -> None:
    """Drop what the readers cached of files other than the one checked (project headers and
    their facts, build files, requirement includes): a long-lived front end (the language server)
    calls it when one of those files may have changed, so its answer equals a fresh run."""
    from rocm_lint.build import context as build_context, headers
    from rocm_lint.configfiles import manifests
    from rocm_lint.cpp import facts, includes, scanner

    build_context.cache_clear()
    headers.cache_clear()
    facts.cache_clear()
    includes.cache_clear()
    scanner.cache_clear()
    manifests.cache_clear()
