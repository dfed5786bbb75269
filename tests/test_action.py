"""The composite GitHub Action (`action.yml`): its inputs and steps, and its `run:` steps run for
real with bash in a temporary repository, the `${{ ... }}` expressions substituted as the runner
would (inputs, `github.action_path`, the pull request's base commit): the install step
pip-installs this checkout into a fresh virtual environment (or, on an externally managed system
Python, into one it creates), one `rocm-lint check` prints the GitHub annotations and writes the
SARIF file and the job summary."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import venv
from dataclasses import dataclass
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
    assert set(inputs) == {
        "paths",
        "args",
        "version",
        "python-version",
        "sarif-file",
        "changed-only",
        "summary",
    }
    assert inputs["version"]["default"] == "source" and inputs["sarif-file"]["default"] == ""
    assert inputs["changed-only"]["default"] == "false" and inputs["summary"]["default"] == "true"
    assert all(i.get("description") for i in inputs.values())
    steps = ACTION["runs"]["steps"]
    setup = steps[0]
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"
    # one lint run: the annotations, the SARIF file and the summary come from the same findings
    assert [s.get("name") for s in steps[1:]] == ["Install rocm-lint", "rocm-lint"]
    assert sum(s["run"].count("rocm-lint check") for s in steps[1:]) == 1
    assert all(s["shell"] == "bash" for s in steps[1:])
    assert ACTION["outputs"]["sarif-file"]["value"] == "${{ steps.lint.outputs.sarif-file }}"


def test_third_party_actions_are_pinned_by_commit():
    """A tag can be moved; a commit cannot.  Each `uses:` names a full commit id and, in a comment,
    the release it is (for readers and for Dependabot)."""
    uses = re.findall(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$", (ROOT / "action.yml").read_text("utf-8"), re.M)
    assert uses
    for ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), ref
        assert re.fullmatch(r"\s*#\s*v\d+(\.\d+)*\s*", comment), f"{ref}: name the release in a comment"


def _evaluate(expression: str, inputs: dict, action_path: Path, event: dict) -> str:
    if expression.startswith("inputs."):
        return inputs[expression[len("inputs.") :]]
    if expression == "github.action_path":
        return str(action_path)
    if expression.startswith("github.event."):
        value = event
        for part in expression[len("github.event.") :].split("."):
            value = value.get(part, {}) if isinstance(value, dict) else {}
        return "" if value == {} else str(value)  # a missing property is empty, as on the runner
    raise AssertionError(f"the test does not know the expression {expression!r}: teach it")


def _condition(condition, inputs: dict) -> bool:
    if condition is None:
        return True
    m = re.fullmatch(r"inputs\.([\w-]+) != ''", condition)
    assert m, f"the test does not know the condition {condition!r}: teach it"
    return inputs[m.group(1)] != ""


def _copy_checkout(dst: Path) -> None:
    """The working tree as the action's ref would have it (tracked and untracked, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
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
    site = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import sysconfig

    Path(site, "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    action_path = tmp / "action"
    _copy_checkout(action_path)
    installed = run_action((tmp, bin_dir, action_path), tmp, only=["Install rocm-lint"])
    assert installed.step("Install rocm-lint").returncode == 0, installed.step("Install rocm-lint").stderr
    return tmp, bin_dir, action_path


LINT = ["rocm-lint"]  # the lint step alone


@dataclass
class Run:
    steps: list  # (name, CompletedProcess) of the steps that ran
    output: str  # $GITHUB_OUTPUT
    summary: str  # $GITHUB_STEP_SUMMARY
    checks: list  # the `rocm-lint check` command lines the steps ran

    @property
    def names(self):
        return [name for name, _ in self.steps]

    def step(self, name):
        return dict(self.steps)[name]


def run_action(runner, repo: Path, *, event=None, path_dirs=(), only=None, **given) -> Run:
    """The action's `run:` steps as the runner runs them: `bash -e -o pipefail`, the files behind
    $GITHUB_OUTPUT, $GITHUB_PATH (prepended to PATH for the later steps) and
    $GITHUB_STEP_SUMMARY, $RUNNER_TEMP.  `rocm-lint` is called through a shim that records each
    command line.  ``path_dirs``: the runner's PATH before the setup step's (none: the fixture's
    virtual environment stands for setup-python's); ``only``: the names of the steps to run (the
    fixture's environment has rocm-lint installed already)."""
    tmp, bin_dir, action_path = runner
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    work = Path(tempfile.mkdtemp(dir=tmp))
    files = {name: work / name for name in ("output", "path", "summary", "calls")}
    for f in files.values():
        f.write_text("")
    shim = work / "shim"
    shim.mkdir()
    (shim / "rocm-lint").write_text(
        '#!/bin/bash\nprintf "%s\\n" "$*" >> "$ROCM_LINT_CALLS"\n'
        'self="$(dirname "$0")"; PATH="${PATH//$self:/}" exec rocm-lint "$@"\n'
    )
    (shim / "rocm-lint").chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "NO_COLOR", "FORCE_COLOR", "VIRTUAL_ENV")
    }
    base_path = os.pathsep.join([*map(str, path_dirs)] or [str(bin_dir)]) + os.pathsep + env["PATH"]
    env.update(
        GITHUB_OUTPUT=str(files["output"]),
        GITHUB_PATH=str(files["path"]),
        GITHUB_STEP_SUMMARY=str(files["summary"]),
        RUNNER_TEMP=str(work),
        ROCM_LINT_CALLS=str(files["calls"]),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    steps = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or not _condition(step.get("if"), inputs) or (only and step["name"] not in only):
            continue
        added = [line for line in files["path"].read_text().splitlines() if line]
        step_env = dict(env, PATH=os.pathsep.join([str(shim), *reversed(added), base_path]))
        for key, value in (step.get("env") or {}).items():
            step_env[key] = EXPRESSION.sub(
                lambda m: _evaluate(m.group(1), inputs, action_path, event or {}), str(value)
            )
        assert "${{" not in step["run"], "expressions go through env:, never into the script"
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
            cwd=repo,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        steps.append((step["name"], proc))
        if proc.returncode != 0:
            break
    calls = [line for line in files["calls"].read_text().splitlines() if line.startswith("check")]
    return Run(steps, files["output"].read_text(), files["summary"].read_text(), calls)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN_PY)
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text(KERNEL_CU)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_steps_install_check_and_annotate(runner, repo):
    run = run_action(runner, repo)
    assert run.names == ["Install rocm-lint", "rocm-lint"]
    install, check = run.step("Install rocm-lint"), run.step("rocm-lint")
    assert install.returncode == 0, install.stderr
    assert install.stdout.startswith("rocm-lint ")
    assert check.returncode == 1  # findings fail the job
    annotations = check.stdout.splitlines()
    assert annotations[0].startswith("::error title=rocm-lint (ROC702),file=csrc/k.cu,line=1,col=11,")
    assert annotations[1].startswith("::error title=rocm-lint (ROC101),file=src/train.py,line=2,col=1,")
    assert run.output == ""  # no sarif-file
    assert len(run.checks) == 1
    # the job summary, from the same run: totals, families, fixable, the files
    summary = run.summary
    assert summary.startswith("## rocm-lint\n")
    assert "**2 findings** in 2 files (2 files checked); 2 fixable with `rocm-lint check --fix`." in summary
    assert "| ROC1 NVIDIA-only PyTorch switches and APIs | 1 | ROC101 (1) |" in summary
    assert "| ROC7 CUDA C++ portability | 1 | ROC702 (1) |" in summary
    assert "| <code>csrc/k.cu</code> | 1 |" in summary and "| <code>src/train.py</code> | 1 |" in summary


