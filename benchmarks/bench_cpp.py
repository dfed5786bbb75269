"""Speed of the CUDA/C++ scanner on real CUDA code, against its peers, in one run.

Corpus: the C/C++/CUDA sources of real repositories unpacked outside this repository (by
default FBGEMM, NVIDIA/apex and Dao-AILab/flash-attention under
``$ROCM_LINT_BENCH_DIR/cpp`` or ``/tmp/rocm-lint-bench/cpp``; ``--corpus DIR`` takes any tree;
when the default corpus is missing the script clones the three with ``git clone --depth 1``).
Measured on the same files, best of N:

* ``rocm-lint check --select ROC6,ROC7`` on the trees (the product: discovery, device-code
  filter, lexer, #if model, rules), default jobs and ``-j 1``;
* the scanner in one process (``engine.check_source`` per file: no start-up, no discovery);
* the lexer alone and lexer + preprocessor model;
* pygments' ``CudaLexer`` (the oracle the tests compare with) on a sample of the files.

MB/s are over all C/C++ bytes of the corpus (the product skips .cpp/.h files without device code:
those are reported too).  Target: the in-process scanner at 20 MB per CPU second or more on 2 cores
(the in-process rows are CPU time; the scanner runs with one ``Workspace`` per run, as a CLI run).
With ``--baseline-src DIR`` (another checkout's ``src/``, e.g. a ``git worktree`` of main) the
CLI rows of both are run alternately (a slow spell of the machine hits both) and their ratio
printed.  The CLI runs with byte-code cached (``PYTHONDONTWRITEBYTECODE`` dropped): an installed
rocm-lint has its ``.pyc`` files, and compiling ~100 modules in each worker is not the scanner.
Usage: python benchmarks/bench_cpp.py [--corpus DIR ...] [--repeat N] [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_ROOT = (
    Path(os.environ.get("ROCM_LINT_BENCH_DIR", Path(tempfile.gettempdir()) / "rocm-lint-bench")) / "cpp"
)
UPSTREAMS = {
    "FBGEMM": "https://github.com/pytorch/FBGEMM",
    "apex": "https://github.com/NVIDIA/apex",
    "flash-attention": "https://github.com/Dao-AILab/flash-attention",
}
SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".inl")


def ensure_corpus(root: Path):
    trees = []
    for name, url in UPSTREAMS.items():
        tree = root / name
        if not tree.is_dir():
            root.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(["git", "clone", "--quiet", "--depth", "1", url, str(tree)])
            if proc.returncode != 0:
                sys.exit(f"cannot fetch {url}; unpack it under {root} or pass --corpus DIR")
        trees.append(tree)
    return trees


def read_corpus(trees):
    files = []
    for tree in trees:
        for dirpath, _, names in os.walk(tree):
            for n in names:
                if n.endswith(SUFFIXES):
                    p = os.path.join(dirpath, n)
                    with open(p, "rb") as fh:
                        data = fh.read()
                    if b"\0" not in data:
                        files.append((p, data.decode("utf-8", errors="replace")))
    return files


SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def alternating(fns, repeat: int):
    """(best wall time, best child CPU time) of each of ``fns``, run in turn ``repeat`` times.
    On a shared machine the CPU time is the steadier measure: waiting for a core is not counted."""
    best = [float("inf")] * len(fns)
    cpu = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0, c0 = time.perf_counter(), children_cpu()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
            cpu[i] = min(cpu[i], children_cpu() - c0)
    return best, cpu


def best_of(fn, repeat: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", action="append", type=Path, help="a tree of C++/CUDA sources (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--no-profile", action="store_true", help="no profile of what is left under a goal not met"
    )
    ap.add_argument(
        "--baseline-src", type=Path, help="another checkout's src/: its CLI rows, run alternately"
    )
    args = ap.parse_args()
    trees = args.corpus or ensure_corpus(DEFAULT_ROOT)

    from rocm_lint.config import Config
    from rocm_lint.cpp.lexer import lex
    from rocm_lint.cpp.preproc import analyse
    from rocm_lint.cpp.scanner import holds_device_code
    from rocm_lint.engine import check_source

    files = read_corpus(trees)
    mb = sum(len(t.encode("utf-8")) for _, t in files) / 1e6
    device = [(p, t) for p, t in files if p.endswith((".cu", ".cuh", ".hip")) or holds_device_code(t)]
    mb_device = sum(len(t.encode("utf-8")) for _, t in device) / 1e6
    print(f"corpus: {', '.join(str(t) for t in trees)}")
    print(f"{len(files)} C/C++ files, {mb:.1f} MB; {len(device)} hold device code ({mb_device:.1f} MB)\n")
    config = Config()
    rows = []

    def run_cli(*extra, src=SRC):
        cmd = [
            sys.executable,
            "-m",
            "rocm_lint",
            "check",
            "--no-cache",
            "--select",
            "ROC6,ROC7",
            "--exit-zero",
            "-q",
            "--output-format",
            "concise",
            *extra,
            *map(str, trees),
        ]
        env = dict(
            ENV,
            PYTHONPATH=os.pathsep.join([str(src)] + ([ENV["PYTHONPATH"]] if ENV.get("PYTHONPATH") else [])),
        )
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)

    if args.baseline_src:
        base = args.baseline_src.resolve()
        (new_j, old_j, new_1, old_1), cpu = alternating(
            [
                run_cli,
                lambda: run_cli(src=base),
                lambda: run_cli("-j", "1"),
                lambda: run_cli("-j", "1", src=base),
            ],
            args.repeat,
        )
        rows.append(("rocm-lint check (default jobs)", new_j, mb))
        rows.append(("rocm-lint check -j 1", new_1, mb))
        rows.append((f"baseline {base.parent.name} (default jobs)", old_j, mb))
        rows.append((f"baseline {base.parent.name} -j 1", old_1, mb))
        print(
            f"this checkout / baseline, alternating, best of {args.repeat}: wall time default jobs "
            f"{new_j / old_j:.2f}x, -j 1 {new_1 / old_1:.2f}x; CPU time default jobs {cpu[0] / cpu[1]:.2f}x "
            f"({cpu[0]:.2f} s / {cpu[1]:.2f} s), -j 1 {cpu[2] / cpu[3]:.2f}x ({cpu[2]:.2f} s / {cpu[3]:.2f} s: "
            f"{mb / cpu[2]:.1f} / {mb / cpu[3]:.1f} MB per CPU second)\n"
        )
    else:
        rows.append(("rocm-lint check (default jobs)", best_of(run_cli, args.repeat), mb))
        rows.append(("rocm-lint check -j 1", best_of(lambda: run_cli("-j", "1"), args.repeat), mb))
    from rocm_lint.workspace import Workspace

    def in_process():
        # one workspace per run, as a CLI run has: without one, every file got a fresh workspace
        # and re-read the project's build files and header index (~35x slower than a real run)
        ws = Workspace()
        for p, t in files:
            check_source(p, t, config, workspace=ws)

    # the in-process rows are CPU time of this process (a shared machine's waits are not counted)
    clock = time.process_time
    rows.append(("scanner in-process (CPU)", best_of(in_process, args.repeat, clock), mb))
    rows.append(("lexer (CPU)", best_of(lambda: [lex(t) for _, t in device], args.repeat, clock), mb_device))
    rows.append(
        (
            "lexer + #if model (CPU)",
            best_of(lambda: [analyse(t) for _, t in device], args.repeat, clock),
            mb_device,
        )
    )
    try:
        from pygments.lexers import CudaLexer

        sample = device[: max(1, len(device) // 20)]
        mb_sample = sum(len(t.encode("utf-8")) for _, t in sample) / 1e6
        lexer = CudaLexer()
        rows.append(
            (
                f"pygments CudaLexer ({len(sample)}-file sample)",
                best_of(lambda: [list(lexer.get_tokens(t)) for _, t in sample], 1),
                mb_sample,
            )
        )
    except ImportError:
        print("pygments not installed: its row is skipped")

    scanner_row = next(r for r in rows if r[0].startswith("scanner in-process"))
    scanner = scanner_row[2] / scanner_row[1]
    print(f"{'tool':44s} {'MB':>6s} {'s':>7s} {'MB/s':>7s} {'vs scanner':>10s}")
    for name, seconds, size in rows:
        rate = size / seconds
        print(f"{name:44s} {size:6.1f} {seconds:7.2f} {rate:7.1f} {rate / scanner:9.2f}x")
    # the target reads CPU time (the in-process scanner): a shared machine's waits inflate wall time
    target = scanner_row[2] / scanner_row[1]
    print(
        f"\ntarget: the scanner >= 20 MB per CPU second on this machine ({os.cpu_count()} cores): "
        f"{'MET' if target >= 20 else 'NOT MET'} ({target:.1f} MB/s in-process"
        + (f", {mb / cpu[2]:.1f} MB per CPU second for check -j 1)" if args.baseline_src else ")")
    )
    if target < 20 and not args.no_profile:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import leftover

        print("what is left, by profile of the in-process scanner (one pass over the corpus):")
        print("\n".join(leftover.render(leftover.profile_checks([p for p, _ in files], warm=False))))
        print(f"the design that would meet it: {leftover.DESIGN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
