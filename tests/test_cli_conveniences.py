"""Issue #29 items 1, 3, 6 and 11 through the real command line (``python -m rocm_lint`` in a
subprocess): config codes that select no rule, flake8's ``[flake8]`` options, an unreadable
directory named on the command line, ``rule NAME|PREFIX``, ``--exclude``/``--extend-exclude``,
``--add-noqa``, and the help and docs that describe them."""

import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, run_cli

TF32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
# ROC101 only where `on_amd()` is not known as a ROCm predicate
GATED = "import torch\nfrom plat import on_amd\nif not on_amd():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"


def codes(proc):
    return sorted(line.split()[1] for line in proc.stdout.splitlines() if " ROC" in line)


# -- 1. a code that selects no rule, in any config file ---------------------------------------------
@pytest.mark.parametrize(
    "name, text, key, code",
    [
        ("pyproject.toml", '[tool.rocm-lint]\nselect = ["ROC999"]\n', "select", "ROC999"),
        ("rocm-lint.toml", 'ignore = ["ROC55"]\n', "ignore", "ROC55"),
        (".rocm-lint.toml", 'extend-select = ["ROC1", "ROC99"]\n', "extend-select", "ROC99"),
        (
            "pyproject.toml",
            '[tool.rocm-lint]\nper-file-ignores = { "t.py" = ["ROC1", "ROC888"] }\n',
            "per-file-ignores.t.py",
            "ROC888",
        ),
    ],
)
def test_a_config_code_that_selects_no_rule_is_an_error(tmp_path, name, text, key, code):
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / name).write_text(text)
    proc = run_cli("check", "t.py", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.strip() == (
        f"rocm-lint: error: {tmp_path / name}: '{key}': {code} selects no rule (`rocm-lint rules` lists them)"
    )


def test_a_config_code_that_selects_no_rule_in_the_config_option_file(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / "ci.toml").write_text('[tool.rocm-lint]\nselect = ["ROC6", "roc990"]\n')
    proc = run_cli("check", "--config", "ci.toml", "t.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "ci.toml: 'select': ROC990 selects no rule" in proc.stderr


def test_config_prefixes_that_select_rules_still_work(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / "rocm-lint.toml").write_text(
        'select = ["ROC1"]\nignore = ["ROC10"]\nextend-select = ["ROC"]\n'
    )
    proc = run_cli("check", "t.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # ROC10 ignores ROC101: the longest selector wins
    (tmp_path / "rocm-lint.toml").write_text('select = ["ROC101"]\n')
    assert codes(run_cli("check", "t.py", cwd=tmp_path)) == ["ROC101"]


# -- 1. flake8's [flake8] section -------------------------------------------------------------------
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
        ("setup.cfg", "[metadata]\nname = x\n\n[flake8]\nmax-line-length = 100\nrocm-predicates = on_amd\n"),
        ("tox.ini", "[flake8]\nrocm_predicates =\n    other_pred,\n    on_amd\n"),
        (".flake8", "[flake8]\nrocm-predicates = on_amd, plat.other\n"),
    ],
)
def test_the_cli_reads_the_predicates_flake8_reads(tmp_path, name, text):
    (tmp_path / "m.py").write_text(GATED)
    (tmp_path / name).write_text(text)
    cli, f8 = run_cli("check", "m.py", cwd=tmp_path), flake8("m.py", cwd=tmp_path)
    assert f8.returncode == 0 and f8.stdout == "", (f8.stdout, f8.stderr)
    assert cli.returncode == 0 and cli.stdout == "", (cli.stdout, cli.stderr)
    settings = run_cli("check", "--show-settings", "--output-format", "json", "m.py", cwd=tmp_path)
    assert "on_amd" in next(
        s["value"]
        for s in __import__("json").loads(settings.stdout)["settings"]
        if s["key"] == "rocm-predicates"
    )
    # without the option both report the hazard: the same thing again
    (tmp_path / name).write_text("[flake8]\nmax-line-length = 100\n")
    cli, f8 = run_cli("check", "m.py", cwd=tmp_path), flake8("m.py", cwd=tmp_path)
    assert codes(cli) == ["ROC101"] and "ROC101" in f8.stdout


def test_flake8_and_the_cli_read_the_other_predicate_options(tmp_path):
    """``cuda-predicates`` and ``rocm-skip-decorators`` are flake8 options too, read by both."""
    (tmp_path / "m.py").write_text(
        textwrap.dedent("""\
        import torch
        from plat import on_nvidia, skip_amd
        if on_nvidia():
            torch.backends.cuda.matmul.allow_tf32 = True
        @skip_amd
        def test_tf32():
            torch.backends.cuda.matmul.allow_tf32 = True
        """)
    )
    assert codes(run_cli("check", "m.py", cwd=tmp_path)) == ["ROC101", "ROC101"]
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\ncuda-predicates = on_nvidia\nrocm-skip-decorators = skip_amd\n"
    )
    cli, f8 = run_cli("check", "m.py", cwd=tmp_path), flake8("m.py", cwd=tmp_path)
    assert cli.returncode == 0 and cli.stdout == "", cli.stdout
    assert f8.returncode == 0 and f8.stdout == "", (f8.stdout, f8.stderr)


