"""Renderers: every output format draws the same Finding list (and the files that could not be
analysed, for the formats that carry them)."""

from __future__ import annotations

from typing import List, Sequence, TextIO

from rocm_lint.finding import FileError, Finding

FORMATS = ("concise", "full", "json", "sarif", "github", "junit", "html", "summary")
# Formats whose fixes need their edits computed (Python fixes are built on demand).
FORMATS_WITH_EDITS = ("json", "sarif")
# Machine formats: the CLI prints no summary line with them.
MACHINE_FORMATS = ("json", "sarif", "junit", "summary")


def render(
    fmt: str,
    findings: List[Finding],
    out: TextIO,
    *,
    color: bool = False,
    errors: Sequence[FileError] = (),
    sources=None,
) -> None:
    """``sources``: the ``output.source.Sources`` to read (with the front end's stdin overlay)."""
    if fmt == "json":
        from rocm_lint.output.json import render_json

        render_json(findings, out, sources=sources)
    elif fmt == "sarif":
        from rocm_lint.output.sarif import render_sarif

        render_sarif(findings, out, errors=errors, sources=sources)
    elif fmt == "github":
        from rocm_lint.output.github import render_github

        render_github(findings, out, errors=errors, sources=sources)
    elif fmt == "junit":
        from rocm_lint.output.junit import render_junit

        render_junit(findings, out, errors=errors, sources=sources)
    elif fmt == "html":
        from rocm_lint.output.html import render_html

        render_html(findings, out, errors=errors, sources=sources)
    elif fmt == "summary":
        from rocm_lint.output.summary import render_summary

        render_summary(findings, out, errors=errors)
    elif fmt == "full":
        from rocm_lint.output.text import render_full

        render_full(findings, out, color=color, sources=sources)
    else:
        from rocm_lint.output.text import render_concise

        render_concise(findings, out, sources=sources)
