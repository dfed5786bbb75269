"""Scaling checks that a loaded machine cannot fail (the project's rule: no timing assertion in
a unit test; speed belongs in benchmarks/).

Two tools, for two kinds of super-linear work:

* ``steps``/``assert_linear_steps``: the Python work a call does, counted exactly (``sys.settrace``
  'call', 'line', 'return' and 'exception' events, plus ``sys.setprofile`` 'c_call' events).  The
  count of the same input is the same on any machine under any load, so ``10x the input -> at
  most 12x the count`` is a deterministic property.  It sees a Python loop that walks back over
  the text (a line event per character) and a call made per pair of items; it cannot see work
  *inside* one C call (``str.rfind``/``str.lower``/a regex over the rest of the text, ``x in
  list``): such a call counts 1 however far it scans.  (Counting the length of the string a
  ``str`` method is called on does not help: the linear code calls bounded methods such as
  ``code.find(";", pos)`` on the whole text per finding, and that sum is quadratic already.)

* ``cpu_limit``/``assert_finishes``: a hang guard for the C-level work, on CPU time (``SIGPROF``
  from ``setitimer(ITIMER_PROF)``, and ``time.process_time`` after the call): time the process
  spends waiting for a core on a busy machine is not counted, so load cannot trip it.  Used with
  an input large enough that the linear code takes a small fraction of the bound and a quadratic
  path takes many times it (each caller writes its arithmetic down).  The re module checks for
  signals while it backtracks, so a runaway pattern is interrupted at the bound instead of
  hanging the run.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator


def steps(fn: Callable, *args, **kwargs) -> int:
    """Python events (calls, lines, returns, exceptions) plus C calls made while ``fn`` runs."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        count += 1
        return trace

    def profile(frame, event, arg):
        nonlocal count
        if event == "c_call":
            count += 1

    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(trace)
    sys.setprofile(profile)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(old_profile)
        sys.settrace(old_trace)
    return count


def assert_linear_steps(fn: Callable, make: Callable[[int], object], n: int, limit: float = 12.0) -> None:
    """``fn(make(10 * n))`` does at most ``limit`` times the steps of ``fn(make(n))``: a linear
    algorithm does 10x (less where a fixed cost is shared), a quadratic one ~100x on its
    quadratic part.  ``fn`` first runs untraced on a tenth of the small input (imports, the
    module's compiled patterns), not on the small input itself: what that run caches (the re
    module's cache of patterns built per name, memos) would make the small count alone cheaper,
    a ratio that grows for a cache, not for the algorithm."""
    small, big = make(n), make(10 * n)
    fn(make(max(1, n // 10)))
    s1, s2 = steps(fn, small), steps(fn, big)
    assert s2 <= limit * s1, f"10x input: {s1} -> {s2} steps ({s2 / s1:.1f}x)"


class Hang(AssertionError):
    """A call ran past its CPU-time bound."""


@contextmanager
def cpu_limit(seconds: float, what: str = "") -> Iterator[None]:
    """Fail (``Hang``) when the block uses more than ``seconds`` of CPU time: interrupted by
    ``SIGPROF`` at the bound where the platform has it (main thread, POSIX), and checked with
    ``time.process_time`` after the block in any case (a long C call delays the signal).  The
    failure stands even where the code under test catches the interruption (the engine turns an
    exception into a FileError)."""
    use_signal = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    fired = False
    old_handler = None
    if use_signal:

        def on_prof(signum, frame):
            nonlocal fired
            fired = True
            raise Hang(f"{what}: still running after {seconds} s of CPU time (a hang)")

        old_handler = signal.signal(signal.SIGPROF, on_prof)
        signal.setitimer(signal.ITIMER_PROF, seconds)
    start = time.process_time()
    try:
        yield
    finally:
        if use_signal:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old_handler)
    used = time.process_time() - start
    if fired or used > seconds:
        raise Hang(f"{what}: took {used:.1f} s of CPU time, bound {seconds} s (a hang)")


def assert_finishes(fn: Callable, arg, seconds: float, what: str = "") -> None:
    with cpu_limit(seconds, what or getattr(fn, "__name__", "call")):
        fn(arg)