def test_one_run_gives_annotations_sarif_and_summary(runner, repo):
    run = run_action(
        runner,
        repo,
        paths="src csrc/k.cu",
        args="--ignore ROC7 --force-exclude",
        sarif_file="rocm-lint.sarif",
        only=LINT,
    )
    check = run.step("rocm-lint")
    assert check.returncode == 1, check.stderr
    assert len(run.checks) == 1, run.checks  # one lint run, not one per format
    assert [line.split(",")[0] for line in check.stdout.splitlines()] == ["::error title=rocm-lint (ROC101)"]
    log = json.loads((repo / "rocm-lint.sarif").read_text("utf-8"))
    results = log["runs"][0]["results"]
    assert [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results
    ] == [("ROC101", "src/train.py")]
    assert run.output == "sarif-file=rocm-lint.sarif\n"  # set although the step failed on findings
    assert "**1 finding** in 1 file" in run.summary and "ROC7" not in run.summary


@pytest.mark.parametrize(
    "args",
    [
        "--output-format concise",
        "--output-format=concise",
        "--output-f concise",
        "-o out.txt",
        "-qo out.txt",
        "--output-file=out.txt",
        "--statistics",
        "--extra-output json=x.json",
        "--fix",
        "--diff",
        "--add-noqa",
        "--write-baseline b.json",
    ],
)
def test_args_cannot_replace_what_the_action_writes(runner, repo, args):
    """`--output-format concise` in args must not put plain text where the SARIF goes (or replace
    the annotations): the step refuses it, names the option, and writes nothing."""
    run = run_action(runner, repo, args=f"--ignore ROC7 {args}", sarif_file="rocm-lint.sarif", only=LINT)
    check = run.step("rocm-lint")
    assert check.returncode == 2
    assert check.stdout.startswith(f"::error title=rocm-lint::args: {args.split()[0]} is set by the action")
    assert run.checks == [] and not (repo / "rocm-lint.sarif").exists() and run.output == ""


