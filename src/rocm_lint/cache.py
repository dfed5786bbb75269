"""The content cache: what a file's check found, kept between runs (ruff's ``.ruff_cache``).

``.rocm_lint_cache/`` beside the configuration (or in the working directory; ``--cache-dir`` or
``ROCM_LINT_CACHE_DIR`` elsewhere; ``--no-cache`` skips it; ``rocm-lint clean`` removes it)
holds one folder per rocm-lint version and effective settings, its entries spread over
:data:`SHARDS` JSON files by the file's directory: a run reads and writes only the shards of the
files it checks (a one-file check in a big project: one small file, not the whole cache).  An
entry is reused when

* the file's content hash is the same (the content, not its timestamp: a ``git checkout`` that
  restores a file keeps its entry, an edit within the same second does not).  A warm run does
  not read a file whose size, modification and change times and inode are those recorded with
  its hash; these are recorded only for a file whose times were over two seconds old when it
  was read (git's answer to "racy" timestamps: an edit after the read leaves a later time, on
  any file system whose timestamps are finer than two seconds),
* every other file its check read is unchanged (the project modules it imported facts from, the
  C++ headers it followed: recorded by :meth:`rocm_lint.workspace.Workspace.recording_reads`), and
* the project's exported trigger names are the same (a wrapper defined or removed anywhere can
  change which lines of any file matter).

An entry also keeps the verified edits of its findings' fixes once an output that carries them
(JSON, SARIF) has computed them (:meth:`Cache.lookup_edits`, :meth:`Cache.store_edits`): they
are reused while the entry's findings are, and while every further input of the fix is
unchanged — the files the fix step read (recorded like a check's), the formatter settings of
the directories above the file (present or not), and a signature of the project's Python files
(:func:`tree_signature`: every path, size and modification time under the roots whose star
imports the fix reads, so a module added anywhere that star-imports the file is seen).

Entries hold findings (with their fix recipes) or the file's error as plain JSON: loading a
cache never runs code.  Writes are atomic (a temporary file then ``os.replace``), so concurrent
runs never see half a file; the last one to finish wins.  The cache keeps at most
:data:`MAX_ENTRIES` entries (least recently used go first, per shard) and a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from dataclasses import asdict
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

from rocm_lint import __version__
from rocm_lint.discovery import write_text_atomic
from rocm_lint.finding import RECIPES, Applicability, Edit, FileError, Finding, Fix

CACHE_DIR_NAME = ".rocm_lint_cache"
MAX_ENTRIES = 200_000
MAX_CACHE_BYTES = 256 * 1024 * 1024  # a larger cache is ignored (and rewritten)
SHARDS = 16  # files per settings folder; an entry's is the hash of its file's directory
_FORMAT = 2
TREE = "tree:"  # a dependency on a directory tree's Python files (see tree_signature)
RACY_NS = 2_000_000_000  # a file younger than this when read gets no recorded stat

Result = Union[List[Finding], FileError]


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def default_dir(config) -> str:
    env = os.environ.get("ROCM_LINT_CACHE_DIR")
    if env:
        return env
    base = str(config.root) if getattr(config, "root", None) is not None else os.getcwd()
    return os.path.join(base, CACHE_DIR_NAME)


def _code_stamp() -> str:
    """rocm-lint's own sources (name, size, mtime): a development checkout whose rules change
    without a version bump never reads what older code found.  (``os.scandir``, one stat per
    source: ``os.walk`` with ``os.stat`` and ``relpath`` per file was 2 ms of every run.)"""
    parts: List[str] = []

    def visit(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in items:
            try:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        visit(entry.path, f"{prefix}{entry.name}/")
                elif entry.name.endswith((".py", ".md", ".yml", ".yaml")):
                    st = entry.stat()
                    parts.append(f"{prefix}{entry.name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                continue

    visit(os.path.dirname(os.path.abspath(__file__)), "")
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def settings_key(config) -> str:
    """The effective settings, as far as they change findings (and the Python that parses)."""
    text = f"{_FORMAT}|{__version__}|{_code_stamp()}|{sys.version_info[:2]}|{config!r}"
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


# -- findings as plain data ------------------------------------------------------------------------
def _recipe_to(recipe) -> Optional[dict]:
    if recipe is None:
        return None
    return {"type": type(recipe).__name__, **asdict(recipe)}


def _recipe_from(data: Optional[dict]):
    if data is None:
        return None
    kinds = {r.__name__: r for r in RECIPES}
    data = dict(data)
    kind = kinds[data.pop("type")]
    if "span" in data:
        data["span"] = tuple(data["span"])
    return kind(**data)


def _finding_to(f: Finding) -> dict:
    out = {
        "line": f.line,
        "col": f.col,
        "code": f.code,
        "message": f.message,
        "end_line": f.end_line,
        "end_col": f.end_col,
        "severity": f.severity,
        "scope": f.scope,
    }
    if f.cell is not None:
        out["cell"] = f.cell
    if f.fix is not None:
        out["fix"] = {
            "applicability": f.fix.applicability.value,
            "message": f.fix.message,
            "edits": [[e.content, list(e.start), list(e.end)] for e in f.fix.edits],
            "recipe": _recipe_to(f.fix.recipe),
        }
    return out


def _finding_from(path: str, d: dict) -> Finding:
    fix = None
    if d.get("fix") is not None:
        x = d["fix"]
        fix = Fix(
            Applicability(x["applicability"]),
            x["message"],
            tuple(Edit(c, tuple(s), tuple(e)) for c, s, e in x["edits"]),
            _recipe_from(x["recipe"]),
        )
    return Finding(
        path,
        d["line"],
        d["col"],
        d["code"],
        d["message"],
        d["end_line"],
        d["end_col"],
        fix=fix,
        severity=d.get("severity"),
        scope=d.get("scope"),
        cell=d.get("cell"),
    )


def encode_result(result: Result) -> dict:
    if isinstance(result, FileError):
        return {"error": result.reason}
    return {"findings": [_finding_to(f) for f in result]}


def decode_result(path: str, data: dict) -> Result:
    if "error" in data:
        return FileError(path, data["error"])
    # A finding names its file as this run was given it (``a.py`` from one directory,
    # ``/abs/a.py`` from another): the cache keeps no path of its own.
    return [_finding_from(path, d) for d in data["findings"]]


# -- the cache -----------------------------------------------------------------------------------
def shard_of(key: str) -> int:
    """The shard of the entry of ``key`` (an absolute path): by its directory, so the files of
    one directory share a shard and a run over a folder reads few."""
    folder = os.path.dirname(key).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(folder, digest_size=2).digest()[0] % SHARDS


class Entries:
    """The cache's entries by absolute path, each shard read on first use (a dict's ``get``,
    ``[]``, ``in``, ``items``; ``len`` and ``items`` read every shard)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.shards: Dict[int, Dict[str, dict]] = {}

    def file(self, shard: int) -> str:
        return os.path.join(self.folder, f"{shard:02d}.json")

    def shard(self, index: int) -> Dict[str, dict]:
        entries = self.shards.get(index)
        if entries is None:
            entries = self.shards[index] = self._read(self.file(index))
        return entries

    @staticmethod
    def _read(file: str) -> Dict[str, dict]:
        try:
            if os.path.getsize(file) > MAX_CACHE_BYTES // SHARDS:
                return {}
            with open(file, "r", encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # no cache yet, or a broken shard: start afresh
        if isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("entries"), dict):
            return data["entries"]
        return {}

    def get(self, key: str, default: Optional[dict] = None) -> Optional[dict]:
        return self.shard(shard_of(key)).get(key, default)

    def __getitem__(self, key: str) -> dict:
        return self.shard(shard_of(key))[key]

    def __setitem__(self, key: str, entry: dict) -> None:
        self.shard(shard_of(key))[key] = entry

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.shard(shard_of(key))

    def items(self) -> Iterator[Tuple[str, dict]]:
        for index in range(SHARDS):
            yield from self.shard(index).items()

    def __len__(self) -> int:
        return sum(len(self.shard(index)) for index in range(SHARDS))


