"""Speed of the Python analyser against its peers, in one run, on real code.

Corpora: the Python sources of the torch 2.13.0 wheel and of the diffusers 0.42.1 wheel
(``pip download``; torch is served from disk on the project's machines), unpacked outside the
repository under ``$ROCM_LINT_BENCH_DIR`` (default ``/tmp/rocm-lint-bench``).  Compared in the same
run, on each corpus:

* ``rocm-lint check --no-cache`` on the whole tree (the product, every rule, default jobs), and
  the same run warm (the content cache filled by a first run);
* ``ruff check --no-cache --select E9`` (parse-only in Rust: the floor to compare with), and warm;
* ``ast.parse`` of every file in one Python process (what a linter that parses everything pays);
* on a fixed eighth of the files (flake8 and TorchFix are slow): ``flake8 --select E9`` from a
  virtual environment without rocm-lint, the same with rocm-lint's plugin installed (ROC not
  selected), ``flake8 --select E9,ROC``, TorchFix (LibCST, its default rules) and rocm-lint;
* on torch: a scaling table (1/8, 1/4, 1/2 and all of the files, nested samples) and one file
  (start-up dominated: an editor or pre-commit run).

Commands that are compared run alternately (round-robin), and each figure is the best of N, so a
slow spell of the machine hits both sides of a ratio.  Ratios, not seconds, carry across machines.
flake8 and TorchFix get virtual environments of their own under ``$ROCM_LINT_BENCH_DIR/tools``.

Under a goal it does not meet (3x ruff E9) it prints the profile of what is left
(``benchmarks/leftover.py``) and where the design that would meet it is written.

Usage: python benchmarks/bench_python.py [--repeat N] [--corpus torch|diffusers ...] [--no-peers] [--no-profile]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leftover  # noqa: E402  (benchmarks/leftover.py: the profile of what is left)

DESIGN = leftover.DESIGN

ROOT = Path(os.environ.get("ROCM_LINT_BENCH_DIR", Path(tempfile.gettempdir()) / "rocm-lint-bench"))
# name -> (pip requirement, tree directory, one file for the start-up row or None)
CORPORA = {
    "torch": ("torch==2.13.0", "torch-2.13.0", "torch/_inductor/config.py"),
    "diffusers": ("diffusers==0.42.1", "diffusers-0.42.1", None),
}
TORCHFIX = "torchfix==0.7.0"
SUBSET = 8  # flake8 runs on one file in SUBSET
TORCHFIX_SUBSET = 32  # TorchFix (LibCST) is two orders of magnitude slower: one file in 32
CORE = "ROC101,ROC201,ROC203,ROC204,ROC205,ROC301,ROC401"  # the engine issue's first seven rules

# Installed packages run from compiled bytecode: a PYTHONDONTWRITEBYTECODE environment (CI images)
# would make every timed run compile rocm-lint's sources again (~130 ms of a one-file check).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def ensure_corpus(name: str) -> Path:
    requirement, dirname, _ = CORPORA[name]
    tree = ROOT / dirname
    if (tree / name).is_dir():
        return tree
    ROOT.mkdir(parents=True, exist_ok=True)
    pattern = str(ROOT / f"{dirname}*.whl")
    if not glob.glob(pattern):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", requirement, "-d", str(ROOT)],
            check=True,
        )
    with zipfile.ZipFile(sorted(glob.glob(pattern))[0]) as zf:
        for member in zf.namelist():
            if member.endswith(".py"):
                zf.extract(member, tree)
    return tree


def python_files(tree: Path):
    return sorted(
        os.path.relpath(os.path.join(d, f), tree)
        for d, _, fs in os.walk(tree)
        for f in fs
        if f.endswith(".py")
    )


BUCKETS = 64


def _bucket(relpath: str) -> int:
    """A fixed pseudo-random bucket per path (FNV-1a, the same on every machine): nested samples."""
    h = 2166136261
    for byte in relpath.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h % BUCKETS


def sample(tree: Path, fraction: int) -> Path:
    """The files of ``tree`` whose bucket is below BUCKETS/fraction, hard-linked into a sibling tree."""
    if fraction == 1:
        return tree
    out = tree.parent / f"{tree.name}-{fraction}ths"
    if out.is_dir():
        return out
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=tree.parent))
    for rel in python_files(tree):
        if _bucket(rel) < BUCKETS // fraction:
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(tree / rel, target)
            except OSError:
                shutil.copy2(tree / rel, target)
    os.replace(tmp, out)
    return out


def tree_size(tree: Path):
    files = python_files(tree)
    return len(files), sum(os.path.getsize(tree / f) for f in files) / 1e6


def ensure_venv(name: str, requirement: str) -> Path:
    """A virtual environment of its own for a peer tool (bin directory)."""
    venv = ROOT / "tools" / name
    bin_dir = venv / "bin"
    stamp = venv / ".installed"
    if not stamp.exists() or stamp.read_text() != requirement:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", requirement], check=True)
        stamp.write_text(requirement)
    return bin_dir


def race(commands, repeat: int, cwd=None):
    """Best wall time of each command over ``repeat`` rounds; the commands alternate within a round."""
    best = {name: float("inf") for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            start = time.perf_counter()
            proc = subprocess.run(
                cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV
            )
            best[name] = min(best[name], time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"{name}: {cmd[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return best


AST_ONLY = """
import ast, os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if f.endswith('.py'):
            with open(os.path.join(d, f), 'rb') as fh:
                src = fh.read()
            try:
                ast.parse(src)
            except SyntaxError:
                pass
