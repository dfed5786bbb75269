"""``rocm-lint check --add-noqa``: write the comments (``rocm_lint.fix.add_noqa``) and say what
was done: ``Added N noqa directives.`` on stderr (ruff's words), an error line per file or finding
left alone.  Exit 0, or 2 when something could not be done."""

from __future__ import annotations

import sys
from typing import TextIO


def add_noqa(report, config, *, quiet: bool = False, err: TextIO = None, roots=None) -> int:
    from rocm_lint.fix.add_noqa import add_noqa_files
    from rocm_lint.output.source import display_name

    err = err or sys.stderr
    problems = [f"{display_name(e.path)}: {e.reason}" for e in report.errors]
    added = 0
    for outcome in add_noqa_files(report.findings, config, roots):
        added += outcome.added
        if outcome.error:
            problems.append(f"{display_name(outcome.path)}: {outcome.error}")
        for finding, why in outcome.skipped:
            problems.append(
                f"{display_name(outcome.path)}:{finding.line}:{finding.col + 1}: {finding.code} "
                f"no noqa added: {why}"
            )
    for line in problems:
        err.write(f"rocm-lint: error: {line}\n")
    if not quiet:
        err.write(f"Added {added} noqa directive{'s' if added != 1 else ''}.\n")
    return 2 if problems else 0
