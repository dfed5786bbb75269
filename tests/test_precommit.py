"""pre-commit end to end: the real `pre-commit try-repo` installs our hooks from a git
repository and runs them on a temporary project holding hazards.

try-repo installs the hook repository's HEAD commit, so the hook repository is a temporary
clone of this checkout with the working tree copied over it and committed *there* (on a fresh
clone that is HEAD itself). pre-commit builds the hook environment with pip, which needs the
package index; it is built once per test session.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.integration  # the integration tier: make test / --all-tiers

pytest.importorskip("pre_commit")
if shutil.which("git") is None:  # pragma: no cover
    pytest.skip("git is not installed", allow_module_level=True)

TRAIN_PY = """\
import torch

torch.backends.cuda.matmul.allow_tf32 = True
model = torch.nn.Linear(4, 4)
"""
# ROC702 (safe fix) and ROC603 (display only: no fix) in a plain CUDA file, not a torch extension.
KERNEL_CU = """\
#include <cuda_fp16.h>

#define WARP_SIZE 32

__global__ void scale(__half* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __hmul(x[i], __float2half(2.0f));
}
"""
README = "Nothing to see here.\n"


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        PRE_COMMIT_HOME=str(tmp / "pre-commit-home"),
        GIT_AUTHOR_NAME="rocm-lint tests",
        GIT_AUTHOR_EMAIL="tests@example.invalid",
        GIT_COMMITTER_NAME="rocm-lint tests",
        GIT_COMMITTER_EMAIL="tests@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def _git(*args, cwd, env):
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pre-commit")
    env = _env(tmp)
    return tmp, hook_repository(tmp, env), env


def hook_repository(tmp: Path, env: dict) -> Path:
    """A git repository under ``tmp`` whose HEAD is this working tree (try-repo installs HEAD)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: try-repo needs one")
    hooks = tmp / "hook-repo"
    try:
        _git("clone", "--quiet", str(ROOT), str(hooks), cwd=tmp, env=env)
    except subprocess.CalledProcessError:  # e.g. an old git refusing a shallow source: start afresh
        shutil.rmtree(hooks, ignore_errors=True)
        _git("init", "--quiet", str(hooks), cwd=tmp, env=env)
    # The working tree as it is (tracked and untracked, minus ignored files) over the clone.
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT, env=env).stdout
    for rel in filter(None, listed.split("\0")):
        src, dst = ROOT / rel, hooks / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        elif dst.is_file():
            dst.unlink()  # deleted in the working tree
    _git("add", "-A", cwd=hooks, env=env)
    _git("commit", "--quiet", "--allow-empty", "-m", "rocm-lint working tree under test", cwd=hooks, env=env)
    return hooks


@pytest.fixture
def project(workspace, tmp_path):
    _, _, env = workspace
    proj = tmp_path / "project"
    proj.mkdir()
    (proj / "train.py").write_text(TRAIN_PY)
    (proj / "kernel.cu").write_text(KERNEL_CU)
    (proj / "README.md").write_text(README)
    _git("init", "--quiet", cwd=proj, env=env)
    _git("add", "-A", cwd=proj, env=env)
    return proj


def try_repo(workspace, project, hook):
    _, hooks, env = workspace
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_hook_fails_and_names_the_hazards(workspace, project):
    result = try_repo(workspace, project, "rocm-lint")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "- hook id: rocm-lint" in out
    assert "train.py:3:1: ROC101" in out
    assert "kernel.cu:1:11: ROC702" in out
    assert "kernel.cu:3:9: ROC603" in out
    assert "README.md:" not in out  # a kind rocm-lint does not read: skipped
    assert (project / "train.py").read_text() == TRAIN_PY  # the check hook writes nothing


# One file of every kind rocm-lint reads besides Python and .cu. identify (pre-commit's file
# typing) has no tag for `.hip` or a bare `.env`, so a `types_or` list of languages would never pass
# them to the hook: the hooks take every text file and rocm-lint picks the kinds it reads.
OTHER_KINDS = {
    "launch.sh": "#!/bin/sh\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\npython train.py\n",
    "Dockerfile": "FROM rocm/pytorch:latest\nENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n",
    ".env": "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n",
    ".github/workflows/ci.yml": (
        "jobs:\n  train:\n    runs-on: [self-hosted, mi300]\n    env:\n"
        '      TORCHINDUCTOR_MAX_AUTOTUNE: "1"\n    steps:\n      - run: python train.py\n'
    ),
    "kernel.hip": (
        "#include <hip/hip_runtime.h>\n__global__ void k(int* out, bool p) {\n"
        "  unsigned mask = __ballot(p);\n  out[0] = __popc(mask);\n}\n"
    ),
    "util.cpp": "int add(int a, int b) { return a + b; }  // host code: no device code, not read\n",
    # The project's excludes apply to the files pre-commit names (the hooks pass --force-exclude).
    "pyproject.toml": '[tool.rocm-lint]\nextend-exclude = ["third_party"]\n',
    "third_party/vendored/train_util.py": TRAIN_PY,
}


