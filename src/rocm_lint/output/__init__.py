"""Renderers: every output format draws the same Finding list."""

from __future__ import annotations

from typing import List, TextIO

from rocm_lint.finding import Finding

FORMATS = ("concise", "full", "json")


def render(fmt: str, findings: List[Finding], out: TextIO, *, color: bool = False) -> None:
    if fmt == "json":
        from rocm_lint.output.json import render_json

        render_json(findings, out)
    elif fmt == "full":
        from rocm_lint.output.text import render_full

        render_full(findings, out, color=color)
    else:
        from rocm_lint.output.text import render_concise

        render_concise(findings, out)
