"""On an NVIDIA GPU: run model_script.py and its `rocm-lint --fix` output, several times each,
alternating, and compare: outputs bit-identical, same TF32 / Inductor settings, step time.

model_script_fixed.py is produced by `rocm-lint check --fix` (tests/test_fixes.py keeps it in
sync), so this machine needs only torch.  Usage: python benchmarks/gpu_fix/run.py [RUNS]
"""

import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, out: Path) -> dict:
    proc = subprocess.run([sys.executable, str(HERE / script), str(out)], capture_output=True, text=True, check=True)
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    return info


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    results = {"original": [], "fixed": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for name, script in (("original", "model_script.py"), ("fixed", "model_script_fixed.py")):
                results[name].append(run(script, Path(tmp) / f"{name}{i}.pt"))
    import torch

    summary = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "runs": runs,
        "outputs_identical": len({r["sha256"] for rs in results.values() for r in rs}) == 1,
        "distinct_outputs": {name: sorted({r["sha256"][:16] for r in rs}) for name, rs in results.items()},
        "settings_identical": all(
            {k: v for k, v in r.items() if k not in ("sha256", "step_ms")} ==
            {k: v for k, v in results["original"][0].items() if k not in ("sha256", "step_ms")}
            for rs in results.values() for r in rs),
        "settings": {k: v for k, v in results["original"][0].items() if k not in ("sha256", "step_ms")},
        "step_ms_median": {name: statistics.median(r["step_ms"] for r in rs) for name, rs in results.items()},
        "step_ms_all": {name: [r["step_ms"] for r in rs] for name, rs in results.items()},
    }
    print(json.dumps(summary, indent=2))
    return 0 if summary["outputs_identical"] and summary["settings_identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
