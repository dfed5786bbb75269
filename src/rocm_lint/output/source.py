"""The source lines behind findings, read once per file, for renderers that show or measure them.

Python findings carry ``ast`` columns (UTF-8 byte offsets); the C++ and config scanners carry
character offsets.  Formats that promise character columns (SARIF, GitHub annotations, the code
frame, concise, full; the flake8 plugin too) convert through :func:`rocm_lint.lines.char_col`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from rocm_lint.discovery import language_of
from rocm_lint.finding import Finding
from rocm_lint.lines import char_col, split_lines


class Sources:
    """The sources renderers read, each once.  ``overlay``: text that is not on disk under its
    name (a buffer read from stdin, ``rocm-lint check -``), by path: (text, the language its
    ``--stdin-filename`` gives it).  The front end that read the buffer owns the overlay and hands
    it to the renderers (``set_overlay``)."""

    def __init__(self, overlay: Optional[Dict[str, Tuple[str, Optional[str]]]] = None) -> None:
        self._lines: Dict[str, List[str]] = {}
        self.overlay: Dict[str, Tuple[str, Optional[str]]] = dict(overlay or {})

    def set_overlay(self, path: str, text: str, language: Optional[str]) -> None:
        """Read ``path`` as ``text`` in ``language`` (instead of the file on disk)."""
        self.overlay[path] = (text, language)
        self._lines.pop(path, None)

    def language(self, path: str) -> Optional[str]:
        return self.overlay[path][1] if path in self.overlay else language_of(path)

    def text(self, path: str):
        """The text behind ``path`` (the overlay, else the file, decoded; a FileError if unreadable)."""
        if path in self.overlay:
            return self.overlay[path][0]
        from rocm_lint.engine import read_source

        return read_source(path)

    def lines(self, path: str) -> List[str]:
        if path not in self._lines:
            # A notebook's findings count rows inside cells: its JSON lines frame none of them.
            text = self.text(path) if self.language(path) != "notebook" else None
            self._lines[path] = split_lines(text) if isinstance(text, str) else []
        return self._lines[path]

    def line(self, path: str, line: int) -> str:
        lines = self.lines(path)
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def char_col(self, path: str, line: int, col: int) -> int:
        """A finding's 0-based column in characters (Python's are UTF-8 byte offsets)."""
        if col <= 0 or self.language(path) != "python":
            return max(col, 0)
        return char_col(self.line(path, line), col)

    def position(self, f: Finding) -> str:
        """``line:col`` (1-based characters), ``cell N:line:col`` in a notebook (ruff's form)."""
        where = f"{f.line}:{self.char_col(f.path, f.line, f.col) + 1}"
        return f"cell {f.cell}:{where}" if f.cell is not None else where

    def span(self, f: Finding) -> Tuple[int, int, int, int]:
        """(line, col, end_line, end_col) in characters, 1-based lines, 0-based columns; a finding
        without an end spans to the end of its line."""
        col = self.char_col(f.path, f.line, f.col)
        if f.end_line and (f.end_line, f.end_col) > (f.line, f.col):
            return f.line, col, f.end_line, self.char_col(f.path, f.end_line, f.end_col)
        return f.line, col, f.line, max(len(self.line(f.path, f.line)), col)


def project_root(config_root=None) -> str:
    """The directory CI formats name files from (SARIF's ``%SRCROOT%``, GitHub's ``file=``): the
    git work tree holding the working directory (what code scanning and annotations resolve
    against, wherever in it the run starts), else the config file's directory, else the working
    directory."""
    cwd = os.path.abspath(os.getcwd())
    here = cwd
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if config_root is not None:
        root = os.path.abspath(os.fspath(config_root))
        if cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return cwd


def repo_path(path: str, root: str = "") -> str:
    """``path`` relative to ``root`` (the working directory) with ``/`` separators, as CI services
    name a repository's files; absolute when it lies outside."""
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, os.path.abspath(root or os.getcwd()))
    except ValueError:  # another drive
        return Path(full).as_posix()
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return Path(full).as_posix()
    return Path(rel).as_posix()


# -- file names in output ---------------------------------------------------------------------
# A name's bytes that are not UTF-8 arrive as lone surrogates (``surrogateescape``, how Python
# decodes every file name); control characters in a name would reach a terminal as commands
# (ESC sequences, a CR that overwrites the line).  Every format shows names through these.
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def name_text(path: str) -> str:
    """``path`` as valid Unicode: bytes that are not UTF-8 become ``\\xNN`` (``caf\\xe9.py``)."""
    if not _SURROGATE.search(path):
        return path
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeError:  # a surrogate that did not come from a file name's bytes
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


def escape_controls(text: str) -> str:
    """Control characters as visible escapes (``\\x1b``, ``\\r``, ``\\n``)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def display_name(path: str) -> str:
    """A file name as a terminal shows it: valid Unicode, no control characters."""
    return escape_controls(name_text(path))
