"""A content-cache entry as plain data (``rocm_lint.cache``): findings to JSON and back, the
shape every entry must have (:func:`valid_entry`: anything else is a miss, never a crash), and
the seal of a shard (:func:`seal`), a keyed hash of its bytes under a secret kept outside every
project (:func:`secret`), so that a cache planted in a repository, or edited by hand, is never
believed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict
from typing import List, Optional, Union

from rocm_lint.finding import RECIPES, Applicability, Edit, FileError, Finding, Fix

Result = Union[List[Finding], FileError]


# -- findings as plain data ------------------------------------------------------------------------
def _recipe_to(recipe) -> Optional[dict]:
    if recipe is None:
        return None
    return {"type": type(recipe).__name__, **asdict(recipe)}


def _recipe_from(data: Optional[dict]):
    if data is None:
        return None
    kinds = {r.__name__: r for r in RECIPES}
    data = dict(data)
    kind = kinds[data.pop("type")]
    if "span" in data:
        span = data["span"]
        if not (isinstance(span, list) and len(span) == 4 and all(_is_int(v) for v in span)):
            raise ValueError("a recipe's span is four numbers")
        data["span"] = tuple(span)
    if not all(isinstance(v, str) for k, v in data.items() if k != "span"):
        raise ValueError("a recipe's fields are text")
    return kind(**data)


def _finding_to(f: Finding) -> dict:
    out = {
        "line": f.line,
        "col": f.col,
        "code": f.code,
        "message": f.message,
        "end_line": f.end_line,
        "end_col": f.end_col,
        "severity": f.severity,
        "scope": f.scope,
    }
    if f.cell is not None:
        out["cell"] = f.cell
    if f.fix is not None:
        out["fix"] = {
            "applicability": f.fix.applicability.value,
            "message": f.fix.message,
            "edits": [[e.content, list(e.start), list(e.end)] for e in f.fix.edits],
            "recipe": _recipe_to(f.fix.recipe),
        }
    return out


def _is_int(value) -> bool:
    return type(value) is int and value >= 0


def _is_position(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and _is_int(value[0]) and _is_int(value[1])


def _optional_text(value) -> bool:
    return value is None or isinstance(value, str)


def _finding_from(path: str, d: dict) -> Finding:
    """A finding from its plain data; ``ValueError`` for any other shape."""
    if not isinstance(d, dict):
        raise ValueError("a finding is an object")
    if not (
        all(_is_int(d.get(k)) for k in ("line", "col", "end_line", "end_col"))
        and isinstance(d.get("code"), str)
        and isinstance(d.get("message"), str)
        and _optional_text(d.get("severity"))
        and _optional_text(d.get("scope"))
        and (d.get("cell") is None or _is_int(d.get("cell")))
    ):
        raise ValueError("a finding's fields have other types")
    fix = None
    if d.get("fix") is not None:
        x = d["fix"]
        if not (
            isinstance(x, dict)
            and isinstance(x.get("message"), str)
            and isinstance(x.get("edits"), list)
            and all(edit_ok(e) for e in x["edits"])
        ):
            raise ValueError("a fix's fields have other types")
        fix = Fix(
            Applicability(x["applicability"]),
            x["message"],
            edits_from(x["edits"]),
            _recipe_from(x.get("recipe")),
        )
    return Finding(
        path,
        d["line"],
        d["col"],
        d["code"],
        d["message"],
        d["end_line"],
        d["end_col"],
        fix=fix,
        severity=d.get("severity"),
        scope=d.get("scope"),
        cell=d.get("cell"),
    )


def encode_result(result: Result) -> dict:
    if isinstance(result, FileError):
        return {"error": result.reason}
    return {"findings": [_finding_to(f) for f in result]}


def decode_result(path: str, data: dict) -> Result:
    """The result kept in an entry; ``ValueError`` (or ``KeyError``, ``TypeError``) for data of
    another shape."""
    if not isinstance(data, dict):
        raise ValueError("a result is an object")
    if "error" in data:
        if not isinstance(data["error"], str):
            raise ValueError("an error is text")
        return FileError(path, data["error"])
    if not isinstance(data.get("findings"), list):
        raise ValueError("findings are a list")
    # A finding names its file as this run was given it (``a.py`` from one directory,
    # ``/abs/a.py`` from another): the cache keeps no path of its own.
    return [_finding_from(path, d) for d in data["findings"]]


def _deps_ok(deps) -> bool:
    return isinstance(deps, list) and all(
        isinstance(d, list) and len(d) == 2 and isinstance(d[0], str) and _optional_text(d[1]) for d in deps
    )


def valid_entry(entry) -> bool:
    """Whether ``entry`` has the shape :meth:`Cache.store` gives an entry (its findings are
    checked when they are decoded): anything else is a miss."""
    if not (
        isinstance(entry, dict)
        and isinstance(entry.get("hash"), str)
        and isinstance(entry.get("triggers"), str)
        and isinstance(entry.get("result"), dict)
        and _deps_ok(entry.get("deps", []))
    ):
        return False
    signature = entry.get("stat")
    if signature is not None and not (
        isinstance(signature, list) and len(signature) == 4 and all(type(v) is int for v in signature)
    ):
        return False
    candidates = entry.get("candidates")
    if candidates is not None and not (
        isinstance(candidates, list) and all(isinstance(c, str) for c in candidates)
    ):
        return False
    edits = entry.get("edits")
    if edits is not None:
        if not (
            isinstance(edits, dict)
            and _deps_ok(edits.get("deps", []))
            and isinstance(edits.get("by_finding"), dict)
        ):
            return False
        for value in edits["by_finding"].values():
            if value is not None and not (isinstance(value, list) and all(edit_ok(e) for e in value)):
                return False
    return True


# -- the seal: a keyed hash of an entry, under a secret kept outside any project ------------------
SECRET_BYTES = 32


def secret_file() -> str:
    """Where the cache's secret is kept: ``$XDG_CACHE_HOME/rocm-lint/cache-secret`` (else
    ``~/.cache/rocm-lint/cache-secret``), outside every project a run reads."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rocm-lint", "cache-secret")