"""


class Report:
    def row(self, name: str, seconds: float, note: str = ""):
        self.say(f"  {name:<58} {seconds * 1000:8.0f} ms  {note}".rstrip())

    def rows(self, times, labelled):
        """A row per (label, key of ``times``)."""
        for name, key in labelled:
            self.row(name, times[key])

    def say(self, line: str = ""):
        print(line, flush=True)


def bench_corpus(name, tools, args, report: Report):
    tree = ensure_corpus(name)
    n, mb = tree_size(tree)
    report.say(f"corpus {name}: {tree} ({n} Python files, {mb:.1f} MB)")
    rocm = tools["rocm-lint"] + ["check", "--quiet", "--exit-zero", "--output-format", "concise"]
    ruff_e9 = [tools["ruff"], "check", "--select", "E9", "--exit-zero", "--quiet"]
    cache = tempfile.mkdtemp(prefix="rocm-lint-bench-cache-")
    ruff_cache = tempfile.mkdtemp(prefix="ruff-bench-cache-")
    try:
        race(
            {
                "fill": rocm + ["--cache-dir", cache, str(tree)],
                "fill-ruff": ruff_e9 + ["--cache-dir", ruff_cache, str(tree)],
            },
            1,
        )  # and writes bytecode
        t = race(
            {
                "ours": rocm + ["--no-cache", str(tree)],
                "ruff": ruff_e9 + ["--no-cache", str(tree)],
                "ours-warm": rocm + ["--cache-dir", cache, str(tree)],
                "ruff-warm": ruff_e9 + ["--cache-dir", ruff_cache, str(tree)],
                "core": rocm + ["--no-cache", "--select", CORE, str(tree)],
                "ast": [sys.executable, "-c", AST_ONLY, str(tree)],
            },
            args.repeat,
        )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(ruff_cache, ignore_errors=True)
    report.rows(
        t,
        [
            ("rocm-lint check --no-cache (every rule, default jobs)", "ours"),
            ("rocm-lint check, warm cache", "ours-warm"),
            ("rocm-lint check --select <7 core rules>", "core"),
            ("ruff check --no-cache --select E9", "ruff"),
            ("ruff check --select E9, warm cache", "ruff-warm"),
            ("ast.parse every file (1 process)", "ast"),
        ],
    )
    report.say(f"  ratio rocm-lint / ruff E9:          {t['ours'] / t['ruff']:6.2f}x  (target <= 3x)")
    report.say(f"  ratio rocm-lint / ast.parse:        {t['ours'] / t['ast']:6.2f}x  (target < 1x)")
    report.say(f"  ratio core rules / ruff E9:         {t['core'] / t['ruff']:6.2f}x")
    report.say(
        f"  warm / cold rocm-lint:              {t['ours-warm'] / t['ours']:6.1%}   "
        f"(target <= 10%; ruff's {t['ruff-warm'] / t['ruff']:.1%})"
    )
    report.say(f"  throughput rocm-lint: {mb / t['ours']:.1f} MB/s")
    if t["ours"] / t["ruff"] > 3 and not args.no_profile:
        report.say("  goal not met (<= 3x ruff E9); what is left, by profile of a one-process run:")
        for line in leftover.render(leftover.profile(str(tree), [])):
            report.say(line)
        report.say(f"    the design that would meet it: {DESIGN}")

    if tools.get("flake8-plain"):
        part = sample(tree, SUBSET)
        pn, pmb = tree_size(part)
        report.say(f"  -- one file in {SUBSET}: {pn} files, {pmb:.1f} MB (flake8 default jobs)")
        p = race(
            {
                "plain": [tools["flake8-plain"], "--select", "E9", "--exit-zero", str(part)],
                "plugin": [tools["flake8"], "--select", "E9", "--exit-zero", str(part)],
                "roc": [tools["flake8"], "--select", "E9,ROC", "--exit-zero", str(part)],
                "ours": rocm + ["--no-cache", str(part)],
                "ruff": ruff_e9 + ["--no-cache", str(part)],
            },
            args.repeat,
        )
        report.rows(
            p,
            [
                ("flake8 --select E9, without rocm-lint", "plain"),
                ("flake8 --select E9, rocm-lint's plugin installed", "plugin"),
                ("flake8 --select E9,ROC", "roc"),
                ("rocm-lint check --no-cache", "ours"),
                ("ruff check --no-cache --select E9", "ruff"),
            ],
        )
        report.say(
            f"  flake8 plugin cost, ROC not selected: {p['plugin'] / p['plain'] - 1:+6.1%}  (target <= 5%)"
        )
        report.say(
            f"  flake8 plugin cost, ROC selected:     {p['roc'] / p['plain'] - 1:+6.1%}  (target <= 10%)"
        )
        small = sample(tree, TORCHFIX_SUBSET)
        sn, smb = tree_size(small)
        report.say(f"  -- one file in {TORCHFIX_SUBSET}: {sn} files, {smb:.1f} MB (TorchFix default jobs)")
        q = race(
            {"torchfix": [tools["torchfix"], str(small)], "ours": rocm + ["--no-cache", str(small)]},
            args.repeat,
        )
        report.row("torchfix (its default rules)", q["torchfix"])
        report.row("rocm-lint check --no-cache", q["ours"])
        report.say(f"  ratio torchfix / rocm-lint:           {q['torchfix'] / q['ours']:6.1f}x")
    return tree


def bench_scaling(tree, tools, args, report: Report):
    rocm = tools["rocm-lint"] + [
        "check",
        "--quiet",
        "--exit-zero",
        "--no-cache",
        "--output-format",
        "concise",
    ]
    ruff_e9 = [tools["ruff"], "check", "--select", "E9", "--exit-zero", "--quiet", "--no-cache"]
    report.say(f"scaling on {tree.name} (nested samples; rocm-lint and ruff E9 cold, default jobs)")
    report.say(
        f"  {'sample':>8} {'files':>6} {'MB':>6} {'rocm-lint ms':>13} {'ms/MB':>7} {'ruff ms':>8} {'ratio':>6}"
    )
    for fraction in (8, 4, 2, 1):
        part = sample(tree, fraction)
        n, mb = tree_size(part)
        t = race({"ours": rocm + [str(part)], "ruff": ruff_e9 + [str(part)]}, args.repeat)
        report.say(
            f"  {'1/' + str(fraction) if fraction > 1 else 'all':>8} {n:6d} {mb:6.1f} {t['ours'] * 1000:13.0f} "
            f"{t['ours'] * 1000 / mb:7.0f} {t['ruff'] * 1000:8.0f} {t['ours'] / t['ruff']:5.2f}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="default: all")
    parser.add_argument(
        "--no-peers", action="store_true", help="skip flake8 and TorchFix (no virtual environments)"
    )
    parser.add_argument(
        "--no-profile", action="store_true", help="no profile of what is left under a goal not met"
    )
    args = parser.parse_args()

    bin_dir = Path(sys.executable).parent
    tools = {
        "rocm-lint": [str(bin_dir / "rocm-lint")]
        if (bin_dir / "rocm-lint").exists()
        else [sys.executable, "-m", "rocm_lint"],
        "ruff": shutil.which("ruff", path=str(bin_dir)) or shutil.which("ruff"),
        "flake8": shutil.which("flake8", path=str(bin_dir)) or shutil.which("flake8"),
    }
    if tools["ruff"] is None:
        raise SystemExit("ruff is not installed: pip install ruff (make bench does)")
    if not args.no_peers:
        if tools["flake8"] is None:
            raise SystemExit("flake8 is not installed beside rocm-lint (it is a dependency)")
        tools["flake8-plain"] = str(
            ensure_venv("flake8-plain", f"flake8=={metadata.version('flake8')}") / "flake8"
        )
        tools["torchfix"] = str(ensure_venv("torchfix", TORCHFIX) / "torchfix")

    report = Report()
    report.say(
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, best of {args.repeat} "
        f"(compared commands run alternately)"
    )
    trees = {}
    for name in args.corpus or CORPORA:
        trees[name] = bench_corpus(name, tools, args, report)
    if "torch" in trees:
        bench_scaling(trees["torch"], tools, args, report)
        one = trees["torch"] / CORPORA["torch"][2]
        rocm = tools["rocm-lint"] + [
            "check",
            "--quiet",
            "--exit-zero",
            "--no-cache",
            "--output-format",
            "concise",
        ]
        t = race(
            {
                "ours": rocm + [str(one)],
                "ruff": [
                    tools["ruff"],
                    "check",
                    "--select",
                    "E9",
                    "--exit-zero",
                    "--quiet",
                    "--no-cache",
                    str(one),
                ],
            },
            max(args.repeat, 5),
        )
        report.row(f"rocm-lint check {CORPORA['torch'][2]}", t["ours"], "(target <= 100 ms)")
        report.row(f"ruff check --select E9 {CORPORA['torch'][2]}", t["ruff"])
        if t["ours"] > 0.1 and not args.no_profile:
            report.say(
                "  goal not met (<= 100 ms); what is left, by profile (imports after rocm_lint.cli's own):"
            )
            for line in leftover.render(leftover.profile(str(one), [])):
                report.say(line)
            report.say(f"    the design that would meet it: {DESIGN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
