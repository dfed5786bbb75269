"""Fix files on disk: re-read, fix, verify, and write atomically.

A write goes to a temporary file in the same directory (created with ``O_EXCL``, named
``.rocm-lint-<pid>-*.tmp``) and is renamed over the original, so a crash never leaves half a file;
temporary files of processes that no longer run are removed by the next run that fixes a file
beside them.  The original's encoding (PEP 263 cookie or BOM), line endings, final newline,
permission bits and owner are kept.

What is refused, with an error line and nothing written:

* a path that leads through a symbolic link out of the project root: the configuration's root,
  else the tree named on the command line that holds the path (``roots``: a named directory, or
  a named file's directory; the working directory for callers that name none).  Run from ``/`` or
  ``$HOME`` on a tree without a configuration, a link in the tree that leads elsewhere in the
  home directory is refused: the working directory is not a root when the command line names
  the trees;
* a read-only file (no write bit in its mode: checked on the bits, so root does not overwrite
  it either);
* a file with more than one hard link: replacing it would split the links (the other names keep
  the old text), and writing in place would lose the atomicity; which name is "the" file is the
  user's call;
* a file whose content changed on disk since it was read: the content is compared again after
  the temporary file is written, just before the rename (an editor's save is never lost to a
  stale read).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from rocm_lint.workspace import Workspace

from rocm_lint.config import Config
from rocm_lint.finding import FileError, Finding

TEMP_PREFIX = ".rocm-lint-"
TEMP_SUFFIX = ".tmp"
# ``.rocm-lint-<pid>-<random>.tmp`` (ours); ``.rocm-lint-<random>.tmp`` (before the pid was kept)
_TEMP_NAME = re.compile(r"\.rocm-lint-(?:(\d+)-)?[^/]*\.tmp\Z")
STALE_AFTER = 24 * 3600  # a temp file older than this is stale whatever its pid says (pid reuse)
_swept: set = set()  # directories this process has already cleaned (a run fixes many files in one)


@dataclass
class FileFix:
    path: str
    old: str
    new: str
    applied: List[Finding] = field(default_factory=list)
    dropped: List[Tuple[Finding, str]] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.new != self.old


class ChangedOnDisk(Exception):
    pass


class Refused(Exception):
    """A write rocm-lint will not make (the message says why)."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def named_roots(paths) -> Tuple[str, ...]:
    """The trees a command line names (``check --fix PATH...``): each directory, or a file's
    directory, as an absolute path."""
    out = []
    for path in paths:
        named = os.path.abspath(path)
        out.append(named if os.path.isdir(named) else os.path.dirname(named))
    return tuple(out)


def project_root(path: str, config: Config, roots: Optional[Tuple[str, ...]] = None) -> str:
    """The root a fix of ``path`` may write under: the configuration's root or, innermost
    first, the tree of ``roots`` (:func:`named_roots`; the working directory when None) that
    holds the path as named; else the directory of the path itself."""
    named = os.path.abspath(path)
    trees = sorted(roots, key=len, reverse=True) if roots is not None else [os.getcwd()]
    for root in ([str(config.root)] if config.root is not None else []) + trees:
        if _inside(named, os.path.abspath(root)):
            return root
    return os.path.dirname(named)


def write_target(path: str, config: Config, roots: Optional[Tuple[str, ...]] = None) -> str:
    """The real file a fix of ``path`` writes (symlinks are written through, never replaced),
    or :class:`Refused` when a link leads out of the project root."""
    real = os.path.realpath(path)
    if real != os.path.abspath(path):
        root = os.path.realpath(project_root(path, config, roots))
        if not _inside(real, root):
            raise Refused(f"not fixed: a symbolic link leads out of the project ({root}) to {real}")
    return real


def check_writable(st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise Refused("not fixed: not a regular file")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise Refused("not fixed: the file is read-only")
    if st.st_nlink > 1:
        raise Refused(f"not fixed: the file has {st.st_nlink} hard links (replacing it would split them)")


@dataclass
class Source:
    """A file read for rewriting: the real file written (symlinks are written through), its stat
    and bytes before (what :func:`write_back` checks again right before the rename), its text."""

    real: str
    before: os.stat_result
    data: bytes
    text: str
    encoding: str = "utf-8"  # what the text was decoded with (engine.decode): written back in it


def read_for_write(path: str, config: Config, *, write: bool, roots=None) -> Source:
    """Read ``path`` as a rewrite (``--fix``, ``--add-noqa``) needs it; :class:`Refused` (with the
    reason) for a file that cannot be read or, with ``write``, must not be written."""
    from rocm_lint.discovery import read_bounded
    from rocm_lint.engine import MAX_FILE_BYTES, decode

    try:
        real = write_target(path, config, roots) if write else os.path.realpath(path)
        before = os.stat(real)
        if write:
            check_writable(before)
        data = read_bounded(real, MAX_FILE_BYTES)  # regular files only, never past the limit
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    if isinstance(data, str):
        raise Refused(data)
    decoded = decode(path, data)
    if isinstance(decoded, FileError):
        raise Refused(decoded.reason)
    return Source(real, before, data, decoded.text, decoded.encoding)


def write_back(path: str, source: Source, new_text: str) -> Optional[str]:
    """Write ``new_text`` over ``source`` atomically, in the file's encoding, keeping its mode and
    owner (the text keeps its line endings); None, or why it was not written."""
    encoding = source.encoding
    try:
        directory = os.path.dirname(source.real)
        if directory not in _swept:
            _swept.add(directory)
            remove_stale_temps(directory)
        write_atomic(source.real, new_text, encoding, source.before, expected=source.data)
    except ChangedOnDisk:
        return "changed on disk while being fixed; not written"
    except Refused as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None


def fix_file(
    path: str,
    config: Config,
    *,
    unsafe: bool,
    write: bool,
    keep=None,
    workspace: Optional["Workspace"] = None,
    roots: Optional[Tuple[str, ...]] = None,
) -> FileFix:
    from rocm_lint.discovery import language_of
    from rocm_lint.fix.api import fix_text

    try:
        source = read_for_write(path, config, write=write, roots=roots)
    except Refused as exc:
        return FileFix(path, "", "", error=str(exc))
    text = source.text
    result = fix_text(
        path, text, config, unsafe=unsafe, language=language_of(path), keep=keep, workspace=workspace
    )
    if isinstance(result, FileError):
        return FileFix(path, text, text, error=result.reason)
    outcome = FileFix(path, text, result.text, result.applied, result.dropped)
    if write and outcome.changed:
        error = write_back(path, source, result.text)
        if error is not None:
            outcome.error = error
            outcome.new, outcome.applied = text, []
    return outcome


def _read(path: str) -> bytes:
    from rocm_lint.discovery import read_bounded
    from rocm_lint.engine import MAX_FILE_BYTES

    data = read_bounded(path, MAX_FILE_BYTES)
    if isinstance(data, str):
        raise ChangedOnDisk(data)  # no longer a regular file of a sane size: do not replace it
    return data


def temp_file(directory: str) -> Tuple[int, str]:
    """A new temporary file beside the target (``O_EXCL``: never an existing file or link)."""
    return tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=TEMP_SUFFIX)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, someone else's
        return True
    return True