def test_a_broken_flake8_file_is_passed_over_as_flake8_does(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    (tmp_path / "setup.cfg").write_text("[flake8\nrocm-predicates = on_amd\n")
    proc = run_cli("check", "t.py", cwd=tmp_path)
    assert proc.returncode == 1 and codes(proc) == ["ROC101"]


# -- 3. an unreadable directory named on the command line -------------------------------------------
# As root a chmod 000 directory is still readable: there the CLI runs with os.stat/os.scandir
# failing as they fail for a user without permission (EACCES inside the directory and on listing
# it), everything else real; as another user the directory really is unreadable.
DENY = textwrap.dedent("""\
    import os, runpy, sys
    locked = os.path.abspath(sys.argv.pop(1))
    real_stat, real_scandir = os.stat, os.scandir
    def denied(path, inside_only):
        p = os.path.abspath(os.fsdecode(path))
        return p.startswith(locked + os.sep) or (not inside_only and p == locked)
    def stat(path, *a, **k):
        if not isinstance(path, int) and denied(path, True):
            raise PermissionError(13, "Permission denied", path)
        return real_stat(path, *a, **k)
    def scandir(path="."):
        if not isinstance(path, int) and denied(path, False):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)
    os.stat, os.scandir = stat, scandir
    sys.argv[0] = "rocm-lint"
    runpy.run_module("rocm_lint", run_name="__main__")
    """)


def run_denied(tmp_path, locked, *args):
    if os.geteuid() != 0:
        os.chmod(locked, 0)
        try:
            return run_cli(*args, cwd=tmp_path)
        finally:
            os.chmod(locked, 0o755)
    (tmp_path / "deny.py").write_text(DENY)
    return subprocess.run(
        [sys.executable, "deny.py", str(locked), *args],
        cwd=tmp_path,  # as run_cli runs it
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("named", ["locked", "."])
def test_an_unreadable_directory_is_an_error_line_and_exit_2(tmp_path, named):
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "t.py").write_text(TF32)
    (tmp_path / "ok.py").write_text(TF32)
    proc = run_denied(tmp_path, tmp_path / "locked", "check", named)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    shown = "locked" if named == "locked" else "./locked"
    assert f"rocm-lint: error: {shown}: cannot read directory: permission denied" in proc.stderr.splitlines()
    if named == ".":  # the walk goes on
        assert codes(proc) == ["ROC101"]


# -- 6. rule NAME / PREFIX ------------------------------------------------------------------------
def test_rule_by_name_code_and_prefix():
    by_name = run_cli("rule", "ungated-tf32-switch")
    by_code = run_cli("rule", "roc101")
    assert by_name.returncode == by_code.returncode == 0
    assert by_name.stdout == by_code.stdout and by_name.stdout.startswith("# ROC101: ungated-tf32-switch")
    family = run_cli("rule", "ROC1")
    assert family.returncode == 0
    listed = [line.split()[0] for line in family.stdout.splitlines()]
    assert "ROC101" in listed and len(listed) > 1 and all(c.startswith("ROC1") for c in listed)
    everything = run_cli("rules").stdout.splitlines()
    assert family.stdout.splitlines() == [line for line in everything if line.startswith("ROC1")]
    missing = run_cli("rule", "no-such-rule")
    assert missing.returncode == 2 and "unknown rule 'no-such-rule'" in missing.stderr


# -- 6. --exclude / --extend-exclude ---------------------------------------------------------------
def test_exclude_and_extend_exclude_on_the_command_line(tmp_path):
    for rel in ("a.py", "gen/b.py", "third_party/c.py", "venv/d.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(TF32)
    (tmp_path / "rocm-lint.toml").write_text('extend-exclude = ["third_party"]\n')

    def files(*args):
        proc = run_cli("check", *args, ".", cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        return sorted(line.split(":")[0].removeprefix("./") for line in proc.stdout.splitlines())

    assert files() == ["a.py", "gen/b.py"]  # venv by default, third_party by the config
    assert files("--extend-exclude", "gen") == ["a.py"]
    assert files("--extend-exclude", "gen/*.py,a.*") == []
    # --exclude replaces `exclude` (the defaults), extend-exclude stays
    assert files("--exclude", "gen") == ["a.py", "venv/d.py"]
    assert files("--exclude", "gen", "--exclude", "venv") == ["a.py"]
    shown = run_cli("check", "--show-settings", "--extend-exclude", "gen", ".", cwd=tmp_path).stdout
    assert [" ".join(line.split()) for line in shown.splitlines() if line.startswith("extend-exclude ")] == [
        'extend-exclude = ["third_party", "gen"] # command line'
    ]


def test_extend_exclude_applies_to_named_files_with_force_exclude(tmp_path):
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "b.py").write_text(TF32)
    assert run_cli("check", "--extend-exclude", "gen", "gen/b.py", cwd=tmp_path).returncode == 1
    proc = run_cli("check", "--extend-exclude", "gen", "--force-exclude", "gen/b.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


# -- 6. --add-noqa ---------------------------------------------------------------------------------
PY = textwrap.dedent('''\
    import torch
    torch.backends.cuda.matmul.allow_tf32 = True  # keep this comment
    torch.backends.cudnn.allow_tf32 = True  # noqa: E501
    model = torch.compile(
        m,
        mode="reduce-overhead")
    note = """torch.backends.cuda.matmul.allow_tf32 = True
    """; torch.backends.cuda.matmul.allow_tf32 = True
    GENCODE = [
        "-gencode=arch=compute_80,code=sm_80",  # sm_80 only
    ]
    ''')
PY_NOQA = textwrap.dedent('''\
    import torch
    torch.backends.cuda.matmul.allow_tf32 = True  # keep this comment  # noqa: ROC101
    torch.backends.cudnn.allow_tf32 = True  # noqa: E501, ROC101
    model = torch.compile(
        m,
        mode="reduce-overhead")  # noqa: ROC201
    note = """torch.backends.cuda.matmul.allow_tf32 = True
    """; torch.backends.cuda.matmul.allow_tf32 = True  # noqa: ROC101
    GENCODE = [
        "-gencode=arch=compute_80,code=sm_80",  # sm_80 only  # noqa: ROC502
    ]
    ''')
CU = textwrap.dedent("""\
    #include <cuda.h>
    __global__ void k(unsigned *out) {
      unsigned m = __ballot_sync(0xffffffff, 1);
      out[0] = m;  // NOLINT(ROC999)
    }
    #define BALLOT(x) __ballot_sync(0xffffffff, x) \\
      + 0
    """)
CU_NOQA = textwrap.dedent("""\
    #include <cuda.h>  // NOLINT(ROC702)
    __global__ void k(unsigned *out) {
      unsigned m = __ballot_sync(0xffffffff, 1);  // NOLINT(ROC601, ROC602)
      out[0] = m;  // NOLINT(ROC999)
    }
    #define BALLOT(x) __ballot_sync(0xffffffff, x) /* NOLINT(ROC602) */ \\
      + 0
    """)
SH = "#!/bin/sh\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\npython train.py\n"


def test_add_noqa_python_cpp_and_config_files_idempotent(tmp_path):
    (tmp_path / "a.py").write_text(PY)
    (tmp_path / "k.cu").write_text(CU)
    (tmp_path / "run.sh").write_text(SH)
    before = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert before.returncode == 1
    n = len(before.stdout.splitlines())
    proc = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"Added {n} noqa directives.\n"
    assert (tmp_path / "a.py").read_text() == PY_NOQA
    assert (tmp_path / "k.cu").read_text() == CU_NOQA
    assert (tmp_path / "run.sh").read_text() == SH.replace("128\n", "128  # noqa: ROC301\n")
    after = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == "", after.stdout
    f8 = flake8("a.py", cwd=tmp_path)  # flake8 reads the Python comments the same way
    assert f8.returncode == 0 and f8.stdout == "", f8.stdout
    again = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert again.returncode == 0 and again.stderr == "Added 0 noqa directives.\n"
    assert (tmp_path / "a.py").read_text() == PY_NOQA


def test_add_noqa_keeps_line_endings_encoding_and_mode(tmp_path):
    data = (
        "# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    path = tmp_path / "t.py"
    path.write_bytes(data.replace("\n", "\r\n").encode("latin-1"))
    os.chmod(path, 0o750)
    proc = run_cli("check", "--no-cache", "--add-noqa", "t.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == data.replace("True\n", "True  # noqa: ROC101\n").replace("\n", "\r\n").encode(
        "latin-1"
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_add_noqa_never_writes_a_changed_program(tmp_path):
    """A line that ends inside a raw string: `// NOLINT` there would be string content, so the
    file is left as it is and the finding is named."""
    text = (
        "__global__ void k(unsigned *o) {\n"
        '  o[0] = __ballot_sync(0xffffffff, 1); const char *s = R"x(\n'
        ')x";\n}\n'
    )
    (tmp_path / "k.cu").write_text(text)
    assert "ROC602" in codes(run_cli("check", "--no-cache", "k.cu", cwd=tmp_path))
    proc = run_cli("check", "--no-cache", "--add-noqa", "k.cu", cwd=tmp_path)
    assert proc.returncode == 2
    assert (tmp_path / "k.cu").read_text() == text
    assert "k.cu: no noqa added: the comment would change the code" in proc.stderr
    assert "Added 0 noqa directives." in proc.stderr


@pytest.mark.parametrize(
    "name, text, why",
    [
        (
            "Dockerfile",
            "FROM rocm/pytorch\nENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n",
            "a Dockerfile takes inline comments only in a RUN command's shell",
        ),
        (
            ".env",
            "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n",
            "`docker run --env-file` would read an inline comment as part of the value",
        ),
        (
            "run.sh",
            "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 \\\n  X=1\n",
            "the line continues (a trailing backslash): a comment would end the command",
        ),
    ],
)
def test_add_noqa_leaves_lines_where_a_comment_is_not_a_comment(tmp_path, name, text, why):
    (tmp_path / name).write_text(text)
    proc = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert (tmp_path / name).read_text() == text
    assert f"ROC301 no noqa added: {why}" in proc.stderr


def test_add_noqa_is_not_combined_with_fix(tmp_path):
    (tmp_path / "t.py").write_text(TF32)
    proc = run_cli("check", "--add-noqa", "--fix", "t.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--add-noqa writes comments into files: it cannot be combined with --fix" in proc.stderr
    assert (tmp_path / "t.py").read_text() == TF32


# -- 11. help and docs -----------------------------------------------------------------------------
def test_config_help_says_what_it_does():
    help_text = "".join(run_cli("check", "--help").stdout.split())  # argparse wraps anywhere
    assert "insteadofpyproject.toml" not in help_text
    assert (
        "--configFILEreadsettingsfromFILE(its[tool.rocm-lint]table,oritstop-levelkeys)insteadof"
        "theclosest.rocm-lint.toml,rocm-lint.tomlorpyproject.toml"
    ) in help_text


@pytest.mark.parametrize("flag", ["--add-noqa", "--exclude", "--extend-exclude"])
def test_the_new_flags_are_documented(flag):
    assert flag in run_cli("check", "--help").stdout
    assert flag in (ROOT / "README.md").read_text("utf-8")
    assert flag in (ROOT / "docs" / "usage.md").read_text("utf-8")


# -- 6. shell completion -------------------------------------------------------------------------------
def _script(tmp_path, shell):
    proc = run_cli("completion", shell)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"rocm-lint.{shell}"
    path.write_text(proc.stdout)
    return path


def test_bash_completion_completes_commands_options_choices_and_rules(tmp_path):
    script = _script(tmp_path, "bash")

    def complete(*words):
        proc = subprocess.run(
            [
                "bash",
                "-c",
                f'source {script}; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); '
                '_rocm_lint; printf "%s\\n" "${COMPREPLY[@]}"',
                "_",
                "rocm-lint",
                *words,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("ch") == ["check"]
    assert complete("check", "--add") == ["--add-noqa"]
    assert complete("check", "--exte") == ["--extend-select", "--extend-exclude"]
    assert complete("check", "--output-format", "j") == ["json", "junit"]
    assert complete("check", "--select", "ROC10") == [f"ROC10{i}" for i in range(1, 8)]
    assert complete("rule", "ungated-t") == ["ungated-tf32-switch"]
    assert complete("completion", "") == ["bash", "zsh", "fish"]
    assert complete("check", "rocm-lint.b") == ["rocm-lint.bash"]  # paths


def test_every_check_option_is_in_the_completion():
    bash = run_cli("completion", "bash").stdout
    help_text = run_cli("check", "--help").stdout
    import re

    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", help_text)) - {"--help"}
    assert options and all(f" {o} " in bash or f' {o}"' in bash for o in options), options


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_completion(tmp_path):
    script = _script(tmp_path, "fish")
    proc = subprocess.run(
        [
            "fish",
            "-c",
            f"source {script}; complete -C 'rocm-lint check --add'; "
            "echo ---; complete -C 'rocm-lint check --output-format '; "
            "echo ---; complete -C 'rocm-lint rule ungated-t'",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    add, formats, rule = [
        [line.split("\t")[0] for line in part.strip().splitlines()] for part in proc.stdout.split("---")
    ]
    assert add == ["--add-noqa"]
    assert sorted(formats) == sorted(
        ["concise", "full", "json", "sarif", "github", "junit", "html", "summary"]
    )
    assert rule == ["ungated-tf32-switch"]


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_completion_registers_through_bashcompinit(tmp_path):
    script = _script(tmp_path, "zsh")
    proc = subprocess.run(
        [
            "zsh",
            "-f",
            "-c",
            f"autoload -U compinit && compinit -u -D; source {script}; "
            "print -r -- $_comps[rocm-lint]; "
            "f() {{ emulate -L sh; COMP_WORDS=(rocm-lint check --add); COMP_CWORD=2; _rocm_lint; "
            'print -l -- "${{COMPREPLY[@]}}"; }}; f'.replace("{{", "{").replace("}}", "}"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=dict(os.environ, HOME=str(tmp_path)),
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "_bash_complete -o default -o bashdefault -F _rocm_lint"
    assert "--add-noqa" in lines[1:]


def test_statistics_in_a_format_without_a_statistics_form_is_a_usage_error(tmp_path):
    """`--statistics --output-format html` used to print the plain table into the report."""
    import subprocess
    import sys

    (tmp_path / "t.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    for fmt in ("html", "sarif", "github", "junit"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "rocm_lint",
                "check",
                "t.py",
                "--no-cache",
                "--statistics",
                "--output-format",
                fmt,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2 and "no statistics form" in proc.stderr, (fmt, proc.stderr)
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocm_lint",
            "check",
            "t.py",
            "--no-cache",
            "--statistics",
            "--output-format",
            "json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 1 and '"ROC101"' in ok.stdout
