"""Fix files on disk: re-read, fix, verify, and write atomically.

A write goes to a temporary file in the same directory and is renamed over the original,
so a crash never leaves half a file.  The original's encoding (PEP 263 cookie or BOM),
line endings, final newline and permission bits are kept.  A file that changed on disk
since it was read is not overwritten.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import FileError, Finding


@dataclass
class FileFix:
    path: str
    old: str
    new: str
    applied: List[Finding] = field(default_factory=list)
    dropped: List[Tuple[Finding, str]] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.new != self.old


class ChangedOnDisk(Exception):
    pass


def _encoding(data: bytes) -> str:
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return "utf-8"


def fix_file(path: str, config: Config, *, unsafe: bool, write: bool) -> FileFix:
    from rocm_lint.discovery import language_of
    from rocm_lint.engine import decode_source, source_encoding
    from rocm_lint.fix.api import fix_text

    real = os.path.realpath(path)  # write through symlinks, never replace them
    try:
        before = os.stat(real)
        with open(real, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return FileFix(path, "", "", error=f"cannot read: {exc.strerror or exc}")
    text = decode_source(path, data)
    if isinstance(text, FileError):
        return FileFix(path, "", "", error=text.reason)
    language = language_of(path)
    result = fix_text(path, text, config, unsafe=unsafe, language=language)
    if isinstance(result, FileError):
        return FileFix(path, text, text, error=result.reason)
    encoding = _encoding(data) if language == "python" else source_encoding(path, data)
    outcome = FileFix(path, text, result.text, result.applied, result.dropped)
    if write and outcome.changed:
        try:
            write_atomic(real, result.text, encoding, before)
        except ChangedOnDisk:
            outcome.error = "changed on disk while being fixed; not written"
            outcome.new, outcome.applied = text, []
        except OSError as exc:
            outcome.error = f"cannot write: {exc.strerror or exc}"
            outcome.new, outcome.applied = text, []
    return outcome


def write_atomic(path: str, text: str, encoding: str, before: os.stat_result) -> None:
    data = text.encode(encoding)
    now = os.stat(path)
    if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
        raise ChangedOnDisk(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".rocm-lint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(before.st_mode))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
