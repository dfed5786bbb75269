"""``--baseline-commit REF``: report only what the changes since REF added (Semgrep's option).

The changes are those between ``git merge-base REF HEAD`` and the working tree (staged and
unstaged edits included), as ``git diff --unified=0 -M`` reports them: each changed file's added
or rewritten lines, in the new file's numbering.  A file renamed since the base is followed (with
``-M``): only the lines its rename changed count, a pure rename counts none.  A file git does not
track (untracked, or ignored and named on the command line) is wholly new.  A deleted file holds
nothing to report.  A finding is kept when its file and line are in that set; files that could not
be analysed are kept when their file is new or changed (or outside the repository), and so are
a notebook's findings (rows in cells, not lines of its JSON) when git says the notebook changed.

git runs as a subprocess with a time limit, no pager, no external diff or text conversion, fixed
``a/``/``b/`` prefixes (whatever ``diff.noprefix`` or ``diff.mnemonicPrefix`` say), and its output
read bounded.  Nothing a repository's own configuration names is run (:data:`SAFE_CONFIG`): no
``core.fsmonitor`` command, no hook (``core.hooksPath=/dev/null``; the index is not rewritten
either: ``GIT_OPTIONAL_LOCKS=0``), no ``diff.external`` or textconv command (``--no-ext-diff
--no-textconv``), no clean/smudge/process filter (each one the configuration defines is set to
nothing for the run: :func:`_filter_overrides`); ``core.sshCommand`` and the credential helpers
serve only remotes, which no command here contacts. a directory outside a git work tree, an unknown REF, or a REF with no
common history with HEAD is a :class:`DiffBaseError` (the CLI exits 2 with its message).
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set

from rocm_lint.finding import Finding

GIT_TIMEOUT = 120  # seconds for one git command
MAX_GIT_OUTPUT = 256 * 1024 * 1024  # bytes read from one git command
HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


# Before every git command: a repository-local configuration (a cloned or unpacked repository
# may bring one) must not have git run a program of its choosing.
SAFE_CONFIG = ("-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null")


class DiffBaseError(Exception):
    """Why the changes since REF cannot be known (a usage error: exit 2)."""


def _git(args: Sequence[str], cwd: str, *, what: str) -> bytes:
    """The stdout of ``git args`` run in ``cwd``: bounded in time and size; a failure raises
    :class:`DiffBaseError` with git's own first line of complaint."""
    env = dict(
        os.environ, GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_OPTIONAL_LOCKS="0"
    )
    env.pop("GIT_EXTERNAL_DIFF", None)
    try:
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                ["git", "--no-pager", *SAFE_CONFIG, *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            )
            timer = threading.Timer(GIT_TIMEOUT, proc.kill)
            timer.start()
            try:
                out = proc.stdout.read(MAX_GIT_OUTPUT + 1)
                if len(out) > MAX_GIT_OUTPUT:
                    proc.kill()
                proc.stdout.close()
                code = proc.wait()
            finally:
                timer.cancel()
            err.seek(0)
            message = err.read(4096).decode("utf-8", "replace").strip().splitlines()
    except FileNotFoundError:
        raise DiffBaseError("--baseline-commit needs git, and git is not on PATH") from None
    except OSError as exc:
        raise DiffBaseError(f"cannot run git: {exc.strerror or exc}") from None
    if len(out) > MAX_GIT_OUTPUT:
        raise DiffBaseError(f"{what}: git's output is larger than {MAX_GIT_OUTPUT >> 20} MiB; not read")
    if code != 0:
        if code < 0:
            raise DiffBaseError(f"{what}: git did not answer within {GIT_TIMEOUT} s")
        first = next((m for m in message if m.strip()), f"git exited with {code}")
        raise DiffBaseError(f"{what}: {first[len('fatal: ') :] if first.startswith('fatal: ') else first}")
    return out


_FILTER_COMMAND = re.compile(r"filter\.(.+)\.(clean|smudge|process)\Z", re.DOTALL)


def _filter_overrides(top: str, what: str) -> List[str]:
    """``-c filter.NAME.clean=`` (and ``smudge``, ``process``) for every filter command the
    configuration defines: ``git diff`` runs a file's clean filter on the working tree's copy, and
    a repository's ``.gitattributes`` picks the filter by name.  (``git config`` lists; it runs
    nothing.)"""
    try:
        out = _git(["config", "--null", "--name-only", "--get-regexp", r"^filter\."], top, what=what)
    except DiffBaseError:
        return []  # none defined (git exits 1)
    overrides: List[str] = []
    for key in sorted(set(out.decode("utf-8", "surrogateescape").split("\0"))):
        if _FILTER_COMMAND.match(key):
            overrides += ["-c", f"{key}="]
    return overrides


def _unquote(name: bytes) -> bytes:
    """A path as git prints it: C-quoted (``"a\\tb"``, octal bytes) when it holds odd characters."""
    if not (name.startswith(b'"') and name.endswith(b'"') and len(name) >= 2):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i : i + 1]
        if c == b"\\" and i + 1 < len(body):
            nxt = body[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if re.fullmatch(rb"[0-7]{3}", body[i + 1 : i + 4] or b""):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
        out += c
        i += 1
    return bytes(out)


def parse_diff(patch: bytes) -> Dict[bytes, Set[int]]:
    """``git diff --unified=0`` output -> {new path (relative to the top level): added lines}.
    A renamed or mode-changed file without hunks maps to an empty set; a deleted file is absent."""
    files: Dict[bytes, Set[int]] = {}
    current: Optional[Set[int]] = None
    renamed_to: Optional[bytes] = None
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            current, renamed_to = None, None
        elif line.startswith(b"rename to "):
            renamed_to = _unquote(line[len(b"rename to ") :])
            current = files.setdefault(renamed_to, set())
        elif line.startswith(b"+++ "):
            target = line[4:]
            if target == b"/dev/null":
                current = None  # deleted: nothing to report there
                continue
            target = _unquote(target)
            if target.startswith(b"b/"):
                target = target[2:]
            current = files.setdefault(target, set())
        elif line.startswith(b"@@ ") and current is not None:
            m = HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2)) if m.group(2) is not None else 1
                current.update(range(start, start + count))  # count 0: a deletion, no new line
    return files


