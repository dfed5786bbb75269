"""The composite GitHub Action (`action.yml`): its inputs and steps, and its `run:` steps run for
real with bash in a temporary repository, the `${{ ... }}` expressions substituted as the runner
would (inputs, `github.action_path`): the install step pip-installs this checkout into a fresh
virtual environment, the check steps print GitHub annotations and write the SARIF file."""

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration  # the integration tier: make test / --all-tiers

yaml = pytest.importorskip("yaml")  # PyYAML (a dependency of pre-commit, in the test extra)
if shutil.which("bash") is None or shutil.which("git") is None:  # pragma: no cover
    pytest.skip("bash and git are needed", allow_module_level=True)

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
TRAIN_PY = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
KERNEL_CU = "#include <cuda_runtime.h>\n__global__ void k() {}\n"


def test_inputs_outputs_and_steps():
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert set(inputs) == {"paths", "args", "version", "python-version", "sarif-file"}
    assert inputs["version"]["default"] == "source" and inputs["sarif-file"]["default"] == ""
    assert all(i.get("description") for i in inputs.values())
    steps = ACTION["runs"]["steps"]
    setup = steps[0]
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"
    assert [s.get("name") for s in steps[1:]] == ["Install rocm-lint", "rocm-lint (SARIF)", "rocm-lint"]
    assert all(s["shell"] == "bash" for s in steps[1:])
    assert ACTION["outputs"]["sarif-file"]["value"] == "${{ steps.sarif.outputs.sarif-file }}"


def _evaluate(expression: str, inputs: dict, action_path: Path) -> str:
    if expression.startswith("inputs."):
        return inputs[expression[len("inputs."):]]
    if expression == "github.action_path":
        return str(action_path)
    raise AssertionError(f"the test does not know the expression {expression!r}: teach it")


def _condition(condition, inputs: dict) -> bool:
    if condition is None:
        return True
    m = re.fullmatch(r"inputs\.([\w-]+) != ''", condition)
    assert m, f"the test does not know the condition {condition!r}: teach it"
    return inputs[m.group(1)] != ""


def _copy_checkout(dst: Path) -> None:
    """The working tree as the action's ref would have it (tracked and untracked, not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """A fresh virtual environment standing for the runner's Python (setup-python's), with the
    test environment's packages visible (so pip finds rocm-lint's dependencies installed) and
    the action's files, a copy of this checkout."""
    tmp = tmp_path_factory.mktemp("action")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    site = subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig

    Path(site, "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    action_path = tmp / "action"
    _copy_checkout(action_path)
    return tmp, bin_dir, action_path


def run_action(runner, repo: Path, **given):
    tmp, bin_dir, action_path = runner
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    output_file = repo / ".github-output"
    output_file.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR", "FORCE_COLOR")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", GITHUB_OUTPUT=str(output_file),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    outputs = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or not _condition(step.get("if"), inputs):
            continue
        step_env = dict(env)
        for key, value in (step.get("env") or {}).items():
            step_env[key] = EXPRESSION.sub(lambda m: _evaluate(m.group(1), inputs, action_path), str(value))
        assert "${{" not in step["run"], "expressions go through env:, never into the script"
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
                              cwd=repo, env=step_env, capture_output=True, text=True, timeout=600)
        outputs.append((step["name"], proc))
        if proc.returncode != 0:
            break
    return outputs, output_file.read_text()


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN_PY)
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text(KERNEL_CU)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_steps_install_check_and_annotate(runner, repo):
    steps, github_output = run_action(runner, repo)
    names = [name for name, _ in steps]
    assert names == ["Install rocm-lint", "rocm-lint"]  # no SARIF unless asked
    install, check = (proc for _, proc in steps)
    assert install.returncode == 0, install.stderr
    assert install.stdout.startswith("rocm-lint ")
    assert check.returncode == 1  # findings fail the job
    annotations = check.stdout.splitlines()
    assert annotations[0].startswith("::error title=rocm-lint (ROC702),file=csrc/k.cu,line=1,col=11,")
    assert annotations[1].startswith("::error title=rocm-lint (ROC101),file=src/train.py,line=2,col=1,")
    assert github_output == ""


def test_sarif_paths_and_args(runner, repo):
    steps, github_output = run_action(runner, repo, paths="src csrc/k.cu", args="--ignore ROC7 --force-exclude",
                                      sarif_file="rocm-lint.sarif")
    assert [name for name, _ in steps] == ["Install rocm-lint", "rocm-lint (SARIF)", "rocm-lint"]
    sarif_step, check = steps[1][1], steps[2][1]
    assert sarif_step.returncode == 0, sarif_step.stderr
    assert check.returncode == 1
    assert [line.split(",")[0] for line in check.stdout.splitlines()] == ["::error title=rocm-lint (ROC101)"]
    log = json.loads((repo / "rocm-lint.sarif").read_text("utf-8"))
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("ROC101", "src/train.py")]
    assert github_output == "sarif-file=rocm-lint.sarif\n"


def test_a_clean_repository_passes(runner, tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    steps, _ = run_action(runner, tmp_path, sarif_file="out.sarif")
    assert all(proc.returncode == 0 for _, proc in steps), [p.stderr for _, p in steps]
    assert steps[-1][1].stdout == ""
    assert json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"] == []
