"""The dependencies of a ``pyproject.toml``: PEP 621, PEP 735, build requirements, Poetry, PDM, uv.

``tomllib`` (``tomli`` before Python 3.11) reads the structure; each string is then found in the
text, in order, from the position of its table and key, so a finding points at the requirement
as written.  A file that is not valid TOML gives nothing (pip would refuse it too).

Indexes: ``[[tool.uv.index]]`` (an ``explicit = true`` one serves only the packages whose
``[tool.uv.sources]`` entry names it: one :class:`IndexUse` per such entry, with its marker and
extra/group; one nobody names is ``used=False``), ``[tool.uv]``/``[tool.uv.pip]`` ``index-url``,
``extra-index-url``, ``find-links``, Poetry ``[[tool.poetry.source]]`` (``priority = "explicit"``
works as uv's explicit) and PDM ``[[tool.pdm.source]]``.
"""

from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Tuple

from rocm_lint.configfiles.unit import IndexUse, Manifest, Requirement

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

_HEADER = re.compile(r"(?m)^[ \t]*(\[\[?)([^\]\n]*)\]\]?[ \t]*(?:#[^\n]*)?$")


class _Locator:
    """Offsets of tables, keys and strings in the text."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.headers: List[Tuple[str, int]] = []
        for m in _HEADER.finditer(code):
            name = ".".join(p.strip().strip("\"'") for p in m.group(2).split("."))
            self.headers.append((name, m.end()))

    def table(self, name: str, index: int = 0) -> Tuple[int, int]:
        """(start, end) of the ``index``-th table ``name`` (``[[...]]`` repeats), else (-1, -1)."""
        seen = 0
        for k, (n, at) in enumerate(self.headers):
            if n == name:
                if seen == index:
                    end = self.headers[k + 1][1] if k + 1 < len(self.headers) else len(self.code)
                    return at, end
                seen += 1
        return -1, -1

    def key(self, table: str, dotted: str, index: int = 0) -> int:
        """Where ``dotted`` (a key, or a dotted key below ``table``) is given a value: under its own
        header (``[project.optional-dependencies]`` + ``cu121 =``) or as a dotted key
        (``optional-dependencies.cu121 =`` under ``[project]``); -1 if not found."""
        parts = dotted.split(".")
        for split in range(len(parts) - 1, -1, -1):
            name = ".".join([table] + parts[:split]) if table else ".".join(parts[:split])
            a, b = (
                self.table(name, index)
                if name
                else (0, self.headers[0][1] if self.headers else len(self.code))
            )
            if a < 0:
                continue
            keys = r"[ \t]*\.[ \t]*".join(
                r"(?:\"%s\"|'%s'|%s)" % ((re.escape(p),) * 3) for p in parts[split:]
            )
            m = re.compile(r"(?m)^[ \t]*" + keys + r"[ \t]*=").search(self.code, a, b)
            if m:
                return m.end()
        return -1

    def string(self, value: str, start: int) -> Tuple[int, int]:
        """(start, end) of the string ``value`` at or after ``start`` (its text, not its quotes)."""
        best = None
        for quoted in ('"%s"' % value, "'%s'" % value, json.dumps(value)):
            at = self.code.find(quoted, max(start, 0))
            if at >= 0 and (best is None or at < best[0]):
                best = (at + 1, at + len(quoted) - 1)
        return best if best is not None else (max(start, 0), max(start, 0))


def read_pyproject(code: str) -> Manifest:
    m = Manifest()
    try:
        data = tomllib.loads(code)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError, TypeError):
        return m
    loc = _Locator(code)
    project = _dict(data.get("project"))
    _strings(loc, m, project.get("dependencies"), loc.key("project", "dependencies"), "")
    for extra, items in _dict(project.get("optional-dependencies")).items():
        _strings(loc, m, items, loc.key("project", f"optional-dependencies.{extra}"), extra)
    _strings(loc, m, _dict(data.get("build-system")).get("requires"), loc.key("build-system", "requires"), "")
    for group, items in _dict(data.get("dependency-groups")).items():
        _strings(loc, m, items, loc.key("dependency-groups", group), group)
    tool = _dict(data.get("tool"))
    _uv(loc, m, _dict(tool.get("uv")))
    _poetry(loc, m, _dict(tool.get("poetry")))
    pdm = _dict(tool.get("pdm"))
    for group, items in _dict(pdm.get("dev-dependencies")).items():
        _strings(loc, m, items, loc.key("tool.pdm", f"dev-dependencies.{group}"), group)
    for k, source in enumerate(_list(pdm.get("source"))):
        _index(loc, m, _dict(source), loc.table("tool.pdm.source", k)[0], "pdm-source")
    return m


def _dict(v: object) -> Dict[str, object]:
    return v if isinstance(v, dict) else {}


def _list(v: object) -> List[object]:
    return v if isinstance(v, list) else []


def _strings(loc: _Locator, m: Manifest, items: object, at: int, section: str) -> None:
    cursor = at
    for item in _list(items):
        if isinstance(item, str) and at >= 0:
            a, b = loc.string(item, cursor)
            cursor = b
            m.requirements.append(Requirement(item, a, b, None, section))


def _index(
    loc: _Locator,
    m: Manifest,
    entry: Dict[str, object],
    at: int,
    how: str,
    uses: Optional[List[Tuple[str, str]]] = None,
) -> None:
    url = entry.get("url")
    if not isinstance(url, str):
        return
    a, b = loc.string(url, at)
    if uses is None:  # used for every package
        m.indexes.append(IndexUse(url, a, b, None, how))
        return
    if not uses:
        m.indexes.append(IndexUse(url, a, b, None, how, used=False))
    for section, marker in uses:
        m.indexes.append(IndexUse(url, a, b, None, how, section, marker=marker))


# -- uv -------------------------------------------------------------------------------------------
def _uv(loc: _Locator, m: Manifest, uv: Dict[str, object]) -> None:
    for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
        _strings(loc, m, uv.get(key), loc.key("tool.uv", key), "dev" if key == "dev-dependencies" else "")
    for table, values in (("tool.uv", uv), ("tool.uv.pip", _dict(uv.get("pip")))):
        for key, how in (
            ("index-url", "index-url"),
            ("extra-index-url", "extra-index-url"),
            ("find-links", "find-links"),
        ):
            value = values.get(key)
            for url in [value] if isinstance(value, str) else _list(value):
                if isinstance(url, str):
                    a, b = loc.string(url, loc.key(table, key))
                    m.indexes.append(IndexUse(url, a, b, None, how))
    sources = _uv_sources(uv.get("sources"))
    for k, index in enumerate(_list(uv.get("index"))):
        entry = _dict(index)
        explicit = entry.get("explicit") is True
        uses = sources.get(str(entry.get("name")), []) if explicit else None
        _index(loc, m, entry, loc.table("tool.uv.index", k)[0], "uv-index", uses)


def _uv_sources(sources: object) -> Dict[str, List[Tuple[str, str]]]:
    """index name -> (extra or group, marker) of each source entry that takes a package from it."""
    out: Dict[str, List[Tuple[str, str]]] = {}
    for spec in _dict(sources).values():
        for entry in spec if isinstance(spec, list) else [spec]:
            entry = _dict(entry)
            if isinstance(entry.get("index"), str):
                section = entry.get("extra") or entry.get("group") or ""
                marker = entry.get("marker") or ""
                out.setdefault(entry["index"], []).append((str(section), str(marker)))
    return out


# -- Poetry ---------------------------------------------------------------------------------------
def _poetry(loc: _Locator, m: Manifest, poetry: Dict[str, object]) -> None:
    extras_of: Dict[str, List[str]] = {}
    for extra, names in _dict(poetry.get("extras")).items():
        for name in _list(names):
            if isinstance(name, str):
                extras_of.setdefault(name.lower(), []).append(extra)
    tables = [("tool.poetry", "dependencies", ""), ("tool.poetry", "dev-dependencies", "dev")]
    tables += [(f"tool.poetry.group.{g}", "dependencies", g) for g in _dict(poetry.get("group"))]
    uses: Dict[str, List[Tuple[str, str]]] = {}
    for table, key, group in tables:
        deps = (
            _dict(poetry.get(key))
            if table == "tool.poetry"
            else _dict(_dict(_dict(_dict(poetry.get("group")).get(group)).get("dependencies")))
        )
        at = loc.key(table, key)
        for name, spec in deps.items():
            if name.lower() == "python":
                continue
            name_at = loc.key(f"{table}.{key}", name) if at >= 0 else -1
            name_at = name_at if name_at >= 0 else loc.key(table, f"{key}.{name}")
            for entry in spec if isinstance(spec, list) else [spec]:
                _poetry_dependency(loc, m, name, entry, max(name_at, at), group, extras_of, uses)
    for k, source in enumerate(_list(poetry.get("source"))):
        entry = _dict(source)
        explicit = entry.get("priority") == "explicit"
        _index(
            loc,
            m,
            entry,
            loc.table("tool.poetry.source", k)[0],
            "poetry-source",
            uses.get(str(entry.get("name")), []) if explicit else None,
        )


def _poetry_dependency(
    loc: _Locator,
    m: Manifest,
    name: str,
    entry: object,
    at: int,
    group: str,
    extras_of: Dict[str, List[str]],
    uses: Dict[str, List[Tuple[str, str]]],
) -> None:
    marker = ""
    if isinstance(entry, str):
        version, where = entry, entry
    elif isinstance(entry, dict):
        version = entry.get("version") if isinstance(entry.get("version"), str) else ""
        where = version or next(
            (entry[k] for k in ("url", "git", "path") if isinstance(entry.get(k), str)), ""
        )
        marker = entry.get("markers") if isinstance(entry.get("markers"), str) else ""
        if isinstance(entry.get("platform"), str):
            platform = 'sys_platform == "%s"' % entry["platform"]
            marker = f"({marker}) and {platform}" if marker else platform
        if isinstance(entry.get("url"), str):
            version = "@ " + entry["url"]
        sections = extras_of.get(name.lower(), []) if entry.get("optional") is True else [group]
        if isinstance(entry.get("source"), str):
            for section in sections or [group]:
                uses.setdefault(entry["source"], []).append((section, marker))
    else:
        return
    text = name + _poetry_version(str(version)) + (f"; {marker}" if marker else "")
    a, b = loc.string(str(where), at) if where else (at, at)
    if not where:
        a = b = max(at, 0)
    sections = (
        extras_of.get(name.lower(), [])
        if isinstance(entry, dict) and entry.get("optional") is True
        else [group]
    )
    for section in sections:
        m.requirements.append(Requirement(text, a, b, None, section))


def _poetry_version(c: str) -> str:
    """A Poetry constraint as PEP 440: a bare version is exact (``"2.1.2"`` is ``==2.1.2``); ``^``
    and ``~`` are ranges (their lower bound is enough here)."""
    c = c.strip()
    if c.startswith("@ "):
        return " " + c
    if not c or c == "*":
        return ""
    if re.fullmatch(r"\d[\w.!+-]*", c):
        return "==" + c
    if c[0] in "^~" and not c.startswith("~="):
        return ">=" + c[1:].strip()
    return c