class Cache:
    """One run's view of the cache: ``lookup`` before checking a file, ``store`` after, ``save``
    once at the end."""

    def __init__(self, directory: str, config, workspace=None) -> None:
        self.directory = directory
        self.folder = os.path.join(directory, __version__, settings_key(config))
        self.entries = Entries(self.folder)
        self.dirty_shards: Set[int] = set()
        self.now = int(time.time())
        self._hashes: Dict[str, Optional[str]] = {}
        self._stats: Dict[str, List[int]] = {}  # path -> the stat recorded with this run's hash
        self._valid: Dict[str, str] = {}  # path -> its hash, for entries looked up or stored this run
        self.config = config
        if workspace is not None:  # the run's open cache, for the renderers (``Cache.open``)
            workspace.store("content-cache")[os.path.abspath(directory)] = self

    @classmethod
    def open(cls, directory: str, config, workspace=None) -> "Cache":
        """The run's cache for ``directory`` and ``config``: the one the check used in this
        ``workspace`` (its entries and this run's hashes), else a new one."""
        cache = (
            workspace.store("content-cache").get(os.path.abspath(directory))
            if workspace is not None
            else None
        )
        if cache is not None and (
            cache.config is config
            or cache.folder == os.path.join(directory, __version__, settings_key(config))
        ):
            return cache
        return cls(directory, config)

    def changed(self, key: str) -> None:
        """The entry of ``key`` (an absolute path) was changed in place: its shard is written."""
        self.dirty_shards.add(shard_of(key))

    @property
    def dirty(self) -> bool:
        return bool(self.dirty_shards)

    # -- hashes of the files a check read ---------------------------------------------------------
    def digest(self, path: str, limit: int) -> Tuple[Optional[str], Optional[bytes]]:
        """(the content hash of the file to check, its bytes when they had to be read); (None,
        None) for a file that cannot be read (it is checked, and its error said, every time)."""
        from rocm_lint.discovery import read_bounded

        key = os.path.abspath(path)
        try:
            st = os.stat(path)  # before the read: a later edit then shows in the next run's stat
        except OSError:
            return None, None
        signature = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        entry = self.entries.get(key)
        if entry and entry.get("stat") == signature and isinstance(entry.get("hash"), str):
            self._hashes[key] = entry["hash"]
            self._stats[key] = signature
            return entry["hash"], None
        try:
            data = read_bounded(path, limit)
        except OSError:
            return None, None
        if not isinstance(data, bytes):
            return None, None
        digest = self._hashes[key] = content_hash(data)
        if stat.S_ISREG(st.st_mode) and time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
            self._stats[key] = signature
        return digest, data

    def hash_of(self, path: str) -> Optional[str]:
        if path in self._hashes:  # dependencies are kept as absolute paths: no abspath per entry
            return self._hashes[path]
        if path.startswith(TREE):
            if path not in self._hashes:
                self._hashes[path] = tree_signature(path[len(TREE) :])
            return self._hashes[path]
        path = os.path.abspath(path)
        if path not in self._hashes:
            from rocm_lint.discovery import read_bounded

            try:
                data = read_bounded(path, 64 * 1024 * 1024)
            except OSError:
                data = None
            self._hashes[path] = content_hash(data) if isinstance(data, bytes) else None
        return self._hashes[path]

    # -- entries ----------------------------------------------------------------------------------
    def lookup(self, path: str, digest: str, triggers: str) -> Optional[Result]:
        entry = self.entries.get(os.path.abspath(path))
        if not entry or entry.get("hash") != digest or entry.get("triggers") != triggers:
            return None
        for dep, dep_hash in entry.get("deps", ()):
            if self.hash_of(dep) != dep_hash:
                return None
        try:
            result = decode_result(path, entry["result"])
        except (KeyError, TypeError, ValueError):
            return None
        if entry.get("used") != self.now:
            entry["used"] = self.now
            self.changed(os.path.abspath(path))
        signature = self._stats.get(os.path.abspath(path))
        if signature is not None and entry.get("stat") != signature:
            entry["stat"] = signature  # read this time: the next run need not
            self.changed(os.path.abspath(path))
        self._valid[os.path.abspath(path)] = digest
        return result

    def store(self, path: str, digest: str, triggers: str, deps: Iterable[str], result: Result) -> None:
        key = os.path.abspath(path)
        self.entries[key] = {
            "hash": digest,
            "triggers": triggers,
            "used": self.now,
            "stat": self._stats.get(key),
            "deps": [[d, self.hash_of(d)] for d in sorted(set(deps)) if d != key],
            "result": encode_result(result),
        }
        self._valid[key] = digest
        self.changed(key)

    # -- the verified edits of an entry's findings ---------------------------------------------------
    def digest_of(self, path: str) -> Optional[str]:
        """The content hash this run found for ``path`` when its entry holds this run's findings
        (looked up or stored), else None."""
        return self._valid.get(os.path.abspath(path))

    def lookup_edits(self, path: str) -> Optional[Dict[str, Optional[list]]]:
        """{finding key: edits (plain data) or None (no fix)} computed earlier for the findings of
        ``path``'s entry, when the entry is this run's and no input of the fix changed."""
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if key not in self._valid or not entry or entry.get("hash") != self._valid[key]:
            return None
        edits = entry.get("edits")
        if not isinstance(edits, dict) or not isinstance(edits.get("by_finding"), dict):
            return None
        for dep, dep_hash in edits.get("deps", ()):
            if self.hash_of(dep) != dep_hash:
                return None
        return edits["by_finding"]

    def store_edits(
        self, path: str, digest: str, deps: Iterable[str], by_finding: Dict[str, Optional[list]]
    ) -> None:
        """Keep ``by_finding`` (see :meth:`lookup_edits`) with the entry of ``path``, computed from
        the content ``digest``, reading ``deps`` (paths, or ``TREE + root``)."""
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if entry is None or self._valid.get(key) != digest or entry.get("hash") != digest:
            return  # the file changed since its check: nothing to attach the edits to
        old = entry.get("edits") if isinstance(entry.get("edits"), dict) else {}
        known = dict(old.get("by_finding", {})) if self.lookup_edits(path) is not None else {}
        known.update(by_finding)
        entry["edits"] = {
            "deps": [[d, self.hash_of(d)] for d in sorted(set(deps)) if d != key],
            "by_finding": known,
        }
        self.changed(key)

    def save(self) -> None:
        """Write the shards whose entries changed (each at most ``MAX_ENTRIES // SHARDS``)."""
        if not self.dirty_shards:
            return
        try:
            _prepare(self.directory)
            os.makedirs(self.folder, exist_ok=True)
            for index in sorted(self.dirty_shards):
                entries = self.entries.shard(index)
                if len(entries) > MAX_ENTRIES // SHARDS:
                    keep = sorted(entries.items(), key=lambda kv: kv[1].get("used", 0), reverse=True)
                    entries = self.entries.shards[index] = dict(keep[: MAX_ENTRIES // SHARDS])
                write_text_atomic(
                    self.entries.file(index),
                    json.dumps({"format": _FORMAT, "entries": entries}, separators=(",", ":")),
                    sync=False,
                )
            self.dirty_shards.clear()
        except OSError:
            pass  # a read-only tree: run without a cache, never fail the run for it


def finding_key(f: Finding) -> str:
    """A finding's identity within its file's entry (where it is, what it says)."""
    return json.dumps([f.line, f.col, f.end_line, f.end_col, f.code, f.message, f.cell])


def edits_to(edits) -> list:
    return [[e.content, list(e.start), list(e.end)] for e in edits]


def edits_from(data: list) -> tuple:
    return tuple(Edit(c, tuple(s), tuple(e)) for c, s, e in data)


_SKIP_DIRS = ("__pycache__", "node_modules", "site-packages")


def tree_signature(root: str) -> Optional[str]:
    """Every Python file under ``root`` (the folders a project scan walks: no hidden folder, no
    ``__pycache__``, ``node_modules``, ``site-packages`` or virtual environment) as (path, size,
    modification time), hashed: a file added, removed or edited there changes it."""
    if not os.path.isdir(root):
        return None
    h = hashlib.blake2b(digest_size=16)
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if d[:1] != "."
            and d not in _SKIP_DIRS
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            full = os.path.join(folder, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            h.update(
                f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(
                    "utf-8", "surrogateescape"
                )
            )
    return h.hexdigest()


def _prepare(directory: str) -> None:
    """Create the cache directory with the files tools expect in one (git ignores it)."""
    os.makedirs(directory, exist_ok=True)
    for name, text in (
        (".gitignore", "# Automatically created by rocm-lint.\n*\n"),
        (
            "CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by rocm-lint.\n",
        ),
    ):
        target = os.path.join(directory, name)
        if not os.path.exists(target):
            try:
                with open(target, "x", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError:
                pass


def clean(directory: str) -> Tuple[bool, str]:
    """Remove a cache directory (``rocm-lint clean``); refuses anything that is not one."""
    import shutil

    if not os.path.isdir(directory):
        return False, f"no cache at {directory}"
    if (
        not os.path.isfile(os.path.join(directory, "CACHEDIR.TAG"))
        and os.path.basename(os.path.normpath(directory)) != CACHE_DIR_NAME
    ):
        return False, f"{directory} does not look like a rocm-lint cache (no CACHEDIR.TAG); not removed"
    shutil.rmtree(directory)
    return True, f"removed {directory}"
