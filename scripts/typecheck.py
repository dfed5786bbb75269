"""The project's type check: mypy over ``src/rocm_lint`` against a committed baseline that only shrinks.

``python scripts/typecheck.py`` runs mypy (settings in ``[tool.mypy]`` of pyproject.toml) and
compares its errors with ``scripts/mypy-baseline.txt``. An error is keyed without its line number
(``path: [code] message``, counted), so moving code does not churn the baseline. Exit 1 when an
error is not in the baseline (new code must type-check); exit 0 otherwise, printing how many
baseline entries are gone. ``--update`` rewrites the baseline, and refuses to add entries unless
``--allow-growth`` is given.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "scripts" / "mypy-baseline.txt"
_ERROR = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: (?P<msg>.*?)\s+\[(?P<code>[\w-]+)\]$")


def current_errors() -> Counter:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "src/rocm_lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 1) or "error: " not in proc.stdout and proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(2)
    keys: Counter = Counter()
    for line in proc.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            keys[f"{m['path']}: [{m['code']}] {m['msg']}"] += 1
    return keys


def read_baseline() -> Counter:
    keys: Counter = Counter()
    if BASELINE.exists():
        for line in BASELINE.read_text("utf-8").splitlines():
            if line and not line.startswith("#"):
                keys[line] += 1
    return keys


def write_baseline(keys: Counter) -> None:
    lines = ["# mypy errors accepted in src/rocm_lint (scripts/typecheck.py): this list only shrinks."]
    for key in sorted(keys):
        lines += [key] * keys[key]
    BASELINE.write_text("\n".join(lines) + "\n", "utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline to today's errors")
    ap.add_argument("--allow-growth", action="store_true", help="with --update: accept new errors too")
    args = ap.parse_args(argv)
    now, base = current_errors(), read_baseline()
    new = now - base
    gone = base - now
    if args.update:
        if new and not args.allow_growth:
            print(f"typecheck: {sum(new.values())} new error(s); fix them (or pass --allow-growth)")
            for key in sorted(new):
                print("  " + key)
            return 1
        write_baseline(now)
        print(f"typecheck: baseline rewritten, {sum(now.values())} accepted error(s)")
        return 0
    for key in sorted(new):
        print(f"new mypy error: {key}")
    if gone:
        print(f"typecheck: {sum(gone.values())} baseline error(s) fixed: run scripts/typecheck.py --update")
    print(f"typecheck: {sum(now.values())} error(s), {sum(new.values())} not in the baseline")
    return 1 if new else 0


if __name__ == "__main__":
    raise SystemExit(main())
