"""``--output-format summary``: a short Markdown report for a CI job's summary page (GitHub's
``$GITHUB_STEP_SUMMARY``): the totals, the findings per rule family, how many ``--fix`` can fix
(and how many more with ``--unsafe-fixes``), the files with the most findings, and the files that
could not be analysed."""

from __future__ import annotations

import html
from collections import Counter
from typing import Optional, Sequence, TextIO

from rocm_lint.finding import Applicability, FileError, Finding
from rocm_lint.output.source import display_name, repo_path
from rocm_lint.rule import FAMILIES

HOTTEST = 10  # files listed
ERRORS_LISTED = 10


def _cell(text: str) -> str:
    """Text for a Markdown table cell: HTML-escaped, ``|`` kept from splitting the row."""
    return html.escape(text).replace("|", "&#124;")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_summary(
    findings: Sequence[Finding],
    out: TextIO,
    *,
    errors: Sequence[FileError] = (),
    root: Optional[str] = None,
    files_checked: Optional[int] = None,
) -> None:
    def name(path: str) -> str:
        return display_name(repo_path(path, root or ""))

    files = Counter(name(f.path) for f in findings)
    checked = f" ({_plural(files_checked, 'file')} checked)" if files_checked is not None else ""
    w = out.write
    w("## rocm-lint\n\n")
    if not findings:
        w(f"No findings{checked}.")
    else:
        safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == Applicability.SAFE)
        unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == Applicability.UNSAFE)
        w(
            f"**{_plural(len(findings), 'finding')}** in {_plural(len(files), 'file')}{checked}; "
            f"{safe} fixable with `rocm-lint check --fix`"
        )
        w(f", {unsafe} more with `--unsafe-fixes`." if unsafe else ".")
    if errors:
        w(f" **{_plural(len(errors), 'file')} could not be analysed.**")
    w("\n")
    if findings:
        families = Counter(f.code[:4] for f in findings)
        codes = Counter(f.code for f in findings)
        w("\n| family | findings | rules |\n|---|---:|---|\n")
        for fam, n in sorted(families.items(), key=lambda kv: (-kv[1], kv[0])):
            rules = ", ".join(f"{c} ({codes[c]})" for c in sorted(c for c in codes if c.startswith(fam)))
            w(f"| {fam} {_cell(FAMILIES.get(fam, ''))} | {n} | {rules} |\n")
        w("\n| file (most findings first) | findings |\n|---|---:|\n")
        ranked = sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))
        for path, n in ranked[:HOTTEST]:
            w(f"| <code>{_cell(path)}</code> | {n} |\n")
        rest = ranked[HOTTEST:]
        if rest:
            w(f"| {_plural(len(rest), 'more file')} | {sum(n for _, n in rest)} |\n")
    if errors:
        w("\n| not analysed | why |\n|---|---|\n")
        for e in errors[:ERRORS_LISTED]:
            w(f"| <code>{_cell(name(e.path))}</code> | {_cell(e.reason)} |\n")
        if len(errors) > ERRORS_LISTED:
            w(f"| {_plural(len(errors) - ERRORS_LISTED, 'more file')} | |\n")
