"""``rocm-lint``: check, rule, rules.  The command line is ``cli_args``, the report ``cli_report``,
stdin ``cli_stdin``, the other commands ``cli_commands``; here: ``check`` on files and ``main``."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from rocm_lint.cli_args import (
    build_parser,
    command_line_keys,
    reads_stdin,
    usage_problem,
    with_command_line,
)
from rocm_lint.cli_report import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    error,
    file_error,
    render_report,
    render_shown,
)
from rocm_lint.config import ConfigError, check_codes, discover


def _settings(args: argparse.Namespace, paths: Sequence[str]):
    """The configuration with the command line's selection on top, or an exit code."""
    from rocm_lint.registry import all_codes

    try:
        config = discover(paths, args.config)
        check_codes(config, all_codes())
    except ConfigError as exc:
        error(str(exc))
        return EXIT_ERROR
    return with_command_line(config, args)


def cmd_check(args: argparse.Namespace) -> int:
    problem = usage_problem(args)
    if problem:
        error(problem)
        return EXIT_ERROR
    stdin = reads_stdin(args)
    paths = args.paths or ["."]
    anchor = [args.stdin_filename] if stdin and args.stdin_filename else ([] if stdin else paths)
    config = _settings(args, anchor)
    if isinstance(config, int):
        return config
    if args.show_settings:
        from rocm_lint.output.settings import show_settings

        return show_settings(
            config, set(command_line_keys(args)), (anchor or ["."])[0], args.output_format, sys.stdout
        )
    if stdin:
        from rocm_lint.cli_stdin import check_stdin

        return check_stdin(config, args)

    from rocm_lint.workspace import Workspace

    workspace = Workspace()  # every cache of this run (rocm_lint.workspace)
    changed = None
    if args.baseline_commit:  # the lines added since REF (diffbase): findings elsewhere are not reported
        from rocm_lint.diffbase import DiffBaseError, changed_since

        try:
            changed = changed_since(args.baseline_commit, paths)
        except DiffBaseError as exc:
            error(str(exc))
            return EXIT_ERROR
    report = _check(paths, config, args, changed, workspace)
    if args.write_baseline:
        return _record_baseline(report, args, config)
    fixed = 0
    shown = {}
    if args.fix or args.diff or args.show_fixes:
        fixed, would_fix, shown = _apply_fixes(
            report,
            config,
            args,
            sys.stdout,
            write=args.fix and not args.diff,
            keep=changed.keeps if changed else None,
            workspace=workspace,
        )
        if args.diff:
            if not args.quiet:
                sys.stderr.write(f"Would fix {would_fix} finding{'s' if would_fix != 1 else ''}.\n")
            if args.show_fixes:
                render_shown(shown, sys.stderr, applied=False)
            for err in report.errors:
                file_error(err)
            return EXIT_ERROR if report.errors else (EXIT_FINDINGS if would_fix else EXIT_CLEAN)
        if fixed:
            errors = report.errors
            workspace.revalidate()  # a fixed header is read again
            if changed is not None:  # the fixes moved lines: ask git again
                try:
                    changed = changed_since(args.baseline_commit, paths)
                except DiffBaseError as exc:
                    error(str(exc))
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
        from rocm_lint.fix.files import named_roots
        from rocm_lint.output.noqa import add_noqa

        return add_noqa(report, config, quiet=args.quiet, roots=named_roots(paths))
    return render_report(
        report,
        config,
        args,
        fixed=fixed,
        baselined=baselined,
        shown=shown,
        unchanged=changed.hidden if changed else 0,
        workspace=workspace,
    )


