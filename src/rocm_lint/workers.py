"""Worker processes that die with their parent.

``concurrent.futures`` workers outlive a parent killed with ``kill -9``: they keep fixing files
(a fix in flight is written, the next ones too), then wait forever on a queue nobody reads.
:func:`process_pool` gives every worker :func:`_die_with_parent` as its initializer: on Linux,
``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through ``ctypes``), so the kernel kills it the moment its
parent goes; everywhere, a daemon thread that polls the parent's pid and exits the worker when
it changed (the worker was re-parented).  A worker killed mid-write leaves at most a temporary
file (writes are atomic: ``rocm_lint.fix.files``), never half a file.
"""

from __future__ import annotations

import os
import sys
import threading
import time

POLL_SECONDS = 0.2
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no libc to ask: the polling thread still watches
            pass
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="rocm-lint-parent-watch", daemon=True).start()


def process_pool(jobs: int):
    """A ``ProcessPoolExecutor`` of ``jobs`` workers that die with this process."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs, initializer=_die_with_parent, initargs=(os.getpid(),))
