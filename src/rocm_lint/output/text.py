"""The human formats: ``concise`` (flake8's one line per finding) and ``full`` (with a code frame)."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, TextIO

from rocm_lint.finding import Finding
from rocm_lint.registry import get_rule


def render_concise(findings: List[Finding], out: TextIO) -> None:
    for f in findings:
        out.write(f"{f.path}:{f.line}:{f.col + 1}: {f.code} {f.message}\n")


def _source_lines(path: str, cache: Dict[str, List[str]]) -> List[str]:
    if path not in cache:
        from rocm_lint.engine import read_source

        text = read_source(path)
        cache[path] = text.splitlines() if isinstance(text, str) else []
    return cache[path]


def render_full(findings: List[Finding], out: TextIO, *, color: bool = False) -> None:
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    red = (lambda s: f"\x1b[31m{s}\x1b[0m") if color else (lambda s: s)
    cache: Dict[str, List[str]] = {}
    for f in findings:
        out.write(f"{bold(f'{f.path}:{f.line}:{f.col + 1}:')} {red(f.code)} {f.message}\n")
        lines = _source_lines(f.path, cache)
        gutter = " " * len(str(f.line))
        if 0 < f.line <= len(lines):
            src = lines[f.line - 1].expandtabs(1)
            end = f.end_col if f.end_line == f.line and f.end_col > f.col else len(src)
            width = max(1, end - f.col)
            out.write(f"{gutter} |\n{f.line} | {src}\n{gutter} | {' ' * f.col}{red('^' * width)}\n")
        rule = get_rule(f.code)
        if rule is not None:
            out.write(f"{gutter} = help: `rocm-lint rule {f.code}` or {rule.url}\n")
        out.write("\n")


def render_statistics(findings: List[Finding], out: TextIO) -> None:
    counts = Counter(f.code for f in findings)
    width = len(str(max(counts.values()))) if counts else 1
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = get_rule(code)
        name = rule.name if rule else ""
        out.write(f"{n:>{width}}\t{code}\t{name}\n")
