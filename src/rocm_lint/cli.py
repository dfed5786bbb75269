"""``rocm-lint``: check, rule, rules."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from typing import List, Optional, Sequence

from rocm_lint import __version__
from rocm_lint.config import ConfigError, discover, parse_codes
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocm-lint",
        description="Find NVIDIA-only code that breaks, hangs or silently computes wrong results on AMD ROCm.",
    )
    parser.add_argument("--version", action="version", version=f"rocm-lint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="lint files and directories (default: the current directory)")
    check.add_argument("paths", nargs="*", metavar="PATH")
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
    check.add_argument("--config", metavar="FILE", help="read settings from FILE instead of pyproject.toml")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude/extend-exclude to files named on the command line too (pre-commit)")
    check.add_argument("--no-cache", action="store_true",
                       help="accepted (the CLI contract, ruff's habit): rocm-lint keeps no cache, every run reads every file")
    check.add_argument("--fix", action="store_true", help="apply safe fixes (the NVIDIA path never changes)")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--baseline", metavar="FILE",
                       help="report only findings not recorded in FILE (see --write-baseline)")
    check.add_argument("--write-baseline", metavar="FILE",
                       help="record the current findings in FILE and exit 0 (for --baseline)")

    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", metavar="CODE")

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--json", action="store_true", help="machine-readable catalogue")

    doctor = sub.add_parser("doctor", help="check the live torch, GPU and host (needs torch installed)")
    doctor.add_argument("--json", action="store_true", help="machine-readable report")

    server = sub.add_parser("server", help="run the language server (LSP over stdio; needs rocm-lint[lsp])")
    server.add_argument("--stdio", action="store_true", help="accepted for editor clients; stdio is the default")
    return parser


def _error(message: str) -> None:
    sys.stderr.write(f"rocm-lint: error: {message}\n")


def _file_error(err) -> None:
    """A file that could not be analysed (or fixed), its name shown safely (see ``display_name``)."""
    from rocm_lint.output.source import display_name

    _error(f"{display_name(err.path)}: {err.reason}")


def _settings(args: argparse.Namespace, paths: Sequence[str]):
    """The configuration with the command line's selection on top, or an exit code."""
    try:
        config = discover(paths, args.config)
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    if args.select is not None:
        config = replace(config, select=tuple(args.select), extend_select=())
    if args.extend_select:
        config = replace(config, extend_select=config.extend_select + tuple(args.extend_select))
    if args.ignore:
        config = replace(config, ignore=config.ignore + tuple(args.ignore))
    if args.force_exclude:
        config = replace(config, force_exclude=True)
    return config


