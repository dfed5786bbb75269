"""The project's formatter settings that decide what a fixed file looks like.

* the line length: ``line-length`` of ``.ruff.toml``/``ruff.toml``/``[tool.ruff]`` (following
  ruff's ``extend = "../pyproject.toml"`` to the file it extends when the table does not set it),
  ``[tool.black]``, or ``max-line-length`` of flake8 (``.flake8``, ``setup.cfg``, ``tox.ini``);
  88 (ruff's and black's default) where none says;
* the blank lines after the import block: ``lines-after-imports`` of ruff's isort table, or
  isort's ``lines_after_imports`` (1 or 2; None: isort's automatic choice);
* whether isort sorts ``import x`` and ``from x import y`` together by module
  (``force-sort-within-sections``, or an isort profile that sets it: google, open_stack, plone),
  which decides where an added ``import torch`` goes.

The closest directory whose config files say something wins, as ruff's settings do (the first
file there, in ruff's order, that sets a value).  Config files are read bounded, parsed once per
(directory, mtimes, sizes), and anything unreadable counts as unset.
"""

from __future__ import annotations

import configparser
import os
import sys
from functools import lru_cache
from typing import NamedTuple, Optional, Tuple

from rocm_lint.discovery import read_bounded

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

DEFAULT_LINE_LENGTH = 88
_CONFIG_BYTES = 1 << 20
_EXTEND_DEPTH = 8
# isort profiles that sort plain and from imports together by module
_SORT_WITHIN_PROFILES = frozenset({"google", "open_stack", "plone"})


class Style(NamedTuple):
    line_length: int
    blank_after_imports: Optional[int]
    force_sort_within_sections: bool


class _Found(NamedTuple):
    length: Optional[int] = None
    blank: Optional[int] = None
    sort_within: Optional[bool] = None

    def any(self) -> bool:
        return self.length is not None or self.blank is not None or self.sort_within is not None

    def merged(self, other: "_Found") -> "_Found":
        """What ``self`` leaves unset, taken from ``other``."""
        return _Found(*(mine if mine is not None else theirs for mine, theirs in zip(self, other)))


def _read(path: str) -> Optional[str]:
    try:
        data = read_bounded(path, _CONFIG_BYTES)
    except (OSError, ValueError):
        return None
    if isinstance(data, str):  # why not, in words: not a regular file, too big
        return None
    return data.decode("utf-8", "replace")


def _positive(value: object) -> Optional[int]:
    if isinstance(value, bool):
        return None
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if 0 < number < 10000 else None


def _boolean(value: object) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (
        "true",
        "1",
        "yes",
        "on",
        "false",
        "0",
        "no",
        "off",
    ):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return None


_NAMES = (".ruff.toml", "ruff.toml", "pyproject.toml", ".isort.cfg", ".flake8", "setup.cfg", "tox.ini")


def _signature(directory: str) -> Tuple[Tuple[str, int, int], ...]:
    """The config files of ``directory`` as (name, mtime, size): an edited file is read again
    (the language server lives long)."""
    out = []
    for name in _NAMES:
        try:
            st = os.stat(os.path.join(directory, name))
        except (OSError, ValueError):
            continue
        out.append((name, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _isort_table(table: object, ruff: bool) -> _Found:
    """The blank lines after imports (1 or 2, where ruff format accepts it) and the sort-within
    setting of an isort table (ruff's spelling or isort's)."""
    if not isinstance(table, dict):
        return _Found()
    value = table.get("lines-after-imports", table.get("lines_after_imports"))
    blank = value if value in (1, 2) and not isinstance(value, bool) else None
    within = _boolean(table.get("force-sort-within-sections", table.get("force_sort_within_sections")))
    if within is None and not ruff and isinstance(table.get("profile"), str):
        within = True if table["profile"].strip().lower() in _SORT_WITHIN_PROFILES else None
    return _Found(None, blank, within)


def _toml(path: str) -> Optional[dict]:
    text = _read(path)
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _table(data: dict, *keys: str) -> dict:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _ruff(ruff: dict, directory: str, depth: int = 0) -> _Found:
    """What a ruff configuration (the top level of ruff.toml, ``[tool.ruff]``) sets, following
    its ``extend`` chain for what it leaves unset."""
    lint = _table(ruff, "lint")
    found = _Found(_positive(ruff.get("line-length")))
    for table in (_table(lint, "isort"), _table(ruff, "isort")):
        found = found.merged(_isort_table(table, ruff=True))
    extend = ruff.get("extend")
    if (
        isinstance(extend, str)
        and extend
        and depth < _EXTEND_DEPTH
        and None in (found.length, found.blank, found.sort_within)
    ):
        target = os.path.normpath(os.path.join(directory, os.path.expanduser(extend)))
        data = _toml(target)
        if data is not None:
            base = _table(data, "tool", "ruff") if os.path.basename(target) == "pyproject.toml" else data
            found = found.merged(_ruff(base, os.path.dirname(target), depth + 1))
    return found


def _ini(text: str) -> Optional[configparser.RawConfigParser]:
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return None
    return parser


@lru_cache(maxsize=256)
def _from_directory(directory: str, signature: Tuple[Tuple[str, int, int], ...]) -> _Found:
    """What the config files of ``directory`` set, in ruff's order of precedence."""
    present = {name for name, _, _ in signature}
    found = _Found()
    for name in (".ruff.toml", "ruff.toml", "pyproject.toml"):
        if name not in present:
            continue
        data = _toml(os.path.join(directory, name))
        if data is None:
            continue
        tool = _table(data, "tool") if name == "pyproject.toml" else {"ruff": data}
        mine = _ruff(_table(tool, "ruff"), directory) if "ruff" in tool else _Found()
        mine = mine.merged(_Found(_positive(_table(tool, "black").get("line-length"))))
        mine = mine.merged(_isort_table(_table(tool, "isort"), ruff=False))
        if mine.any():
            found = found.merged(mine)
            break
    for name in (".isort.cfg", ".flake8", "setup.cfg", "tox.ini"):
        if name not in present or (found.length is not None and found.sort_within is not None):
            continue
        text = _read(os.path.join(directory, name))
        parser = _ini(text) if text is not None else None
        if parser is None:
            continue
        for key in ("max-line-length", "max_line_length"):
            if found.length is None and parser.has_option("flake8", key):
                found = found.merged(_Found(_positive(parser.get("flake8", key))))
        for section in ("settings", "isort", "tool:isort"):
            if parser.has_section(section):
                found = found.merged(
                    _isort_table(dict(parser.items(section)), ruff=False)._replace(blank=None)
                )
    return found


def project_style(path: str) -> Style:
    """The formatter settings of ``path``'s project: the closest directory whose config files
    set them (ruff's, black's, isort's or flake8's settings); 88, None and False where nothing
    says."""
    directory = os.path.dirname(os.path.abspath(path or "."))
    found = _Found()
    while True:
        signature = _signature(directory)
        if signature:
            here = _from_directory(directory, signature)
            if here.any():
                found = found.merged(here)
                break  # the closest configured project wins, as ruff's settings do
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return Style(
        found.length if found.length is not None else DEFAULT_LINE_LENGTH,
        found.blank,
        bool(found.sort_within),
    )


def style_for(path: str) -> Tuple[int, Optional[int]]:
    """(line length, blank lines after the import block) of ``path``'s project."""
    style = project_style(path)
    return style.line_length, style.blank_after_imports


def line_length_for(path: str) -> int:
    """The line length the formatter of ``path``'s project keeps (88 where nothing says)."""
    return project_style(path).line_length
