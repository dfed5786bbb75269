"""The command line, end to end through ``python -m rocm_lint``."""

import json
import os

import pytest

from conftest import run_cli

HAZARD = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD)
    (tmp_path / "clean.py").write_text("import torch\nprint(torch.__version__)\n")
    return tmp_path


def test_findings_exit_1_and_concise_shape(project):
    proc = run_cli("check", project)
    assert proc.returncode == 1
    assert proc.stdout.strip() == (
        f"{project / 'train.py'}:2:1: ROC101 TF32 switch `torch.backends.cuda.matmul.allow_tf32` is "
        "ignored by ROCm builds unless HIPBLASLT_ALLOW_TF32=1 (and unsupported on some GPUs): "
        "gate it with `if not is_rocm:`"
    )
    assert "Found 1 finding in 1 file (2 checked)." in proc.stderr


def test_clean_exit_0(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = run_cli("check", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_exit_zero(project):
    assert run_cli("check", "--exit-zero", project).returncode == 0


def test_no_cache_is_accepted_and_changes_nothing(project):
    """`--no-cache` is in the CLI contract; with no cache kept, the run is the same run."""
    plain, no_cache = run_cli("check", project), run_cli("check", "--no-cache", project)
    assert no_cache.returncode == plain.returncode == 1
    assert no_cache.stdout == plain.stdout and "ROC101" in no_cache.stdout


def test_default_path_is_cwd(project):
    proc = run_cli("check", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("train.py:2:1: ROC101") or proc.stdout.startswith("./train.py:2:1: ROC101")


def test_select_ignore_extend_select(project):
    (project / "more.py").write_text("import torch\ntorch.compile(m, mode='reduce-overhead')\n")

    def codes(p):
        return sorted(ln.split()[1] for ln in p.stdout.splitlines())

    assert codes(run_cli("check", project)) == ["ROC101", "ROC201"]
    assert codes(run_cli("check", "--select", "ROC2", project)) == ["ROC201"]
    assert codes(run_cli("check", "--ignore", "ROC101", project)) == ["ROC201"]
    assert codes(run_cli("check", "--select", "ROC2", "--extend-select", "ROC101", project)) == [
        "ROC101",
        "ROC201",
    ]
    assert codes(run_cli("check", "--select", "ROC", "--ignore", "ROC1,ROC2", project)) == []
    # the longest matching selector wins
    assert codes(run_cli("check", "--ignore", "ROC", "--extend-select", "ROC101", project)) == ["ROC101"]


def test_bad_select_is_usage_error(project):
    proc = run_cli("check", "--select", "E501", project)
    assert proc.returncode == 2
    assert "not a rocm-lint code" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_json_output_is_ruff_shaped(project):
    proc = run_cli("check", "--output-format", "json", project)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert len(data) == 1
    item = data[0]
    assert set(item) == {
        "cell",
        "code",
        "end_location",
        "filename",
        "fix",
        "location",
        "message",
        "name",
        "noqa_row",
        "nvidia_only_source",
        "severity",
        "url",
    }
    assert item["code"] == "ROC101"
    assert item["name"] == "ungated-tf32-switch" and item["severity"] == "error"
    assert item["location"] == {"row": 2, "column": 1}
    assert item["end_location"] == {"row": 2, "column": 38}
    assert item["filename"] == str(project / "train.py")
    assert item["noqa_row"] == 2
    assert item["fix"]["applicability"] == "safe"
    assert item["fix"]["edits"][0]["content"].endswith(
        "if not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    assert item["url"].endswith("docs/rules/ROC101.md")


def test_json_output_empty_list(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = run_cli("check", "--output-format", "json", tmp_path)
    assert json.loads(proc.stdout) == []


def test_full_output_has_code_frame(project):
    proc = run_cli("check", "--output-format", "full", project)
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("gate it with `if not is_rocm:`")
    assert "2 | torch.backends.cuda.matmul.allow_tf32 = True" in proc.stdout
    assert "  | " + "^" * 37 in proc.stdout
    assert "\x1b[" not in proc.stdout  # no colour when not a terminal


def test_statistics(project):
    (project / "b.py").write_text(HAZARD + "torch.backends.cudnn.allow_tf32 = True\n")
    proc = run_cli("check", "--statistics", project)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["3\tROC101\tungated-tf32-switch"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_give_same_result(tmp_path, jobs):
    for i in range(250):  # over the threshold where processes are used
        (tmp_path / f"m{i}.py").write_text(HAZARD if i % 10 == 0 else "x = 1\n")
    proc = run_cli("check", "-j", jobs, tmp_path)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 25


def test_rule_command_prints_doc():
    proc = run_cli("rule", "ROC101")
    assert proc.returncode == 0
    assert proc.stdout.startswith("# ROC101")
    assert "## Why is this bad on ROCm?" in proc.stdout
    assert run_cli("rule", "roc201").returncode == 0


def test_rule_command_unknown_code():
    proc = run_cli("rule", "ROC999")
    assert proc.returncode == 2
    assert "unknown rule" in proc.stderr


def test_rules_command_lists_catalogue():
    proc = run_cli("rules")
    assert proc.returncode == 0
    assert any(ln.startswith("ROC101  ungated-tf32-switch") for ln in proc.stdout.splitlines())
    data = json.loads(run_cli("rules", "--json").stdout)
    by_code = {r["code"]: r for r in data}
    assert by_code["ROC401"]["fix"] == "unsafe"
    assert by_code["ROC101"]["languages"] == ["python"]
    assert set(by_code) >= {"ROC101", "ROC201", "ROC203", "ROC204", "ROC205", "ROC301", "ROC401"}


def test_no_command_prints_help():
    proc = run_cli()
    assert proc.returncode == 2
    assert "check" in proc.stdout


# -- bad input: one clear line per file, the rest still checked, exit 2, never a traceback --
def _assert_reported(proc, fragment):
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert fragment in proc.stderr, proc.stderr


def test_syntax_error_reported_and_others_checked(project):
    (project / "broken.py").write_text("import torch\nif True\n    torch.backends.cudnn.allow_tf32 = True\n")
    proc = run_cli("check", project)
    _assert_reported(proc, "broken.py: syntax error at line 2")
    assert "train.py:2:1: ROC101" in proc.stdout
    assert len([ln for ln in proc.stderr.splitlines() if "error:" in ln]) == 1


def test_undecodable_bytes(project):
    (project / "latin.py").write_bytes(b"# caf\xe9\nimport torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    proc = run_cli("check", project)
    _assert_reported(proc, "latin.py: cannot decode as utf-8")
    assert "train.py:2:1: ROC101" in proc.stdout


def test_encoding_cookie_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\ntorch.backends.cudnn.allow_tf32 = True\n"
    )
    proc = run_cli("check", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "latin.py:4:1: ROC101" in proc.stdout


def test_bom_and_crlf(tmp_path):
    (tmp_path / "win.py").write_bytes(
        b"\xef\xbb\xbfimport torch\r\n\r\ntorch.backends.cudnn.allow_tf32 = True\r\n"
    )
    proc = run_cli("check", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "win.py:3:1: ROC101" in proc.stdout


def test_binary_file(project):
    (project / "blob.py").write_bytes(b"\x00\x01\x02allow_tf32\x00")
    proc = run_cli("check", project)
    _assert_reported(proc, "blob.py: binary file")
    assert "train.py:2:1: ROC101" in proc.stdout


def test_empty_file_is_fine(tmp_path):
    (tmp_path / "empty.py").write_text("")
    proc = run_cli("check", tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_missing_path(project):
    proc = run_cli("check", project / "nope.py", project)
    _assert_reported(proc, "nope.py: no such file or directory")
    assert "train.py:2:1: ROC101" in proc.stdout


def test_symlink_loop(project):
    os.symlink("loop.py", project / "loop.py")
    os.symlink(project, project / "self")  # a directory cycle: not followed
    proc = run_cli("check", project)
    _assert_reported(proc, "loop.py:")
    assert "train.py:2:1: ROC101" in proc.stdout
    assert proc.stdout.count("ROC101") == 1


def test_unreadable_file(project):
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    path = project / "secret.py"
    path.write_text(HAZARD)
    path.chmod(0)
    proc = run_cli("check", project)
    _assert_reported(proc, "secret.py: cannot read")


def test_broken_config(project):
    (project / "pyproject.toml").write_text("[tool.rocm-lint\nselect = [\n")
    proc = run_cli("check", project)
    _assert_reported(proc, "pyproject.toml: invalid TOML")


def test_config_with_wrong_types(project):
    (project / "pyproject.toml").write_text('[tool.rocm-lint]\nselect = "ROC1"\nignore = 3\n')
    proc = run_cli("check", project)
    _assert_reported(proc, "'ignore' must be a list of rule codes")


def test_unknown_config_key(project):
    (project / "pyproject.toml").write_text('[tool.rocm-lint]\nselekt = ["ROC1"]\n')
    proc = run_cli("check", project)
    _assert_reported(proc, "unknown option(s) selekt")


def test_explicit_config_file(project, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("cfg") / "rocm-lint.toml"
    cfg.write_text('ignore = ["ROC101"]\n')
    proc = run_cli("check", "--config", cfg, project)
    assert proc.returncode == 0, proc.stderr


def test_huge_file_is_skipped_with_a_message(tmp_path, monkeypatch):
    from rocm_lint import engine

    path = tmp_path / "huge.py"
    path.write_text("x = 1\n")
    monkeypatch.setattr(engine, "MAX_FILE_BYTES", 3)
    result = engine.check_file(str(path), engine.Config())
    assert "file too large" in str(result)


def test_fixable_count_is_what_fix_would_fix(tmp_path):
    """A statement that shares its line (`a = 1; hazard`, `if x: hazard`) cannot be gated: the
    summary does not count it as fixable, and --diff agrees."""
    (tmp_path / "t.py").write_text(
        "import torch\ns = 1; torch.backends.cudnn.allow_tf32 = True\n"
        "if s: torch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True; x = 2\n"
        "torch.backends.cudnn.allow_tf32 = True  # alone on its line\n"
    )
    check = run_cli("check", "t.py", cwd=tmp_path)
    assert check.stdout.count("ROC101") == 4
    assert "1 fixable with --fix" in check.stderr
    assert "Would fix 1 finding." in run_cli("check", "--diff", "t.py", cwd=tmp_path).stderr


def test_summary_never_says_all_passed_when_a_file_failed(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = (\n")
    proc = run_cli("check", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert "All checks passed" not in proc.stderr and "1 file could not be analysed" in proc.stderr


def test_selector_naming_no_rule_is_a_usage_error(project):
    proc = run_cli("check", "--select", "ROC999", project)
    assert proc.returncode == 2 and "ROC999 selects no rule" in proc.stderr
    assert run_cli("check", "--ignore", "ROC9", project).returncode == 1  # ROC9: the doctor's codes


@pytest.mark.parametrize("where", [(), (".",), ("./",), ("tests",)])
def test_diff_applies_with_git_apply(tmp_path, where):
    """`--diff` (no path, `.`, `./` or a directory) prints headers `git apply` takes."""
    import subprocess

    env = dict(
        os.environ,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "x.py").write_text(
        "import torch\nmodel = torch.compile(torch.nn.Linear(4, 4), mode='reduce-overhead')\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    proc = run_cli("check", "--diff", *where, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "--- a/tests/x.py\n+++ b/tests/x.py\n" in proc.stdout
    check = subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=tmp_path,
        input=proc.stdout,
        text=True,
        capture_output=True,
        env=env,
    )
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=proc.stdout, text=True, check=True, env=env)
    assert run_cli("check", cwd=tmp_path).returncode == 0


# -- ruff's conventions (issue #17) ---------------------------------------------------------------
UNSAFE_CU = (
    "__global__ void k(int* out, bool p) {\n"
    "  unsigned int m = __ballot_sync(0xffffffff, p);\n"
    "  out[threadIdx.x] = __popc(m);\n}\n"
)


def test_summary_counts_safe_and_hidden_unsafe_fixes(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD)
    (tmp_path / "k.cu").write_text(UNSAFE_CU)
    proc = run_cli("check", ".", cwd=tmp_path)
    fixes = [
        i["fix"]["applicability"]
        for i in json.loads(run_cli("check", "--output-format", "json", ".", cwd=tmp_path).stdout)
        if i["fix"]
    ]
    # ROC101; ROC601, ROC602; the use of the ballot variable says why it has no fix of its own
    assert sorted(fixes) == ["display", "safe", "unsafe", "unsafe"]
    assert "1 fixable with --fix (2 hidden fixes can be enabled with --unsafe-fixes)." in proc.stderr
    assert "3 fixable with --fix." in run_cli("check", ".", "--unsafe-fixes", cwd=tmp_path).stderr
    # after --fix applied the safe one: no "No fixes available", which would say otherwise
    fixed = run_cli("check", "--fix", ".", cwd=tmp_path).stderr
    assert "No fixes available" not in fixed, fixed
    assert "Fixed 1 finding" in fixed and "2 hidden fixes can be enabled with --unsafe-fixes." in fixed
    (tmp_path / "t.py").unlink()
    assert (
        "No fixes available (2 hidden fixes can be enabled with --unsafe-fixes)."
        in run_cli("check", ".", cwd=tmp_path).stderr
    )


def test_statistics_as_json(project):
    (project / "b.py").write_text("import torch\ntorch.backends.cudnn.allow_tf32 = True; x = 1\n")
    proc = run_cli("check", "--statistics", "--output-format", "json", project)
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == [
        {"code": "ROC101", "name": "ungated-tf32-switch", "count": 2, "fixable": True}
    ]
    assert proc.stderr == ""


def test_output_file(project, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.json"
    proc = run_cli("check", "--output-format", "json", "--output-file", out, project)
    assert proc.returncode == 1 and proc.stdout == ""
    assert [item["code"] for item in json.loads(out.read_text("utf-8"))] == ["ROC101"]
    assert "Found 1 finding" in proc.stderr
    proc = run_cli("check", "-o", out.parent / "missing" / "r.txt", project)
    assert proc.returncode == 2 and "no such directory" in proc.stderr


def test_show_fixes_lists_what_fix_applies(tmp_path):
    (tmp_path / "t.py").write_text(HAZARD + "model = torch.compile(m, mode='reduce-overhead')\n")
    (tmp_path / "k.cu").write_text(UNSAFE_CU)
    would = run_cli("check", "--show-fixes", ".", cwd=tmp_path)
    assert would.returncode == 1
    assert (
        "Would fix 2 findings:\n- t.py:\n    1 \u00d7 ROC101 (ungated-tf32-switch)\n"
        "    1 \u00d7 ROC201 (reduce-overhead-compile)\n"
    ) in would.stdout
    assert "HAZARD" not in would.stdout and (tmp_path / "t.py").read_text().startswith(
        HAZARD
    )  # nothing written
    fixed = run_cli("check", "--fix", "--show-fixes", ".", cwd=tmp_path)
    assert "Fixed 2 findings:\n- t.py:\n" in fixed.stdout and "k.cu" not in fixed.stdout.split("Fixed")[1]
    assert "is_rocm" in (tmp_path / "t.py").read_text()


def test_show_settings_says_where_each_value_came_from(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nignore = ["ROC401"]\nper-file-ignores = { "tests/*" = ["ROC1"] }\n'
    )
    (tmp_path / "tests").mkdir()
    proc = run_cli("check", "--show-settings", "--extend-select", "ROC2", "tests/t.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == f"config file: {tmp_path / 'pyproject.toml'}"

    def row(key):
        return next(line for line in lines if line.startswith(key + " "))

    assert row("ignore").endswith(f'= ["ROC401"]  # {tmp_path / "pyproject.toml"}')
    assert row("select").endswith("# default")
    assert row("extend-select").endswith('= ["ROC2"]  # command line')
    assert "per-file-ignores for this path: ROC1" in proc.stdout
    data = json.loads(
        run_cli("check", "--show-settings", "--output-format", "json", "tests/t.py", cwd=tmp_path).stdout
    )
    assert data["per-file-ignores-here"] == ["ROC1"] and "ROC101" not in data["enabled-codes"]