def _record_baseline(report, args: argparse.Namespace, config) -> int:
    from rocm_lint.baseline import write_baseline
    from rocm_lint.cli_report import project_trees
    from rocm_lint.discovery import LinkRefused
    from rocm_lint.output.source import display_name

    try:
        n = write_baseline(report.findings, args.write_baseline, project_trees(config))
    except LinkRefused as exc:
        error(f"{display_name(args.write_baseline)}: cannot write the baseline: {exc}")
        return EXIT_ERROR
    except OSError as exc:
        error(
            f"{display_name(args.write_baseline)}: cannot write the baseline: {(exc.strerror or str(exc)).lower()}"
        )
        return EXIT_ERROR
    for err in report.errors:
        file_error(err)
    if not args.quiet:
        sys.stderr.write(
            f"Wrote {n} finding{'s' if n != 1 else ''} to the baseline {display_name(args.write_baseline)}.\n"
        )
    return EXIT_ERROR if report.errors else EXIT_CLEAN


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
        from rocm_lint.cache import run_dir

        cache_dir = run_dir(args.cache_dir, config)
    if not wants_progress(sys.stderr, args.quiet):
        return check_paths(paths, config, jobs=args.jobs, cache_dir=cache_dir, workspace=workspace)
    bar = ProgressBar(sys.stderr)
    try:
        return check_paths(
            paths, config, jobs=args.jobs, progress=bar, cache_dir=cache_dir, workspace=workspace
        )
    finally:
        bar.close()


def _apply_fixes(report, config, args, out, *, write: bool, keep=None, workspace=None):
    """Fix (``write``), or with --diff show, every file with fixable findings; with neither, only
    count what --fix would do (``--show-fixes``).  Returns (fixed, would_fix, {path: Counter(code)})."""
    from collections import Counter

    from rocm_lint.finding import Applicability, FileError
    from rocm_lint.fix.engine import unified_diff
    from rocm_lint.fix.files import fix_files, named_roots
    from rocm_lint.output.source import display_name, repo_path

    if (write or args.diff) and any(f.cell is not None for f in report.findings):
        sys.stderr.write(
            "rocm-lint: notebooks (.ipynb) are checked, not fixed: --fix and --diff leave them unchanged\n"
        )
    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if args.unsafe_fixes else set())
    paths = sorted({f.path for f in report.findings if f.fix is not None and f.fix.applicability in wanted})
    fixed = would_fix = 0
    shown = {}
    for path, outcome in zip(
        paths,
        fix_files(
            paths,
            config,
            unsafe=args.unsafe_fixes,
            write=write,
            jobs=args.jobs,
            keep=keep,
            workspace=workspace,
            roots=named_roots(args.paths or ["."]),
        ),
    ):
        if outcome.error:
            report.errors.append(FileError(path, outcome.error))
            continue
        if write or args.diff:
            for finding, why in outcome.dropped:
                sys.stderr.write(
                    f"rocm-lint: {display_name(path)}:{finding.line}:{finding.col + 1}: {finding.code} "
                    f"not fixed: {why}\n"
                )
        if args.diff and outcome.changed:
            # `git apply` wants paths relative to the working directory, without `./`
            out.write(unified_diff(display_name(repo_path(path)), outcome.old, outcome.new))
        shown[path] = Counter(f.code for f in outcome.applied)
        would_fix += len(outcome.applied)
        if write:
            fixed += len(outcome.applied)
    return fixed, would_fix, shown


def _collecting_less(handler, args: argparse.Namespace) -> int:
    """Run a ``check`` of a few files (an editor's, pre-commit's: at most 64, named one by one)
    with the cyclic garbage collector's first generation at 50,000 allocations (700 by default):
    parsing a module allocates an object per node, and each young collection walked them again
    (4% of a one-file check).  Not for trees: there the analysis' cyclic garbage of each file
    would wait longer for a collection (torch's peak memory +27%).  Restored after the run."""
    import gc
    import os

    paths = args.paths or []
    if not paths or len(paths) > 64 or "-" in paths or not all(os.path.isfile(p) for p in paths):
        return handler(args)
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], 50_000), *thresholds[1:])
    try:
        return handler(args)
    finally:
        gc.set_threshold(*thresholds)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    if args.command == "check":
        handler = cmd_check
    else:  # the other commands' module is imported only for them (a check's start-up)
        import rocm_lint.cli_commands as commands

        handler = getattr(commands, f"cmd_{args.command}")
    try:
        return _collecting_less(handler, args) if handler is cmd_check else handler(args)
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # pragma: no cover - `rocm-lint check | head`
        sys.stderr.close()
        return EXIT_CLEAN
