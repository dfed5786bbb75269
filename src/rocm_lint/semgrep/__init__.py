"""``rocm-lint-semgrep``: run the Semgrep version of rocm-lint's CUDA C++ rules.

This is the entry of the ``rocm-lint-semgrep`` pre-commit hook, for teams that already run
Semgrep. It keeps the C++ files among its paths (directories are walked as ``rocm-lint check``
walks them; the same suffixes and device-code test; the current directory when no path is
given: Semgrep itself scans ``.cu``/``.cuh``/``.hip`` only when they are named and
``--scan-unknown-extensions`` is given), and runs Semgrep with the rules shipped in this package
(``rocm-lint.yaml``, also at ``semgrep-rules/`` in the repository) without metrics or version
checks: nothing leaves the machine.

Rule ids are the ones in the rules file (``rocm-lint.ROC602``) wherever the package is installed
and wherever Semgrep runs (``--no-rewrite-rule-ids``; Semgrep otherwise prefixes each id with the
rules file's directory relative to the current directory, which changes SARIF ``ruleId`` s from
machine to machine). Options the wrapper does not know go to Semgrep (``--autofix``, ``--sarif``,
``--output out.sarif`` ...). Exit status: 1 when findings remain (Semgrep's ``--error``; 0 with
``--exit-zero``), 0 when nothing was found or no file is C++, 2 when Semgrep is not installed or
the arguments are wrong, otherwise Semgrep's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

RULES = Path(__file__).with_name("rocm-lint.yaml")

# The options of `semgrep scan` (1.182.0) that take a value as the next argument, so that the value
# is passed on with its option and not taken for a path (`--output out.sarif`). `--opt=value`
# needs no table; anything after `--` is a path.
SEMGREP_VALUE_OPTIONS = frozenset(
    {
        "-e",
        "--pattern",
        "-f",
        "-c",
        "--config",
        "-j",
        "--jobs",
        "-l",
        "--lang",
        "-o",
        "--output",
        "--baseline-commit",
        "--emacs-output",
        "--exclude",
        "--exclude-rule",
        "--gitlab-sast-output",
        "--gitlab-secrets-output",
        "--include",
        "--interfile-timeout",
        "--json-output",
        "--junit-xml-output",
        "--max-chars-per-line",
        "--max-lines-per-finding",
        "--max-log-list-entries",
        "--max-match-context-size",
        "--max-memory",
        "--max-target-bytes",
        "--metrics",
        "--optimizations",
        "--project-root",
        "--remote",
        "--replacement",
        "--sarif-output",
        "--secrets-timeout",
        "--severity",
        "--text-output",
        "--timeout",
        "--timeout-threshold",
        "--vim-output",
        "--x-mem-policy",
        "--trace-endpoint",
        "--x-rule-validation",
        "--x-semgrepignore-filename",
    }
)

# Always given to Semgrep, before the user's options.
FIXED_OPTIONS = (
    "--metrics=off",
    "--disable-version-check",
    "--scan-unknown-extensions",
    "--no-rewrite-rule-ids",
    "--quiet",
)

DESCRIPTION = """\
Run rocm-lint's CUDA C++ rules (ROC601-ROC605, ROC701-ROC708) with Semgrep on the C++ files
among PATHs (directories are walked like `rocm-lint check` walks them; default: the current
directory). Semgrep needs CUDA files named one by one with --scan-unknown-extensions: this
wrapper does that, and runs without metrics or version checks. Rule ids are `rocm-lint.ROC602`
... wherever rocm-lint is installed and wherever it runs."""

EPILOG = f"""\
Other options go to `semgrep scan` unchanged, for example:
  --autofix                  apply the safe fixes (ROC702, ROC703)
  --sarif / --json           output format; --output FILE writes it to FILE
  --sarif-output=FILE        SARIF to FILE as well as text on stdout
Write `--` before paths that start with `-`.

exit status: 0 no findings (or no C++ file), 1 findings (0 with --exit-zero),
2 Semgrep missing or bad arguments; otherwise Semgrep's own status.
rules file: {RULES}"""


def semgrep_command() -> Optional[List[str]]:
    """The semgrep executable of this environment (next to this Python first), or None."""
    here = Path(sys.executable).with_name("semgrep")
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    found = shutil.which("semgrep")
    return [found] if found else None


def cpp_files(paths: Sequence[str]) -> List[str]:
    """The files under ``paths`` that rocm-lint's C++ rules read (as ``rocm-lint check
    --force-exclude`` picks them: the project's exclude settings apply to named files too)."""
    from dataclasses import replace

    from rocm_lint.config import Config, ConfigError, discover
    from rocm_lint.cpp.scanner import holds_device_code
    from rocm_lint.discovery import iter_files, language_of
    from rocm_lint.engine import read_source

    try:
        config = discover(list(paths))
    except ConfigError:
        config = Config()
    out = []
    for path in iter_files(paths, replace(config, force_exclude=True)):
        if not isinstance(path, str):
            continue  # a missing file: Semgrep has nothing to read either
        language = language_of(path)
        if language == "cuda":
            out.append(path)
        elif language == "cpp":
            text = read_source(path)
            if isinstance(text, str) and holds_device_code(text):
                out.append(path)
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rocm-lint-semgrep",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    p.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when findings remain (default: 1, like `rocm-lint check`)",
    )
    return p


def split_arguments(args: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(the wrapper's own arguments, Semgrep's options): an option the wrapper does not know goes
    to Semgrep with its value (``--output out.sarif``, ``-j 4``); after ``--`` all are paths."""
    own: List[str] = []
    semgrep: List[str] = []
    known = {"-h", "--help", "--exit-zero"}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            own.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-" or arg in known:
            own.append(arg)
        else:
            semgrep.append(arg)
            if arg in SEMGREP_VALUE_OPTIONS and i + 1 < len(args):
                semgrep.append(args[i + 1])
                i += 1
        i += 1
    return own, semgrep


def main(argv: Optional[Sequence[str]] = None) -> int:
    own, options = split_arguments(list(sys.argv[1:] if argv is None else argv))
    ns = parser().parse_args(own)
    files = cpp_files(ns.paths or ["."])
    if not files:
        return 0
    command = semgrep_command()
    if command is None:
        sys.stderr.write("rocm-lint-semgrep: semgrep is not installed (pip install semgrep)\n")
        return 2
    status = [] if ns.exit_zero else ["--error"]
    # `--` keeps a file named like an option a file for Semgrep too.
    return subprocess.call(
        [*command, "scan", "--config", str(RULES), *FIXED_OPTIONS, *status, *options, "--", *files]
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
