"""What a requirement string says: PEP 508 (name, extras, version specifier, URL, environment
marker), the clauses of a PEP 440 specifier, and whether a marker is false on a Linux x86-64 host.

Pure text (no packaging library, nothing imported or installed): the dependency rules (ROC405-ROC407,
``rules/dependencies.py``) read requirements from manifests, ``pip install`` commands and ``setup.py``
literals through it.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

from rocm_lint.lazy import LazyPattern

_REQ = LazyPattern(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?\s*(.*)$", re.S)
_WHEEL = LazyPattern(r"([A-Za-z0-9_.]+)-(\d[^-]*)-")
_CLAUSE = LazyPattern(r"(===|==|!=|~=|<=|>=|<|>)\s*([^\s,;]+)")


class Parsed:
    __slots__ = ("name", "extras", "spec", "url", "marker")

    def __init__(self, name: str, extras: Tuple[str, ...], spec: str, url: str, marker: str) -> None:
        self.name, self.extras, self.spec, self.url, self.marker = name, extras, spec, url, marker


def parse_requirement(text: str) -> Optional[Parsed]:
    """PEP 508 (``name[extras] spec; marker``, ``name @ url; marker``), a URL or a wheel path."""
    text = text.strip()
    if not text or text[0] in "-.{$#" and not text.startswith("./"):
        return None
    if "://" in text.split(";")[0].split(" @ ")[0] or text.split(";")[0].strip().endswith(".whl"):
        head, _, marker = text.partition(";")
        url = head.strip()
        if " @ " in url:
            name, _, url = url.partition(" @ ")
            return Parsed(_norm(name.split("[")[0]), _extras(name), "", url.strip(), marker)
        base = url.rsplit("/", 1)[-1].replace("%2B", "+").replace("%2b", "+")
        w = _WHEEL.match(base)
        return (
            Parsed(_norm(w.group(1)), (), "==" + w.group(2), url, marker)
            if w
            else Parsed("", (), "", url, marker)
        )
    m = _REQ.match(text)
    if m is None:
        return None
    rest = m.group(3)
    if rest.startswith("@"):
        url, _, marker = rest[1:].partition(" ;") if " ;" in rest else rest[1:].partition(";")
        return Parsed(_norm(m.group(1)), _extras(f"[{m.group(2) or ''}]"), "", url.strip(), marker)
    spec, _, marker = rest.partition(";")
    return Parsed(_norm(m.group(1)), _extras(f"[{m.group(2) or ''}]"), spec.strip(), "", marker)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _extras(name: str) -> Tuple[str, ...]:
    inside = name[name.find("[") + 1 : name.find("]")] if "[" in name and "]" in name else ""
    return tuple(e.strip().lower() for e in inside.split(",") if e.strip())


def clauses(spec: str) -> List[Tuple[str, str]]:
    """(operator, version) of each clause of a PEP 440 specifier (``>=2.0,==2.4.0``)."""
    return _CLAUSE.findall(spec)


# -- environment markers ------------------------------------------------------------------------------
_MARKER_TOKEN = LazyPattern(
    r"\s*(?:(\()|(\))|(and|or|not\s+in|in)\b|(===|==|!=|<=|>=|<|>|~=)|'([^']*)'|\"([^\"]*)\""
    r"|([A-Za-z_][A-Za-z0-9_.]*))"
)
_LINUX_HOST = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}


def marker_false_on_linux(marker: str, extra_excluded: Callable[[str], bool] = lambda extra: False) -> bool:
    """Is the marker False on a Linux x86-64 host, whatever the Python version, for every extra
    except those ``extra_excluded`` names (``extra == "cu124"``)? Malformed markers: False."""
    tokens = []
    pos = 0
    marker = marker.strip()
    while pos < len(marker):
        m = _MARKER_TOKEN.match(marker, pos)
        if m is None or m.end() == pos:
            return False
        tokens.append(m)
        pos = m.end()
    try:
        value, k = _or(tokens, 0, extra_excluded)
    except (IndexError, ValueError):
        return False
    return value is False and k == len(tokens)


def _or(t: List["re.Match[str]"], k: int, ex: Callable[[str], bool]) -> Tuple[Optional[bool], int]:
    value, k = _and(t, k, ex)
    while k < len(t) and t[k].group(3) == "or":
        right, k = _and(t, k + 1, ex)
        value = True if True in (value, right) else (None if None in (value, right) else False)
    return value, k


def _and(t: List["re.Match[str]"], k: int, ex: Callable[[str], bool]) -> Tuple[Optional[bool], int]:
    value, k = _atom(t, k, ex)
    while k < len(t) and t[k].group(3) == "and":
        right, k = _atom(t, k + 1, ex)
        value = False if False in (value, right) else (None if None in (value, right) else True)
    return value, k


def _atom(t: List["re.Match[str]"], k: int, ex: Callable[[str], bool]) -> Tuple[Optional[bool], int]:
    if t[k].group(1):
        value, k = _or(t, k + 1, ex)
        if not t[k].group(2):
            raise ValueError("unbalanced")
        return value, k + 1
    left, op, right = t[k], t[k + 1], t[k + 2]
    how = op.group(4) or re.sub(r"\s+", " ", op.group(3) or "")
    if not how or how in ("and", "or"):
        raise ValueError("no comparison")
    names = [x.group(7) for x in (left, right)]
    if "extra" in names:
        other = right if names[0] == "extra" else left
        literal = other.group(5) if other.group(5) is not None else other.group(6)
        return (False if literal is not None and how == "==" and ex(literal) else None), k + 3
    values = []
    for x in (left, right):
        literal = x.group(5) if x.group(5) is not None else x.group(6)
        values.append(literal if literal is not None else _LINUX_HOST.get(x.group(7) or ""))
    a, b = values
    if a is None or b is None:
        return None, k + 3
    result = {"==": a == b, "===": a == b, "!=": a != b, "in": a in b, "not in": a not in b}.get(how)
    return result, k + 3
