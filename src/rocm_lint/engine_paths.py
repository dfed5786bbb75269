"""The engine's run over paths: the file walk, phase 0 (the project model's pre-pass), the content
cache and the worker processes; each file goes through :func:`rocm_lint.engine.check_file`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple, Union

from rocm_lint.config import Config
from rocm_lint.discovery import iter_files, language_of
from rocm_lint.engine import (
    MAX_FILE_BYTES,
    Report,
    check_file,
    decode_source,
    read_source,
    selected_codes,
)
from rocm_lint.finding import FileError, Finding
from rocm_lint.registry import exported_facts

if TYPE_CHECKING:  # pragma: no cover
    from rocm_lint.python.project import Project
    from rocm_lint.workspace import Workspace

_FOLLOW_IMPORTS = 64  # runs of at most this many files also read the project modules they import


# The worker process's own front end: the pool's workers are processes of their own, and each
# keeps one workspace and project model for the chunks it is handed (the key says for which run).
_WORKER_PROJECT: List[object] = []  # (key, Project) of this worker process


def _worker_project(config: Config, seed: dict) -> "Project":
    """One project model per worker process and seed: the modules it summarised for one chunk
    serve the next (a model per chunk parsed the same imported modules 16 times)."""
    from rocm_lint.python.project import Project

    key = (id(config), repr(config), tuple(seed.get("roots", ())), tuple(seed.get("trigger_words", ())))
    if _WORKER_PROJECT and _WORKER_PROJECT[0] == key:
        return _WORKER_PROJECT[1]  # type: ignore[return-value]
    # the worker's workspace serves every chunk it is handed (headers, build files: what the
    # process-wide caches did before); the key's id(config) differs per chunk (unpickled copies)
    workspace = _WORKER_PROJECT[1].workspace if _WORKER_PROJECT else None  # type: ignore[attr-defined]
    project = Project.from_seed(config, seed, workspace)
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
    project.prepass(_python_sources(paths), exported_facts(selected_codes(config)))
    return sorted(project.trigger_words)


def _roots(paths: Sequence[str]) -> List[str]:
    """Directories named on the command line: import roots of the project model."""
    return [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]


def check_paths(
    paths: Sequence[str],
    config: Config,
    jobs: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    cache_dir: Optional[str] = None,
    workspace: Optional["Workspace"] = None,
) -> Report:
    """Check every file under ``paths``; ``progress(done, total)`` is called as files finish.

    With ``cache_dir`` the content cache (:mod:`rocm_lint.cache`) answers for every file whose
    content, dependencies and project trigger names are unchanged; only the others are checked.
    ``workspace``: the front end's caches (a fresh one when None); the pre-pass's project model
    becomes the one it holds for ``config`` (``--fix`` reads the same facts)."""
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
    from rocm_lint.workspace import Workspace

    workspace = workspace if workspace is not None else Workspace()
    project = Project(config, _roots(paths), workspace=workspace)
    use_project(workspace, config, project)
    # The exported facts are Python rules' (their families import Python's reader): a run with no
    # Python file (a C++ or config file from an editor) has none to collect, and the project model
    # is left as an empty pre-pass leaves it.
    if any(language_of(path) in ("python", "notebook") for path in files):
        facts = exported_facts(selected_codes(config))
    else:
        facts = ()
        project.prepass((), facts)
    cache = None
    digests: Dict[str, str] = {}
    if cache_dir is not None:
        from rocm_lint.cache import Cache

        cache = Cache(cache_dir, config, workspace)
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

                project.prepass(
                    _python_sources(files, python_bytes),
                    facts,
                    follow_imports=len(files) <= _FOLLOW_IMPORTS,
                    known=known,
                )
                python_bytes.clear()
            elif parallel:
                from rocm_lint.workers import process_pool

                pool = process_pool(jobs)
                words: set = set()
                for batch_words in pool.map(
                    _prepass_many, [(c, config, project.seed()) for c in _chunks(files, jobs)]
                ):
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
            from rocm_lint.workers import process_pool

            pool = pool or process_pool(jobs)
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
            if (
                entry is not None
                and entry.get("hash") == digests.get(path)
                and entry.get("candidates") != names
            ):
                entry["candidates"] = names
                cache.changed(os.path.abspath(path))  # its shard is written
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
    with project.workspace.recording_reads() as reads:
        result = check_file(path, config, project)
    reads.discard(os.path.abspath(path))
    return result, sorted(reads)