def _commit(repo, message):
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-qm",
            message,
        ],
        cwd=repo,
        check=True,
    )
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_changed_only_reports_what_the_pull_request_added(runner, repo):
    base = _commit(repo, "base")
    (repo / "src" / "train.py").write_text(TRAIN_PY + "torch.backends.cudnn.allow_tf32 = True\n")
    _commit(repo, "the pull request")
    pull_request = {"pull_request": {"base": {"sha": base}}}
    run = run_action(
        runner, repo, changed_only="true", sarif_file="rocm-lint.sarif", event=pull_request, only=LINT
    )
    check = run.step("rocm-lint")
    assert check.returncode == 1, check.stderr
    assert [line.split(",file=")[1].split(",col=")[0] for line in check.stdout.splitlines()] == [
        "src/train.py,line=3"
    ]  # not k.cu, not train.py's line 2: the base had them
    assert len(run.checks) == 1 and re.fullmatch(
        rf"check --output-format github --extra-output sarif=rocm-lint.sarif --extra-output summary=\S+ "
        rf"--baseline-commit {base} -- \.",
        run.checks[0],
    ), run.checks
    sarif = json.loads((repo / "rocm-lint.sarif").read_text())["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif] == [3]
    # not a pull request: every finding, with a notice
    run = run_action(runner, repo, changed_only="true", only=LINT)
    assert run.step("rocm-lint").returncode == 1 and len(run.step("rocm-lint").stdout.splitlines()) == 4
    assert "::notice title=rocm-lint::changed-only applies to pull requests" in run.step("rocm-lint").stdout
    # a shallow checkout without the base commit: a clear error
    run = run_action(
        runner, repo, changed_only="true", event={"pull_request": {"base": {"sha": "1" * 40}}}, only=LINT
    )
    assert run.step("rocm-lint").returncode == 2 and "fetch-depth: 0" in run.step("rocm-lint").stdout


def test_a_clean_repository_passes(runner, tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    run = run_action(runner, tmp_path, sarif_file="out.sarif", summary="false", only=LINT)
    assert all(proc.returncode == 0 for _, proc in run.steps), [p.stderr for _, p in run.steps]
    assert run.step("rocm-lint").stdout == ""
    assert json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"] == []
    assert run.summary == ""  # summary: false


SYSTEM_PYTHON = Path("/usr/bin/python3")


def _externally_managed(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import os, sys, sysconfig, venv, ensurepip; print(int("
            "sys.prefix == sys.base_prefix and os.path.isfile(os.path.join("
            "sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED'))))",
        ],
        capture_output=True,
        text=True,
    )
    return probe.stdout.strip() == "1"


@pytest.mark.skipif(
    not _externally_managed(SYSTEM_PYTHON),
    reason="needs an externally managed (PEP 668) "
    "system python3 with venv, as Debian 12 and Ubuntu 24.04 ship",
)
def test_an_externally_managed_system_python_gets_a_venv(runner, repo, tmp_path):
    """`python-version: ''` on a runner whose python refuses `pip install` (PEP 668): the action
    installs into a virtual environment and puts it on the later steps' PATH."""
    only_python = tmp_path / "system-bin"
    only_python.mkdir()
    (only_python / "python").symlink_to(SYSTEM_PYTHON)
    refused = subprocess.run(
        [str(only_python / "python"), "-m", "pip", "install", "--dry-run", "rocm-lint"],
        capture_output=True,
        text=True,
    )
    assert "externally-managed-environment" in refused.stderr  # what the old action hit
    run = run_action(runner, repo, python_version="", path_dirs=[only_python])
    install, check = run.step("Install rocm-lint"), run.step("rocm-lint")
    assert install.returncode == 0, install.stdout + install.stderr
    assert "is externally managed (PEP 668): installing rocm-lint into" in install.stdout
    assert install.stdout.splitlines()[-1].startswith("rocm-lint ")
    assert check.returncode == 1 and check.stdout.count("::error title=rocm-lint (") == 2
