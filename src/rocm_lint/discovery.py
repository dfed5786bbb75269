"""Which files to check: walk the given paths, honouring .gitignore and excludes.

Like ruff: files named explicitly on the command line are always checked (if
they are of a kind rocm-lint reads) unless ``force-exclude`` is on (the pre-commit
hooks pass ``--force-exclude``); directories are walked without following
symlinked directories, skipping excluded names and git-ignored paths.

Only regular files are read: a FIFO, socket or device (or a link to one, such as
``/dev/zero``) named on the command line is an error line of its own; met in a walk, it is
skipped.  A directory the walk cannot list is an error line too, and the walk goes on.
Every read is bounded before it starts (:func:`read_bounded`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Protocol, Sequence, Tuple, Union

from rocm_lint.finding import FileError


class Config(Protocol):
    """What discovery reads of the settings (``rocm_lint.config.Config``; config reads its files
    through :func:`read_bounded`, so this module does not import it)."""

    exclude: Tuple[str, ...]
    extend_exclude: Tuple[str, ...]
    respect_gitignore: bool
    force_exclude: bool
    root: Optional[Path]


# File kinds the analysers read.  "cuda" files are always scanned by the C++ rules;
# "cpp" files only when they hold device code (``__global__``, warp intrinsics ...).
LANGUAGE_BY_SUFFIX: Dict[str, str] = {
    ".py": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".hip": "cuda",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".c": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".inl": "cpp",
    ".ipp": "cpp",
    ".tcc": "cpp",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".dockerfile": "dockerfile",
    ".containerfile": "dockerfile",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".env": "dotenv",
    ".cmake": "cmake",
    ".ipynb": "notebook",  # its code cells' Python, read by rocm_lint.notebook
}
# Files known by name (or name pattern) rather than suffix.
LANGUAGE_BY_NAME: Dict[str, str] = {
    "cmakelists.txt": "cmake",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    ".env": "dotenv",
    ".envrc": "shell",
    "pyproject.toml": "manifest",
    "setup.cfg": "manifest",
}
# Dependency manifests known by a name pattern: requirements*.txt, constraints.txt,
# test-requirements.txt, requirements/dev.in and any .txt/.in of a `requirements/` folder.
_MANIFEST_SUFFIXES = (".txt", ".in")


def language_of(path: Union[str, Path]) -> Optional[str]:
    name = os.path.basename(os.fspath(path)).lower()
    language = LANGUAGE_BY_NAME.get(name)
    if language is not None:
        return language
    if name.startswith(("dockerfile.", "containerfile.")):  # Dockerfile.rocm, Dockerfile.cuda
        return "dockerfile"
    if name.startswith(".env."):  # .env.local, .env.production
        return "dotenv"
    if name.endswith(".cuh.inl"):
        return "cuda"
    if name.endswith(_MANIFEST_SUFFIXES) and _is_requirements_file(name, path):
        return "manifest"
    dot = name.rfind(".")
    return LANGUAGE_BY_SUFFIX.get(name[dot:]) if dot > 0 else None


def _is_requirements_file(name: str, path: Union[str, Path]) -> bool:
    stem = name.rsplit(".", 1)[0]
    if stem.startswith(("requirements", "constraints")) or stem.endswith(("requirements", "constraints")):
        return True
    parent = os.path.basename(os.path.dirname(os.fspath(path))).lower()
    return parent in ("requirements", "requirement", "reqs") and not stem.lower().startswith(
        ("readme", "license")
    )


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO``, ``a character device`` ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bounded(path: str, limit: int, follow_links: bool = True) -> Union[bytes, str]:
    """The bytes of the regular file at ``path`` (links followed unless ``follow_links`` is
    false: then a link is refused like any file that is not regular), or why not, in words.

    Nothing that could block or never end is read: the file is opened non-blocking (a FIFO
    swapped in after a check cannot hang the open) and must be a regular file, its size is
    checked before reading, and at most ``limit + 1`` bytes are read (a file that grew past
    the limit meanwhile is refused too).  ``OSError`` is left to the caller."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    )
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    st = os.stat(path) if follow_links else os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link; skipped"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({file_kind(st.st_mode)}); skipped"
    if st.st_size > limit:
        return f"file too large ({st.st_size} bytes, limit {limit}); skipped"
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return f"not a regular file ({file_kind(st.st_mode)}); skipped"
        chunks: List[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        return f"file too large (more than {limit} bytes, limit {limit}); skipped"
    return data


MAX_GITIGNORE_BYTES = 1 << 20


class _OneRegexSpec:
    """A ``.gitignore`` without negated patterns as one regex: a path is ignored when any of its
    patterns matches (pathspec tries them one by one: a tenth of a check of a C++ tree)."""

    __slots__ = ("_regex", "_normalize")

    def __init__(self, regex: "re.Pattern[str]", normalize) -> None:
        self._regex = regex
        self._normalize = normalize

    def match_file(self, path: str) -> bool:
        return self._regex.match(self._normalize(path)) is not None


def _combined(spec):
    """``spec`` as one regex when that answers as it does (no negation: the order of patterns
    cannot matter), else ``spec`` itself."""
    try:
        from pathspec.util import normalize_file

        parts: List[str] = []
        flags = None
        for pattern in spec.patterns:
            if pattern.include is None:
                continue  # a comment or blank line
            if pattern.include is False or pattern.regex is None:
                return spec
            if flags is None:
                flags = pattern.regex.flags
            if pattern.regex.flags != flags:
                return spec
            # the patterns share a group name (``ps_d``): unnamed once joined
            parts.append(re.sub(r"\(\?P<\w+>", "(?:", pattern.regex.pattern))
        if not parts:
            return spec
        return _OneRegexSpec(re.compile("|".join(f"(?:{p})" for p in parts), flags), normalize_file)
    except (AttributeError, TypeError, re.error):  # another pathspec: ask it file by file
        return spec


class _GitIgnore:
    """Stacked .gitignore files from the walk root down (pathspec's gitwildmatch)."""

    def __init__(self) -> None:
        self._specs: Dict[Path, object] = {}

    def spec_for(self, directory: Path):
        if directory not in self._specs:
            spec = None
            ignore_file = directory / ".gitignore"
            if ignore_file.is_file():
                try:
                    import pathspec

                    data = read_bounded(str(ignore_file), MAX_GITIGNORE_BYTES)
                    if isinstance(data, bytes):
                        lines = data.decode("utf-8", errors="replace").splitlines()
                        spec = _combined(pathspec.GitIgnoreSpec.from_lines(lines))
                except (OSError, ValueError):
                    spec = None
            self._specs[directory] = spec
        return self._specs[directory]


def _git_root_chain(start: Path) -> List[Path]:
    """Directories from the enclosing git work tree's root down to ``start``."""
    start = start.resolve()
    chain = [start]
    for parent in start.parents:
        if (chain[-1] / ".git").exists():
            break
        chain.append(parent)
    if not (chain[-1] / ".git").exists():
        return [start]  # not in a git work tree: only .gitignore files below start count
    return list(reversed(chain))


@lru_cache(maxsize=32)
def _exclusion_regex(patterns: Tuple[str, ...]):
    """One compiled regex for all exclude globs (fnmatch's semantics, case as the OS has it)."""
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(os.path.normcase(p.rstrip("/"))) for p in patterns))


