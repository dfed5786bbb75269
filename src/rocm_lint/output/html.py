"""A porting report: one self-contained HTML page (``rocm-lint check --output-format html``).

What a porting lead opens first: what was scanned (paths, the repository's commit, the date, the
rocm-lint version, files checked and files not analysed, by reason), the totals, findings by
family, every directory with findings rolled up from the top (an expandable tree: counts, the mix
of families, and how many sit in sources the ROCm build compiles vs NVIDIA-only sources), what
``--fix`` would change (safe fixes, unsafe fixes, findings that need a person), the hottest
files, every finding with a bounded code frame and a link to its rule page, and the files that
could not be analysed.  Filters by family, fix, severity and source are a few lines of inline
JavaScript; the page works without them.

Nothing is loaded from the network: styles and script are inline, and a Content-Security-Policy
forbids any other source (links to the rule pages are plain hyperlinks).  Every piece of text
from the scanned tree (file names, messages, code) is escaped; control characters and bytes
that are not UTF-8 are shown as visible escapes, so hostile names cannot break the page.

The page's parts live beside this module: ``html_parts`` (escaping, charts, code frames),
``html_tree`` (the directory tree), ``html_scan`` (what was scanned), ``html_assets`` (style,
script, CSP).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, TextIO

from rocm_lint import __version__
from rocm_lint.finding import FileError, Finding
from rocm_lint.output.html_assets import CSP, SCRIPT, STYLE
from rocm_lint.output.html_parts import (
    FIX_KINDS,
    SOURCE_KINDS,
    anchor,
    bar_chart,
    directory_of,
    esc,
    finding_item,
    fix_bar,
    fix_kind,
    path_label,
    severity,
    source_kind,
)
from rocm_lint.output.html_scan import ScanInfo, error_kinds
from rocm_lint.output.html_tree import render_tree
from rocm_lint.output.source import Sources
from rocm_lint.rule import DOCS_URL, FAMILIES

# Frames stop after MAX_FRAMES findings (every finding is still listed).
MAX_FRAMES = 3000
TOP_DIRECTORIES = 15
TOP_FILES = 10

__all__ = ["ScanInfo", "report_html", "render_html", "esc", "fix_kind", "path_label", "severity"]


@dataclass
class Tally:
    """The findings of a report, sorted, with every count the page shows."""

    findings: List[Finding]
    labels: Dict[str, str]
    by_family: Counter
    by_dir: Counter
    by_file: Counter
    by_code: Counter
    by_fix: Counter
    by_severity: Counter
    by_source: Counter

    @classmethod
    def of(cls, findings: Sequence[Finding], root: Optional[str]) -> "Tally":
        ordered = sorted(findings, key=lambda f: (path_label(f.path, root), f.line, f.col, f.code))
        labels = {f.path: path_label(f.path, root) for f in ordered}
        return cls(
            ordered,
            labels,
            by_family=Counter(f.code[:4] for f in ordered),
            by_dir=Counter(directory_of(labels[f.path]) for f in ordered),
            by_file=Counter(labels[f.path] for f in ordered),
            by_code=Counter(f.code for f in ordered),
            by_fix=Counter(fix_kind(f) for f in ordered),
            by_severity=Counter(severity(f) for f in ordered),
            by_source=Counter(source_kind(f) for f in ordered),
        )

    @property
    def families(self) -> List[str]:
        return sorted(self.by_family)


# -- the sections ------------------------------------------------------------------------------------
def _head() -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>rocm-lint porting report</title><style>{STYLE}</style></head><body>"
        f'<h1>ROCm porting report</h1><p class="muted">rocm-lint {esc(__version__)}: NVIDIA-only code '
        f"that breaks, hangs or silently misbehaves on AMD ROCm GPUs.</p>"
    )


def _scan_section(scan: ScanInfo, errors: Sequence[FileError]) -> str:
    """What was scanned, as a definition list (each value also as a data attribute)."""
    paths = (
        ", ".join("standard input" if p == "-" else f"<code>{esc(p)}</code>" for p in scan.paths)
        or '<span class="muted">not recorded</span>'
    )
    if scan.commit is not None:
        branch = (
            f" on branch <code>{esc(scan.commit.branch)}</code>" if scan.commit.branch else " (detached HEAD)"
        )
        commit = f'<code id="scan-commit" data-sha="{esc(scan.commit.sha)}">{esc(scan.commit.sha[:12])}</code>{branch}'
    else:
        commit = '<span id="scan-commit" class="muted">not a git repository (or no commit checked out)</span>'
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(scan.when))
    checked = (
        ""
        if scan.files_checked is None
        else f'<dt>Files checked</dt><dd id="scan-files" data-count="{scan.files_checked}">{scan.files_checked}</dd>'
    )
    kinds = error_kinds(errors)
    reasons = "; ".join(
        f'<span class="error-kind" data-count="{n}">{esc(kind)}: {n}</span>' for kind, n in kinds
    )
    not_analysed = f"{len(errors)}" + (f' ({reasons}, <a href="#errors">listed below</a>)' if kinds else "")
    nvidia = (
        "reported and counted apart (<code>--report-nvidia-only-sources</code>)"
        if scan.nvidia_only_reported
        else "not reported (sources the ROCm build never compiles are silent; "
        "<code>--report-nvidia-only-sources</code> adds them)"
    )
    return (
        f'<section id="scan"><dl class="scan">'
        f'<dt>Scanned</dt><dd id="scan-paths">{paths}</dd>'
        f"<dt>Commit</dt><dd>{commit}</dd>"
        f'<dt>Date</dt><dd id="scan-date" data-epoch="{int(scan.when)}">{esc(date)}</dd>'
        f'<dt>rocm-lint</dt><dd id="scan-version">{esc(scan.version)}</dd>'
        f"{checked}"
        f'<dt>Files not analysed</dt><dd id="scan-errors" data-count="{len(errors)}">{not_analysed}</dd>'
        f'<dt>NVIDIA-only sources</dt><dd id="scan-nvidia-only" data-reported="{str(scan.nvidia_only_reported).lower()}">'
        f"{nvidia}</dd></dl></section>"
    )


def _totals_section(t: Tally, errors: Sequence[FileError]) -> str:
    out = ['<section id="totals"><div class="totals">']
    for key, label, value in (
        ("findings", "findings", len(t.findings)),
        ("files", "files with findings", len(t.by_file)),
        ("rules", "rules", len(t.by_code)),
        ("safe", "safe fixes", t.by_fix["safe"]),
        ("unsafe", "unsafe fixes", t.by_fix["unsafe"]),
        ("manual", "need a person", t.by_fix["manual"]),
        ("errors", "files not analysed", len(errors)),
        ("rocm", "in sources the ROCm build compiles", t.by_source["rocm"]),
        ("nvidia-only", "in sources the ROCm build never compiles", t.by_source["nvidia-only"]),
    ):
        out.append(
            f'<div class="total" id="total-{key}" data-count="{value}"><b>{value}</b>{esc(label)}</div>'
        )
    out.append("</div></section>")
    return "".join(out)


def _fixes_section(t: Tally) -> str:
    fix = t.by_fix
    legend = "".join(
        f'<span><i class="swatch" style="background:var(--{kind})"></i>{esc(label)}: {fix[kind]}</span>'
        for kind, label in FIX_KINDS
    )
    return (
        '<section id="fixes"><h2>What <code>--fix</code> would change</h2>'
        f'<p><b data-count="{fix["safe"]}" id="fix-safe">{fix["safe"]}</b> findings have a safe fix '
        f"(<code>rocm-lint check --fix</code>; the NVIDIA path never changes), "
        f'<b data-count="{fix["unsafe"]}" id="fix-unsafe">{fix["unsafe"]}</b> an unsafe one '
        f"(<code>--fix --unsafe-fixes</code>: review it), and "
        f'<b data-count="{fix["manual"]}" id="fix-manual">{fix["manual"]}</b> need a person. '
        f"A fix that cannot be verified is dropped when applied; <code>--diff</code> shows the exact edits.</p>"
        f'{fix_bar(fix)}<p class="legend">{legend}</p></section>'
    )


def _families_section(t: Tally) -> str:
    rows = [
        (f"{fam} {FAMILIES.get(fam, '')}".strip(), t.by_family[fam], f"fam-{fam}", fam) for fam in t.families
    ]
    out = [
        '<section id="families"><h2>Findings by family</h2>',
        bar_chart("family-chart", "Findings by family", rows),
        '<table class="list" id="family-table"><tr><th>family</th><th></th><th>findings</th><th>rules</th></tr>',
    ]
    for fam in t.families:
        codes = sorted(c for c in t.by_code if c[:4] == fam)
        links = ", ".join(
            f'<a href="{esc(DOCS_URL.format(code=c))}" rel="noopener noreferrer">{esc(c)}</a>'
            f"&nbsp;({t.by_code[c]})"
            for c in codes
        )
        out.append(
            f'<tr class="family-row" data-family="{esc(fam)}" data-count="{t.by_family[fam]}">'
            f'<td class="fam"><i class="swatch fam-{esc(fam)}"></i>{esc(fam)}</td><td>{esc(FAMILIES.get(fam, ""))}</td>'
            f'<td class="n">{t.by_family[fam]}</td><td>{links}</td></tr>'
        )
    out.append("</table></section>")
    return "".join(out)


def _directories_section(t: Tally, show_split: bool) -> str:
    """The directories with the most findings as a chart, then every one in the tree."""
    top = t.by_dir.most_common(TOP_DIRECTORIES)
    out = ['<section id="directories"><h2>Findings by directory</h2>']
    if top:
        out.append(f"<h3>The {len(top)} directories with the most findings</h3>")
    out.append(
        bar_chart(
            "directory-chart",
            "Directories with the most findings",
            [(d, n, "dir", d) for d, n in top],
            keep_end=True,
        )
    )
    more = len(t.by_dir) - len(top)
    if more > 0:
        out.append(
            f'<p class="muted">{more} more directories with findings of their own: every one is in the '
            f"tree below.</p>"
        )
    tree = render_tree(
        ((t.labels[f.path], f.code[:4], f.scope == "nvidia-only") for f in t.findings), show_split=show_split
    )
    if tree:
        split = (
            "; <b>ROCm build</b>: findings in sources the ROCm build compiles, <b>NVIDIA-only</b>: in "
            "sources it never compiles"
            if show_split
            else ""
        )
        out.append(
            '<h3>Every directory, rolled up from the top</h3><p class="muted">Each count includes '
            f"everything below the directory; the bar shows its mix of families{split}. Open a directory "
            f"to see its subdirectories and files.</p>{tree}"
        )
    out.append("</section>")
    return "".join(out)


def _hot_files_section(t: Tally) -> str:
    out = [
        '<section id="hot-files"><h2>Hottest files</h2><table class="list"><tr><th>findings</th><th>file</th>'
        "<th>families</th></tr>"
    ]
    fam_of_file: Dict[str, Counter] = {}
    for f in t.findings:
        fam_of_file.setdefault(t.labels[f.path], Counter())[f.code[:4]] += 1
    for label, n in sorted(t.by_file.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FILES]:
        fams = ", ".join(f"{esc(k)}&nbsp;({v})" for k, v in sorted(fam_of_file[label].items()))
        out.append(
            f'<tr class="hot-file" data-count="{n}"><td class="n">{n}</td><td><a href="#{anchor(label)}">'
            f"{esc(label)}</a></td><td>{fams}</td></tr>"
        )
    out.append("</table></section>")
    return "".join(out)


def _errors_section(errors: Sequence[FileError], root: Optional[str]) -> str:
    if not errors:
        return ""
    items = "".join(
        f'<li class="file-error"><code>{esc(path_label(e.path, root))}</code>: {esc(e.reason)}</li>'
        for e in errors
    )
    return f'<section id="errors"><h2>Files not analysed ({len(errors)})</h2><ul class="errors">{items}</ul></section>'


def _filters(t: Tally) -> str:
    groups = [
        ("family", "family", [(fam, f"{fam} ({t.by_family[fam]})") for fam in t.families]),
        ("fix", "fix", [(k, f"{label} ({t.by_fix[k]})") for k, label in FIX_KINDS if t.by_fix[k]]),
        ("severity", "severity", [(s, f"{s} ({n})") for s, n in sorted(t.by_severity.items())]),
    ]
    if t.by_source["nvidia-only"]:
        groups.append(("source", "source", [(k, f"{label} ({t.by_source[k]})") for k, label in SOURCE_KINDS]))
    out = ['<form id="filters">']
    for group, title, values in groups:
        out.append(f"<fieldset><legend>{esc(title)}</legend>")
        out.extend(
            f'<label><input type="checkbox" data-group="{group}" value="{esc(value)}" checked> {esc(text)}</label>'
            for value, text in values
        )
        out.append("</fieldset>")
    out.append('<a href="#" id="show-all">show all</a></form>')
    return "".join(out)


def _findings_section(t: Tally, sources: Sources) -> str:
    n = len(t.findings)
    out = [f'<section id="findings"><h2>Findings (<span id="shown">{n}</span> shown of {n})</h2>']
    if t.findings:
        out.append(_filters(t))
    current = None
    for i, f in enumerate(t.findings):
        label = t.labels[f.path]
        if label != current:
            if current is not None:
                out.append("</ul></details>")
            current = label
            out.append(
                f'<details class="file" open id="{anchor(label)}"><summary>{esc(label)} '
                f'<span class="muted">({t.by_file[label]})</span></summary><ul class="findings">'
            )
        out.append(finding_item(f, sources, i < MAX_FRAMES))
    if current is not None:
        out.append("</ul></details>")
    if n > MAX_FRAMES:
        out.append(f'<p class="muted">Code frames are shown for the first {MAX_FRAMES} findings.</p>')
    out.append("</section>")
    return "".join(out)


# -- the page ------------------------------------------------------------------------------------------
def report_html(
    findings: Sequence[Finding],
    errors: Sequence[FileError] = (),
    *,
    root: Optional[str] = None,
    scan: Optional[ScanInfo] = None,
    sources: Optional[Sources] = None,
) -> str:
    scan = scan or ScanInfo()
    t = Tally.of(findings, root)
    show_split = scan.nvidia_only_reported or bool(t.by_source["nvidia-only"])
    return "".join(
        (
            _head(),
            _scan_section(scan, errors),
            _totals_section(t, errors),
            _fixes_section(t),
            _families_section(t),
            _directories_section(t, show_split),
            _hot_files_section(t),
            _errors_section(errors, root),
            _findings_section(t, sources or Sources()),
            f"<script>{SCRIPT}</script></body></html>\n",
        )
    )


def render_html(
    findings: Sequence[Finding],
    out: TextIO,
    *,
    errors: Sequence[FileError] = (),
    scan: Optional[ScanInfo] = None,
    sources: Optional[Sources] = None,
) -> None:
    out.write(report_html(findings, errors, scan=scan, sources=sources))
