"""GitHub Actions workflow commands: one ``::error`` annotation per finding, shown on the pull
request's diff.  Escaping follows the runner's rules (``%``, CR, LF in the message; also ``:``
and ``,`` in property values)."""

from __future__ import annotations

from typing import Optional, Sequence, TextIO

from rocm_lint.finding import FileError, Finding
from rocm_lint.output.source import Sources, display_name, repo_path


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(
    findings: Sequence[Finding],
    out: TextIO,
    *,
    errors: Sequence[FileError] = (),
    root: Optional[str] = None,
    sources: Optional[Sources] = None,
) -> None:
    """``file=`` is relative to ``root`` (the project root: the git work tree, where the runner
    resolves annotations), so a run from a subdirectory still annotates the right file."""
    sources = sources or Sources()
    for f in findings:
        line, col, end_line, end_col = sources.span(f)
        path = display_name(repo_path(f.path, root or ""))
        props = [
            f"title={escape_property(f'rocm-lint ({f.code})')}",
            f"file={escape_property(path)}",
            f"line={line}",
            f"col={col + 1}",
            f"endLine={end_line}",
        ]
        if end_line == line:  # GitHub only honours columns within one line
            props.append(f"endColumn={end_col + 1}")
        out.write(
            f"::error {','.join(props)}::{escape_data(f'{path}:{f.line}:{col + 1}: {f.code} {f.message}')}\n"
        )
    for e in errors:
        out.write(
            f"::error title={escape_property('rocm-lint (file not analysed)')},"
            f"file={escape_property(display_name(repo_path(e.path, root or '')))}::"
            f"{escape_data(display_name(e.path) + ': ' + e.reason)}\n"
        )
