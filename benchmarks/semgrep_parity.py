"""Per-rule parity of the Semgrep rules with the built-in C++ scanner, on real CUDA files.

For every ``.cu``/``.cuh``/``.hip`` file of the given trees, both tools report the C++ rules
(ROC6xx, ROC7xx):

* ``rocm-lint check --no-cache --select ROC6,ROC7 --output-format json`` (run in each tree, so
  that the tree's build files count as they do for a user);
* ``semgrep scan --config src/rocm_lint/semgrep/rocm-lint.yaml --json --scan-unknown-extensions
  --no-rewrite-rule-ids --metrics=off --disable-version-check`` on the same file list (Semgrep
  reads CUDA files only when they are named), in the same directory.

Findings are matched by (file, line, rocm-lint code); a code that several Semgrep rules share
(ROC702 per HIP header, ROC703 per fix) counts once per line, and two hazards of one rule on a
line count once for either tool. The table gives, per code: the built-in findings, the Semgrep
findings, the lines both report, the built-in only and the Semgrep only; then the files
Semgrep's C++ parser could not fully parse (PartialParsing, per tree) and any other Semgrep error.
The Semgrep rule that reads C++ structure (if any) is the only one the parse matters for.

Usage:
  python benchmarks/semgrep_parity.py [TREE ...] [--markdown] [--write docs/semgrep.md] [--list CODE]
Default trees: NVIDIA+apex, Dao-AILab+flash-attention and microsoft+DeepSpeed under
``$ROCM_LINT_TREES`` (default /work/trees). ``--write`` replaces the table between the
``<!-- parity:begin -->`` and ``<!-- parity:end -->`` lines of the page; ``--list CODE`` prints
the unmatched lines of one code (``only-builtin`` and ``only-semgrep``) to see why.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RULES = ROOT / "src" / "rocm_lint" / "semgrep" / "rocm-lint.yaml"
CUDA_SUFFIXES = (".cu", ".cuh", ".hip")
DEFAULT_TREES = ("NVIDIA+apex", "Dao-AILab+flash-attention", "microsoft+DeepSpeed")
BEGIN, END = "<!-- parity:begin -->", "<!-- parity:end -->"

Key = Tuple[str, int, str]  # (absolute path, line, code)


def cuda_files(tree: Path) -> List[str]:
    out = []
    for dirpath, dirnames, names in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        out.extend(
            os.path.relpath(os.path.join(dirpath, n), tree)
            for n in sorted(names)
            if n.endswith(CUDA_SUFFIXES)
        )
    return out


def chunks(items: List[str], size: int = 400):
    for i in range(0, len(items), size):
        yield items[i : i + size]


def run_json(cmd: List[str], cwd: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed ({proc.returncode}) in {cwd}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def builtin(tree: Path, files: List[str]) -> Set[Key]:
    found: Set[Key] = set()
    for part in chunks(files):
        cmd = [
            sys.executable,
            "-m",
            "rocm_lint",
            "check",
            "--no-cache",
            "--select",
            "ROC6,ROC7",
            "--output-format",
            "json",
            "--exit-zero",
            "--",
            *part,
        ]
        for f in run_json(cmd, tree):
            found.add((os.path.normpath(os.path.join(tree, f["filename"])), f["location"]["row"], f["code"]))
    return found


def semgrep(tree: Path, files: List[str]) -> Tuple[Set[Key], Set[str], List[str]]:
    """(findings, files with a parse error, other errors)."""
    found: Set[Key] = set()
    partial: Set[str] = set()
    other: List[str] = []
    for part in chunks(files):
        cmd = [
            str(BIN / "semgrep"),
            "scan",
            "--config",
            str(RULES),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--scan-unknown-extensions",
            "--no-rewrite-rule-ids",
            "--",
            *part,
        ]
        data = run_json(cmd, tree)
        for r in data["results"]:
            found.add(
                (
                    os.path.normpath(os.path.join(tree, r["path"])),
                    r["start"]["line"],
                    r["extra"]["metadata"]["rocm-lint-code"],
                )
            )
        for e in data["errors"]:
            kind = e.get("type")
            kind = kind[0] if isinstance(kind, list) else kind
            path = e.get("path") or (e.get("spans") or [{}])[0].get("file", "")
            if kind in ("PartialParsing", "Syntax error", "Lexical error", "Other syntax error"):
                partial.add(os.path.normpath(os.path.join(tree, path)))
            else:
                other.append(f"{kind}: {path} {e.get('message', '')[:200]}")
    return found, partial, other


def table(codes: List[str], ours: Set[Key], theirs: Set[Key]) -> List[Tuple[str, int, int, int, int, int]]:
    rows = []
    for code in codes + ["all"]:
        a = {k for k in ours if code in ("all", k[2])}
        b = {k for k in theirs if code in ("all", k[2])}
        rows.append((code, len(a), len(b), len(a & b), len(a - b), len(b - a)))
    return rows


def markdown(rows, parse_rows, command: str) -> str:
    out = [
        "| rule | built-in | semgrep | both | only built-in | only semgrep |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for code, *counts in rows:
        name = "**all**" if code == "all" else code
        out.append(f"| {name} | " + " | ".join(str(c) for c in counts) + " |")
    out.append("")
    out.append("| tree | CUDA files | Semgrep parse errors (files) | other Semgrep errors |")
    out.append("|---|---:|---:|---:|")
    for tree, n, partial, other in parse_rows:
        out.append(f"| {tree} | {n} | {partial} | {other} |")
    out.append("")
    out.append(f"Regenerate: `{command}`")
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trees", nargs="*", type=Path)
    p.add_argument("--markdown", action="store_true", help="print the markdown tables")
    p.add_argument("--write", type=Path, help="replace the table between the parity markers of this page")
    p.add_argument("--list", metavar="CODE", help="print the unmatched lines of CODE")
    args = p.parse_args()
    base = Path(os.environ.get("ROCM_LINT_TREES", "/work/trees"))
    trees = [t.resolve() for t in args.trees] or [base / t for t in DEFAULT_TREES]
    from rocm_lint.registry import all_rules  # noqa: E402 (after the arguments: --help needs no import)

    codes = sorted(r.code for r in all_rules() if r.code[:4] in ("ROC6", "ROC7"))
    ours: Set[Key] = set()
    theirs: Set[Key] = set()
    parse_rows = []
    for tree in trees:
        files = cuda_files(tree)
        o = builtin(tree, files)
        t, partial, other = semgrep(tree, files)
        ours |= o
        theirs |= t
        parse_rows.append((tree.name, len(files), len(partial), len(other)))
        for line in other[:5]:
            print(f"  {tree.name}: {line}", file=sys.stderr)
    rows = table(codes, ours, theirs)
    trees_arg = " ".join(str(t) for t in args.trees) if args.trees else ""
    command = "python benchmarks/semgrep_parity.py " + (trees_arg + " " if trees_arg else "") + "--markdown"
    text = markdown(rows, parse_rows, command)
    if args.markdown or not (args.write or args.list):
        print(text)
    if args.write:
        page = args.write.read_text("utf-8")
        pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
        if not pattern.search(page):
            sys.exit(f"{args.write}: no {BEGIN} ... {END} lines")
        args.write.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", page), "utf-8")
    if args.list:
        by_file: Dict[str, List[str]] = defaultdict(list)
        for label, keys in (("only-builtin", ours - theirs), ("only-semgrep", theirs - ours)):
            for path, line, code in sorted(keys):
                if code == args.list:
                    by_file[path].append(f"{label} {line}")
        for path, entries in sorted(by_file.items()):
            for entry in entries:
                print(f"{path}: {entry}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