def _usage_problem(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the options, before any work is done."""
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be at least 1"
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


def _summary(report, fixed: int, baselined: int, args: argparse.Namespace) -> str:
    n = len(report.findings)
    files = report.files_checked
    with_findings = len({f.path for f in report.findings})
    summary = (f"Found {n} finding{'s' if n != 1 else ''} in {with_findings} "
               f"file{'s' if with_findings != 1 else ''} ({files} checked).")
    if not n and not report.errors:
        summary = f"All checks passed ({files} file{'s' if files != 1 else ''})."
    if fixed:
        summary = f"Fixed {fixed} finding{'s' if fixed != 1 else ''}, {n} remaining ({files} file{'s' if files != 1 else ''})."
    else:
        fixable = sum(1 for f in report.findings if f.fix is not None)
        if fixable and not args.fix:
            summary += f" {fixable} fixable with --fix (or --unsafe-fixes); --diff shows how."
    if baselined:
        summary += f" {baselined} more in the baseline."
    if report.errors:
        summary += f" {len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be analysed."
    return summary


def cmd_check(args: argparse.Namespace) -> int:
    from rocm_lint.output import render
    from rocm_lint.output.text import render_statistics

    paths = args.paths or ["."]
    config = _settings(args, paths)
    if isinstance(config, int):
        return config
    problem = _usage_problem(args)
    if problem:
        _error(problem)
        return EXIT_ERROR

    report = _check(paths, config, args)
    out = sys.stdout
    if args.write_baseline:
        return _record_baseline(report, args)
    fixed = 0
    if args.fix or args.diff:
        fixed, would_fix = _apply_fixes(report, config, args, out)
        if args.diff:
            if not args.quiet:
                sys.stderr.write(f"Would fix {would_fix} finding{'s' if would_fix != 1 else ''}.\n")
            for err in report.errors:
                _file_error(err)
            return EXIT_ERROR if report.errors else (EXIT_FINDINGS if would_fix else EXIT_CLEAN)
        if fixed:
            errors = report.errors
            report = _check(paths, config, args)  # what remains after the fixes
            report.errors = errors
    baselined = 0
    if args.baseline:
        from rocm_lint.baseline import new_findings

        kept = new_findings(report.findings, args.baseline)
        baselined = len(report.findings) - len(kept)
        report.findings = kept
    fmt = args.output_format or ("full" if out.isatty() else "concise")
    if fmt in FORMATS_WITH_EDITS:
        report.findings = _with_edits(report.findings, config)
    if args.statistics:
        render_statistics(report.findings, out)
    else:
        render(fmt, report.findings, out, color=use_color(out), errors=report.errors)
    out.flush()
    for err in report.errors:
        _file_error(err)
    if not args.quiet and fmt not in MACHINE_FORMATS:
        sys.stderr.write(_summary(report, fixed, baselined, args) + "\n")
    if report.errors:
        return EXIT_ERROR
    if report.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def use_color(stream) -> bool:
    """Colour on a terminal; ``FORCE_COLOR`` forces it, ``NO_COLOR`` (https://no-color.org) always wins."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _check(paths, config, args):
    """check_paths with a progress bar on stderr when it is a terminal."""
    from rocm_lint.engine import check_paths
    from rocm_lint.output.progress import ProgressBar, wants_progress

    if not wants_progress(sys.stderr, args.quiet):
        return check_paths(paths, config, jobs=args.jobs)
    bar = ProgressBar(sys.stderr)
    try:
        return check_paths(paths, config, jobs=args.jobs, progress=bar)
    finally:
        bar.close()


def _apply_fixes(report, config, args, out):
    """Fix (or, with --diff, show) every file with fixable findings. Returns (fixed, would_fix)."""
    from rocm_lint.finding import Applicability, FileError
    from rocm_lint.fix.engine import unified_diff
    from rocm_lint.fix.files import fix_file
    from rocm_lint.output.source import display_name, repo_path

    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if args.unsafe_fixes else set())
    paths = sorted({f.path for f in report.findings if f.fix is not None and f.fix.applicability in wanted})
    fixed = would_fix = 0
    for path in paths:
        outcome = fix_file(path, config, unsafe=args.unsafe_fixes, write=not args.diff)
        if outcome.error:
            report.errors.append(FileError(path, outcome.error))
            continue
        for finding, why in outcome.dropped:
            sys.stderr.write(f"rocm-lint: {display_name(path)}:{finding.line}:{finding.col + 1}: {finding.code} "
                             f"not fixed: {why}\n")
        if args.diff and outcome.changed:
            # `git apply` wants paths relative to the working directory, without `./`
            out.write(unified_diff(display_name(repo_path(path)), outcome.old, outcome.new))
        would_fix += len(outcome.applied)
        if not args.diff:
            fixed += len(outcome.applied)
    return fixed, would_fix


def _with_edits(findings, config):
    """Fill in each Python fix's edits (ruff's JSON carries them), computed once per file (one
    fix of the file's findings, split per finding); only files with fixes are re-read.  C++ and
    config-file findings carry their edits from the check."""
    from dataclasses import replace as dc_replace

    from rocm_lint.engine import read_source
    from rocm_lint.finding import Fix
    from rocm_lint.fix.api import edits_by_finding

    by_file = {}
    for i, f in enumerate(findings):
        if f.fix is not None and f.recipe is not None:
            by_file.setdefault(f.path, []).append(i)
    out = list(findings)
    for path, indexes in by_file.items():
        text = read_source(path)
        wanted = [findings[i] for i in indexes]
        all_edits = edits_by_finding(path, text, wanted, config) if isinstance(text, str) else [()] * len(wanted)
        for i, f, edits in zip(indexes, wanted, all_edits):
            out[i] = dc_replace(f, fix=Fix(f.fix.applicability, f.fix.message, edits) if edits else None)
    return out


def cmd_rule(args: argparse.Namespace) -> int:
    from rocm_lint.registry import get_rule

    rule = get_rule(args.code)
    if rule is None:
        _error(f"unknown rule {args.code!r}; `rocm-lint rules` lists them")
        return EXIT_ERROR
    from rocm_lint.docgen import render_rule

    sys.stdout.write(render_rule(rule))
    return EXIT_CLEAN


def cmd_rules(args: argparse.Namespace) -> int:
    from rocm_lint.registry import all_rules

    rules = all_rules()
    if args.json:
        json.dump([r.as_dict() for r in rules], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    for r in rules:
        fix = r.fix.value if r.fix else "-"
        sys.stdout.write(f"{r.code}  {r.name:<36} fix:{fix:<8} {r.summary}\n")
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
        verdict = f"not ROCm ({env['platform']}): nothing to check"
    elif not findings:
        verdict = "ROCm: no problems found"
    else:
        verdict = f"ROCm: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if args.json:
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


def cmd_server(args: argparse.Namespace) -> int:
    try:
        from rocm_lint.server import main as serve  # pygls is optional: imported only here
    except ImportError as exc:
        _error(f"`rocm-lint server` needs pygls ({exc}): pip install 'rocm-lint[lsp]'")
        return EXIT_ERROR
    return serve()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    handler = {"check": cmd_check, "rule": cmd_rule, "rules": cmd_rules, "doctor": cmd_doctor,
               "server": cmd_server}[args.command]
    try:
        return handler(args)
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # pragma: no cover - `rocm-lint check | head`
        sys.stderr.close()
        return EXIT_CLEAN
