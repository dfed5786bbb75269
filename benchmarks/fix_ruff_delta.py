"""What ``rocm-lint check --fix`` costs a project that runs ruff: ruff's findings and ruff format's
changes before and after the fix, on a copy of a real tree (issue #27: "ruff check with the
project's own config and ruff format --check report nothing new after --fix").

    python benchmarks/fix_ruff_delta.py TREE [TREE ...] [--extend-select I,E501,W] [--unsafe-fixes]

Each TREE is copied twice to a temporary directory (the original is never written); one copy is
fixed with this checkout's rocm-lint.  On every file the fix changed, ruff check runs with the
project's own configuration (found from the copy, as in the project; ``--extend-select`` adds
codes) and ruff format ``--diff`` runs on both copies.  A ruff finding counts as new when its line
is one the fix touched (or next to one) and the original has no finding of that code at the same
line, or when its code occurs more often after the fix; a format change counts as new when the
fixed file has a line ruff format would rewrite that the original does not have.  Prints one JSON
object per tree; exit 1 when anything is new.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if not found:
        sys.exit("ruff is not installed (pip install ruff)")
    return found


def _changed(before: Path, after: Path):
    out = []
    for path in sorted(after.rglob("*.py")):
        rel = path.relative_to(after)
        old = before / rel
        if old.is_file() and old.read_bytes() != path.read_bytes():
            out.append(str(rel))
    return out


def _check(ruff: str, root: Path, files, extend):
    cmd = [ruff, "check", "--no-cache", "--output-format", "json", "--exit-zero", "--force-exclude"]
    if extend:
        cmd += ["--extend-select", extend]
    found = {}
    for i in range(0, len(files), 200):
        proc = subprocess.run(cmd + files[i : i + 200], cwd=root, capture_output=True, text=True)
        for d in json.loads(proc.stdout or "[]"):
            found.setdefault(os.path.relpath(d["filename"], root), []).append(
                (d["code"], d["location"]["row"])
            )
    return found


def _format(ruff: str, root: Path, rel: str) -> Counter:
    proc = subprocess.run(
        [ruff, "format", "--no-cache", "--diff", "--force-exclude", rel],
        cwd=root,
        capture_output=True,
        text=True,
    )
    return Counter(
        line[1:].strip()
        for line in proc.stdout.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )


def delta(tree: Path, extend: str = "", unsafe: bool = False) -> dict:
    ruff = _ruff()
    with tempfile.TemporaryDirectory() as tmp:
        before, after = Path(tmp) / "before", Path(tmp) / "after"
        ignore = shutil.ignore_patterns(".git", "__pycache__", ".ruff_cache", ".rocm-lint-cache")
        shutil.copytree(tree, before, ignore=ignore, symlinks=True)
        shutil.copytree(before, after, symlinks=True)
        env = dict(os.environ, PYTHONPATH=str(SRC))
        subprocess.run(
            [sys.executable, "-m", "rocm_lint", "check", "--fix", "--exit-zero", "-q", "--no-cache", "."]
            + (["--unsafe-fixes"] if unsafe else []),
            cwd=after,
            env=env,
            capture_output=True,
        )
        files = _changed(before, after)
        rb, ra = _check(ruff, before, files, extend), _check(ruff, after, files, extend)
        new, new_format = [], []
        for rel in files:
            old = (before / rel).read_text("utf-8", "replace").splitlines()
            fixed = (after / rel).read_text("utf-8", "replace").splitlines()
            touched, mapping = set(), {}
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
                None, old, fixed, autojunk=False
            ).get_opcodes():
                if tag == "equal":
                    mapping.update({j1 + k + 1: i1 + k + 1 for k in range(j2 - j1)})
                else:
                    touched.update(range(j1, j2 + 2))
            had = set(rb.get(rel, []))
            counts_before = Counter(code for code, _ in rb.get(rel, []))
            counts_after = Counter(code for code, _ in ra.get(rel, []))
            for code, row in ra.get(rel, []):
                if row in mapping and (code, mapping[row]) in had:
                    continue
                if row in touched or counts_after[code] > counts_before[code]:
                    new.append(f"{rel}:{row}: {code}")
            extra = _format(ruff, after, rel) - _format(ruff, before, rel)
            new_format += [f"{rel}: {line[:80]}" for line in extra.elements()]
        return {
            "tree": str(tree),
            "fixed_files": len(files),
            "ruff_findings_before": sum(map(len, rb.values())),
            "ruff_findings_after": sum(map(len, ra.values())),
            "new_findings": new,
            "new_format_lines": new_format,
        }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--extend-select", default="")
    parser.add_argument("--unsafe-fixes", action="store_true")
    args = parser.parse_args(argv)
    status = 0
    for tree in args.trees:
        result = delta(tree, args.extend_select, args.unsafe_fixes)
        print(json.dumps(result, indent=1))
        status |= bool(result["new_findings"] or result["new_format_lines"])
    return status


if __name__ == "__main__":
    sys.exit(main())
