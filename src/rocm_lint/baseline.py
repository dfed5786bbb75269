"""Baselines for CI gates: record today's findings, then report only new ones.

A finding is identified by its code, its path (relative to the baseline file's directory, so
the baseline works from any working directory and on any checkout) and the content of its
line with surrounding blanks stripped.  Line numbers are not part of the key, so a baselined
finding stays suppressed when lines are added or removed elsewhere in the file; a change to the
finding's own line, or a new occurrence, is reported.  Identical keys are counted: a file with
two baselined ``__ballot`` lines of the same text that gains a third reports one.

File format (JSON, sorted, one entry per key)::

    {"version": 1, "tool": "rocm-lint",
     "findings": [{"code": "ROC601", "path": "csrc/k.cu", "line": "unsigned m = __ballot(p);",
                   "count": 1}]}
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Counter as CounterType, List, Sequence, Tuple

from rocm_lint.discovery import named_target, write_text_atomic
from rocm_lint.finding import Finding
from rocm_lint.output.source import Sources, name_text

VERSION = 1
Key = Tuple[str, str, str]


class BaselineError(Exception):
    """A baseline file that cannot be read (the CLI exits 2 with this message)."""


def _relative(path: str, base: Path) -> str:
    full = os.path.realpath(path)  # the same key through a symlinked directory as through the real one
    try:
        rel = Path(os.path.relpath(full, base)).as_posix()
    except ValueError:  # another drive on Windows
        rel = Path(full).as_posix()
    return name_text(rel)  # a name's bytes that are not UTF-8 as \xNN: the baseline is UTF-8 JSON


def _keys(findings: Sequence[Finding], base: Path) -> List[Key]:
    sources = Sources()
    return [(f.code, _relative(f.path, base), sources.line(f.path, f.line).strip()) for f in findings]


def write_baseline(findings: Sequence[Finding], file: str, trees: Sequence[str] = ()) -> int:
    """Write ``file`` (atomically; a symbolic link there is written through only when it leads
    into one of ``trees``: ``rocm_lint.discovery.named_target``, which raises ``LinkRefused``);
    returns the number of findings recorded."""
    target = named_target(file, trees)
    base = Path(os.path.realpath(file)).parent
    counts = Counter(_keys(findings, base))
    data = {
        "version": VERSION,
        "tool": "rocm-lint",
        "findings": [
            {"code": c, "path": p, "line": t, "count": n} for (c, p, t), n in sorted(counts.items())
        ],
    }
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_text_atomic(target, text)
    return len(findings)


def read_baseline(file: str) -> CounterType[Key]:
    try:
        with open(file, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read baseline: {(exc.strerror or str(exc)).lower()}") from None
    except ValueError as exc:
        raise BaselineError(f"{file}: not a rocm-lint baseline (invalid JSON: {exc})") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or not isinstance(data.get("findings"), list)
    ):
        raise BaselineError(
            f"{file}: not a rocm-lint baseline (expected version {VERSION} with a findings list; "
            "write one with --write-baseline)"
        )
    counts: CounterType[Key] = Counter()
    for i, entry in enumerate(data["findings"]):
        try:
            key = (str(entry["code"]), str(entry["path"]), str(entry["line"]))
            count = int(entry.get("count", 1))
        except (TypeError, KeyError, ValueError):
            raise BaselineError(f"{file}: entry {i} needs code, path, line (and an integer count)") from None
        counts[key] += count
    return counts


def new_findings(findings: Sequence[Finding], file: str) -> List[Finding]:
    """The findings the baseline in ``file`` does not account for (in their original order)."""
    remaining = read_baseline(file)
    base = Path(os.path.realpath(file)).parent
    out = []
    for f, key in zip(findings, _keys(findings, base)):
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            out.append(f)
    return out
