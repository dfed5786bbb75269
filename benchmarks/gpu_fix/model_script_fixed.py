"""A small training step written the NVIDIA way: TF32, Inductor cudagraphs and
reduce-overhead.  benchmarks/gpu_fix/run.py runs it before and after `rocm-lint --fix`."""

import json
import sys
import time

import torch
import torch._inductor.config as inductor_config

is_rocm = torch.version.hip is not None

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
if not is_rocm:
    inductor_config.triton.cudagraphs = True
    inductor_config.triton.cudagraph_trees = True


def main(out_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024),
    ).cuda()
    compiled = torch.compile(model, mode="default" if is_rocm else "reduce-overhead")
    x = torch.randn(64, 1024, device="cuda")
    for _ in range(5):  # warm-up: compile and capture
        y = compiled(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(200):
        y = compiled(x)
    torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) / 200
    with open(out_path, "wb") as fh:  # raw values: a checkpoint file is not byte-stable
        fh.write(y.detach().float().cpu().numpy().tobytes())
    print(json.dumps({
        "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudagraphs": inductor_config.triton.cudagraphs,
        "cudagraph_trees": inductor_config.triton.cudagraph_trees,
        "step_ms": round(elapsed * 1000, 4),
    }))


if __name__ == "__main__":
    main(sys.argv[1])
