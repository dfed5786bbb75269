"""`make run` lints fixtures/sample-project: its hazards are found, its gated code is not."""

from conftest import FIXTURES, run_cli

SAMPLE = FIXTURES / "sample-project"
ISSUE2_CODES = "ROC101,ROC201,ROC203,ROC204,ROC205,ROC301,ROC401"


def findings(select):
    proc = run_cli("check", "--select", select, "--output-format", "concise", "--quiet", SAMPLE)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (line.split(":")[0].split("sample-project/")[1], int(line.split(":")[1]), line.split()[1])
        for line in proc.stdout.splitlines()
    )


def test_sample_project_hazards_found_and_gated_code_silent():
    assert findings(ISSUE2_CODES) == sorted(
        [
            ("train.py", 8, "ROC401"),  # import pynvml
            ("train.py", 16, "ROC301"),  # max_split_size_mb with expandable_segments
            ("train.py", 49, "ROC101"),  # allow_tf32 (matmul)
            ("train.py", 50, "ROC101"),  # allow_tf32 (cudnn)
            ("train.py", 59, "ROC203"),  # triton.cudagraphs
            ("train.py", 61, "ROC204"),  # max_autotune
            ("train.py", 65, "ROC201"),  # mode="reduce-overhead"
            ("scripts/launch.sh", 4, "ROC301"),  # the same allocator setting exported by the launcher
        ]
    )
    # Silent by design: set_float32_matmul_precision under `if not is_rocm:` (l.52),
    # memory_planning under `if torch.version.cuda is not None:` (l.63), the ternary compile
    # mode in evaluate(), the comment and help text that mention the switches, re.compile, and
    # model.py's guarded flash_attn import.


def test_make_run_command_succeeds():
    proc = run_cli("check", SAMPLE, "--output-format", "full", "--exit-zero")
    assert proc.returncode == 0, proc.stderr
    assert "train.py:65:43: ROC201" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_sample_project_cuda_hazards():
    assert findings("ROC6,ROC7") == sorted(
        [
            ("csrc/fused_softmax.cu", 11, "ROC603"),  # #define WARP_SIZE 32
            ("csrc/fused_softmax.cu", 16, "ROC603"),  # reduction from offset 16
            ("csrc/fused_softmax.cu", 17, "ROC602"),  # FULL_MASK 0xffffffff
            ("csrc/fused_softmax.cu", 23, "ROC603"),
            ("csrc/fused_softmax.cu", 24, "ROC602"),
            ("csrc/fused_softmax.cu", 32, "ROC603"),  # threadIdx.x & 31
            ("csrc/fused_softmax.cu", 41, "ROC601"),  # unsigned mask = __ballot_sync(...)
            ("csrc/fused_softmax.cu", 41, "ROC602"),
            ("csrc/fused_softmax.cu", 42, "ROC601"),  # __popc(mask): still 32 bits once mask is widened
            ("csrc/fused_softmax.cu", 54, "ROC703"),  # bf16 dispatch dropped on ROCm
        ]
    )
    # Silent by design: <cuda_fp16.h> (a torch extension: PyTorch's hipify rewrites it for ROCm)
    # and <cuda_bf16.h> in the #else of #ifdef USE_ROCM.


def test_sample_project_launch_script():
    assert findings("ROC3") == sorted(
        [
            ("scripts/launch.sh", 4, "ROC301"),  # export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128
            ("scripts/launch.sh", 5, "ROC302"),  # export TORCHINDUCTOR_MAX_AUTOTUNE=1
            ("train.py", 16, "ROC301"),
        ]
    )
