"""What a porting report says it scanned (``output/html.py``): the paths, the repository's commit,
the date, the rocm-lint version, how many files were checked and how many could not be analysed.

The commit is read from the repository's files, never by running git: ``.git`` (a directory, or a
``gitdir:`` file as in worktrees and submodules), its ``HEAD``, the loose ref it names, else
``packed-refs``; every read bounded (``discovery.read_bounded``), symbolic refs followed a few
steps, a ref name that would leave the git directory refused.  Anything unexpected: no commit.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from rocm_lint import __version__
from rocm_lint.discovery import read_bounded
from rocm_lint.finding import FileError

SMALL_FILE = 4096  # HEAD, a loose ref, a gitdir: or commondir file
PACKED_REFS_LIMIT = 16 << 20  # packed-refs of a repository with very many tags
PARENT_LEVELS = 64
REF_HOPS = 5
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1 or SHA-256


@dataclass
class Commit:
    sha: str
    branch: Optional[str] = None  # None: a detached HEAD


@dataclass
class ScanInfo:
    """The header of the report; every field optional (the page says what it does not know)."""

    paths: Sequence[str] = ()
    files_checked: Optional[int] = None
    commit: Optional[Commit] = None
    when: float = field(default_factory=time.time)
    version: str = __version__
    nvidia_only_reported: bool = False  # --report-nvidia-only-sources


def scan_info(
    paths: Sequence[str], files_checked: Optional[int], *, nvidia_only_reported: bool = False
) -> ScanInfo:
    """The header of a run over ``paths``. ``SOURCE_DATE_EPOCH`` (the reproducible-builds
    variable) fixes the date, so two reports of the same tree can be compared byte for byte."""
    when = time.time()
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        when = float(epoch)
    first = next((p for p in paths if p != "-"), None)
    commit = read_commit(first if first is not None else os.getcwd())
    return ScanInfo(
        paths=tuple(paths),
        files_checked=files_checked,
        commit=commit,
        when=when,
        nvidia_only_reported=nvidia_only_reported,
    )


def reason_kind(reason: str) -> str:
    """A file error's reason without its details: ``syntax error at 3:1: ...`` is ``syntax error``,
    ``cannot read: permission denied`` stays whole (the detail is the kind)."""
    cut = len(reason)
    for sep in (" at ", " in cell ", " (", ";", ": "):
        i = reason.find(sep)
        if 0 < i < cut:
            cut = i
    kind = reason[:cut].strip()
    if kind in ("cannot read", "cannot analyse") and ": " in reason:
        kind = reason.split(";", 1)[0].split(" (", 1)[0].strip()
    return kind or reason


def error_kinds(errors: Sequence[FileError]) -> List[Tuple[str, int]]:
    """(reason kind, files) of the files not analysed, most frequent first."""
    counts = Counter(reason_kind(e.reason) for e in errors)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


# -- the commit, from the repository's files ------------------------------------------------------
def _small(path: str) -> Optional[str]:
    try:
        data = read_bounded(path, SMALL_FILE)
    except OSError:
        return None
    if isinstance(data, str):  # not a regular file, too large
        return None
    return data.decode("utf-8", "replace").strip()


def git_dirs(start: str) -> Optional[Tuple[str, str]]:
    """(git directory, common directory) of the repository holding ``start``, or None."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    for _ in range(PARENT_LEVELS):
        dot_git = os.path.join(here, ".git")
        gitdir = None
        if os.path.isdir(dot_git):
            gitdir = dot_git
        elif os.path.isfile(dot_git):  # a worktree or a submodule: "gitdir: PATH"
            text = _small(dot_git) or ""
            if text.startswith("gitdir:"):
                gitdir = os.path.normpath(os.path.join(here, text[len("gitdir:") :].strip()))
        if gitdir is not None:
            common = _small(os.path.join(gitdir, "commondir"))
            common_dir = os.path.normpath(os.path.join(gitdir, common)) if common else gitdir
            return gitdir, common_dir
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _safe_ref(name: str) -> bool:
    parts = name.split("/")
    return name.startswith("refs/") and all(p and p not in (".", "..") for p in parts) and "\\" not in name


def _packed(common: str) -> Dict[str, str]:
    try:
        data = read_bounded(os.path.join(common, "packed-refs"), PACKED_REFS_LIMIT)
    except OSError:
        return {}
    if isinstance(data, str):
        return {}
    refs: Dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition(" ")
        if name and _OBJECT_ID.fullmatch(sha):
            refs[name.strip()] = sha
    return refs


def read_commit(start: str) -> Optional[Commit]:
    """The commit checked out in the repository holding ``start`` (None if there is none, or it
    cannot be told from the files: an unborn branch, a broken HEAD)."""
    dirs = git_dirs(start)
    if dirs is None:
        return None
    gitdir, common = dirs
    value = _small(os.path.join(gitdir, "HEAD"))
    branch = None
    packed: Optional[Dict[str, str]] = None
    for _ in range(REF_HOPS):
        if value is None:
            return None
        if _OBJECT_ID.fullmatch(value):
            return Commit(value, branch)
        if not value.startswith("ref:"):
            return None
        ref = value[len("ref:") :].strip()
        if not _safe_ref(ref):
            return None
        if branch is None:
            branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
        loose = _small(os.path.join(gitdir, *ref.split("/"))) or _small(os.path.join(common, *ref.split("/")))
        if loose is None:
            if packed is None:
                packed = _packed(common)
            loose = packed.get(ref)
        value = loose
    return None
