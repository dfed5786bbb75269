"""Speed of the Python analyser against its peers, in one run, on real code.

Corpus: the Python sources of the torch 2.13.0 wheel (``pip download`` is served
from disk here), unpacked outside the repository.  Compared in the same run:

* ``rocm-lint check --no-cache`` on the whole tree (the product, all rules, default jobs), and
  the same run warm (the content cache filled by a first run);
* ``ruff check --no-cache --select E9`` (parse-only in Rust: the speed floor to beat), and warm;
* ``ast.parse`` of every file in one Python process (what a naive linter pays);
* ``rocm-lint check`` on one file (start-up dominated: an editor or pre-commit run).

Prints wall times (best of N) and ratios; targets: tree within 3x ruff, one file < 150 ms.
Usage: python benchmarks/bench_python.py [--corpus DIR] [--repeat N]
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
from pathlib import Path

DEFAULT_CORPUS = Path(os.environ.get("ROCM_LINT_BENCH_DIR", Path(tempfile.gettempdir()) / "rocm-lint-bench"))
SINGLE_FILE = "torch/_inductor/config.py"


def ensure_corpus(root: Path) -> Path:
    tree = root / "torch-2.13.0"
    if (tree / "torch").is_dir():
        return tree
    root.mkdir(parents=True, exist_ok=True)
    wheels = glob.glob(str(root / "torch-2.13.0*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "torch==2.13.0", "-d", str(root)], check=True)
        wheels = glob.glob(str(root / "torch-2.13.0*.whl"))
    with zipfile.ZipFile(wheels[0]) as zf:
        for name in zf.namelist():
            if name.endswith(".py"):
                zf.extract(name, tree)
    return tree


# Installed packages run from compiled bytecode: a PYTHONDONTWRITEBYTECODE environment (CI images)
# would make every timed run compile rocm-lint's sources again (~130 ms of a one-file check).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_of(cmd, repeat: int, cwd=None) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return min(times)


AST_ONLY = """
import ast, os, sys
n = 0
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if f.endswith('.py'):
            with open(os.path.join(d, f), 'rb') as fh:
                src = fh.read()
            try:
                ast.parse(src)
            except SyntaxError:
                pass
            n += 1
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    tree = ensure_corpus(args.corpus)
    files = [os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs if f.endswith(".py")]
    size_mb = sum(os.path.getsize(f) for f in files) / 1e6
    bin_dir = Path(sys.executable).parent
    rocm_lint = [str(bin_dir / "rocm-lint")] if (bin_dir / "rocm-lint").exists() else [sys.executable, "-m", "rocm_lint"]
    ruff = shutil.which("ruff", path=str(bin_dir)) or shutil.which("ruff")
    if ruff is None:
        raise SystemExit("ruff is not installed: pip install ruff (make bench does)")

    print(f"corpus: {tree} ({len(files)} Python files, {size_mb:.1f} MB), {os.cpu_count()} CPUs, best of {args.repeat}")
    check = rocm_lint + ["check", "--quiet", "--exit-zero", "--output-format", "concise"]
    best_of(check + ["--no-cache", str(tree / SINGLE_FILE)], 1)  # untimed: writes the bytecode
    t_ours = best_of(check + ["--no-cache", str(tree)], args.repeat)
    cache = tempfile.mkdtemp(prefix="rocm-lint-bench-cache-")
    ruff_cache = tempfile.mkdtemp(prefix="ruff-bench-cache-")
    try:
        best_of(check + ["--cache-dir", cache, str(tree)], 1)  # fill the cache
        t_warm = best_of(check + ["--cache-dir", cache, str(tree)], args.repeat)
        ruff_e9 = [ruff, "check", "--select", "E9", "--exit-zero", "--quiet"]
        best_of(ruff_e9 + ["--cache-dir", ruff_cache, str(tree)], 1)
        t_ruff_warm = best_of(ruff_e9 + ["--cache-dir", ruff_cache, str(tree)], args.repeat)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(ruff_cache, ignore_errors=True)
    # The first rule set (the engine issue's seven rules): shows what the later, heuristic-heavy
    # rules (fp8, warp width, build flags) cost on a corpus that implements those features.
    core = "ROC101,ROC201,ROC203,ROC204,ROC205,ROC301,ROC401"
    t_core = best_of(rocm_lint + ["check", "--quiet", "--exit-zero", "--no-cache", "--select", core, str(tree)],
                     args.repeat)
    t_ruff = best_of([ruff, "check", "--no-cache", "--select", "E9", "--exit-zero", "--quiet", str(tree)], args.repeat)
    t_ast = best_of([sys.executable, "-c", AST_ONLY, str(tree)], args.repeat)
    one = tree / SINGLE_FILE
    t_one = best_of(rocm_lint + ["check", "--quiet", "--exit-zero", "--no-cache", str(one)], max(args.repeat, 5))

    rows = [
        ("rocm-lint check --no-cache (tree, every rule)", t_ours),
        ("rocm-lint check, warm cache (tree)", t_warm),
        ("rocm-lint check --select <7 core rules> (tree)", t_core),
        ("ruff check --no-cache --select E9 (tree)", t_ruff),
        ("ruff check --select E9, warm cache (tree)", t_ruff_warm),
        ("ast.parse every file (1 process)", t_ast),
        (f"rocm-lint check {SINGLE_FILE}", t_one),
    ]
    for name, t in rows:
        print(f"  {name:<48} {t * 1000:8.0f} ms")
    print(f"ratio rocm-lint / ruff E9 (tree):   {t_ours / t_ruff:5.2f}x   (target <= 3x)")
    print(f"warm / cold rocm-lint:              {t_warm / t_ours:5.1%}   (target <= 10%; ruff {t_ruff_warm / t_ruff:.1%})")
    print(f"ratio core rules / ruff E9 (tree):  {t_core / t_ruff:5.2f}x")
    print(f"ratio rocm-lint / ast.parse (tree): {t_ours / t_ast:5.2f}x")
    print(f"throughput rocm-lint: {size_mb / t_ours:.1f} MB/s; one file: {t_one * 1000:.0f} ms (target < 150 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
