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
cache never runs code.  A shard is read only when it is a regular file (no FIFO, device or
symbolic link: :func:`rocm_lint.discovery.read_bounded`) of at most ``MAX_CACHE_BYTES // SHARDS``
bytes, and the version and settings folders are used only when they are real folders; a default
cache directory that is a link is not used (:func:`run_dir`).  A shard is believed only when its
seal holds: its first line is a keyed hash of the rest under a secret kept outside the project
(:mod:`rocm_lint.cache_entries`: ``seal``, ``secret``), and each entry is checked for the shape
:meth:`Cache.store` gives one (``valid_entry``: valid JSON of another shape is a miss, never a
crash): a cache planted in a cloned repository, or edited by hand, cannot make a
run print findings it did not find or hide ones it would.  Writes are atomic (a temporary file
then ``os.replace``), so concurrent runs never see half a file; the last one to finish wins.
The cache keeps at most :data:`MAX_ENTRIES` entries (least recently used go first, per shard)
and a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
import time
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

from rocm_lint import __version__
from rocm_lint.cache_entries import (
    Result,
    decode_result,
    encode_result,
    seal,
    secret,
    valid_entry,
)
from rocm_lint.discovery import write_text_atomic
from rocm_lint.finding import Finding

CACHE_DIR_NAME = ".rocm_lint_cache"
MAX_ENTRIES = 200_000
MAX_CACHE_BYTES = 256 * 1024 * 1024  # a larger cache is ignored (and rewritten)
SHARDS = 16  # files per settings folder; an entry's is the hash of its file's directory
_FORMAT = 3  # 3: each shard's first line is its seal
TREE = "tree:"  # a dependency on a directory tree's Python files (see tree_signature)
RACY_NS = 2_000_000_000  # a file younger than this when read gets no recorded stat


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def default_dir(config) -> str:
    env = os.environ.get("ROCM_LINT_CACHE_DIR")
    if env:
        return env
    base = str(config.root) if getattr(config, "root", None) is not None else os.getcwd()
    return os.path.join(base, CACHE_DIR_NAME)


def run_dir(named: Optional[str], config, quiet: bool = False) -> Optional[str]:
    """The cache directory of a run: ``named`` (``--cache-dir``) or :func:`default_dir`; None
    (no cache, said once on stderr) where the default one is a symbolic link, which a cloned
    repository may have planted to have the cache written elsewhere (a link the user made is
    used when named with ``--cache-dir`` or ``ROCM_LINT_CACHE_DIR``)."""
    if named:
        return named
    directory = default_dir(config)
    if not os.environ.get("ROCM_LINT_CACHE_DIR") and os.path.islink(directory):
        if not quiet:
            sys.stderr.write(
                f"rocm-lint: {directory} is a symbolic link: the cache is not used "
                "(name it with --cache-dir to use it)\n"
            )
        return None
    return directory


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


# -- the cache -----------------------------------------------------------------------------------
def shard_of(key: str) -> int:
    """The shard of the entry of ``key`` (an absolute path): by its directory, so the files of
    one directory share a shard and a run over a folder reads few."""
    folder = os.path.dirname(key).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(folder, digest_size=2).digest()[0] % SHARDS


