"""The fuzz targets' long run, split over many processes (for a machine with more cores).

``python benchmarks/fuzz_campaign.py --workers 14 --seconds 480 --batch 500 --out DIR`` runs
``tests/test_fuzz_targets.py``'s three targets (Python, C++, config) in parallel workers, each in
batches of ``--batch`` examples with fresh random seeds (``FUZZ_RANDOM=1``) until its time budget
is spent.  A batch that fails keeps its whole log (the falsifying example, its exception or the
NVIDIA-path violation); the summary (``summary.json`` and one line per target on stdout) counts
the inputs run, the failing batches and how they failed.  Hangs are failures of the target itself
(``FUZZ_HANG_SECONDS``), so they are counted as failing batches too.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("test_fuzz_python", "test_fuzz_cpp", "test_fuzz_config")
PASSING = re.compile(r"(\d+) passing(?: examples?)?,")


def worker(index, target, deadline, batch, out, python):
    """Batches of one target until the deadline; a batch still running then is stopped and not
    counted (so a campaign ends on time)."""
    ran, failed, logs = 0, 0, []
    env = dict(
        os.environ,
        FUZZ_EXAMPLES=str(batch),
        FUZZ_RANDOM="1",
        PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    n = 0
    while time.monotonic() < deadline:
        n += 1
        try:
            proc = subprocess.run(
                [
                    python,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--hypothesis-show-statistics",
                    f"tests/test_fuzz_targets.py::{target}",
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=max(1.0, deadline - time.monotonic()),
            )
        except subprocess.TimeoutExpired:
            break
        text = proc.stdout + proc.stderr
        counts = [int(m) for m in PASSING.findall(text)]
        ran += max(counts) if counts else 0
        if proc.returncode != 0:
            failed += 1
            log = out / f"fail-{target}-{index}-{n}.log"
            log.write_text(text)
            logs.append(log.name)
    return target, ran, failed, logs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--seconds", type=float, default=480)
    ap.add_argument("--batch", type=int, default=400, help="examples per C++/config batch")
    ap.add_argument(
        "--python-batch",
        type=int,
        default=60,
        help="examples per Python batch (each generated program is fixed and verified: slower)",
    )
    ap.add_argument("--out", type=Path, default=Path("fuzz-campaign"))
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.seconds
    started = time.time()
    with ThreadPoolExecutor(args.workers) as pool:
        jobs = [
            pool.submit(
                worker,
                i,
                TARGETS[i % len(TARGETS)],
                deadline,
                args.python_batch if TARGETS[i % len(TARGETS)] == "test_fuzz_python" else args.batch,
                args.out,
                args.python,
            )
            for i in range(args.workers)
        ]
        results = [j.result() for j in jobs]
    summary = {}
    for target, ran, failed, logs in results:
        s = summary.setdefault(target, {"inputs": 0, "failing_batches": 0, "logs": []})
        s["inputs"] += ran
        s["failing_batches"] += failed
        s["logs"] += logs
    summary["_total_inputs"] = sum(v["inputs"] for k, v in summary.items() if not k.startswith("_"))
    summary["_wall_seconds"] = round(time.time() - started, 1)
    summary["_workers"] = args.workers
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    for target in TARGETS:
        s = summary.get(target, {"inputs": 0, "failing_batches": 0})
        print(f"{target}: {s['inputs']} inputs, {s['failing_batches']} failing batches")
    print(
        f"total: {summary['_total_inputs']} inputs in {summary['_wall_seconds']} s on {args.workers} workers"
    )
    return 1 if any(v["failing_batches"] for k, v in summary.items() if not k.startswith("_")) else 0


if __name__ == "__main__":
    sys.exit(main())
