"""``rocm-lint-semgrep``: run the Semgrep version of rocm-lint's CUDA C++ rules on the named files.

This is the entry of the ``rocm-lint-semgrep`` pre-commit hook, for teams that already run
Semgrep. It keeps the C++ files among its arguments (the same suffixes and device-code test as
``rocm-lint check``; Semgrep scans ``.cu``/``.cuh``/``.hip`` only when they are named and
``--scan-unknown-extensions`` is given), and runs Semgrep with the rules shipped in this package
(``rocm-lint.yaml``, also at ``semgrep-rules/`` in the repository) without metrics or version
checks: nothing leaves the machine. Exit status: Semgrep's (1 when findings remain with
``--error``), 0 when no file is C++, 2 when Semgrep is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence

RULES = Path(__file__).with_name("rocm-lint.yaml")


def semgrep_command() -> Optional[List[str]]:
    """The semgrep executable of this environment (next to this Python first), or None."""
    here = Path(sys.executable).with_name("semgrep")
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    found = shutil.which("semgrep")
    return [found] if found else None


def cpp_files(paths: Sequence[str]) -> List[str]:
    """The files among ``paths`` that rocm-lint's C++ rules read (as ``rocm-lint check
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = [a for a in args if a.startswith("-")]
    files = cpp_files([a for a in args if not a.startswith("-")])
    if not files:
        return 0
    command = semgrep_command()
    if command is None:
        sys.stderr.write("rocm-lint-semgrep: semgrep is not installed (pip install semgrep)\n")
        return 2
    return subprocess.call([*command, "scan", "--config", str(RULES), "--metrics=off", "--disable-version-check",
                            "--scan-unknown-extensions", "--error", "--quiet", *options, *files])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
