"""`rocm-lint check -` with `--stdin-filename` (what editor plugins run: ALE, nvim-lint, flycheck,
efm-langserver), through the real CLI: the language, settings, per-file-ignores and excludes
come from the name; `--fix` writes the fixed text to stdout."""

import json

import pytest

from conftest import run_cli

TF32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
KERNEL = (
    "#include <cuda_runtime.h>\n__global__ void k(int* out, bool p) {\n"
    "  unsigned int m = __ballot_sync(0xffffffff, p);\n  out[threadIdx.x] = __popc(m);\n}\n"
)
DOCKERFILE = "FROM ubuntu:22.04\nENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n"
SHELL = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n"


def codes(proc):
    return sorted(line.split()[1] for line in proc.stdout.splitlines())


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("src/train.py", TF32, ["ROC101"]),
        ("csrc/k.cu", KERNEL, ["ROC601", "ROC601", "ROC602", "ROC702"]),
        ("docker/Dockerfile", DOCKERFILE, ["ROC302"]),
        ("scripts/run.sh", SHELL, ["ROC301"]),
    ],
)
def test_the_name_picks_the_language(tmp_path, name, text, expected):
    proc = run_cli("check", "-", "--stdin-filename", name, input=text, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert codes(proc) == expected
    assert all(line.startswith(f"{name}:") for line in proc.stdout.splitlines())


def test_the_file_on_disk_is_not_read(tmp_path):
    (tmp_path / "t.py").write_text("x = 1\n")  # on disk: clean, and shorter than the buffer
    proc = run_cli(
        "check", "-", "--stdin-filename", "t.py", "--output-format", "full", input="\n\n" + TF32, cwd=tmp_path
    )
    assert (
        "t.py:4:1: ROC101" in proc.stdout
        and "4 | torch.backends.cuda.matmul.allow_tf32 = True" in proc.stdout
    )
    item = json.loads(
        run_cli(
            "check",
            "-",
            "--stdin-filename",
            "t.py",
            "--output-format",
            "json",
            input="\n\n" + TF32,
            cwd=tmp_path,
        ).stdout
    )[0]
    assert item["filename"] == str(tmp_path / "t.py") and item["location"] == {"row": 4, "column": 1}


def test_no_name_is_python(tmp_path):
    proc = run_cli("check", "-", input=TF32, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("-:2:1: ROC101")


def test_a_name_of_no_known_kind_is_not_checked(tmp_path):
    proc = run_cli("check", "-", "--stdin-filename", "notes.txt", input=TF32, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


def test_settings_and_per_file_ignores_by_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nper-file-ignores = { "tests/*" = ["ROC1"] }\n'
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rocm-lint.toml").write_text('ignore = ["ROC101"]\n')
    assert codes(run_cli("check", "-", "--stdin-filename", "src/t.py", input=TF32, cwd=tmp_path)) == [
        "ROC101"
    ]
    assert run_cli("check", "-", "--stdin-filename", "tests/t.py", input=TF32, cwd=tmp_path).stdout == ""
    assert run_cli("check", "-", "--stdin-filename", "sub/t.py", input=TF32, cwd=tmp_path).stdout == ""
    # the name alone (no `-`) reads stdin too, as ruff
    assert codes(run_cli("check", "--stdin-filename", "src/t.py", input=TF32, cwd=tmp_path)) == ["ROC101"]


def test_excludes_apply_with_force_exclude_as_ruff(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nextend-exclude = ["third_party"]\n')
    args = ("check", "-", "--stdin-filename", "third_party/lib/t.py")
    assert codes(run_cli(*args, input=TF32, cwd=tmp_path)) == ["ROC101"]  # named: checked (ruff's rule)
    excluded = run_cli(*args, "--force-exclude", input=TF32, cwd=tmp_path)
    assert excluded.returncode == 0 and excluded.stdout == ""
    fixed = run_cli(*args, "--force-exclude", "--fix", input=TF32, cwd=tmp_path)
    assert fixed.returncode == 0 and fixed.stdout == TF32  # the buffer comes back unchanged


def test_fix_writes_the_fixed_text_to_stdout(tmp_path):
    (tmp_path / "t.py").write_text("on disk\n")
    text = (
        TF32
        + "print(torch.cuda.get_device_name())  # unfixable? no: nothing to report\n"
        + "torch.backends.cudnn.allow_tf32 = True; x = 1\n"
    )
    proc = run_cli("check", "-", "--stdin-filename", "t.py", "--fix", input=text, cwd=tmp_path)
    assert proc.stdout.startswith(
        "import torch\n\nis_rocm = torch.version.hip is not None\nif not is_rocm:\n"
        "    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    assert proc.stdout.endswith("torch.backends.cudnn.allow_tf32 = True; x = 1\n")
    # what remains (a compound line cannot be gated) goes to stderr, and the exit code says so
    assert proc.returncode == 1
    assert "t.py:7:1: ROC101" in proc.stderr and "Fixed 1 finding, 1 remaining" in proc.stderr
    assert (tmp_path / "t.py").read_text() == "on disk\n"  # the file is never written


def test_fix_with_nothing_to_fix_echoes_the_buffer_byte_for_byte(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    for name, data in (
        ("t.py", b"x = 1\n"),
        ("t.py", b"def broken(:\n"),
        ("t.py", "caf\xe9 = 1\r\n".encode()),
        ("t.py", b"# -*- coding: latin-1 -*-\ns = '\xe9'\r\n"),
        ("k.cu", b"// \xe9\r\nint x;\r\n"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "rocm_lint", "check", "-", "--stdin-filename", name, "--fix"],
            input=data,
            capture_output=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        assert proc.stdout == data, (data, proc.stderr)


def test_fix_keeps_a_cuda_buffer_whole_and_diff_shows_it(tmp_path):
    text = "#include <cuda_runtime.h>\n__global__ void k() {}\n"
    fixed = run_cli("check", "-", "--stdin-filename", "k.cu", "--fix", input=text, cwd=tmp_path)
    assert "hip/hip_runtime.h" in fixed.stdout and fixed.returncode == 0, fixed.stderr
    diff = run_cli("check", "-", "--stdin-filename", "k.cu", "--diff", input=text, cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/k.cu\n+++ b/k.cu\n")


def test_stdin_must_be_the_only_path(tmp_path):
    proc = run_cli("check", "-", "other.py", input=TF32, cwd=tmp_path)
    assert proc.returncode == 2 and "must be the only path" in proc.stderr
