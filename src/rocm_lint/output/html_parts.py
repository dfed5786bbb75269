"""The porting report's building blocks (``output/html.py``): escaping, names, the inline SVG
bar charts, code frames and one finding's entry."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Dict, Optional, Sequence, Tuple

from rocm_lint.finding import Applicability, Finding
from rocm_lint.output.source import Sources, display_name, name_text, repo_path
from rocm_lint.registry import get_rule
from rocm_lint.rule import DOCS_URL

# Bounds: a code frame shows the finding's lines and CONTEXT lines either side, at most
# FRAME_LINES lines of at most LINE_CHARS characters.
CONTEXT = 2
FRAME_LINES = 9
LINE_CHARS = 240

FIX_KINDS = (
    ("safe", "safe fix (--fix)"),
    ("unsafe", "unsafe fix (--unsafe-fixes)"),
    ("manual", "needs a person"),
)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_kind(f: Finding) -> str:
    """``safe``, ``unsafe`` or ``manual`` (no fix, or one that is only displayed)."""
    if f.fix is None or f.fix.applicability == Applicability.DISPLAY:
        return "manual"
    return "safe" if f.fix.applicability == Applicability.SAFE else "unsafe"


def severity(f: Finding) -> str:
    return f.severity or "error"


def _visible(text: str, keep_tabs: bool = False) -> str:
    """``text`` with lone surrogates (bytes that were not UTF-8) and control characters as visible
    escapes (``\\x1b``, ``\\n``); a code line keeps its tabs as spaces."""
    if _SURROGATE.search(text):
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if keep_tabs:
        text = text.replace("\t", "    ")
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(
        lambda m: (
            _NAMED.get(m.group())
            or (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}")
        ),
        text,
    )


def esc(text: object) -> str:
    """Text (or an attribute value) from the scanned tree, safe anywhere in the page."""
    return html.escape(_visible(str(text)), quote=True)


def path_label(path: str, root: Optional[str] = None) -> str:
    """A finding's file as the report names it: relative to the working directory, valid Unicode,
    no control characters (not yet HTML-escaped)."""
    return display_name(name_text(repo_path(path, root or "")))


def directory_of(label: str) -> str:
    d = label.rsplit("/", 1)[0] if "/" in label else "."
    return d or "/"


# -- the page's parts --------------------------------------------------------------------------------
def bar_chart(
    chart_id: str,
    title: str,
    rows: Sequence[Tuple[str, int, str, str]],
    *,
    label_width: int = 330,
    keep_end: bool = False,
) -> str:
    """A horizontal bar chart as inline SVG: rows of (label, count, css class, key); the key is the
    bar's ``data-key`` (a family for the filter script)."""
    if not rows:
        return '<p class="empty">No findings.</p>'
    width, bar_h, gap, count_w = 720, 20, 8, 60
    top = max(row[1] for row in rows) or 1
    height = len(rows) * (bar_h + gap) + gap
    scale = (width - label_width - count_w - 10) / top
    parts = [
        f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{esc(title)}</title>",
    ]
    for i, (label, count, css, key) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        fits = (label_width - 16) // 7  # characters of a 12px label
        shown = (
            label
            if len(label) <= fits
            else ("\u2026" + label[-fits + 1 :] if keep_end else label[: fits - 1] + "\u2026")
        )
        w = max(2.0, count * scale)
        parts.append(
            f'<g class="bar" data-key="{esc(key)}" data-count="{count}"><title>{esc(label)}: {count}</title>'
            f'<text class="bar-label" x="{label_width - 8}" y="{y + bar_h - 5}" text-anchor="end">{esc(shown)}</text>'
            f'<rect class="{esc(css)}" x="{label_width}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="3"/>'
            f'<text class="bar-count" x="{label_width + w + 6:.1f}" y="{y + bar_h - 5}">{count}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def fix_bar(counts: Dict[str, int]) -> str:
    """One stacked bar: safe / unsafe / needs a person."""
    total = sum(counts.values())
    if not total:
        return ""
    width, height, x = 720, 28, 0.0
    parts = [
        f'<svg id="fix-chart" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="What --fix would change" xmlns="http://www.w3.org/2000/svg">'
        f"<title>What --fix would change</title>"
    ]
    for kind, label in FIX_KINDS:
        n = counts.get(kind, 0)
        if not n:
            continue
        w = width * n / total
        parts.append(
            f'<rect class="fix-{kind}" x="{x:.1f}" y="0" width="{w:.1f}" height="{height}">'
            f"<title>{esc(label)}: {n}</title></rect>"
        )
        x += w
    parts.append("</svg>")
    return "".join(parts)


def code_frame(sources: Sources, f: Finding) -> str:
    lines = sources.lines(f.path)
    if not lines or not 0 < f.line <= len(lines):
        return ""
    last = min(max(f.end_line or f.line, f.line), len(lines))
    first = max(1, f.line - CONTEXT)
    end = min(len(lines), last + CONTEXT, first + FRAME_LINES - 1)
    rows = []
    for n in range(first, end + 1):
        text = lines[n - 1].rstrip("\r\n")
        if len(text) > LINE_CHARS:
            text = text[:LINE_CHARS] + " \u2026"
        mark = ' class="hit"' if f.line <= n <= last else ""
        rows.append(
            f'<tr{mark}><td class="ln">{n}</td><td class="src">{html.escape(_visible(text, keep_tabs=True))}'
            f"</td></tr>"
        )
    return f'<table class="frame">{"".join(rows)}</table>'


def source_kind(f: Finding) -> str:
    """``nvidia-only``: a source the project's ROCm build never compiles
    (``--report-nvidia-only-sources``); ``rocm``: any other (the ROCm build compiles it, or the
    project has no ROCm build to ask)."""
    return "nvidia-only" if f.scope == "nvidia-only" else "rocm"


SOURCE_KINDS = (("rocm", "sources the ROCm build compiles"), ("nvidia-only", "NVIDIA-only sources"))


def finding_item(f: Finding, sources: Sources, frame: bool) -> str:
    rule = get_rule(f.code)
    url = rule.url if rule else DOCS_URL.format(code=f.code)
    name = rule.name if rule else ""
    col = sources.char_col(f.path, f.line, f.col) + 1
    kind = fix_kind(f)
    title = f' title="{esc(f.fix.message)}"' if f.fix is not None and f.fix.message else ""
    fix = f'<span class="fix fix-{kind}"{title}>{esc(dict(FIX_KINDS)[kind])}</span>'
    where = source_kind(f)
    if where == "nvidia-only":
        fix += ' <span class="nvidia-only" title="the ROCm build never compiles this source">NVIDIA-only source</span>'
    return (
        f'<li class="finding" data-family="{esc(f.code[:4])}" data-code="{esc(f.code)}" data-fix="{kind}" '
        f'data-severity="{esc(severity(f))}" data-source="{where}">'
        f'<div class="head"><span class="pos">{f.line}:{col}</span> '
        f'<a class="code" href="{esc(url)}" rel="noopener noreferrer" title="{esc(name)}">{esc(f.code)}</a> '
        f'<span class="msg">{esc(f.message)}</span> {fix}</div>'
        f"{code_frame(sources, f) if frame else ''}</li>"
    )


def anchor(label: str) -> str:
    """An id for a file's section: only safe characters, unique enough (a hash of the name)."""
    return "file-" + hashlib.sha1(label.encode("utf-8", "backslashreplace")).hexdigest()[:12]
