"""``rocm-lint``: check, rule, rules."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import List, Optional, Sequence

from rocm_lint import __version__
from rocm_lint.config import ConfigError, check_codes, discover, parse_codes
from rocm_lint.output import FORMATS, FORMATS_WITH_EDITS, MACHINE_FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _code_list(value: str) -> List[str]:
    from rocm_lint.registry import all_rules

    try:
        codes = list(parse_codes(value, "codes"))
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    known = [r.code for r in all_rules()]
    unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
    if unknown:  # like ruff: a selector that names no rule is a typo, not a silent no-op
        raise argparse.ArgumentTypeError(f"{', '.join(unknown)} selects no rule (`rocm-lint rules` lists them)")
    return codes


def _globs(value: str) -> List[str]:
    """``--exclude a,b/*.py``: comma-separated globs, as ruff takes them."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _extra_output(value: str):
    """``--extra-output sarif=out.sarif``: (format, file)."""
    fmt, sep, file = value.partition("=")
    if not sep or not file or fmt not in FORMATS:
        raise argparse.ArgumentTypeError(f"{value!r}: expected FORMAT=FILE, FORMAT one of {', '.join(FORMATS)}")
    return fmt, file


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocm-lint",
        description="Find NVIDIA-only code that breaks, hangs or silently computes wrong results on AMD ROCm.",
    )
    parser.add_argument("--version", action="version", version=f"rocm-lint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="lint files and directories (default: the current directory; - reads stdin)")
    check.add_argument("paths", nargs="*", metavar="PATH")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the name of the text read from stdin (`-`): picks its language, its settings, "
                            "per-file-ignores and (with --force-exclude) excludes")
    check.add_argument("--select", type=_code_list, metavar="CODES",
                       help="codes or prefixes to enable (replaces the configured selection)")
    check.add_argument("--extend-select", type=_code_list, metavar="CODES", default=[],
                       help="codes or prefixes to enable in addition")
    check.add_argument("--ignore", type=_code_list, metavar="CODES", default=[],
                       help="codes or prefixes to disable")
    check.add_argument("--output-format", choices=FORMATS, default=None,
                       help="default: full on a terminal, else concise")
    check.add_argument("--statistics", action="store_true", help="print a count per code instead of findings")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                       help="worker processes (default: number of CPUs)")
    check.add_argument("--config", metavar="FILE",
                       help="read settings from FILE (its [tool.rocm-lint] table, or its top-level keys) instead "
                            "of the closest .rocm-lint.toml, rocm-lint.toml or pyproject.toml; globs are relative "
                            "to FILE's directory; the rocm-lint options of flake8's [flake8] section (setup.cfg, "
                            "tox.ini, .flake8) still add their names")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("--exclude", type=_globs, action="extend", metavar="GLOBS",
                       help="comma-separated globs of files and directories to skip (replaces the configured "
                            "exclude)")
    check.add_argument("--extend-exclude", type=_globs, action="extend", metavar="GLOBS", default=[],
                       help="comma-separated globs to skip in addition to exclude")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude/extend-exclude to files named on the command line too (pre-commit)")
    check.add_argument("--report-nvidia-only-sources", action="store_true",
                       help="also report C++ sources the project's ROCm build never compiles (counted apart)")
    check.add_argument("--no-cache", action="store_true",
                       help="check every file, neither reading nor writing the cache")
    check.add_argument("--cache-dir", metavar="DIR",
                       help="where the cache lives (default: .rocm_lint_cache beside the configuration, "
                            "or ROCM_LINT_CACHE_DIR)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes (the NVIDIA path never changes)")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--add-noqa", action="store_true",
                       help="add a suppression comment (# noqa: CODE, // NOLINT(CODE)) to each finding's line")
    check.add_argument("--baseline", metavar="FILE",
                       help="report only findings not recorded in FILE (see --write-baseline)")
    check.add_argument("--baseline-commit", metavar="REF",
                       help="report only findings on lines added or changed since `git merge-base REF HEAD` "
                            "(working tree included; renamed files followed, untracked files wholly new); "
                            "--fix and --diff fix those findings only")
    check.add_argument("--write-baseline", metavar="FILE",
                       help="record the current findings in FILE and exit 0 (for --baseline)")
    check.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--extra-output", type=_extra_output, action="append", default=[], metavar="FORMAT=FILE",
                       help="also write the report in FORMAT to FILE, from the same run (repeatable; "
                            "for example sarif=rocm-lint.sarif beside annotations on stdout)")
    check.add_argument("--show-fixes", action="store_true",
                       help="list the fixes applied (with --fix) or that --fix would apply, per file and code")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings in effect for the first PATH and where each came from, then exit")

    rule = sub.add_parser("rule", help="print a rule's documentation (by code or name); a prefix lists its rules")
    rule.add_argument("code", metavar="CODE|NAME|PREFIX")

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--json", action="store_true", help="machine-readable catalogue")

    doctor = sub.add_parser("doctor", help="check the live torch, GPU and host (needs torch installed)")
    doctor.add_argument("--json", action="store_true", help="machine-readable report")

    clean = sub.add_parser("clean", help="remove the cache (.rocm_lint_cache) of the current project")
    clean.add_argument("--cache-dir", metavar="DIR", help="the cache to remove (default: as `check` finds it)")

    server = sub.add_parser("server", help="run the language server (LSP over stdio; needs rocm-lint[lsp])")
    server.add_argument("--stdio", action="store_true", help="accepted for editor clients; stdio is the default")
    completion = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    return parser


def _error(message: str) -> None:
    sys.stderr.write(f"rocm-lint: error: {message}\n")


def _file_error(err) -> None:
    """A file that could not be analysed (or fixed), its name shown safely (see ``display_name``)."""
    from rocm_lint.output.source import display_name

    _error(f"{display_name(err.path)}: {err.reason}")


def _settings(args: argparse.Namespace, paths: Sequence[str]):
    """The configuration with the command line's selection on top, or an exit code."""
    from rocm_lint.registry import all_rules

    try:
        config = discover(paths, args.config)
        check_codes(config, [r.code for r in all_rules()])
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    return _with_command_line(config, args)


def _command_line_keys(args: argparse.Namespace) -> List[str]:
    """The settings the command line sets (``--show-settings`` names them)."""
    keys = []
    if args.select is not None:
        keys += ["select", "extend-select"]
    if args.extend_select:
        keys.append("extend-select")
    if args.ignore:
        keys.append("ignore")
    keys += [key for key in ("exclude", "extend-exclude", "force-exclude")
             if getattr(args, key.replace("-", "_"))]
    return keys


def _with_command_line(config, args: argparse.Namespace):
    if args.select is not None:
        config = replace(config, select=tuple(args.select), extend_select=())
    if args.extend_select:
        config = replace(config, extend_select=config.extend_select + tuple(args.extend_select))
    if args.ignore:
        config = replace(config, ignore=config.ignore + tuple(args.ignore))
    if args.force_exclude:
        config = replace(config, force_exclude=True)
    if args.report_nvidia_only_sources:
        config = replace(config, report_nvidia_only_sources=True)
    if args.exclude is not None:
        config = replace(config, exclude=tuple(args.exclude))
    if args.extend_exclude:
        config = replace(config, extend_exclude=config.extend_exclude + tuple(args.extend_exclude))
    return config


def _usage_problem(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the options, before any work is done."""
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be at least 1"
    if args.statistics and args.output_format not in (None, "concise", "full", "json"):
        return f"--statistics prints a table or JSON: --output-format {args.output_format} has no statistics form"
    if "-" in args.paths and len(args.paths) > 1:
        return "`-` (read stdin) must be the only path"
    if _reads_stdin(args) and (args.write_baseline or args.baseline or args.baseline_commit):
        return "--baseline, --baseline-commit and --write-baseline work on files, not on stdin"
    if args.write_baseline and args.baseline_commit:
        return "--write-baseline records every finding: it cannot be combined with --baseline-commit"
    for file in [args.output_file] + [file for _, file in args.extra_output]:
        if file and not os.path.isdir(os.path.dirname(os.path.abspath(file))):
            return f"{file}: cannot write the report: no such directory"
    if args.extra_output and (args.statistics or args.diff or args.add_noqa or args.write_baseline
                              or args.show_settings):
        return ("--extra-output writes the findings' report: it cannot be combined with --statistics, --diff, "
                "--add-noqa, --write-baseline or --show-settings")
    if args.add_noqa and (args.fix or args.diff or args.write_baseline or _reads_stdin(args)):
        return "--add-noqa writes comments into files: it cannot be combined with --fix, --diff, --write-baseline or stdin"
    if args.write_baseline and (args.fix or args.diff or args.baseline):
        return ("--write-baseline records findings as they are: it cannot be combined with --fix, --diff "
                "or --baseline")
    if args.write_baseline and not os.path.isdir(os.path.dirname(os.path.abspath(args.write_baseline))):
        return f"{args.write_baseline}: cannot write the baseline: no such directory"
    if args.baseline:
        from rocm_lint.baseline import BaselineError, read_baseline

        try:
            read_baseline(args.baseline)  # a broken baseline is a usage error, before any work
        except BaselineError as exc:
            return str(exc)
    return None


def _record_baseline(report, args: argparse.Namespace) -> int:
    from rocm_lint.baseline import write_baseline
    from rocm_lint.output.source import display_name

    try:
        n = write_baseline(report.findings, args.write_baseline)
    except OSError as exc:
        _error(f"{display_name(args.write_baseline)}: cannot write the baseline: {(exc.strerror or str(exc)).lower()}")
        return EXIT_ERROR
    for err in report.errors:
        _file_error(err)
    if not args.quiet:
        sys.stderr.write(f"Wrote {n} finding{'s' if n != 1 else ''} to the baseline {display_name(args.write_baseline)}.\n")
    return EXIT_ERROR if report.errors else EXIT_CLEAN


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
    summary = (f"Found {n} finding{'s' if n != 1 else ''} in {with_findings} "
               f"file{'s' if with_findings != 1 else ''} ({files} checked).")
    apart = sum(1 for f in report.findings if f.scope == "nvidia-only")
    if apart:  # --report-nvidia-only-sources
        summary = summary[:-1] + f", {apart} of them in sources the ROCm build never compiles."
    if not n and not report.errors:
        summary = f"All checks passed ({files} file{'s' if files != 1 else ''})."
    if fixed:
        summary = f"Fixed {fixed} finding{'s' if fixed != 1 else ''}, {n} remaining ({files} file{'s' if files != 1 else ''})."
    fixable, hidden = _fix_counts(report.findings, args)
    hidden_note = (f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with --unsafe-fixes"
                   if hidden else "")
    if fixable and not args.fix:  # ruff's wording
        summary += f" {fixable} fixable with --fix" + (f" ({hidden_note})." if hidden else ".")
    elif hidden:
        summary += f" No fixes available ({hidden_note})."
    if unchanged:  # --baseline-commit
        summary += f" {unchanged} more on lines not changed since {args.baseline_commit}."
    if baselined:
        summary += f" {baselined} more in the baseline."
    if report.errors:
        summary += f" {len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be analysed."
    return summary


def _reads_stdin(args: argparse.Namespace) -> bool:
    """``check -``, or ``check --stdin-filename NAME`` with no path (as ruff)."""
    return args.paths == ["-"] or (not args.paths and args.stdin_filename is not None)


def cmd_check(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem:
        _error(problem)
        return EXIT_ERROR
    stdin = _reads_stdin(args)
    paths = args.paths or ["."]
    anchor = [args.stdin_filename] if stdin and args.stdin_filename else ([] if stdin else paths)
    config = _settings(args, anchor)
    if isinstance(config, int):
        return config
    if args.show_settings:
        from rocm_lint.output.settings import show_settings

        return show_settings(config, set(_command_line_keys(args)), (anchor or ["."])[0], args.output_format,
                             sys.stdout)
    if stdin:
        return _check_stdin(config, args)

    from rocm_lint.workspace import Workspace

    workspace = Workspace()  # every cache of this run (rocm_lint.workspace)
    changed = None
    if args.baseline_commit:  # the lines added since REF (diffbase): findings elsewhere are not reported
        from rocm_lint.diffbase import DiffBaseError, changed_since

        try:
            changed = changed_since(args.baseline_commit, paths)
        except DiffBaseError as exc:
            _error(str(exc))
            return EXIT_ERROR
    report = _check(paths, config, args, changed, workspace)
    if args.write_baseline:
        return _record_baseline(report, args)
    fixed = 0
    shown = {}
    if args.fix or args.diff or args.show_fixes:
        fixed, would_fix, shown = _apply_fixes(report, config, args, sys.stdout, write=args.fix and not args.diff,
                                               keep=changed.keeps if changed else None, workspace=workspace)
        if args.diff:
            if not args.quiet:
                sys.stderr.write(f"Would fix {would_fix} finding{'s' if would_fix != 1 else ''}.\n")
            if args.show_fixes:
                _render_shown(shown, sys.stderr, applied=False)
            for err in report.errors:
                _file_error(err)
            return EXIT_ERROR if report.errors else (EXIT_FINDINGS if would_fix else EXIT_CLEAN)
        if fixed:
            errors = report.errors
            workspace.revalidate()  # a fixed header is read again
            if changed is not None:  # the fixes moved lines: ask git again
                try:
                    changed = changed_since(args.baseline_commit, paths)
                except DiffBaseError as exc:
                    _error(str(exc))
                    return EXIT_ERROR
            report = _check(paths, config, args, changed, workspace)  # what remains after the fixes
            report.errors = errors
    baselined = 0
    if args.baseline:
        from rocm_lint.baseline import new_findings

        kept = new_findings(report.findings, args.baseline)
        baselined = len(report.findings) - len(kept)
        report.findings = kept
    if args.add_noqa:
        from rocm_lint.output.noqa import add_noqa

        return add_noqa(report, config, quiet=args.quiet)
    return _report(report, config, args, fixed=fixed, baselined=baselined, shown=shown,
                   unchanged=changed.hidden if changed else 0, workspace=workspace)


def _report(report, config, args: argparse.Namespace, *, fixed: int = 0, baselined: int = 0, shown=None,
            out=None, unchanged: int = 0, sources=None, workspace=None) -> int:
    """Render the findings (to ``out``, ``--output-file`` or stdout), the error lines and the summary."""
    if args.output_file:
        try:
            target = open(args.output_file, "w", encoding="utf-8", newline="")
        except OSError as exc:
            from rocm_lint.output.source import display_name

            _error(f"{display_name(args.output_file)}: cannot write the report: {(exc.strerror or str(exc)).lower()}")
            return EXIT_ERROR
    else:
        target = out or sys.stdout
    try:
        fmt = args.output_format or ("full" if target.isatty() else "concise")
        _render(fmt, report, config, args, target, sources, workspace)
        if args.show_fixes and shown is not None:
            _render_shown(shown, sys.stderr if fmt in MACHINE_FORMATS or args.statistics else target,
                          applied=bool(args.fix))
        target.flush()
    finally:
        if args.output_file:
            target.close()
    for extra_fmt, file in args.extra_output:  # the same findings, in more formats (--extra-output)
        try:
            with open(file, "w", encoding="utf-8", newline="") as extra:
                _render(extra_fmt, report, config, args, extra, sources, workspace)
        except OSError as exc:
            from rocm_lint.output.source import display_name

            _error(f"{display_name(file)}: cannot write the report: {(exc.strerror or str(exc)).lower()}")
            return EXIT_ERROR
    for err in report.errors:
        _file_error(err)
    if not args.quiet and (fmt not in MACHINE_FORMATS or args.output_file) and not (
            args.statistics and fmt == "json" and not args.output_file):
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

        render_sarif(report.findings, out, errors=report.errors, root=project_root(config.root), sources=sources)
    elif fmt == "github":
        from rocm_lint.output.github import render_github

        render_github(report.findings, out, errors=report.errors, root=project_root(config.root), sources=sources)
    elif fmt == "html":  # the report's header says what was scanned
        from rocm_lint.output.html import render_html
        from rocm_lint.output.html_scan import scan_info

        scan = scan_info(args.paths or ["."], report.files_checked,
                         nvidia_only_reported=bool(config.report_nvidia_only_sources))
        render_html(report.findings, out, errors=report.errors, scan=scan, sources=sources)
    elif fmt == "summary":
        from rocm_lint.output.summary import render_summary

        render_summary(report.findings, out, errors=report.errors, root=project_root(config.root),
                       files_checked=report.files_checked)
    else:
        render(fmt, report.findings, out, color=use_color(out), errors=report.errors, sources=sources)


def _render_shown(shown, out, *, applied: bool) -> None:
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


def _read_stdin():
    """The bytes on stdin, bounded like a file read, or the reason they cannot be checked."""
    from rocm_lint.engine import MAX_FILE_BYTES

    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return f"stdin too large (more than {MAX_FILE_BYTES} bytes); not checked"
    return data


def _check_stdin(config, args: argparse.Namespace) -> int:
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
        _error(data)
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
            _file_error(err)
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

        outcome = fix_text(name, text, config, unsafe=args.unsafe_fixes, language=language,
                           findings=report.findings, workspace=workspace)
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
                _render_shown(shown, sys.stderr, applied=False)
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
    return _report(report, config, args, fixed=fixed, shown=shown, out=sys.stderr if echo else None,
                   sources=sources, workspace=workspace)


def _stdin_excluded(name: str, config) -> bool:
    """Whether a walk from the project root would skip ``name`` (exclude/extend-exclude)."""
    from pathlib import Path

    from rocm_lint.discovery import path_excluded

    full = os.path.abspath(name)
    root = os.path.abspath(os.fspath(config.root) if config.root else os.getcwd())
    rel = os.path.relpath(full, root)
    if rel.startswith(os.pardir):
        rel = os.path.basename(full)
    return path_excluded(Path(rel).as_posix().split("/"), tuple(config.exclude) + tuple(config.extend_exclude))


def use_color(stream) -> bool:
    """Colour on a terminal; ``FORCE_COLOR`` forces it, ``NO_COLOR`` (https://no-color.org) always wins."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _check(paths, config, args, changed=None, workspace=None):
    """check_paths with a progress bar on stderr when it is a terminal; with ``changed``
    (--baseline-commit) only the findings and errors of what changed since the commit."""
    report = _check_all(paths, config, args, workspace)
    if changed is not None:
        report.findings = changed.filter(report.findings)
        report.errors = [e for e in report.errors if changed.file_counts(e.path)]
    return report


def _check_all(paths, config, args, workspace=None):
    from rocm_lint.engine_paths import check_paths
    from rocm_lint.output.progress import ProgressBar, wants_progress

    cache_dir = None
    if not args.no_cache:
        from rocm_lint.cache import default_dir

        cache_dir = args.cache_dir or default_dir(config)
    if not wants_progress(sys.stderr, args.quiet):
        return check_paths(paths, config, jobs=args.jobs, cache_dir=cache_dir, workspace=workspace)
    bar = ProgressBar(sys.stderr)
    try:
        return check_paths(paths, config, jobs=args.jobs, progress=bar, cache_dir=cache_dir, workspace=workspace)
    finally:
        bar.close()


def _apply_fixes(report, config, args, out, *, write: bool, keep=None, workspace=None):
    """Fix (``write``), or with --diff show, every file with fixable findings; with neither, only
    count what --fix would do (``--show-fixes``).  Returns (fixed, would_fix, {path: Counter(code)})."""
    from collections import Counter

    from rocm_lint.finding import Applicability, FileError
    from rocm_lint.fix.engine import unified_diff
    from rocm_lint.fix.files import fix_files
    from rocm_lint.output.source import display_name, repo_path

    if (write or args.diff) and any(f.cell is not None for f in report.findings):
        sys.stderr.write("rocm-lint: notebooks (.ipynb) are checked, not fixed: --fix and --diff leave them unchanged\n")
    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if args.unsafe_fixes else set())
    paths = sorted({f.path for f in report.findings if f.fix is not None and f.fix.applicability in wanted})
    fixed = would_fix = 0
    shown = {}
    for path, outcome in zip(paths, fix_files(paths, config, unsafe=args.unsafe_fixes, write=write, jobs=args.jobs,
                                                  keep=keep, workspace=workspace)):
        if outcome.error:
            report.errors.append(FileError(path, outcome.error))
            continue
        if write or args.diff:
            for finding, why in outcome.dropped:
                sys.stderr.write(f"rocm-lint: {display_name(path)}:{finding.line}:{finding.col + 1}: {finding.code} "
                                 f"not fixed: {why}\n")
        if args.diff and outcome.changed:
            # `git apply` wants paths relative to the working directory, without `./`
            out.write(unified_diff(display_name(repo_path(path)), outcome.old, outcome.new))
        shown[path] = Counter(f.code for f in outcome.applied)
        would_fix += len(outcome.applied)
        if write:
            fixed += len(outcome.applied)
    return fixed, would_fix, shown


def _with_edits(findings, config, args=None, sources=None, workspace=None):
    """Fill in each Python fix's edits (``fix.api.with_edits``; kept in the content cache unless
    --no-cache); ``sources``: what the renderers read (a stdin buffer's overlay)."""
    from rocm_lint.fix.api import with_edits
    from rocm_lint.output.source import Sources

    sources = sources or Sources()
    cache_dir = None
    if args is not None and not getattr(args, "no_cache", True) and not _reads_stdin(args):
        from rocm_lint.cache import default_dir

        cache_dir = args.cache_dir or default_dir(config)
    return with_edits(findings, config, cache_dir, read=sources.text, workspace=workspace)


def cmd_rule(args: argparse.Namespace) -> int:
    from rocm_lint.output.text import render_rule_list
    from rocm_lint.registry import find_rules

    rules = find_rules(args.code)
    if not rules:
        _error(f"unknown rule {args.code!r}; `rocm-lint rules` lists them")
        return EXIT_ERROR
    if len(rules) == 1 and args.code.strip().upper() in (rules[0].code, rules[0].name.upper()):
        from rocm_lint.docgen import render_rule

        sys.stdout.write(render_rule(rules[0]))
    else:  # a prefix: the family's rules
        render_rule_list(rules, sys.stdout)
    return EXIT_CLEAN


def cmd_rules(args: argparse.Namespace) -> int:
    from rocm_lint.registry import all_rules

    rules = all_rules()
    if args.json:
        import json

        json.dump([r.as_dict() for r in rules], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    from rocm_lint.output.text import render_rule_list

    render_rule_list(rules, sys.stdout)
    return EXIT_CLEAN


def cmd_doctor(args: argparse.Namespace) -> int:
    from rocm_lint import runtime
    from rocm_lint.registry import get_rule

    env = runtime.environment()
    findings = runtime.check()
    order = {s: i for i, s in enumerate(runtime.SEVERITY_ORDER)}
    findings.sort(key=lambda f: (order.get(f.severity or "info", 9), f.code))
    critical = any(f.severity == "critical" for f in findings)
    if env["torch"] is None:
        verdict = "torch is not installed in this environment: nothing to check"
    elif env["platform"] != "rocm":
        verdict = (f"not ROCm ({env['platform']}) on an AMD GPU host: torch cannot use the AMD GPU" if findings
                   else f"not ROCm ({env['platform']}): nothing to check")
    elif not findings:
        verdict = "ROCm: no problems found"
    else:
        verdict = f"ROCm: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if args.json:
        import json

        rule_url = lambda code: get_rule(code).url if get_rule(code) else None
        json.dump({
            "environment": env,
            "verdict": verdict,
            "findings": [{"code": f.code, "severity": f.severity, "message": f.message,
                          "url": rule_url(f.code)} for f in findings],
        }, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        gpu = env["gpu"] or "no GPU visible"
        arch = f" ({env['arch']}, warp {env['warp_size']})" if env["arch"] else ""
        sys.stdout.write(f"torch {env['torch'] or '-'} · platform {env['platform'] or '-'} · {gpu}{arch}\n")
        for severity in runtime.SEVERITY_ORDER:
            group = [f for f in findings if (f.severity or "info") == severity]
            if group:
                sys.stdout.write(f"\n{severity} ({len(group)})\n")
                for f in group:
                    sys.stdout.write(f"  {f.code}  {f.message}\n")
        sys.stdout.write(f"\n{verdict}\n")
    return EXIT_FINDINGS if critical else EXIT_CLEAN


def cmd_clean(args: argparse.Namespace) -> int:
    from rocm_lint.cache import clean, default_dir

    config = discover(["."], None) if not args.cache_dir else None
    removed, message = clean(args.cache_dir or default_dir(config))
    sys.stderr.write(f"rocm-lint: {message}\n")
    return EXIT_CLEAN


def cmd_server(args: argparse.Namespace) -> int:
    try:
        from rocm_lint.server import main as serve  # pygls is optional: imported only here
    except ImportError as exc:
        _error(f"`rocm-lint server` needs pygls ({exc}): pip install 'rocm-lint[lsp]'")
        return EXIT_ERROR
    return serve()


def cmd_completion(args: argparse.Namespace) -> int:
    from rocm_lint.output.completion import completion_script
    from rocm_lint.registry import all_rules

    sys.stdout.write(completion_script(args.shell, build_parser(), all_rules()))
    return EXIT_CLEAN


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    handler = {"check": cmd_check, "rule": cmd_rule, "rules": cmd_rules, "doctor": cmd_doctor,
               "clean": cmd_clean, "server": cmd_server, "completion": cmd_completion}[args.command]
    try:
        return handler(args)
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # pragma: no cover - `rocm-lint check | head`
        sys.stderr.close()
        return EXIT_CLEAN
