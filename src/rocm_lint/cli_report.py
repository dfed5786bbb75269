"""``rocm-lint check``'s report: the findings in each format, ``--show-fixes``, the error lines,
the summary and the exit code."""

from __future__ import annotations

import argparse
import os
import sys

from rocm_lint.cli_args import reads_stdin
from rocm_lint.output import FORMATS_WITH_EDITS, MACHINE_FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def error(message: str) -> None:
    sys.stderr.write(f"rocm-lint: error: {message}\n")


def file_error(err) -> None:
    """A file that could not be analysed (or fixed), its name shown safely (see ``display_name``)."""
    from rocm_lint.output.source import display_name

    error(f"{display_name(err.path)}: {err.reason}")


def project_trees(config) -> list:
    """The trees a report the user names may be written into through a link: the working
    directory and the configuration's root (``rocm_lint.discovery.named_target``)."""
    return [os.getcwd()] + ([str(config.root)] if getattr(config, "root", None) is not None else [])


def write_report(file: str, text: str, config, what: str = "the report") -> bool:
    """Write ``text`` to the file the user named (``rocm_lint.discovery.named_target``),
    atomically; False, with one error line, where it cannot be (a link refused, a full disk)."""
    from rocm_lint.discovery import LinkRefused, named_target, write_text_atomic
    from rocm_lint.output.source import display_name

    try:
        write_text_atomic(named_target(file, project_trees(config)), text)
    except LinkRefused as exc:
        error(f"{display_name(file)}: cannot write {what}: {exc}")
        return False
    except OSError as exc:
        error(f"{display_name(file)}: cannot write {what}: {(exc.strerror or str(exc)).lower()}")
        return False
    return True


def _fix_counts(findings, args: argparse.Namespace):
    """(fixable now, hidden): findings whose fix ``--fix`` applies, and unsafe ones that need
    ``--unsafe-fixes`` (counted as fixable when it is given)."""
    from rocm_lint.finding import Applicability

    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == Applicability.SAFE)
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == Applicability.UNSAFE)
    return (safe + unsafe, 0) if args.unsafe_fixes else (safe, unsafe)


def _summary(report, fixed: int, baselined: int, args: argparse.Namespace, unchanged: int = 0) -> str:
    n = len(report.findings)
    files = report.files_checked
    with_findings = len({f.path for f in report.findings})
    summary = (
        f"Found {n} finding{'s' if n != 1 else ''} in {with_findings} "
        f"file{'s' if with_findings != 1 else ''} ({files} checked)."
    )
    apart = sum(1 for f in report.findings if f.scope == "nvidia-only")
    if apart:  # --report-nvidia-only-sources
        summary = summary[:-1] + f", {apart} of them in sources the ROCm build never compiles."
    if not n and not report.errors:
        summary = f"All checks passed ({files} file{'s' if files != 1 else ''})."
    if fixed:
        summary = f"Fixed {fixed} finding{'s' if fixed != 1 else ''}, {n} remaining ({files} file{'s' if files != 1 else ''})."
    fixable, hidden = _fix_counts(report.findings, args)
    hidden_note = (
        f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with --unsafe-fixes"
        if hidden
        else ""
    )
    if fixable and not args.fix:  # ruff's wording
        summary += f" {fixable} fixable with --fix" + (f" ({hidden_note})." if hidden else ".")
    elif hidden and fixed:  # (fixes were applied: "No fixes available" would say otherwise)
        summary += f" {hidden_note[0].upper()}{hidden_note[1:]}."
    elif hidden:
        summary += f" No fixes available ({hidden_note})."
    if unchanged:  # --baseline-commit
        summary += f" {unchanged} more on lines not changed since {args.baseline_commit}."
    if baselined:
        summary += f" {baselined} more in the baseline."
    if report.errors:
        summary += (
            f" {len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be analysed."
        )
    return summary