class Entries:
    """The cache's entries by absolute path, each shard read on first use (a dict's ``get``,
    ``[]``, ``in``, ``items``; ``len`` and ``items`` read every shard).  A shard is used only
    when its seal holds; an entry's shape is checked the first time it is asked for (one of
    another shape is dropped)."""

    def __init__(self, folder: str, key: Optional[bytes] = None, usable: bool = True) -> None:
        self.folder = folder
        self.shards: Dict[int, Dict[str, dict]] = {}
        self._key = key
        self.usable = usable  # False: the cache's folders are not its own (nothing read)
        self.checked: Set[str] = set()  # paths whose entry has the shape of one

    @property
    def key(self) -> bytes:
        if self._key is None:
            self._key = secret()
        return self._key

    def file(self, shard: int) -> str:
        return os.path.join(self.folder, f"{shard:02d}.json")

    def shard(self, index: int) -> Dict[str, dict]:
        entries = self.shards.get(index)
        if entries is None:
            entries = self.shards[index] = self._read(self.file(index)) if self.usable else {}
        return entries

    def _read(self, file: str) -> Dict[str, dict]:
        """A shard's entries: its first line is the seal of the rest (``cache_entries.seal``);
        a shard that is not a regular file, too large, not sealed with this user's secret, or
        not JSON of the shard's shape is empty."""
        from rocm_lint.discovery import read_bounded

        try:
            # a regular file (no FIFO, device or link), never more than its bound
            data = read_bounded(file, MAX_CACHE_BYTES // SHARDS, follow_links=False)
            if not isinstance(data, bytes):
                return {}
            mac, _, body = data.partition(b"\n")
            if not hmac.compare_digest(mac, seal(body, self.key).encode()):
                return {}  # forged, edited, or another user's: a miss
            data = json.loads(body)
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return {}  # no cache yet, or a broken shard: start afresh
        if isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("entries"), dict):
            return data["entries"]
        return {}

    def _checked(self, shard: Dict[str, dict], key: str) -> Optional[dict]:
        entry = shard.get(key)
        if entry is None or key in self.checked:
            return entry
        if valid_entry(entry):
            self.checked.add(key)
            return entry
        del shard[key]  # another shape: a miss
        return None

    def get(self, key: str, default: Optional[dict] = None) -> Optional[dict]:
        entry = self._checked(self.shard(shard_of(key)), key)
        return default if entry is None else entry

    def __getitem__(self, key: str) -> dict:
        entry = self._checked(self.shard(shard_of(key)), key)
        if entry is None:
            raise KeyError(key)
        return entry

    def __setitem__(self, key: str, entry: dict) -> None:
        self.shard(shard_of(key))[key] = entry
        self.checked.add(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._checked(self.shard(shard_of(key)), key) is not None

    def items(self) -> Iterator[Tuple[str, dict]]:
        for index in range(SHARDS):
            shard = self.shard(index)
            for key in list(shard):
                entry = self._checked(shard, key)
                if entry is not None:
                    yield key, entry

    def __len__(self) -> int:
        return sum(1 for _ in self.items())


def _last_use(item: Tuple[str, object]) -> int:
    used = item[1].get("used") if isinstance(item[1], dict) else None
    return used if type(used) is int else 0


class Cache:
    """One run's view of the cache: ``lookup`` before checking a file, ``store`` after, ``save``
    once at the end."""

    def __init__(self, directory: str, config, workspace=None) -> None:
        self.directory = directory
        self.folder = os.path.join(directory, __version__, settings_key(config))
        # rocm-lint makes the version and settings folders itself: a link there was planted
        usable = not any(os.path.islink(p) for p in (os.path.dirname(self.folder), self.folder))
        self.entries = Entries(self.folder, usable=usable)
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
        if not self.dirty_shards or not self.entries.usable:
            return
        try:
            _prepare(self.directory)
            os.makedirs(self.folder, exist_ok=True)
            if any(os.path.islink(p) for p in (os.path.dirname(self.folder), self.folder)):
                return  # planted meanwhile: never written through
            for index in sorted(self.dirty_shards):
                entries = self.entries.shard(index)
                if len(entries) > MAX_ENTRIES // SHARDS:
                    keep = sorted(entries.items(), key=_last_use, reverse=True)
                    entries = self.entries.shards[index] = dict(keep[: MAX_ENTRIES // SHARDS])
                body = json.dumps({"format": _FORMAT, "entries": entries}, separators=(",", ":"))
                write_text_atomic(
                    self.entries.file(index), f"{seal(body.encode(), self.entries.key)}\n{body}", sync=False
                )
            self.dirty_shards.clear()
        except OSError:
            pass  # a read-only tree: run without a cache, never fail the run for it


def finding_key(f: Finding) -> str:
    """A finding's identity within its file's entry (where it is, what it says)."""
    return json.dumps([f.line, f.col, f.end_line, f.end_col, f.code, f.message, f.cell])


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


def clean(directory: str) -> Tuple[Optional[bool], str]:
    """Remove a cache directory (``rocm-lint clean``): (True, what was done); (False, why not)
    for nothing to remove or something that is not a cache; (None, the error) where it could not
    be done, or a link was refused.  A
    symbolic link is not followed: it is refused with its target named (``rocm-lint clean
    --cache-dir TARGET`` removes that), so that a link planted in a repository never has a
    folder elsewhere deleted."""
    import shutil

    if os.path.islink(directory):
        return None, (
            f"{directory} is a symbolic link (to {os.path.realpath(directory)}); not removed: "
            "remove the link itself, or name its target with --cache-dir"
        )
    if not os.path.isdir(directory):
        return False, f"no cache at {directory}"
    if (
        not os.path.isfile(os.path.join(directory, "CACHEDIR.TAG"))
        and os.path.basename(os.path.normpath(directory)) != CACHE_DIR_NAME
    ):
        return False, f"{directory} does not look like a rocm-lint cache (no CACHEDIR.TAG); not removed"
    try:
        shutil.rmtree(directory)
    except OSError as exc:
        return None, f"{directory}: cannot remove: {(exc.strerror or str(exc)).lower()}"
    return True, f"removed {directory}"
