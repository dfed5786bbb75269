"""The human formats: ``concise`` (flake8's one line per finding) and ``full`` (with a code frame,
highlighted with pygments when colour is on)."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, TextIO

from rocm_lint.finding import Applicability, Finding
from rocm_lint.output.source import Sources, display_name
from rocm_lint.registry import get_rule

# pygments lexer aliases per rocm-lint language
_LEXERS = {
    "python": "python",
    "cuda": "cuda",
    "cpp": "cpp",
    "shell": "bash",
    "dotenv": "bash",
    "dockerfile": "docker",
    "yaml": "yaml",
    "cmake": "cmake",
}


def render_concise(findings: List[Finding], out: TextIO, *, sources: Optional[Sources] = None) -> None:
    sources = sources or Sources()
    for f in findings:
        out.write(f"{display_name(f.path)}:{sources.position(f)}: {f.code} {f.message}\n")


class _Highlighter:
    """Each file's lines highlighted once, as a whole (a line alone would lose its context: a
    docstring, a block comment); pygments is imported only when colour is on."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._lines: Dict[str, Optional[List[str]]] = {}

    def line(self, path: str, line: int) -> Optional[str]:
        if path not in self._lines:
            self._lines[path] = self._highlight(path)
        lines = self._lines[path]
        return lines[line - 1] if lines is not None and 0 < line <= len(lines) else None

    def _highlight(self, path: str) -> Optional[List[str]]:
        alias = _LEXERS.get(self.sources.language(path) or "")
        plain = self.sources.lines(path)
        if alias is None or not plain:
            return None
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import get_lexer_by_name
        except ImportError:  # pragma: no cover - pygments is a dependency
            return None
        lexer = get_lexer_by_name(alias, stripnl=False, ensurenl=False)
        text = highlight("\n".join(line.expandtabs(1) for line in plain), lexer, TerminalFormatter())
        lines = text.split("\n")
        return lines if len(lines) == len(plain) else None  # never show a frame that does not line up


def render_full(
    findings: List[Finding], out: TextIO, *, color: bool = False, sources: Optional[Sources] = None
) -> None:
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    red = (lambda s: f"\x1b[1;31m{s}\x1b[0m") if color else (lambda s: s)
    blue = (lambda s: f"\x1b[34m{s}\x1b[0m") if color else (lambda s: s)
    sources = sources or Sources()
    highlighter = _Highlighter(sources) if color else None
    for f in findings:
        where = f"{display_name(f.path)}:{sources.position(f)}:"
        out.write(f"{bold(where)} {red(f.code)} {f.message}\n")
        gutter = " " * len(str(f.line))
        src = sources.line(f.path, f.line).expandtabs(1)
        if src or 0 < f.line <= len(sources.lines(f.path)):
            line, col, end_line, end_col = sources.span(f)
            end = end_col if end_line == line and end_col > col else len(src)
            width = max(1, end - col)
            shown = (highlighter.line(f.path, f.line) if highlighter else None) or src
            bar = blue("|")
            out.write(
                f"{gutter} {bar}\n{blue(str(f.line))} {bar} {shown}\n"
                f"{gutter} {bar} {' ' * col}{red('^' * width)}\n"
            )
        rule = get_rule(f.code)
        if rule is not None:
            out.write(f"{gutter} {blue('=')} help: `rocm-lint rule {f.code}` or {rule.url}\n")
        out.write("\n")


def statistics(findings: List[Finding], unsafe_fixes: bool = False) -> List[dict]:
    """A count per code, most frequent first, as ruff's ``--statistics --output-format json``:
    ``{code, name, count, fixable}``; ``fixable``: a fix ``--fix`` would apply (with
    ``--unsafe-fixes``, unsafe ones count too) exists for some of them."""
    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if unsafe_fixes else set())
    counts = Counter(f.code for f in findings)
    fixable = {f.code for f in findings if f.fix is not None and f.fix.applicability in wanted}
    out = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = get_rule(code)
        out.append(
            {"code": code, "name": rule.name if rule else None, "count": n, "fixable": code in fixable}
        )
    return out


def render_statistics(
    findings: List[Finding], out: TextIO, *, fmt: str = "concise", unsafe_fixes: bool = False
) -> None:
    stats = statistics(findings, unsafe_fixes)
    if fmt == "json":
        import json

        json.dump(stats, out, indent=2)
        out.write("\n")
        return
    width = len(str(max(s["count"] for s in stats))) if stats else 1
    for s in stats:
        out.write(f"{s['count']:>{width}}\t{s['code']}\t{s['name'] or ''}\n")


def render_rule_list(rules, out: TextIO) -> None:
    """``rocm-lint rules`` (and ``rocm-lint rule PREFIX``): one line per rule."""
    for r in rules:
        fix = r.fix.value if r.fix else "-"
        out.write(f"{r.code}  {r.name:<36} fix:{fix:<8} {r.summary}\n")