def render_report(
    report,
    config,
    args: argparse.Namespace,
    *,
    fixed: int = 0,
    baselined: int = 0,
    shown=None,
    out=None,
    unchanged: int = 0,
    sources=None,
    workspace=None,
) -> int:
    """Render the findings (to ``out``, ``--output-file`` or stdout), the error lines and the summary.
    A report file is rendered whole, then written atomically (:func:`write_report`): a failed
    write (a full disk) leaves the old file and is one error line and exit 2."""
    import io

    buffer = io.StringIO() if args.output_file else None
    target = buffer if buffer is not None else (out or sys.stdout)
    fmt = args.output_format or ("full" if target.isatty() else "concise")
    _render(fmt, report, config, args, target, sources, workspace)
    if args.show_fixes and shown is not None:
        render_shown(
            shown,
            sys.stderr if fmt in MACHINE_FORMATS or args.statistics else target,
            applied=bool(args.fix),
        )
    if buffer is not None:
        if not write_report(args.output_file, buffer.getvalue(), config):
            return EXIT_ERROR
    else:
        target.flush()
    for extra_fmt, file in args.extra_output:  # the same findings, in more formats (--extra-output)
        extra = io.StringIO()
        _render(extra_fmt, report, config, args, extra, sources, workspace)
        if not write_report(file, extra.getvalue(), config):
            return EXIT_ERROR
    for err in report.errors:
        file_error(err)
    if (
        not args.quiet
        and (fmt not in MACHINE_FORMATS or args.output_file)
        and not (args.statistics and fmt == "json" and not args.output_file)
    ):
        sys.stderr.write(_summary(report, fixed, baselined, args, unchanged) + "\n")
    if report.errors:
        return EXIT_ERROR
    if report.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _render(fmt: str, report, config, args: argparse.Namespace, out, sources=None, workspace=None) -> None:
    from rocm_lint.output import render
    from rocm_lint.output.source import project_root
    from rocm_lint.output.text import render_statistics

    if args.statistics:
        render_statistics(report.findings, out, fmt=fmt, unsafe_fixes=args.unsafe_fixes)
        return
    if fmt in FORMATS_WITH_EDITS:
        report.findings = _with_edits(report.findings, config, args, sources, workspace)
    if fmt == "sarif":
        from rocm_lint.output.sarif import render_sarif

        render_sarif(
            report.findings, out, errors=report.errors, root=project_root(config.root), sources=sources
        )
    elif fmt == "github":
        from rocm_lint.output.github import render_github

        render_github(
            report.findings, out, errors=report.errors, root=project_root(config.root), sources=sources
        )
    elif fmt == "html":  # the report's header says what was scanned
        from rocm_lint.output.html import render_html
        from rocm_lint.output.html_scan import scan_info

        scan = scan_info(
            args.paths or ["."],
            report.files_checked,
            nvidia_only_reported=bool(config.report_nvidia_only_sources),
        )
        render_html(report.findings, out, errors=report.errors, scan=scan, sources=sources)
    elif fmt == "summary":
        from rocm_lint.output.summary import render_summary

        render_summary(
            report.findings,
            out,
            errors=report.errors,
            root=project_root(config.root),
            files_checked=report.files_checked,
        )
    else:
        render(fmt, report.findings, out, color=use_color(out), errors=report.errors, sources=sources)


def render_shown(shown, out, *, applied: bool) -> None:
    """ruff's ``--show-fixes`` list: per file, how many findings of each code were (or would be) fixed."""
    from rocm_lint.output.source import display_name, repo_path
    from rocm_lint.registry import get_rule

    total = sum(sum(c.values()) for c in shown.values())
    if not total:
        out.write("No fixes applied.\n" if applied else "No fixes available.\n")
        return
    verb = "Fixed" if applied else "Would fix"
    out.write(f"{verb} {total} finding{'s' if total != 1 else ''}:\n")
    for path in sorted(shown):
        if not shown[path]:
            continue
        out.write(f"- {display_name(path if path == '-' else repo_path(path))}:\n")
        for code, n in sorted(shown[path].items()):
            rule = get_rule(code)
            out.write(f"    {n} \u00d7 {code} ({rule.name if rule else '?'})\n")


def use_color(stream) -> bool:
    """Colour on a terminal; ``FORCE_COLOR`` forces it, ``NO_COLOR`` (https://no-color.org) always wins."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _with_edits(findings, config, args=None, sources=None, workspace=None):
    """Fill in each Python fix's edits (``fix.api.with_edits``; kept in the content cache unless
    --no-cache); ``sources``: what the renderers read (a stdin buffer's overlay)."""
    from rocm_lint.fix.api import with_edits
    from rocm_lint.output.source import Sources

    sources = sources or Sources()
    cache_dir = None
    if args is not None and not getattr(args, "no_cache", True) and not reads_stdin(args):
        from rocm_lint.cache import run_dir

        cache_dir = run_dir(args.cache_dir, config, quiet=True)  # the check said why not
    return with_edits(findings, config, cache_dir, read=sources.text, workspace=workspace)
