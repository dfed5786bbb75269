"""Which files to check: walk the given paths, honouring .gitignore and excludes.

Like ruff: files named explicitly on the command line are always checked (if
they are of a kind rocm-lint reads) unless ``force-exclude`` is on (the pre-commit
hooks pass ``--force-exclude``); directories are walked without following
symlinked directories, skipping excluded names and git-ignored paths.
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from rocm_lint.config import Config
from rocm_lint.finding import FileError

# File kinds the analysers read.  "cuda" files are always scanned by the C++ rules;
# "cpp" files only when they hold device code (``__global__``, warp intrinsics ...).
LANGUAGE_BY_SUFFIX: Dict[str, str] = {
    ".py": "python",
    ".cu": "cuda", ".cuh": "cuda", ".hip": "cuda",
    ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "cpp", ".h": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".inl": "cpp", ".ipp": "cpp", ".tcc": "cpp",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell",
    ".dockerfile": "dockerfile", ".containerfile": "dockerfile",
    ".yml": "yaml", ".yaml": "yaml",
    ".env": "dotenv",
    ".cmake": "cmake",
}
# Files known by name (or name pattern) rather than suffix.
LANGUAGE_BY_NAME: Dict[str, str] = {
    "cmakelists.txt": "cmake", "dockerfile": "dockerfile", "containerfile": "dockerfile",
    ".env": "dotenv", ".envrc": "shell",
}


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
    dot = name.rfind(".")
    return LANGUAGE_BY_SUFFIX.get(name[dot:]) if dot > 0 else None


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

                    lines = ignore_file.read_text("utf-8", errors="replace").splitlines()
                    spec = pathspec.GitIgnoreSpec.from_lines(lines)
                except (OSError, ValueError):
                    spec = None
            self._specs[directory] = spec
        return self._specs[directory]

    def ignored(self, path: Path, is_dir: bool, chain: Sequence[Path]) -> bool:
        for directory in chain:
            spec = self.spec_for(directory)
            if spec is None:
                continue
            rel = path.relative_to(directory).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False


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
    return regex is not None and bool(regex.match(os.path.normcase(name)) or regex.match(os.path.normcase(rel)))


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
    return any(_excluded(parts[i], "/".join(parts[:i + 1]), patterns) for i in range(len(parts)))


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
                if language_of(path) is not None and not (config.force_exclude and _named_excluded(raw, config, patterns)):
                    yield raw
            continue
        chain = _git_root_chain(path) if config.respect_gitignore else []
        base_chain = [d for d in chain if d != path.resolve()]
        root_resolved = path.resolve()
        for dirpath, dirnames, filenames in os.walk(raw, onerror=None, followlinks=False):
            here = Path(dirpath)
            here_resolved = root_resolved / here.relative_to(path) if here != path else root_resolved
            dir_chain = base_chain + _chain_below(root_resolved, here_resolved) if config.respect_gitignore else []
            rel_base = here.relative_to(path)
            keep = []
            for d in sorted(dirnames):
                rel = (rel_base / d).as_posix()
                if _excluded(d, rel, patterns):
                    continue
                if dir_chain and gitignore.ignored(here_resolved / d, True, dir_chain):
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if language_of(f) is None:
                    continue
                rel = (rel_base / f).as_posix()
                if _excluded(f, rel, patterns):
                    continue
                if dir_chain and gitignore.ignored(here_resolved / f, False, dir_chain):
                    continue
                full = os.path.join(dirpath, f)
                # the walk follows no symlinked directory: only links need resolving to dedupe
                key = os.path.realpath(full) if os.path.islink(full) else os.path.abspath(full)
                if key in seen:
                    continue
                seen.add(key)
                if os.path.islink(full) and not os.path.exists(full):
                    yield FileError(full, "broken symbolic link")
                    continue
                yield full


def _chain_below(root: Path, here: Path) -> List[Path]:
    chain = [root]
    for part in here.relative_to(root).parts:
        chain.append(chain[-1] / part)
    return chain