@dataclass
class ChangedLines:
    """What the changes since a commit added, by real path: ``None`` for a wholly new file."""

    top: str  # the work tree's top level (a real path)
    base: str  # the merge-base commit
    changed: Dict[str, Optional[FrozenSet[int]]] = field(default_factory=dict)
    tracked: FrozenSet[str] = frozenset()  # real paths git tracks (in the index)
    hidden: int = 0  # findings the last filter() left out
    _real: Dict[str, str] = field(default_factory=dict, repr=False)

    def real(self, path: str) -> str:
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = os.path.realpath(path)
        return found

    def inside(self, path: str) -> bool:
        real = self.real(path)
        return real == self.top or real.startswith(self.top.rstrip(os.sep) + os.sep)

    def lines_of(self, path: str) -> Optional[FrozenSet[int]]:
        """The added lines of ``path``; None when every line counts (a new file or one outside the
        repository), an empty set when none does."""
        real = self.real(path)
        if not self.inside(path):
            return None
        if real in self.changed:
            return self.changed[real]
        return frozenset() if real in self.tracked else None

    def keeps(self, f: Finding, text: Optional[str] = None, original: Optional[str] = None) -> bool:
        """Whether ``f`` lies on a line the changes added.  ``text``/``original``: a fix pass
        checks a text that earlier fixes changed; its lines are mapped back to ``original``'s."""
        lines = self.lines_of(f.path)
        if lines is None:
            return True
        if f.cell is not None:  # a notebook's rows count in cells, git's lines in its JSON: the whole
            return bool(lines)  # notebook counts when git says it changed
        line = (
            f.line
            if text is None or original is None or text == original
            else _map_back(text, original, f.line)
        )
        return line in lines if isinstance(line, int) else any(n in lines for n in line)

    def filter(self, findings: Sequence[Finding]) -> List[Finding]:
        """The findings on added lines; ``hidden`` counts the others (the summary line says it)."""
        kept = [f for f in findings if self.keeps(f)]
        self.hidden = len(findings) - len(kept)
        return kept

    def file_counts(self, path: str) -> bool:
        """Whether a file that could not be analysed belongs to the changes (new or changed)."""
        lines = self.lines_of(path)
        return lines is None or bool(lines)


def _map_back(text: str, original: str, line: int):
    """``line`` of ``text`` in ``original``'s numbering: one line, or the lines of the original
    region a fix rewrote into it."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), text.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if j1 < line <= j2 or (j1 == j2 == line - 1):
            if tag == "equal":
                return i1 + (line - 1 - j1) + 1
            return range(i1 + 1, max(i2, i1 + 1) + 1)
    return line


def _git_top(start: str) -> str:
    out = _git(["rev-parse", "--show-toplevel"], start, what="--baseline-commit")
    return os.path.realpath(out.decode("utf-8", "surrogateescape").strip())


def changed_since(ref: str, paths: Sequence[str]) -> ChangedLines:
    """The lines added since ``git merge-base REF HEAD`` in the work tree holding ``paths[0]``
    (the current directory without paths)."""
    if not ref or ref.startswith("-"):
        raise DiffBaseError(f"--baseline-commit: {ref!r} is not a commit")
    first = os.path.abspath(paths[0] if paths else ".")
    start = first if os.path.isdir(first) else os.path.dirname(first)
    if not os.path.isdir(start):
        raise DiffBaseError(f"--baseline-commit: {paths[0]}: no such directory")
    try:
        top = _git_top(start)
    except DiffBaseError as exc:
        raise DiffBaseError(
            f"--baseline-commit works in a git repository: {start} is not in one "
            f"({str(exc).split(': ', 1)[-1]})"
        ) from None
    what = f"--baseline-commit {ref}"
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top, what=what)
    except DiffBaseError:
        raise DiffBaseError(f"{what}: unknown revision (not a commit in {top})") from None
    try:
        base = _git(["merge-base", ref, "HEAD"], top, what=what).decode().strip()
    except DiffBaseError as exc:
        raise DiffBaseError(f"{what}: no common ancestor with HEAD ({str(exc).split(': ', 1)[-1]})") from None
    patch = _git(
        [
            *_filter_overrides(top, what),
            "-c",
            "core.quotePath=true",
            "diff",
            "--unified=0",
            "-M",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            base,
            "--",
        ],
        top,
        what=what,
    )
    tracked = _git(["ls-files", "-z", "--cached"], top, what=what)

    def join(rel: bytes) -> str:
        return os.path.realpath(os.path.join(top, os.fsdecode(rel)))

    changed: Dict[str, Optional[FrozenSet[int]]] = {
        join(rel): frozenset(lines) for rel, lines in parse_diff(patch).items()
    }
    return ChangedLines(
        top=top,
        base=base,
        changed=changed,
        tracked=frozenset(join(rel) for rel in tracked.split(b"\0") if rel),
    )
