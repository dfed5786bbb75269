"""``rocm-lint check -``: the text on stdin, checked (and fixed) as the file ``--stdin-filename`` names."""

from __future__ import annotations

import argparse
import os
import sys

from rocm_lint.cli_report import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    error,
    file_error,
    render_report,
    render_shown,
)


def _read_stdin():
    """The bytes on stdin, bounded like a file read, or the reason they cannot be checked."""
    from rocm_lint.engine import MAX_FILE_BYTES

    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return f"stdin too large (more than {MAX_FILE_BYTES} bytes); not checked"
    return data


def check_stdin(config, args: argparse.Namespace) -> int:
    """``rocm-lint check -``: lint the text on stdin as the file ``--stdin-filename`` names (its
    language, settings, per-file-ignores; excludes with force-exclude, as ruff).  With ``--fix``
    the text goes back to stdout, fixed (unchanged when nothing can be fixed or it is excluded),
    and the remaining findings go to stderr; ``--diff`` prints the diff."""
    from rocm_lint.discovery import language_of
    from rocm_lint.engine import Report, check_source, decode
    from rocm_lint.finding import FileError
    from rocm_lint.output.source import Sources

    name = args.stdin_filename or "-"
    language = language_of(name) if args.stdin_filename else "python"
    data = _read_stdin()
    if isinstance(data, str):
        error(data)
        return EXIT_ERROR
    decoded = decode(name if args.stdin_filename else "stdin.py", data, language)
    text = decoded if isinstance(decoded, FileError) else decoded.text
    encoding = "utf-8" if isinstance(decoded, FileError) else decoded.encoding  # written back in it
    echo = args.fix and not args.diff

    def emit(new_text: str) -> None:
        sys.stdout.buffer.write(new_text.encode(encoding, "surrogateescape"))
        sys.stdout.flush()

    excluded = False
    if args.stdin_filename and config.force_exclude:
        excluded = _stdin_excluded(args.stdin_filename, config)
    report = Report(files_checked=0 if excluded or language is None else 1)
    if isinstance(text, FileError):
        report.errors.append(text)
        if echo:
            sys.stdout.buffer.write(data)
        for err in report.errors:
            file_error(err)
        return EXIT_ERROR
    if excluded or language is None:
        if echo:
            emit(text)
        return EXIT_CLEAN
    sources = Sources()  # the renderers read the buffer, not the file on disk
    sources.set_overlay(name, text, language)
    from rocm_lint.workspace import Workspace

    workspace = Workspace()
    result = check_source(name, text, config, language, workspace=workspace)
    if isinstance(result, FileError):
        report.errors.append(result)
    else:
        report.findings = sorted(result)
    fixed = 0
    shown = {}
    if (args.fix or args.diff or args.show_fixes) and not report.errors:
        from collections import Counter

        from rocm_lint.fix.api import fix_text

        outcome = fix_text(
            name,
            text,
            config,
            unsafe=args.unsafe_fixes,
            language=language,
            findings=report.findings,
            workspace=workspace,
        )
        new = text if isinstance(outcome, FileError) else outcome.text
        applied = [] if isinstance(outcome, FileError) else outcome.applied
        shown = {name: Counter(f.code for f in applied)}
        if args.diff:
            from rocm_lint.fix.engine import unified_diff

            if new != text:
                sys.stdout.write(unified_diff(name, text, new))
            if not args.quiet:
                sys.stderr.write(f"Would fix {len(applied)} finding{'s' if len(applied) != 1 else ''}.\n")
            if args.show_fixes:
                render_shown(shown, sys.stderr, applied=False)
            return EXIT_FINDINGS if applied else EXIT_CLEAN
        if args.fix:
            emit(new)
            if new != text:
                fixed = len(applied)
                sources.set_overlay(name, new, language)
                again = check_source(name, new, config, language, workspace=workspace)
                report.findings = [] if isinstance(again, FileError) else sorted(again)
    elif echo:
        emit(text)
    # with --fix, stdout carries the text: the findings that remain go to stderr
    return render_report(
        report,
        config,
        args,
        fixed=fixed,
        shown=shown,
        out=sys.stderr if echo else None,
        sources=sources,
        workspace=workspace,
    )


def _stdin_excluded(name: str, config) -> bool:
    """Whether a walk from the project root would skip ``name`` (exclude/extend-exclude)."""
    from pathlib import Path

    from rocm_lint.discovery import path_excluded

    full = os.path.abspath(name)
    root = os.path.abspath(os.fspath(config.root) if config.root else os.getcwd())
    rel = os.path.relpath(full, root)
    if rel.startswith(os.pardir):
        rel = os.path.basename(full)
    return path_excluded(
        Path(rel).as_posix().split("/"), tuple(config.exclude) + tuple(config.extend_exclude)
    )
