"""Settings end to end (issue #17): per-file-ignores on dot-directories, the config files
(``.rocm-lint.toml``, ``rocm-lint.toml``, ``[tool.rocm-lint]``) and their precedence, ``--config``,
bounded config reads, the flake8 plugin reading the same settings as the CLI, ``--show-settings``."""

import os
import subprocess
import sys

import pytest

from conftest import run_cli

TF32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
# ROC101 only where `on_amd()` is not known as a ROCm predicate
GATED = "import torch\nfrom plat import on_amd\nif not on_amd():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
WORKFLOW = (
    'jobs:\n  t:\n    env:\n      TORCHINDUCTOR_MAX_AUTOTUNE: "1"\n    steps:\n      - run: python x.py\n'
)


def codes(proc):
    return sorted(line.split()[1] for line in proc.stdout.splitlines() if " ROC" in line)


# -- per-file-ignores -----------------------------------------------------------------------------
@pytest.mark.parametrize("glob", [".github/workflows/*.yml", "./.github/workflows/*.yml", ".github/*"])
def test_per_file_ignores_match_dot_directories(tmp_path, glob):
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    (tmp_path / "ci.yml").write_text(WORKFLOW)  # not under .github: still reported
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.rocm-lint]\nper-file-ignores = {{ "{glob}" = ["ROC3"] }}\n'
    )
    proc = run_cli("check", ".github/workflows/ci.yml", "ci.yml", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == ["ci.yml"]


def test_per_file_ignores_devcontainer(tmp_path):
    (tmp_path / ".devcontainer").mkdir()
    (tmp_path / ".devcontainer" / "Dockerfile").write_text("FROM ubuntu\nENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nper-file-ignores = { ".devcontainer/*" = ["ROC302"] }\n'
    )
    assert run_cli("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.rocm-lint]\n")
    assert codes(run_cli("check", ".", cwd=tmp_path)) == ["ROC302"]


# -- config files ---------------------------------------------------------------------------------
def test_rocm_lint_toml_holds_top_level_keys(tmp_path):
    (tmp_path / "m.py").write_text(GATED)
    assert codes(run_cli("check", "m.py", cwd=tmp_path)) == ["ROC101"]
    for name in ("rocm-lint.toml", ".rocm-lint.toml"):
        (tmp_path / name).write_text('extend-rocm-predicates = ["on_amd"]\n')
        proc = run_cli("check", "m.py", cwd=tmp_path)
        assert proc.returncode == 0, (name, proc.stdout, proc.stderr)
        (tmp_path / name).unlink()


def test_a_tool_table_in_rocm_lint_toml_is_an_unknown_key(tmp_path):
    (tmp_path / "m.py").write_text(GATED)
    (tmp_path / "rocm-lint.toml").write_text('[tool.rocm-lint]\nextend-rocm-predicates = ["on_amd"]\n')
    proc = run_cli("check", "m.py", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown option(s) tool" in proc.stderr


def test_precedence_within_a_directory_is_ruffs(tmp_path):
    """`.rocm-lint.toml` beats `rocm-lint.toml` beats `pyproject.toml` in one directory."""
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nignore = ["ROC101"]\n')
    assert codes(run_cli("check", "t.py", cwd=tmp_path)) == []
    (tmp_path / "rocm-lint.toml").write_text("ignore = []\n")
    assert codes(run_cli("check", "t.py", cwd=tmp_path)) == ["ROC101"]
    (tmp_path / ".rocm-lint.toml").write_text('ignore = ["ROC1"]\n')
    assert codes(run_cli("check", "t.py", cwd=tmp_path)) == []


def test_the_closest_directory_wins(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "t.py").write_text(TF32)
    (tmp_path / ".rocm-lint.toml").write_text('ignore = ["ROC101"]\n')
    (sub / "pyproject.toml").write_text('[tool.rocm-lint]\nselect = ["ROC"]\n')
    assert codes(run_cli("check", "sub/t.py", cwd=tmp_path)) == ["ROC101"]
    (sub / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no table: not a config file
    assert codes(run_cli("check", "sub/t.py", cwd=tmp_path)) == []


def test_explicit_config_path(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    other = tmp_path / "cfg"
    other.mkdir()
    (other / "rocm-lint.toml").write_text('ignore = ["ROC101"]\n')
    assert codes(run_cli("check", "--config", other / "rocm-lint.toml", "t.py", cwd=tmp_path)) == []
    assert codes(run_cli("check", "t.py", cwd=tmp_path)) == ["ROC101"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("how", ["found", "--config"])
def test_a_fifo_config_is_one_error_not_a_hang(tmp_path, how):
    (tmp_path / "t.py").write_text(TF32)
    os.mkfifo(tmp_path / "pyproject.toml")
    args = ("--config", tmp_path / "pyproject.toml") if how == "--config" else ()
    proc = run_cli("check", *args, "t.py", cwd=tmp_path)  # run_cli has a timeout: a hang fails
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"rocm-lint: error: {tmp_path / 'pyproject.toml'}: cannot read config: not a regular file (a FIFO)"
    ]


def test_a_huge_config_is_one_error(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    with open(tmp_path / "rocm-lint.toml", "w") as fh:
        fh.write("# padding\n" * (500_000))
    proc = run_cli("check", "t.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "rocm-lint.toml: cannot read config: file too large" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# -- flake8 reads the same settings ---------------------------------------------------------------
def flake8(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROC", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "name, text",
    [
        ("pyproject.toml", '[tool.rocm-lint]\nextend-rocm-predicates = ["on_amd"]\n'),
        ("rocm-lint.toml", 'extend-rocm-predicates = ["on_amd"]\n'),
    ],
)
def test_flake8_reads_the_settings_the_cli_reads(tmp_path, name, text):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "m.py").write_text(GATED)
    (proj / name).write_text(text)
    # from the project and from the directory above: the file's own settings either way
    for cwd, target in ((proj, "m.py"), (tmp_path, "proj/m.py")):
        cli = run_cli("check", target, cwd=cwd)
        f8 = flake8(target, cwd=cwd)
        assert cli.returncode == 0, cli.stdout
        assert f8.returncode == 0 and f8.stdout == "", (cwd, f8.stdout, f8.stderr)
    (proj / name).unlink()
    assert "ROC101" in flake8("proj/m.py", cwd=tmp_path).stdout


def test_flake8_with_a_broken_config_warns_and_goes_on(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / "rocm-lint.toml").write_text("ignroe = []\n")
    proc = flake8("t.py", cwd=tmp_path)
    assert "ROC101" in proc.stdout
    assert "unknown option(s) ignroe" in proc.stderr and proc.stderr.count("rocm-lint:") == 1
