"""``rocm-lint``'s command line: the parser, the checks of its options before any work, and the
settings it puts on top of the configuration."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import List, Optional

from rocm_lint import __version__
from rocm_lint.config import ConfigError, parse_codes
from rocm_lint.output import FORMATS


def _code_list(value: str) -> List[str]:
    from rocm_lint.registry import all_codes

    try:
        codes = list(parse_codes(value, "codes"))
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    known = all_codes()
    unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
    if unknown:  # like ruff: a selector that names no rule is a typo, not a silent no-op
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown)} selects no rule (`rocm-lint rules` lists them)"
        )
    return codes


def _globs(value: str) -> List[str]:
    """``--exclude a,b/*.py``: comma-separated globs, as ruff takes them."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _extra_output(value: str):
    """``--extra-output sarif=out.sarif``: (format, file)."""
    fmt, sep, file = value.partition("=")
    if not sep or not file or fmt not in FORMATS:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected FORMAT=FILE, FORMAT one of {', '.join(FORMATS)}"
        )
    return fmt, file


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing ``shutil`` (and its compression
    modules: ~2 ms of a one-file check, for a width only help text reads): ``COLUMNS``, else the
    terminal on ``sys.__stdout__``, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, with the width as ``shutil`` would give it (see :func:`_columns`)."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: Optional[int] = None
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _columns() - 2 if width is None else width
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocm-lint",
        description="Find NVIDIA-only code that breaks, hangs or silently computes wrong results on AMD ROCm.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"rocm-lint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, **kwargs) -> argparse.ArgumentParser:
        return sub.add_parser(name, formatter_class=_Formatter, **kwargs)

    check = add("check", help="lint files and directories (default: the current directory; - reads stdin)")
    check.add_argument("paths", nargs="*", metavar="PATH")
    check.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the name of the text read from stdin (`-`): picks its language, its settings, "
        "per-file-ignores and (with --force-exclude) excludes",
    )
    check.add_argument(
        "--select",
        type=_code_list,
        metavar="CODES",
        help="codes or prefixes to enable (replaces the configured selection)",
    )
    check.add_argument(
        "--extend-select",
        type=_code_list,
        metavar="CODES",
        default=[],
        help="codes or prefixes to enable in addition",
    )
    check.add_argument(
        "--ignore", type=_code_list, metavar="CODES", default=[], help="codes or prefixes to disable"
    )
    check.add_argument(
        "--output-format", choices=FORMATS, default=None, help="default: full on a terminal, else concise"
    )
    check.add_argument("--statistics", action="store_true", help="print a count per code instead of findings")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument(
        "-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: number of CPUs)"
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (its [tool.rocm-lint] table, or its top-level keys) instead "
        "of the closest .rocm-lint.toml, rocm-lint.toml or pyproject.toml; globs are relative "
        "to FILE's directory; the rocm-lint options of flake8's [flake8] section (setup.cfg, "
        "tox.ini, .flake8) still add their names",
    )
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument(
        "--exclude",
        type=_globs,
        action="extend",
        metavar="GLOBS",
        help="comma-separated globs of files and directories to skip (replaces the configured exclude)",
    )
    check.add_argument(
        "--extend-exclude",
        type=_globs,
        action="extend",
        metavar="GLOBS",
        default=[],
        help="comma-separated globs to skip in addition to exclude",
    )
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude/extend-exclude to files named on the command line too (pre-commit)",
    )
    check.add_argument(
        "--report-nvidia-only-sources",
        action="store_true",
        help="also report C++ sources the project's ROCm build never compiles (counted apart)",
    )
    check.add_argument(
        "--no-cache", action="store_true", help="check every file, neither reading nor writing the cache"
    )
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the cache lives (default: .rocm_lint_cache beside the configuration, "
        "or ROCM_LINT_CACHE_DIR)",
    )
    check.add_argument("--fix", action="store_true", help="apply safe fixes (the NVIDIA path never changes)")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument(
        "--add-noqa",
        action="store_true",
        help="add a suppression comment (# noqa: CODE, // NOLINT(CODE)) to each finding's line",
    )
    check.add_argument(
        "--baseline", metavar="FILE", help="report only findings not recorded in FILE (see --write-baseline)"
    )
    check.add_argument(
        "--baseline-commit",
        metavar="REF",
        help="report only findings on lines added or changed since `git merge-base REF HEAD` "
        "(working tree included; renamed files followed, untracked files wholly new); "
        "--fix and --diff fix those findings only",
    )
    check.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record the current findings in FILE and exit 0 (for --baseline)",
    )
    check.add_argument(
        "--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    check.add_argument(
        "--extra-output",
        type=_extra_output,
        action="append",
        default=[],
        metavar="FORMAT=FILE",
        help="also write the report in FORMAT to FILE, from the same run (repeatable; "
        "for example sarif=rocm-lint.sarif beside annotations on stdout)",
    )
    check.add_argument(
        "--show-fixes",
        action="store_true",
        help="list the fixes applied (with --fix) or that --fix would apply, per file and code",
    )
    check.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings in effect for the first PATH and where each came from, then exit",
    )

    rule = add("rule", help="print a rule's documentation (by code or name); a prefix lists its rules")
    rule.add_argument("code", metavar="CODE|NAME|PREFIX")

    rules = add("rules", help="list every rule")
    rules.add_argument("--json", action="store_true", help="machine-readable catalogue")

    doctor = add("doctor", help="check the live torch, GPU and host (needs torch installed)")
    doctor.add_argument("--json", action="store_true", help="machine-readable report")

    clean = add("clean", help="remove the cache (.rocm_lint_cache) of the current project")
    clean.add_argument(
        "--cache-dir", metavar="DIR", help="the cache to remove (default: as `check` finds it)"
    )

    server = add("server", help="run the language server (LSP over stdio; needs rocm-lint[lsp])")
    server.add_argument(
        "--stdio", action="store_true", help="accepted for editor clients; stdio is the default"
    )
    completion = add("completion", help="print a shell completion script (bash, zsh or fish)")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    return parser


def command_line_keys(args: argparse.Namespace) -> List[str]:
    """The settings the command line sets (``--show-settings`` names them)."""
    keys = []
    if args.select is not None:
        keys += ["select", "extend-select"]
    if args.extend_select:
        keys.append("extend-select")
    if args.ignore:
        keys.append("ignore")
    keys += [
        key for key in ("exclude", "extend-exclude", "force-exclude") if getattr(args, key.replace("-", "_"))
    ]
    return keys


def with_command_line(config, args: argparse.Namespace):
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


def reads_stdin(args: argparse.Namespace) -> bool:
    """``check -``, or ``check --stdin-filename NAME`` with no path (as ruff)."""
    return args.paths == ["-"] or (not args.paths and args.stdin_filename is not None)


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the options, before any work is done."""
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be at least 1"
    if args.statistics and args.output_format not in (None, "concise", "full", "json"):
        return f"--statistics prints a table or JSON: --output-format {args.output_format} has no statistics form"
    if "-" in args.paths and len(args.paths) > 1:
        return "`-` (read stdin) must be the only path"
    if reads_stdin(args) and (args.write_baseline or args.baseline or args.baseline_commit):
        return "--baseline, --baseline-commit and --write-baseline work on files, not on stdin"
    if args.write_baseline and args.baseline_commit:
        return "--write-baseline records every finding: it cannot be combined with --baseline-commit"
    for file in [args.output_file] + [file for _, file in args.extra_output]:
        if file and not os.path.isdir(os.path.dirname(os.path.abspath(file))):
            return f"{file}: cannot write the report: no such directory"
    if args.extra_output and (
        args.statistics or args.diff or args.add_noqa or args.write_baseline or args.show_settings
    ):
        return (
            "--extra-output writes the findings' report: it cannot be combined with --statistics, --diff, "
            "--add-noqa, --write-baseline or --show-settings"
        )
    if args.add_noqa and (args.fix or args.diff or args.write_baseline or reads_stdin(args)):
        return "--add-noqa writes comments into files: it cannot be combined with --fix, --diff, --write-baseline or stdin"
    if args.write_baseline and (args.fix or args.diff or args.baseline):
        return (
            "--write-baseline records findings as they are: it cannot be combined with --fix, --diff "
            "or --baseline"
        )
    if args.write_baseline and not os.path.isdir(os.path.dirname(os.path.abspath(args.write_baseline))):
        return f"{args.write_baseline}: cannot write the baseline: no such directory"
    if args.baseline:
        from rocm_lint.baseline import BaselineError, read_baseline

        try:
            read_baseline(args.baseline)  # a broken baseline is a usage error, before any work
        except BaselineError as exc:
            return str(exc)
    return None