def test_check_hook_reads_every_kind_and_honours_excludes(workspace, project):
    for name, text in OTHER_KINDS.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    _git("add", "-A", cwd=project, env=workspace[2])
    result = try_repo(workspace, project, "rocm-lint")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    for expected in (
        "launch.sh:2:32: ROC301",
        "Dockerfile:2:5: ROC302",
        ".env:1:25: ROC301",
        ".github/workflows/ci.yml:5:7: ROC302",
        "kernel.hip:3:3: ROC601",
        "train.py:3:1: ROC101",
    ):
        assert expected in out, expected
    assert "util.cpp" not in out and "README.md:" not in out and "third_party" not in out


def test_fix_hook_fixes_the_safe_ones_then_only_unfixable_remain(workspace, project):
    fixed = try_repo(workspace, project, "rocm-lint-fix")
    out = fixed.stdout + fixed.stderr
    assert fixed.returncode == 1, out
    assert "- hook id: rocm-lint-fix" in out
    assert "files were modified by this hook" in out
    train, kernel = (project / "train.py").read_text(), (project / "kernel.cu").read_text()
    assert "if not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True" in train
    assert "is_rocm = torch.version.hip is not None" in train
    assert (
        "#ifdef USE_ROCM\n#include <hip/hip_fp16.h>\n#else\n#line 1\n#include <cuda_fp16.h>\n#endif\n#line 2"
        in kernel
    )
    assert "#define WARP_SIZE 32" in kernel  # display-only: never rewritten
    assert (project / "README.md").read_text() == README

    again = try_repo(workspace, project, "rocm-lint")
    out = again.stdout + again.stderr
    assert again.returncode == 1, out
    assert "ROC603" in out
    assert "ROC101" not in out and "ROC702" not in out
    assert "Found 1 finding in 1 file" in out

    # A second fix run has nothing left to change: the hook fails on the remaining finding only.
    second = try_repo(workspace, project, "rocm-lint-fix")
    out = second.stdout + second.stderr
    assert second.returncode == 1, out
    assert "files were modified" not in out
    assert (project / "train.py").read_text() == train and (project / "kernel.cu").read_text() == kernel


def test_after_the_fix_hook_the_check_hook_passes(workspace, tmp_path):
    """Hazards that all have safe fixes: the fix hook fixes them and the check hook then passes."""
    _, _, env = workspace
    proj = tmp_path / "fixable"
    proj.mkdir()
    (proj / "train.py").write_text(TRAIN_PY)
    (proj / "kernel.cu").write_text(KERNEL_CU.replace("#define WARP_SIZE 32\n", ""))
    _git("init", "--quiet", cwd=proj, env=env)
    _git("add", "-A", cwd=proj, env=env)
    assert try_repo(workspace, proj, "rocm-lint").returncode == 1
    fixed = try_repo(workspace, proj, "rocm-lint-fix")
    assert "files were modified by this hook" in fixed.stdout + fixed.stderr
    check = try_repo(workspace, proj, "rocm-lint")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Passed" in check.stdout


# -- the snippets the documentation gives (issue #17) ----------------------------------------------
def _doc_config(doc: Path) -> str:
    """The `.pre-commit-config.yaml` block of a documentation page, verbatim."""
    import re

    blocks = re.findall(r"```yaml\n(# \.pre-commit-config\.yaml.*?)```", doc.read_text("utf-8"), re.S)
    assert len(blocks) == 1, doc
    return blocks[0]


def test_the_documented_snippet_is_the_same_everywhere():
    readme = _doc_config(ROOT / "README.md")
    assert "rev: v0.1.0" not in readme and "repo: local" in readme
    for page in ("docs/install.md", "docs/integrations.md"):
        assert _doc_config(ROOT / page) == readme, page


def test_the_readme_snippet_runs_in_real_pre_commit(workspace, project, tmp_path):
    """The README's `.pre-commit-config.yaml`, pasted as is, with `rocm-lint` installed (here: a
    command on PATH that runs this checkout)."""
    _, _, env = workspace
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "rocm-lint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rocm_lint "$@"\n')
    shim.chmod(0o755)
    env = dict(
        env,
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")])),
    )
    (project / ".pre-commit-config.yaml").write_text(_doc_config(ROOT / "README.md"))
    _git("add", "-A", cwd=project, env=env)
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "rocm-lint" in out and "Failed" in out
    assert "train.py:3:1: ROC101" in out and "kernel.cu:1:11: ROC702" in out


def test_the_shipped_hooks_at_a_commit_rev_run_in_real_pre_commit(workspace, project):
    """The documented remote form: `repo:` a clone, `rev:` a commit of it (no tag exists)."""
    _, hooks, env = workspace
    sha = _git("rev-parse", "HEAD", cwd=hooks, env=env).stdout.strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {sha}\n    hooks:\n      - id: rocm-lint\n"
    )
    _git("add", "-A", cwd=project, env=env)
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "train.py:3:1: ROC101" in out
