"""The workspace: every cache of one front end's life, in one object it owns.

A CLI run, a flake8 process and the language server each create one :class:`Workspace` and pass
it down explicitly: the engine hands it to the readers (``CppUnit.workspace``,
``ConfigUnit.workspace``, ``Project.workspace``, so ``ModuleContext.workspace``), and the readers
keep what they learned of *other* files there (project headers and their macro and C++ facts,
build files, requirement includes, the project model of imported Python modules).  Nothing of the
kind lives in a module global (``tests/test_architecture.py`` says so).

Keys: a store is keyed by the arguments of the reader function that fills it (a path, a
directory); every file a reader reads through :meth:`Workspace.read_bounded` (or notes with
:meth:`Workspace.note_read`) is stamped with its modification time and size the first time, and
:meth:`Workspace.revalidate` drops everything when any stamp changed.  So the workspace is keyed
by stat: a long-lived front end (the language server) calls ``revalidate`` before each check, and
``forget`` on a save or a watched-file event, and its answer equals a fresh run's.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from functools import wraps
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple, TypeVar, Union

__all__ = ["Workspace", "memoized", "stamp"]

T = TypeVar("T")
Stamp = Optional[Tuple[int, int]]


def stamp(path: str) -> Stamp:
    """(modification time in ns, size) of ``path``, or None when it is absent or unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class Workspace:
    """The caches of one front end (see the module docstring)."""

    def __init__(self) -> None:
        self._stores: Dict[str, Dict[Any, Any]] = {}
        self._recorders: List[Set[str]] = []
        self._stamps: Dict[str, Stamp] = {}  # every file the readers read or noted, as first seen
        self._per_config: Dict[Tuple[str, int], Tuple[object, object]] = {}
        self.generation = 0  # bumped by forget(): what was derived before is stale

    # -- stores ------------------------------------------------------------------------------------
    def store(self, name: str) -> Dict[Any, Any]:
        """The named cache (created empty on first use)."""
        found = self._stores.get(name)
        if found is None:
            found = self._stores[name] = {}
        return found

    def per_config(self, name: str, config: object, make: Callable[[], T]) -> T:
        """One ``make()`` per configuration object (the project model of front ends without a
        pre-pass); ``set_per_config`` replaces it (the pre-pass's model, reused by ``--fix``)."""
        entry = self._per_config.get((name, id(config)))
        if entry is None or entry[0] is not config:
            if len(self._per_config) > 16:
                self._per_config.clear()
            entry = self._per_config[(name, id(config))] = (config, make())
        return entry[1]  # type: ignore[return-value]

    def set_per_config(self, name: str, config: object, value: object) -> None:
        self._per_config[(name, id(config))] = (config, value)

    # -- what was read -----------------------------------------------------------------------------
    def note_read(self, path: str) -> None:
        """The check in progress depends on ``path`` (read now, or earlier and cached here)."""
        if path not in self._stamps:  # (a path already stamped is absolute and normal: no abspath)
            path = os.path.abspath(path)
            if path not in self._stamps:
                self._stamps[path] = stamp(path)
        if self._recorders:
            self._recorders[-1].add(path)

    def recording(self) -> bool:
        """Is a check recording what it reads (see :meth:`recording_reads`)?"""
        return bool(self._recorders)

    @contextmanager
    def recording_reads(self) -> Iterator[Set[str]]:
        """Collect every file read through :meth:`read_bounded` (or noted) inside the block."""
        reads: Set[str] = set()
        self._recorders.append(reads)
        try:
            yield reads
        finally:
            self._recorders.pop()

    def read_bounded(self, path: str, limit: int, note: bool = True) -> Union[bytes, str]:
        """``discovery.read_bounded``, noted as a dependency (and stamped) unless ``note`` is off."""
        from rocm_lint.discovery import read_bounded

        if note:
            self.note_read(path)
        return read_bounded(path, limit)

    # -- invalidation ------------------------------------------------------------------------------
    def changed(self) -> bool:
        """Has a file the readers read (or found absent) changed on disk since?"""
        return any(stamp(path) != seen for path, seen in self._stamps.items())

    def revalidate(self) -> bool:
        """Forget everything when a file read has changed on disk; True if it did."""
        if self.changed():
            self.forget()
            return True
        return False

    def forget(self) -> None:
        """Drop every cache: the next check reads every other file again."""
        self._stores.clear()
        self._stamps.clear()
        self._per_config.clear()
        self.generation += 1


def memoized(maxsize: int = 1024) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Cache ``fn(ws, *args)`` in ``ws``'s store named after the function, keyed by ``args``
    (hashable).  At most ``maxsize`` entries: the oldest goes first."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        name = f"{fn.__module__}.{fn.__qualname__}"

        @wraps(fn)
        def wrapper(ws: Workspace, *args: Any) -> T:
            store = ws.store(name)
            try:
                return store[args]
            except KeyError:
                pass
            value = fn(ws, *args)
            if len(store) >= maxsize:
                store.pop(next(iter(store)))
            store[args] = value
            return value

        wrapper.store_name = name  # type: ignore[attr-defined]
        return wrapper

    return decorate
