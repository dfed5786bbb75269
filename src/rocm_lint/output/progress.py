"""A progress bar on stderr for long runs: only on a terminal, shown after the first half
second (short runs never flash one), redrawn at most ten times a second, erased at the end."""

from __future__ import annotations

import os
import time
from typing import TextIO


class ProgressBar:
    DELAY = 0.5
    INTERVAL = 0.1
    WIDTH = 30

    def __init__(self, stream: TextIO, *, clock=time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < self.DELAY or (now - self.last < self.INTERVAL and done < total):
            return
        self.last = now
        filled = self.WIDTH * done // max(total, 1)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} files")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def wants_progress(stream: TextIO, quiet: bool) -> bool:
    isatty = getattr(stream, "isatty", None)
    return not quiet and bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
