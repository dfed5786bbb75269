"""What fixes cost, as ratios to a check in the same run (issue #27, "Fixes computed once, and fast").

* **JSON/concise, warm**: ``rocm-lint check`` of a tree with ``--output-format json`` (and
  ``sarif``) against ``concise``, all with the content cache filled by a first run of each: the
  verified edits JSON and SARIF carry are kept in the cache with the findings.
* **--fix/check**: ``rocm-lint check --no-cache --fix`` against ``rocm-lint check --no-cache``,
  each on a fresh copy of the tree (the fix writes).
* **quick-fix latency**: the language server's quick fix for one finding
  (``server.fix_edits``, else ``fix.api.edits_for``) in a generated 3,000-line module, first on
  each new text (median over texts that differ by a comment) and again on the same text.

The tree is ``--tree PATH`` (a project with fixable Python findings: diffusers' ``examples/``
is the one the issue measured), else the diffusers wheel of ``bench_python.py``.  Commands that
are compared run alternately, each figure is the best of N (``--repeat``), so a slow spell of
the machine hits both sides of a ratio; ratios, not seconds, carry across machines.

Usage: python benchmarks/bench_fix.py [--tree PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def rocm_lint(*args: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rocm_lint", "check", *args, "--exit-zero", "-q"],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def warm_ratios(tree: Path, repeat: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="rocm-lint-bench-warm-"))
    try:
        copy = work / "tree"
        shutil.copytree(tree, copy)
        formats = ("concise", "json", "sarif")
        for fmt in formats:  # fill the cache (JSON and SARIF keep their edits in it)
            rocm_lint(".", "--output-format", fmt, cwd=copy)
        best = {fmt: float("inf") for fmt in formats}
        for _ in range(repeat):
            for fmt in formats:
                best[fmt] = min(best[fmt], rocm_lint(".", "--output-format", fmt, cwd=copy))
        return best
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fix_ratio(tree: Path, repeat: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="rocm-lint-bench-fix-"))
    best = {"check": float("inf"), "fix": float("inf")}
    try:
        for r in range(repeat):
            for kind in ("check", "fix"):
                copy = work / f"{kind}-{r}"
                shutil.copytree(tree, copy)
                extra = ("--fix",) if kind == "fix" else ()
                best[kind] = min(best[kind], rocm_lint(".", "--no-cache", *extra, cwd=copy))
        return best
    finally:
        shutil.rmtree(work, ignore_errors=True)


def generated_module(lines: int = 3000, salt: int = 0) -> str:
    """A training script's shape: helpers, then a long ``main()`` holding one TF32 switch."""
    out = [f"# variant {salt}", "import argparse", "import os", "", "import torch", "", ""]
    n = 0
    while len(out) < lines // 2:
        out += [
            f"def helper_{n}(x, y=1):",
            f"    z = x * {n} + y",
            "    if z > 3:",
            "        return z - 1",
            "    return [z for _ in range(2)]",
            "",
            "",
        ]
        n += 1
    out += ["def main():", "    parser = argparse.ArgumentParser()", "    args = parser.parse_args()"]
    k = 0
    while len(out) < lines - 10:
        out += [
            f"    value_{k} = helper_{k % n}({k}, y=len(args.__dict__))",
            f"    if value_{k} > {k}:",
            f"        print('step', value_{k})",
        ]
        k += 1
        if k == 150:
            out.append("    torch.backends.cuda.matmul.allow_tf32 = True")
    out += ["", "", "if __name__ == '__main__':", "    main()", ""]
    return "\n".join(out)


def quick_fix(samples: int) -> dict:
    from rocm_lint.config import Config
    from rocm_lint.engine import check_python_source

    try:
        from rocm_lint.server import fix_edits
    except ImportError:  # pygls not installed: the function the server calls
        from rocm_lint.fix.api import edits_for as fix_edits
    import inspect

    params = inspect.signature(fix_edits).parameters
    keeps = "checked" in params  # kept per check of a text
    # the server's per-document store of worked-out edits (since the Workspace: handed in, not module state)
    extra = {"store": {}} if "store" in params else {}
    config = Config()
    folder = tempfile.mkdtemp(prefix="rocm-lint-bench-quickfix-")  # a project of one module
    path = os.path.join(folder, "train.py")
    first, again = [], []
    for salt in range(samples):
        text = generated_module(salt=salt)
        findings = check_python_source(path, text, config)
        target = next(f for f in findings if f.code == "ROC101")
        for times in (first, again):
            start = time.perf_counter()
            edits = (
                fix_edits(path, text, target, config, findings, **extra)
                if keeps
                else fix_edits(path, text, target, config)
            )
            times.append(time.perf_counter() - start)
            assert edits, "the quick fix should have edits"
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "lines": len(generated_module().splitlines()),
        "first_median": statistics.median(first),
        "again_median": statistics.median(again),
    }


def default_tree() -> Path:
    sys.path.insert(0, str(HERE))
    from bench_python import ensure_corpus

    return ensure_corpus("diffusers")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="a project with fixable Python findings")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick-fix-samples", type=int, default=7)
    args = parser.parse_args()
    tree = (args.tree or default_tree()).resolve()
    print(f"fix benchmarks on {tree} (best of {args.repeat}, alternating)")
    warm = warm_ratios(tree, args.repeat)
    print(
        f"  warm cache: concise {warm['concise']:.2f} s, json {warm['json']:.2f} s, sarif {warm['sarif']:.2f} s"
    )
    print(
        f"  JSON/concise warm ratio: {warm['json'] / warm['concise']:.2f}x "
        f"(SARIF/concise {warm['sarif'] / warm['concise']:.2f}x)"
    )
    fix = fix_ratio(tree, args.repeat)
    print(f"  check --no-cache {fix['check']:.2f} s, --fix --no-cache {fix['fix']:.2f} s")
    print(f"  --fix/check ratio: {fix['fix'] / fix['check']:.2f}x")
    quick = quick_fix(args.quick_fix_samples)
    print(
        f"  quick fix on a {quick['lines']}-line module: {quick['first_median'] * 1000:.0f} ms median on a new "
        f"text, {quick['again_median'] * 1000:.1f} ms asked again"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