def remove_stale_temps(directory: str) -> List[str]:
    """Remove the temporary files that killed rocm-lint runs left in ``directory`` (those of
    processes that no longer run, or older than a day); returns their names."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    now = time.time()
    for name in names:
        m = _TEMP_NAME.match(name)
        if not m:
            continue
        full = os.path.join(directory, name)
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            continue
        pid = int(m.group(1)) if m.group(1) else None
        old = now - st.st_mtime > STALE_AFTER
        if old or (pid is not None and not _alive(pid)) or (pid is None and now - st.st_mtime > 3600):
            try:
                os.unlink(full)
                removed.append(name)
            except OSError:
                pass
    return removed


def write_atomic(
    path: str, text: str, encoding: str, before: os.stat_result, expected: Optional[bytes] = None
) -> None:
    """Replace ``path`` with ``text``, keeping its mode and owner.  ``expected``: the bytes the
    fix was computed from; when the file no longer holds them (checked after the temporary file
    is written, right before the rename), :class:`ChangedOnDisk` and nothing is written."""
    data = text.encode(encoding)
    now = os.stat(path)
    if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
        raise ChangedOnDisk(path)
    check_writable(now)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = temp_file(directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if hasattr(os, "fchown") and (now.st_uid, now.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fh.fileno(), now.st_uid, now.st_gid)
                except PermissionError:
                    raise Refused("not fixed: cannot keep the file's owner (owned by another user)") from None
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(now.st_mode))
        # The last look, as late as it can be: content (an editor may keep size and mtime), then
        # identity (another program may have replaced the file).
        if expected is not None and _read(path) != expected:
            raise ChangedOnDisk(path)
        last = os.stat(path)
        if (last.st_ino, last.st_dev) != (now.st_ino, now.st_dev):
            raise ChangedOnDisk(path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# Fixing is CPU-bound (LibCST, the independent NVIDIA-path check): files are fixed in worker
# processes when there are enough of them to pay for the start-up (LibCST's import included).
PARALLEL_FIX_FILES = 8


def fix_files(
    paths: List[str],
    config: Config,
    *,
    unsafe: bool,
    write: bool,
    jobs: Optional[int] = None,
    keep=None,
    workspace: Optional["Workspace"] = None,
    roots: Optional[Tuple[str, ...]] = None,
) -> List[FileFix]:
    """:func:`fix_file` for each of ``paths`` (results in the same order), in ``jobs`` worker
    processes on bigger sets.  Workers read the project facts of this process (the check's
    pre-pass), so a file is fixed as a serial run fixes it.  Paths that lead to one real file
    are fixed one after the other (the second sees the first's result), never concurrently."""
    jobs = jobs or os.cpu_count() or 1
    first: dict = {}
    parallel: List[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in first:
            first[real] = path
            parallel.append(path)
    if jobs < 2 or len(parallel) < PARALLEL_FIX_FILES:
        return [
            fix_file(p, config, unsafe=unsafe, write=write, keep=keep, workspace=workspace, roots=roots)
            for p in paths
        ]
    from rocm_lint.python.project import project_for
    from rocm_lint.workspace import Workspace

    seed = project_for(workspace if workspace is not None else Workspace(), config).seed()
    n = jobs * 4
    chunks = [parallel[i::n] for i in range(n)]
    results = {}
    from rocm_lint.workers import process_pool

    with process_pool(jobs) as pool:
        for chunk, outcomes in zip(
            chunks, pool.map(_fix_many, [(c, config, seed, unsafe, write, keep, roots) for c in chunks])
        ):
            results.update(zip(chunk, outcomes))
    return [
        results[p]
        if p in results
        else fix_file(p, config, unsafe=unsafe, write=write, keep=keep, workspace=workspace, roots=roots)
        for p in paths
    ]


def _fix_many(args) -> List[FileFix]:
    paths, config, seed, unsafe, write, keep, roots = args
    from rocm_lint.python.project import Project, use_project
    from rocm_lint.workspace import Workspace

    workspace = Workspace()  # the worker process's own, seeded with the check's project facts
    use_project(workspace, config, Project.from_seed(config, seed, workspace))
    return [
        fix_file(p, config, unsafe=unsafe, write=write, keep=keep, workspace=workspace, roots=roots)
        for p in paths
    ]