def _excluded(name: str, rel: str, patterns: Sequence[str]) -> bool:
    regex = _exclusion_regex(tuple(patterns))
    return regex is not None and bool(
        regex.match(os.path.normcase(name)) or regex.match(os.path.normcase(rel))
    )


def _named_excluded(raw: str, config: Config, patterns: Sequence[str]) -> bool:
    """Whether a walk from the project root would have skipped this file: its name, a parent
    directory's name, or its path (or a parent's) relative to the root matches an exclude."""
    full = os.path.realpath(raw)
    rel = os.path.relpath(full, os.path.realpath(config.root or os.getcwd()))
    if rel.startswith(os.pardir):  # outside the project: only its own name, never the dirs above
        rel = os.path.basename(full)
    return path_excluded(Path(rel).as_posix().split("/"), patterns)


def path_excluded(parts: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether a path relative to the project root, as its ``parts``, is excluded: the name of
    the file or of a directory above it, or its path (or a parent's), matches an exclude glob."""
    return any(_excluded(parts[i], "/".join(parts[: i + 1]), patterns) for i in range(len(parts)))


def iter_files(paths: Sequence[str], config: Config) -> Iterator[Union[str, FileError]]:
    """Yield file paths to check, or FileErrors for paths that cannot be walked."""
    patterns = tuple(config.exclude) + tuple(config.extend_exclude)
    seen = set()
    gitignore = _GitIgnore()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(raw):
            yield FileError(raw, "no such file or directory")
            continue
        if path.is_symlink() and not path.exists():
            try:
                os.stat(raw)
                reason = "broken symbolic link"
            except OSError as exc:
                reason = exc.strerror.lower() if exc.strerror else "broken symbolic link"
            yield FileError(raw, reason)
            continue
        if path.is_file() or not path.is_dir():
            key = os.path.realpath(raw) if os.path.islink(raw) else os.path.abspath(raw)
            if key not in seen:
                seen.add(key)
                if config.force_exclude and _named_excluded(raw, config, patterns):
                    continue
                try:
                    mode = os.stat(raw).st_mode
                except OSError as exc:
                    yield FileError(raw, f"cannot read: {(exc.strerror or str(exc)).lower()}")
                    continue
                if not stat.S_ISREG(mode):  # named on the command line: say why it is not read
                    yield FileError(raw, f"not a regular file ({file_kind(mode)}); skipped")
                elif language_of(path) is not None:
                    yield raw
            continue
        try:
            chain = _git_root_chain(path) if config.respect_gitignore else []
        except OSError as exc:  # a directory named on the command line that cannot be entered
            yield from _unlisted([OSError(exc.errno, exc.strerror, raw)])
            continue
        base_chain = [d for d in chain if d != path.resolve()]
        root_resolved = path.resolve()
        walk_errors: List[OSError] = []
        for dirpath, dirnames, filenames in os.walk(raw, onerror=walk_errors.append, followlinks=False):
            yield from _unlisted(walk_errors)
            here = Path(dirpath)
            rel_dir = here.relative_to(path).as_posix()
            rel_base = "" if rel_dir == "." else rel_dir + "/"
            # (spec, this directory relative to the .gitignore's directory + "/") for each
            # .gitignore that applies here: per entry, one string and the specs' matches
            specs = []
            if config.respect_gitignore:
                here_resolved = root_resolved / rel_dir if rel_base else root_resolved
                for directory in base_chain + _chain_below(root_resolved, here_resolved):
                    spec = gitignore.spec_for(directory)
                    if spec is not None:
                        inner = here_resolved.relative_to(directory).as_posix()
                        specs.append((spec, "" if inner == "." else inner + "/"))
            keep = []
            for d in sorted(dirnames):
                rel = rel_base + d
                if _excluded(d, rel, patterns):
                    continue
                if specs and any(spec.match_file(prefix + d + "/") for spec, prefix in specs):
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if language_of(f) is None:
                    continue
                rel = rel_base + f
                if _excluded(f, rel, patterns):
                    continue
                if specs and any(spec.match_file(prefix + f) for spec, prefix in specs):
                    continue
                full = os.path.join(dirpath, f)
                try:
                    st = os.lstat(full)
                    # the walk follows no symlinked directory: only links need resolving to dedupe
                    link = stat.S_ISLNK(st.st_mode)
                    key = os.path.realpath(full) if link else os.path.abspath(full)
                    if key in seen:
                        continue
                    seen.add(key)
                    mode = os.stat(full).st_mode if link else st.st_mode
                except OSError as exc:
                    reason = (
                        "broken symbolic link"
                        if os.path.islink(full)
                        else f"cannot read: {(exc.strerror or str(exc)).lower()}"
                    )
                    yield FileError(full, reason)
                    continue
                if stat.S_ISREG(mode):  # FIFOs, sockets, devices (and links to them) are skipped
                    yield full
        yield from _unlisted(walk_errors)


def _unlisted(errors: List[OSError]) -> Iterator[FileError]:
    """The directories a walk could not list (``os.walk``'s ``onerror``), as error lines."""
    while errors:
        exc = errors.pop(0)
        where = exc.filename if exc.filename is not None else "."
        yield FileError(os.fsdecode(where), f"cannot read directory: {(exc.strerror or str(exc)).lower()}")


def _chain_below(root: Path, here: Path) -> List[Path]:
    chain = [root]
    for part in here.relative_to(root).parts:
        chain.append(chain[-1] / part)
    return chain


# -- writing ------------------------------------------------------------------------------------
def _temporary_file(directory: str, prefix: str, suffix: str) -> Tuple[int, str]:
    """``tempfile.mkstemp``'s file (a new name, ``O_EXCL``, mode 0600, no link followed)
    without importing ``tempfile`` (with ``shutil`` and ``random``: ~3 ms of a warm run's save)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no usable temporary name in {directory}")


class LinkRefused(Exception):
    """A file the user named leads through a symbolic link somewhere they did not name."""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def named_target(file: str, trees: Sequence[str]) -> str:
    """The file to write for a report or baseline the user named ``file`` (``-o``,
    ``--extra-output``, ``--write-baseline``), given the project's ``trees`` (the working
    directory, the configuration's root).  A symbolic link there is written through (kept, never
    replaced) only when it leads into one of the trees; a link that leads out of them, and a
    path named inside a tree whose folders lead out of it through a link, are
    :class:`LinkRefused`: a repository (or another user of ``/tmp``) may have planted them to
    have the report overwrite a file the user never named.  A path named outside the trees with
    no link at its end is the user's own choice and is written as named."""
    named = os.path.abspath(file)
    real = os.path.realpath(named)
    if real == named:
        return named
    roots = [os.path.realpath(t) for t in trees]
    if os.path.islink(named):
        if not any(_under(real, r) for r in roots):
            raise LinkRefused(f"a symbolic link to {real}, outside the project; not written through")
        return real
    for tree in trees:
        if _under(named, os.path.abspath(tree)) and not _under(real, os.path.realpath(tree)):
            raise LinkRefused(f"a symbolic link on the way leads out of the project to {real}; not written")
    return named


def write_text_atomic(file: str, text: str, sync: bool = True) -> None:
    """Write ``file`` whole or not at all: a new temporary file beside it (``O_EXCL``, so a planted
    file or link is never followed), synced, then renamed over it.  An existing file keeps
    its mode; a new one gets the mode the umask gives.  ``sync=False`` (the content cache, which
    starts afresh from a broken file): no ``fsync``, which was most of a warm one-file run's wall time."""
    directory = os.path.dirname(os.path.abspath(file))
    try:
        mode = stat.S_IMODE(os.stat(file).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = _temporary_file(directory, f".rocm-lint-{os.getpid()}-", ".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, file)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
