"""Baselines: `--write-baseline` records today's findings, `--baseline` reports only new ones,
matched by code, path and line content so they survive edits elsewhere in the file."""

import json

import pytest

from conftest import run_cli

KERNEL = (
    "__global__ void k(int* out, bool p) {\n"
    "  unsigned int m = __ballot_sync(__activemask(), p);\n"
    "  out[threadIdx.x] = __popc(m);\n"
    "}\n"
)
TRAIN = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text(KERNEL)
    (tmp_path / "train.py").write_text(TRAIN)
    proc = run_cli("check", ".", "--write-baseline", "rocm-lint-baseline.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Wrote 3 findings to the baseline" in proc.stderr
    return tmp_path


def check(project, *args, cwd=None):
    return run_cli("check", *args, "--baseline", project / "rocm-lint-baseline.json", cwd=cwd or project)


def test_baseline_file_is_relative_and_readable(project):
    data = json.loads((project / "rocm-lint-baseline.json").read_text("utf-8"))
    assert data["version"] == 1
    assert data["findings"] == [
        {
            "code": "ROC101",
            "path": "train.py",
            "line": "torch.backends.cuda.matmul.allow_tf32 = True",
            "count": 1,
        },
        {"code": "ROC601", "path": "csrc/k.cu", "line": "out[threadIdx.x] = __popc(m);", "count": 1},
        {
            "code": "ROC601",
            "path": "csrc/k.cu",
            "line": "unsigned int m = __ballot_sync(__activemask(), p);",
            "count": 1,
        },
    ]


def test_baselined_findings_are_not_reported(project):
    proc = check(project, ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert "3 more in the baseline" in proc.stderr


def test_edits_elsewhere_keep_the_finding_suppressed(project):
    kernel = project / "csrc" / "k.cu"
    kernel.write_text("// a comment added above\n#include <cstdint>\n\n" + KERNEL.replace("    ", "  "))
    train = project / "train.py"
    train.write_text("import torch\n\n\ndef main():\n    pass\n\n" + TRAIN.split("\n", 1)[1])
    assert check(project, ".").returncode == 0


def test_new_and_changed_lines_are_reported(project):
    kernel = project / "csrc" / "k.cu"
    kernel.write_text(
        KERNEL.replace(
            "  out[threadIdx.x] = __popc(m);\n",
            "  out[threadIdx.x] = __popc(m);\n  unsigned v = __ballot_sync(__activemask(), !p);\n",
        )
    )
    proc = check(project, ".", "--output-format", "concise")
    assert proc.returncode == 1
    assert [ln.split(":")[1] for ln in proc.stdout.splitlines()] == ["4"]  # the new ballot only
    (project / "train.py").write_text(TRAIN.replace("= True", "= bool(1)"))
    codes = sorted(ln.split()[1] for ln in check(project, ".").stdout.splitlines())
    assert codes == ["ROC101", "ROC601"]  # the changed line is new


def test_a_duplicate_of_a_baselined_line_is_reported(project):
    (project / "train.py").write_text(TRAIN + TRAIN.split("\n", 1)[1])
    proc = check(project, "train.py")
    assert proc.returncode == 1
    assert [ln.split(":")[1] for ln in proc.stdout.splitlines()] == ["3"]


def test_baseline_works_from_another_directory(project):
    proc = run_cli(
        "check", project / "train.py", "--baseline", project / "rocm-lint-baseline.json", cwd=project / "csrc"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "invalid JSON"),
        ('{"version": 99, "findings": []}', "not a rocm-lint baseline"),
        ('{"version": 1, "findings": [{"code": "ROC101"}]}', "entry 0 needs code, path, line"),
    ],
)
def test_broken_baseline_is_a_usage_error(project, content, message):
    (project / "rocm-lint-baseline.json").write_text(content)
    proc = check(project, ".")
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_missing_baseline_is_a_usage_error(tmp_path):
    proc = run_cli("check", tmp_path, "--baseline", tmp_path / "nope.json")
    assert proc.returncode == 2 and "cannot read baseline" in proc.stderr


def test_write_baseline_refuses_fix(project):
    proc = run_cli("check", ".", "--fix", "--write-baseline", "b.json", cwd=project)
    assert proc.returncode == 2 and "cannot be combined" in proc.stderr
    assert not (project / "b.json").exists()


def test_baseline_through_a_symlinked_directory(project, tmp_path_factory):
    """Written through a symlink to the project, read from the real path (and back)."""
    link = tmp_path_factory.mktemp("elsewhere") / "link"
    link.symlink_to(project, target_is_directory=True)
    assert run_cli("check", ".", "--write-baseline", "b.json", cwd=link).returncode == 0
    assert run_cli("check", ".", "--baseline", link / "b.json", cwd=project).returncode == 0
    assert run_cli("check", link, "--baseline", "b.json", cwd=project).returncode == 0


def test_write_baseline_into_a_missing_directory_is_a_usage_error(project):
    proc = run_cli("check", ".", "--write-baseline", "no/such/dir/b.json", cwd=project)
    assert proc.returncode == 2 and "no such directory" in proc.stderr and "Traceback" not in proc.stderr