def secret() -> bytes:
    """The secret the entries are sealed with: read from :func:`secret_file`, created there
    (mode 0600) the first time.  Where it can be neither read nor created (no writable home),
    a secret of this process: its cache is then written but never read back (every run a miss)."""
    from rocm_lint.discovery import read_bounded

    file = secret_file()
    for _ in range(2):
        try:
            data = read_bounded(file, SECRET_BYTES, follow_links=False)
            if isinstance(data, bytes) and len(data) == SECRET_BYTES:
                return data
        except OSError:
            pass
        try:
            os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            continue  # written by another run meanwhile (read it), or no home to keep it in
        try:
            os.write(fd, os.urandom(SECRET_BYTES))
        finally:
            os.close(fd)
    return os.urandom(SECRET_BYTES)


def seal(body: bytes, key: bytes) -> str:
    """The keyed hash of a shard's ``body`` (its JSON, written after the seal's line): one
    hash over the bytes as read, no entry serialized again."""
    return hashlib.blake2b(body, key=key, digest_size=16).hexdigest()


def edits_to(edits) -> list:
    return [[e.content, list(e.start), list(e.end)] for e in edits]


def edit_ok(edit) -> bool:
    """Whether ``edit`` is an edit as plain data: ``[content, [line, col], [line, col]]``."""
    return (
        isinstance(edit, list)
        and len(edit) == 3
        and isinstance(edit[0], str)
        and _is_position(edit[1])
        and _is_position(edit[2])
    )


def edits_from(data: list) -> tuple:
    return tuple(Edit(c, tuple(s), tuple(e)) for c, s, e in data)
