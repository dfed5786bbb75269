"""A porting report: one self-contained HTML page (``rocm-lint check --output-format html``).

What a porting lead opens first: the totals, findings by family and by directory (inline SVG bar
charts drawn here, not by a script), what ``--fix`` would change (safe fixes, unsafe fixes,
findings that need a person), the hottest files, every finding with a bounded code frame and a
link to its rule page, and the files that could not be analysed.  Filters by family, fix and
severity are a few lines of inline JavaScript; the page works without them.

Nothing is loaded from the network: styles and script are inline, and a Content-Security-Policy
forbids any other source (links to the rule pages are plain hyperlinks).  Every piece of text
from the scanned tree (file names, messages, code) is escaped; control characters and bytes
that are not UTF-8 are shown as visible escapes, so hostile names cannot break the page.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from typing import Dict, List, Optional, Sequence, TextIO, Tuple

from rocm_lint import __version__
from rocm_lint.finding import Applicability, FileError, Finding
from rocm_lint.output.source import Sources, display_name, name_text, repo_path
from rocm_lint.registry import get_rule
from rocm_lint.rule import DOCS_URL, FAMILIES

# Bounds: a code frame shows the finding's lines and CONTEXT lines either side, at most
# FRAME_LINES lines of at most LINE_CHARS characters; frames stop after MAX_FRAMES findings
# (every finding is still listed).
CONTEXT = 2
FRAME_LINES = 9
LINE_CHARS = 240
MAX_FRAMES = 3000
TOP_DIRECTORIES = 15
TOP_FILES = 10

FIX_KINDS = (("safe", "safe fix (--fix)"), ("unsafe", "unsafe fix (--unsafe-fixes)"),
             ("manual", "needs a person"))
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
    return _CONTROL.sub(lambda m: _NAMED.get(m.group()) or (
        f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"), text)


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
def _bar_chart(chart_id: str, title: str, rows: Sequence[Tuple[str, int, str, str]], *,
               label_width: int = 330, keep_end: bool = False) -> str:
    """A horizontal bar chart as inline SVG: rows of (label, count, css class, key); the key is the
    bar's ``data-key`` (a family for the filter script)."""
    if not rows:
        return '<p class="empty">No findings.</p>'
    width, bar_h, gap, count_w = 720, 20, 8, 60
    top = max(row[1] for row in rows) or 1
    height = len(rows) * (bar_h + gap) + gap
    scale = (width - label_width - count_w - 10) / top
    parts = [f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{esc(title)}</title>"]
    for i, (label, count, css, key) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        fits = (label_width - 16) // 7  # characters of a 12px label
        shown = label if len(label) <= fits else ("\u2026" + label[-fits + 1:] if keep_end else label[:fits - 1] + "\u2026")
        w = max(2.0, count * scale)
        parts.append(
            f'<g class="bar" data-key="{esc(key)}" data-count="{count}"><title>{esc(label)}: {count}</title>'
            f'<text class="bar-label" x="{label_width - 8}" y="{y + bar_h - 5}" text-anchor="end">{esc(shown)}</text>'
            f'<rect class="{esc(css)}" x="{label_width}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="3"/>'
            f'<text class="bar-count" x="{label_width + w + 6:.1f}" y="{y + bar_h - 5}">{count}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _fix_bar(counts: Dict[str, int]) -> str:
    """One stacked bar: safe / unsafe / needs a person."""
    total = sum(counts.values())
    if not total:
        return ""
    width, height, x = 720, 28, 0.0
    parts = [f'<svg id="fix-chart" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'role="img" aria-label="What --fix would change" xmlns="http://www.w3.org/2000/svg">'
             f"<title>What --fix would change</title>"]
    for kind, label in FIX_KINDS:
        n = counts.get(kind, 0)
        if not n:
            continue
        w = width * n / total
        parts.append(f'<rect class="fix-{kind}" x="{x:.1f}" y="0" width="{w:.1f}" height="{height}">'
                     f"<title>{esc(label)}: {n}</title></rect>")
        x += w
    parts.append("</svg>")
    return "".join(parts)


def _code_frame(sources: Sources, f: Finding) -> str:
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
        rows.append(f'<tr{mark}><td class="ln">{n}</td><td class="src">{html.escape(_visible(text, keep_tabs=True))}'
                    f"</td></tr>")
    return f'<table class="frame">{"".join(rows)}</table>'


def _finding_item(f: Finding, sources: Sources, frame: bool) -> str:
    rule = get_rule(f.code)
    url = rule.url if rule else DOCS_URL.format(code=f.code)
    name = rule.name if rule else ""
    col = sources.char_col(f.path, f.line, f.col) + 1
    kind = fix_kind(f)
    title = f' title="{esc(f.fix.message)}"' if f.fix is not None and f.fix.message else ""
    fix = f'<span class="fix fix-{kind}"{title}>{esc(dict(FIX_KINDS)[kind])}</span>'
    return (f'<li class="finding" data-family="{esc(f.code[:4])}" data-code="{esc(f.code)}" data-fix="{kind}" '
            f'data-severity="{esc(severity(f))}">'
            f'<div class="head"><span class="pos">{f.line}:{col}</span> '
            f'<a class="code" href="{esc(url)}" rel="noopener noreferrer" title="{esc(name)}">{esc(f.code)}</a> '
            f'<span class="msg">{esc(f.message)}</span> {fix}</div>'
            f'{_code_frame(sources, f) if frame else ""}</li>')


STYLE = """
:root{--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--hit:#fff8c5;--card:#f6f8fa;
--safe:#1a7f37;--unsafe:#bf8700;--manual:#cf222e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;
--hit:#3b2e00;--card:#151b23}}
*{box-sizing:border-box}body{margin:0 auto;max-width:1100px;padding:16px 24px 48px;color:var(--fg);
background:var(--bg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}.muted{color:var(--muted)}a{color:#0969da}
.totals{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}.total{background:var(--card);border:1px solid var(--line);
border-radius:8px;padding:10px 14px;min-width:120px}.total b{display:block;font-size:24px}
.chart{max-width:100%;height:auto;display:block}.chart text{fill:var(--fg);font-size:12px}
.bar-count{fill:var(--muted)}
.fam-ROC0{fill:#8c959f}.fam-ROC1{fill:#0969da}.fam-ROC2{fill:#8250df}.fam-ROC3{fill:#bf3989}
.fam-ROC4{fill:#cf222e}.fam-ROC5{fill:#bc4c00}.fam-ROC6{fill:#9a6700}.fam-ROC7{fill:#1a7f37}
.fam-ROC8{fill:#0550ae}.fam-ROC9{fill:#6e7781}.dir{fill:#57606a}
.fix-safe{fill:var(--safe)}.fix-unsafe{fill:var(--unsafe)}.fix-manual{fill:var(--manual)}
span.fix{font-size:12px;border-radius:10px;padding:1px 8px;color:#fff;white-space:nowrap}
span.fix-safe{background:var(--safe)}span.fix-unsafe{background:var(--unsafe)}span.fix-manual{background:var(--manual)}
.legend span{margin-right:14px}.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
table.list{border-collapse:collapse}table.list td,table.list th{padding:3px 12px 3px 0;text-align:left;
vertical-align:top}table.list td.n{text-align:right}
fieldset{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:6px 12px}
fieldset label{margin-right:12px;white-space:nowrap}
details.file{border:1px solid var(--line);border-radius:8px;margin:8px 0;background:var(--card)}
details.file>summary{cursor:pointer;padding:6px 10px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
overflow-wrap:anywhere}ul.findings{list-style:none;margin:0;padding:0 10px 8px}
li.finding{border-top:1px solid var(--line);padding:6px 0}.pos{font-family:ui-monospace,monospace;color:var(--muted)}
a.code{font-weight:600;font-family:ui-monospace,monospace}.msg{overflow-wrap:anywhere}
table.frame{border-collapse:collapse;margin-top:4px;width:100%;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
background:var(--bg);border:1px solid var(--line)}table.frame td{padding:0 8px;white-space:pre-wrap;overflow-wrap:anywhere}
table.frame td.ln{color:var(--muted);text-align:right;width:1%;white-space:nowrap;overflow-wrap:normal;
user-select:none}tr.hit{background:var(--hit)}
.hidden{display:none}.errors li{overflow-wrap:anywhere}
"""

SCRIPT = """
(function () {
  var form = document.getElementById('filters');
  if (!form) return;
  var items = Array.prototype.slice.call(document.querySelectorAll('li.finding'));
  var files = Array.prototype.slice.call(document.querySelectorAll('details.file'));
  var shown = document.getElementById('shown');
  function chosen(group) {
    var out = {};
    Array.prototype.forEach.call(form.querySelectorAll('input[data-group="' + group + '"]'), function (box) {
      out[box.value] = box.checked;
    });
    return out;
  }
  function apply() {
    var family = chosen('family'), fix = chosen('fix'), sev = chosen('severity'), n = 0;
    items.forEach(function (li) {
      var ok = family[li.getAttribute('data-family')] !== false && fix[li.getAttribute('data-fix')] !== false &&
               sev[li.getAttribute('data-severity')] !== false;
      li.classList.toggle('hidden', !ok);
      if (ok) n += 1;
    });
    files.forEach(function (d) {
      d.classList.toggle('hidden', !d.querySelector('li.finding:not(.hidden)'));
    });
    if (shown) shown.textContent = String(n);
  }
  form.addEventListener('change', apply);
  var all = document.getElementById('show-all');
  if (all) all.addEventListener('click', function (e) {
    e.preventDefault();
    Array.prototype.forEach.call(form.querySelectorAll('input[type=checkbox]'), function (b) { b.checked = true; });
    apply();
  });
  Array.prototype.forEach.call(document.querySelectorAll('#family-chart g.bar'), function (g) {
    g.style.cursor = 'pointer';
    g.addEventListener('click', function () {
      var fam = g.getAttribute('data-key');
      Array.prototype.forEach.call(form.querySelectorAll('input[data-group="family"]'), function (b) {
        b.checked = b.value === fam;
      });
      apply();
      document.getElementById('findings').scrollIntoView();
    });
  });
  apply();
})();
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


def report_html(findings: Sequence[Finding], errors: Sequence[FileError] = (), *, root: Optional[str] = None,
                sources: Optional[Sources] = None) -> str:
    sources = sources or Sources()
    findings = sorted(findings, key=lambda f: (path_label(f.path, root), f.line, f.col, f.code))
    labels = {f.path: path_label(f.path, root) for f in findings}
    by_family = Counter(f.code[:4] for f in findings)
    by_dir = Counter(directory_of(labels[f.path]) for f in findings)
    by_file = Counter(labels[f.path] for f in findings)
    by_code = Counter(f.code for f in findings)
    by_fix = Counter(fix_kind(f) for f in findings)
    by_severity = Counter(severity(f) for f in findings)
    families = sorted(by_family)

    out: List[str] = []
    w = out.append
    w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
    w(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">')
    w('<meta name="viewport" content="width=device-width, initial-scale=1">')
    w(f"<title>rocm-lint porting report</title><style>{STYLE}</style></head><body>")
    w(f'<h1>ROCm porting report</h1><p class="muted">rocm-lint {esc(__version__)}: NVIDIA-only code '
      f"that breaks, hangs or silently misbehaves on AMD ROCm GPUs.</p>")

    # Totals
    w('<section id="totals"><div class="totals">')
    for key, label, value in (("findings", "findings", len(findings)),
                              ("files", "files with findings", len(by_file)),
                              ("rules", "rules", len(by_code)),
                              ("safe", "safe fixes", by_fix["safe"]),
                              ("unsafe", "unsafe fixes", by_fix["unsafe"]),
                              ("manual", "need a person", by_fix["manual"]),
                              ("errors", "files not analysed", len(errors)),
                              ("nvidia-only", "in sources the ROCm build never compiles",
                               sum(1 for f in findings if f.scope == "nvidia-only"))):
        w(f'<div class="total" id="total-{key}" data-count="{value}"><b>{value}</b>{esc(label)}</div>')
    w("</div></section>")

    # What --fix would change
    w('<section id="fixes"><h2>What <code>--fix</code> would change</h2>')
    w(f'<p><b data-count="{by_fix["safe"]}" id="fix-safe">{by_fix["safe"]}</b> findings have a safe fix '
      f'(<code>rocm-lint check --fix</code>; the NVIDIA path never changes), '
      f'<b data-count="{by_fix["unsafe"]}" id="fix-unsafe">{by_fix["unsafe"]}</b> an unsafe one '
      f'(<code>--fix --unsafe-fixes</code>: review it), and '
      f'<b data-count="{by_fix["manual"]}" id="fix-manual">{by_fix["manual"]}</b> need a person. '
      f'A fix that cannot be verified is dropped when applied; <code>--diff</code> shows the exact edits.</p>')
    w(_fix_bar(by_fix))
    w('<p class="legend">' + "".join(
        f'<span><i class="swatch" style="background:var(--{kind})"></i>{esc(label)}: {by_fix[kind]}</span>'
        for kind, label in FIX_KINDS) + "</p></section>")

    # By family
    w('<section id="families"><h2>Findings by family</h2>')
    rows = [(f"{fam} {FAMILIES.get(fam, '')}".strip(), by_family[fam], f"fam-{fam}", fam) for fam in families]
    chart = _bar_chart("family-chart", "Findings by family", rows)
    w(chart)
    w('<table class="list" id="family-table"><tr><th>family</th><th></th><th>findings</th><th>rules</th></tr>')
    for fam in families:
        codes = sorted(c for c in by_code if c[:4] == fam)
        code_links = ", ".join(
            f'<a href="{esc(DOCS_URL.format(code=c))}" rel="noopener noreferrer">{esc(c)}</a>&nbsp;({by_code[c]})'
            for c in codes)
        w(f'<tr class="family-row" data-family="{esc(fam)}" data-count="{by_family[fam]}"><td>{esc(fam)}</td>'
          f'<td>{esc(FAMILIES.get(fam, ""))}</td><td class="n">{by_family[fam]}</td><td>{code_links}</td></tr>')
    w("</table></section>")

    # By directory
    w('<section id="directories"><h2>Findings by directory</h2>')
    top_dirs = by_dir.most_common(TOP_DIRECTORIES)
    w(_bar_chart("directory-chart", "Findings by directory", [(d, n, "dir", d) for d, n in top_dirs], keep_end=True))
    if len(by_dir) > TOP_DIRECTORIES:
        w(f'<p class="muted">{len(by_dir) - TOP_DIRECTORIES} more directories.</p>')
    w("</section>")

    # Hottest files
    w('<section id="hot-files"><h2>Hottest files</h2><table class="list"><tr><th>findings</th><th>file</th>'
      '<th>families</th></tr>')
    fam_of_file: Dict[str, Counter] = {}
    for f in findings:
        fam_of_file.setdefault(labels[f.path], Counter())[f.code[:4]] += 1
    for label, n in sorted(by_file.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FILES]:
        fams = ", ".join(f"{esc(k)}&nbsp;({v})" for k, v in sorted(fam_of_file[label].items()))
        w(f'<tr class="hot-file" data-count="{n}"><td class="n">{n}</td><td><a href="#{_anchor(label)}">'
          f"{esc(label)}</a></td><td>{fams}</td></tr>")
    w("</table></section>")

    # Files that could not be analysed
    if errors:
        w(f'<section id="errors"><h2>Files not analysed ({len(errors)})</h2><ul class="errors">')
        for e in errors:
            w(f'<li class="file-error"><code>{esc(path_label(e.path, root))}</code>: {esc(e.reason)}</li>')
        w("</ul></section>")

    # Findings
    w(f'<section id="findings"><h2>Findings (<span id="shown">{len(findings)}</span> shown of {len(findings)})</h2>')
    if findings:
        w('<form id="filters">')
        for group, title, values in (
                ("family", "family", [(fam, f"{fam} ({by_family[fam]})") for fam in families]),
                ("fix", "fix", [(k, f"{label} ({by_fix[k]})") for k, label in FIX_KINDS if by_fix[k]]),
                ("severity", "severity", [(s, f"{s} ({n})") for s, n in sorted(by_severity.items())])):
            w(f"<fieldset><legend>{esc(title)}</legend>")
            for value, text in values:
                w(f'<label><input type="checkbox" data-group="{group}" value="{esc(value)}" checked> {esc(text)}</label>')
            w("</fieldset>")
        w('<a href="#" id="show-all">show all</a></form>')
    current = None
    frames = 0
    for f in findings:
        label = labels[f.path]
        if label != current:
            if current is not None:
                w("</ul></details>")
            current = label
            w(f'<details class="file" open id="{_anchor(label)}"><summary>{esc(label)} '
              f'<span class="muted">({by_file[label]})</span></summary><ul class="findings">')
        w(_finding_item(f, sources, frames < MAX_FRAMES))
        frames += 1
    if current is not None:
        w("</ul></details>")
    if len(findings) > MAX_FRAMES:
        w(f'<p class="muted">Code frames are shown for the first {MAX_FRAMES} findings.</p>')
    w("</section>")
    w(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(out)


def _anchor(label: str) -> str:
    """An id for a file's section: only safe characters, unique enough (a hash of the name)."""
    return "file-" + hashlib.sha1(label.encode("utf-8", "backslashreplace")).hexdigest()[:12]


def render_html(findings: Sequence[Finding], out: TextIO, *, errors: Sequence[FileError] = (),
                sources: Optional[Sources] = None) -> None:
    out.write(report_html(findings, errors, sources=sources))
