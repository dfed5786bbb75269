"""The config-file scanner: shell, Dockerfile, YAML, .env and CMake fixtures with inline
``# expect: ROC301`` markers (what each finds, and that the negatives stay silent:
tests/test_fixture_snapshots.py), suppressions, CRLF, discovery through the CLI, and the readers
underneath (settings, gates, fallbacks)."""

import random
import re
from collections import Counter

import pytest

from conftest import FIXTURES, expected_findings, is_snapshot, run_cli
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.engine import check_file, check_source
from rocm_lint.registry import get_rule
from rocm_lint.configfiles.scanner import NVIDIA, ROCM, read_unit
from rocm_lint.configfiles.platform_tests import branch_gates
from rocm_lint.configfiles.shell import ShellReader

CONFIG = FIXTURES / "config"
FILES = sorted(p for p in CONFIG.rglob("*") if p.is_file() and not is_snapshot(p))
POSITIVE = [p for p in FILES if "ok" not in p.relative_to(CONFIG).parts]
NEGATIVE = [p for p in FILES if "ok" in p.relative_to(CONFIG).parts]
CONFIG_CODES = ("ROC301", "ROC302", "ROC404", "ROC502", "ROC503")
MARKER = re.compile(r"[ \t]*#\s*expect:\s*(?:ROC[0-9]{3}\s*)+$")


def ids(p):
    return str(p.relative_to(CONFIG))


def findings(path, text=None, language=None):
    result = (
        check_file(str(path), Config())
        if text is None
        else check_source(str(path), text, Config(), language or language_of(path))
    )
    assert isinstance(result, list), result
    return result


# -- fixtures --------------------------------------------------------------------------------------
def test_fixtures_cover_every_language_and_rule():
    languages = {"shell", "dockerfile", "yaml", "dotenv", "cmake", "manifest"}
    assert {language_of(p) for p in POSITIVE} == languages
    assert {language_of(p) for p in NEGATIVE} == languages
    marked = {(language_of(p), code) for p in POSITIVE for _, code in expected_findings(p)}
    for language in ("shell", "dockerfile", "yaml", "dotenv"):
        assert {(language, c) for c in CONFIG_CODES if language in get_rule(c).languages} <= marked, language
    assert {("cmake", "ROC502"), ("cmake", "ROC503")} <= marked
    # the dependency rules: every manifest kind, pip commands in scripts, images and YAML, an index setting
    dependency_codes = ("ROC405", "ROC406", "ROC407")
    assert {(lang, c) for lang in ("manifest", "shell", "dockerfile") for c in dependency_codes} <= marked
    assert {("yaml", c) for c in dependency_codes} <= marked and ("dotenv", "ROC405") in marked
    manifests = {p.name for p in POSITIVE if language_of(p) == "manifest"}
    assert {"requirements.txt", "pyproject.toml", "setup.cfg"} <= manifests


@pytest.mark.parametrize("path", POSITIVE, ids=ids)
def test_markers_do_not_change_the_result(path):
    text = path.read_text("utf-8")
    bare = "\n".join(MARKER.sub("", line) for line in text.split("\n"))
    assert bare != text
    without = Counter((f.line, f.code) for f in findings(path, bare))
    assert without == expected_findings(path)


@pytest.mark.parametrize("path", POSITIVE, ids=ids)
def test_crlf_gives_the_same_findings(path, tmp_path):
    copy = tmp_path / path.relative_to(CONFIG)  # the same relative path: .github/ is a CI definition
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    lf = sorted((f.line, f.col, f.end_line, f.end_col, f.code) for f in findings(path))
    crlf = sorted((f.line, f.col, f.end_line, f.end_col, f.code) for f in check_file(str(copy), Config()))
    assert lf == crlf


@pytest.mark.parametrize(
    "style",
    ["# rocm-lint: ignore[{code}]", "# noqa: {code}", "# noqa:{prefix}", "# rocm-lint: ignore", "# noqa"],
)
@pytest.mark.parametrize("path", POSITIVE, ids=ids)
def test_suppression_comments(path, style):
    """Each marker replaced by a suppression comment: that line goes quiet, the others stay."""
    lines = path.read_text("utf-8").split("\n")
    expected = expected_findings(path)
    for n, line in enumerate(lines, start=1):
        codes = [c for (ln, c) in expected if ln == n]
        if not codes:
            continue
        comment = style.format(code=",".join(codes), prefix=codes[0][:4])
        changed = lines[: n - 1] + [MARKER.sub("  " + comment, line)] + lines[n:]
        got = Counter((f.line, f.code) for f in findings(path, "\n".join(changed)))
        assert got == Counter({k: v for k, v in expected.items() if k[0] != n}), (n, comment)


def test_suppressing_another_code_keeps_the_finding():
    text = "export TORCHINDUCTOR_MAX_AUTOTUNE=1  # rocm-lint: ignore[ROC301]\n"
    assert [f.code for f in findings("x.sh", text)] == ["ROC302"]
    text = "export TORCHINDUCTOR_MAX_AUTOTUNE=1  # noqa: ROC301\n"
    assert [f.code for f in findings("x.sh", text)] == ["ROC302"]


def test_cli_discovers_config_files_by_name():
    codes = CONFIG_CODES + ("ROC405", "ROC406", "ROC407")
    proc = run_cli("check", "--select", ",".join(codes), "--output-format", "concise", "--quiet", CONFIG)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    files = {line.split(":")[0].split("config/", 1)[1] for line in lines}
    assert {
        "Dockerfile",
        "Dockerfile.rocm",
        "CMakeLists.txt",
        ".env",
        "docker-compose.yml",
        ".github/workflows/ci.yml",
        "launch.sh",
        "cmake/torch_ext.cmake",
        "deps/requirements.txt",
        "deps/requirements-common.txt",
        "deps/pyproject.toml",
        "deps/poetry/pyproject.toml",
        "deps/setup.cfg",
        "deps/environment.yml",
    } <= files
    assert not any(f.startswith("ok/") for f in files)
    assert len(lines) == sum(sum(expected_findings(p).values()) for p in FILES)


def test_config_findings_are_display_only():
    """No edit in a config file; a rule that has fixes elsewhere (ROC301) says why not here."""
    from rocm_lint.finding import Applicability

    for f in findings(CONFIG / "launch.sh") + findings(CONFIG / "Dockerfile.rocm"):
        assert f.fix is None or (
            f.fix.applicability == Applicability.DISPLAY
            and not f.fix.edits
            and f.fix.message.startswith("not fixed: ")
        )


def test_rules_are_registered_for_config_languages():
    assert set(get_rule("ROC301").languages) == {"python", "shell", "dockerfile", "yaml", "dotenv"}
    assert set(get_rule("ROC302").languages) == {"shell", "dockerfile", "yaml", "dotenv"}
    assert get_rule("ROC302").family == "ROC3" and get_rule("ROC302").fix is None  # no fix, not "display"
    for code in ("ROC502", "ROC503"):
        assert set(get_rule(code).languages) == {"python", "shell", "dockerfile", "yaml", "dotenv", "cmake"}
    assert set(get_rule("ROC404").languages) == {"python", "shell", "dockerfile", "yaml"}


def test_files_without_trigger_words_are_not_read(monkeypatch):
    import rocm_lint.configfiles.scanner as scanner

    def boom(*args, **kwargs):
        raise AssertionError("read a file that holds no trigger word")

    monkeypatch.setattr(scanner, "read_unit", boom)
    assert check_source("run.sh", "export CUDA_VISIBLE_DEVICES=0\npython train.py\n", Config()) == []
    assert check_source("CMakeLists.txt", "project(x LANGUAGES CXX)\n", Config()) == []


# -- the readers ---------------------------------------------------------------------------------------
def settings(text, language, path="x"):
    return [(s.name, s.value, s.how) for s in read_unit(path, text, Config(), language).settings]


@pytest.mark.parametrize(
    "text,language,expected",
    [
        ("export A=1 B='x y'", "shell", [("A", "1", "export"), ("B", "x y", "export")]),
        ("A=1 env -u Z B=2 cmd C=3", "shell", [("A", "1", "prefix"), ("B", "2", "env")]),
        ("declare -rx A=1; readonly B=2; local C=3", "shell", [("A", "1", "export"), ("B", "2", "assign")]),
        ("echo 'A=1' # B=2", "shell", []),
        ('echo "${#A} A=1"', "shell", []),
        ('X="a#b" # c=1', "shell", [("X", "a#b", "assign")]),
        ("A=1\\\n2 cmd", "shell", [("A", "12", "prefix")]),
        ("sudo -E B=2 make", "shell", [("B", "2", "env")]),
        (
            "docker run -e A=1 --env=B=2 --build-arg C=3 img",
            "shell",
            [("A", "1", "docker-env"), ("B", "2", "docker-env"), ("C", "3", "build-arg")],
        ),
        (
            "cmake -DA=1 -D B=gfx942 -DC:STRING=x ..",
            "shell",
            [("A", "1", "define"), ("B", "gfx942", "define"), ("C", "x", "define")],
        ),
        ("cat <<EOF\nA=1\nEOF\nB=2", "shell", [("B", "2", "assign")]),
        ('ENV A=1 B="x y"', "dockerfile", [("A", "1", "ENV"), ("B", "x y", "ENV")]),
        ("ENV A x y", "dockerfile", [("A", "x y", "ENV")]),
        ("ARG A=1\nARG B", "dockerfile", [("A", "1", "ARG")]),
        ("RUN A=1 make && export B=2", "dockerfile", [("A", "1", "prefix"), ("B", "2", "export")]),
        ("RUN a \\\n  # gone\n  && export B=2", "dockerfile", [("B", "2", "export")]),
        ("LABEL A=1\n# ENV B=2", "dockerfile", []),
        (
            "RUN <<EOF\nexport A=1\nEOF\nRUN cat > f <<EOF\nexport B=2\nEOF",
            "dockerfile",
            [("A", "1", "export")],
        ),
        ('CMD ["env", "A=1"]', "dockerfile", []),
        ('env:\n  A: "1"\n  B: x # c', "yaml", [("A", "1", "yaml"), ("B", "x", "yaml")]),
        ("environment:\n  - A=1\n  - 'B=2'", "yaml", [("A", "1", "yaml"), ("B", "2", "yaml")]),
        ("env:\n- name: A\n  value: '1'\n- name: B\n  valueFrom: {}", "yaml", [("A", "1", "yaml")]),
        ('env: {A: 1, B: "x"}', "yaml", [("A", "1", "yaml"), ("B", "x", "yaml")]),
        ('variables:\n  A:\n    value: "1"', "yaml", [("A", "1", "yaml")]),
        (
            "steps:\n  - run: |\n      export A=1\n      echo B=2\n    env:\n      C: 3",
            "yaml",
            [("C", "3", "yaml"), ("A", "1", "export")],
        ),
        (
            "script:\n  - A=1 make\n  - >\n    export B=2",
            "yaml",
            [("A", "1", "prefix"), ("B", "2", "export")],
        ),
        ("run: |\n  cat <<EOF\n  env:\n    A: 1\n  EOF", "yaml", []),
        ("# env:\n#   A: 1\nname: x", "yaml", []),
        (
            "A=1\nexport B=\"x y\"  # c\nC='$D'\n# D=4",
            "dotenv",
            [("A", "1", "dotenv"), ("B", "x y", "export"), ("C", "$D", "dotenv")],
        ),
        (
            "set(A 1 2)\nset(ENV{B} x)\nlist(APPEND C y)",
            "cmake",
            [("A", "1;2", "set"), ("B", "x", "set-env"), ("C", "y", "list")],
        ),
        ('# set(A 1)\n#[[ set(B 2) ]]\nmessage("set(C 3)")', "cmake", []),
        (
            "set_target_properties(t PROPERTIES CUDA_ARCHITECTURES 80 HIP_ARCHITECTURES gfx942)",
            "cmake",
            [("CUDA_ARCHITECTURES", "80", "property"), ("HIP_ARCHITECTURES", "gfx942", "property")],
        ),
    ],
)
def test_settings(text, language, expected):
    assert settings(text, language) == expected


def test_offsets_point_into_the_original_text():
    text = 'export PYTORCH_ROCM_ARCH="gfx942"\r\nENV=1\r\n'
    (s, _) = read_unit("x.sh", text, Config(), "shell").settings
    assert s.value == "gfx942" and text[s.value_start : s.value_end] == '"gfx942"'
    assert text[s.start : s.start + len(s.name)] == s.name


@pytest.mark.parametrize(
    "cond,expected",
    [
        ("[ -d /opt/rocm ]", (ROCM, NVIDIA)),
        ('[ -z "$ROCM_PATH" ]', (NVIDIA, ROCM)),
        ("command -v nvidia-smi", (NVIDIA, None)),
        ("! command -v nvidia-smi", (None, NVIDIA)),
        ('[[ "$DEVICE" == cuda ]]', (NVIDIA, None)),
        ('[ "$GPU" != rocm ]', (NVIDIA, ROCM)),
        ("python -c 'import torch; torch.cuda.is_available()'", (None, None)),  # True on ROCm too
        ('[ -z "$PYTORCH_ROCM_ARCH" ]', (None, None)),  # tests a setting, not the platform
        ('[ "$X" = cuda ] || [ "$X" = rocm ]', (None, None)),
    ],
)
def test_branch_gates(cond, expected):
    assert branch_gates(cond) == expected


def gates(text):
    return [(c.words[-1].value, c.gate) for c in ShellReader(text).commands]


def test_shell_gates():
    assert gates("if [ -d /opt/rocm ]; then a; elif [ -n x ]; then b; else c; fi; d") == [
        ("a", ROCM),
        ("b", NVIDIA),
        ("c", NVIDIA),
        ("d", None),
    ]
    assert gates("case $V in\n  cuda|nvidia) a ;;\n  rocm) b ;;\n  *) c ;;\nesac\nd") == [
        ("a", NVIDIA),
        ("b", ROCM),
        ("c", NVIDIA),
        ("d", None),
    ]
    assert gates("nvidia-smi && a || b; c") == [
        ("nvidia-smi", None),
        ("a", NVIDIA),
        ("b", NVIDIA),
        ("c", None),
    ]
    assert gates("for x in rocm cuda; do a; done") == [("a", None)]


def test_dockerfile_stage_gates():
    unit = read_unit(
        "Dockerfile",
        "ARG BASE=nvcr.io/nvidia/pytorch:24.05-py3\nFROM ${BASE} AS b\nENV A=1\n"
        "FROM b\nENV B=1\nFROM rocm/pytorch AS r\nENV C=1\nFROM ubuntu\nENV D=1\n",
        Config(),
        "dockerfile",
    )
    assert [(s.name, s.gate) for s in unit.settings if s.how == "ENV"] == [
        ("A", NVIDIA),
        ("B", NVIDIA),
        ("C", ROCM),
        ("D", None),
    ]


def test_yaml_job_gates():
    text = (
        "jobs:\n  a:\n    container:\n      image: nvidia/cuda:12.4.1-devel\n    env:\n      A: 1\n"
        "  b:\n    container: rocm/pytorch\n    env:\n      B: 1\n"
    )
    unit = read_unit("ci.yml", text, Config(), "yaml")
    assert [(s.name, s.gate) for s in unit.settings] == [("A", NVIDIA), ("B", None)]


def test_cmake_gates_and_defaults():
    text = (
        "if(USE_ROCM)\n  set(A gfx942)\nelse()\n  set(B 80)\nendif()\n"
        'if(NOT DEFINED C)\n  set(C gfx90a)\nendif()\nset(D gfx942 CACHE STRING "")\n'
        'set(E gfx942 CACHE STRING "" FORCE)\n'
        "if(X)\n  set(F ${X})\nelse()\n  set(F gfx942)\nendif()\n"
    )
    unit = read_unit("CMakeLists.txt", text, Config(), "cmake")
    assert [(s.name, s.gate, s.default) for s in unit.settings] == [
        ("A", ROCM, False),
        ("B", NVIDIA, False),
        ("C", None, True),
        ("D", None, True),
        ("E", None, False),
        ("F", None, False),
        ("F", None, True),
    ]


@pytest.mark.parametrize(
    "text,codes",
    [
        ("export TORCHINDUCTOR_MAX_AUTOTUNE=ON", ["ROC302"]),
        ("export TORCHINDUCTOR_MAX_AUTOTUNE=off", []),
        ("export TORCHINDUCTOR_MAX_AUTOTUNE=${TORCHINDUCTOR_MAX_AUTOTUNE:-0}", []),
        ("export TORCHINDUCTOR_MAX_AUTOTUNE=$AUTOTUNE", []),
        ("export TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON", []),
        ("export PYTORCH_CUDA_ALLOC_CONF=$CONF,max_split_size_mb:64", ["ROC301"]),
        ("export PYTORCH_ROCM_ARCH=${PYTORCH_ROCM_ARCH:-gfx942}", []),
        ("export PYTORCH_ROCM_ARCH=$(rocm_agent_enumerator | head -1)", []),
        ("hipcc --offload-arch=gfx90a,gfx942 x.hip", ["ROC503"]),
        ("$NVCC_BIN -arch=sm_90 x.cu", ["ROC502"]),
        ("$NVCC_BIN -arch sm_90 x.cu", []),  # no trigger word: the file is never read (documented limit)
        ("export CUDAARCHS=90; $NVCC_BIN -arch sm_90 x.cu", ["ROC502", "ROC502"]),
        ("$NVCC_BIN -gencode=arch=compute_80,code=[sm_80,compute_80] x.cu", ["ROC502"]),
        ("nvcc -arch sm_90 x.cu", []),  # a recipe that runs the CUDA toolkit itself is NVIDIA's
        # UCCL style: not an NVIDIA list (ROC502), but one AMD arch pinned (ROC503)
        ('TORCH_CUDA_ARCH_LIST="gfx942" python setup.py build', ["ROC503"]),
        ("GPU_ARCHS=gfx942 python3 setup.py bdist_wheel", ["ROC503"]),
        ("export NVTE_ROCM_ARCH=gfx942", ["ROC503"]),
        ("clang -x hip -target amdgcn-amd-amdhsa -mcpu=gfx90a -c k.hip", ["ROC503"]),
        ("export GPU_ARCHS=${GPU_ARCHS:-gfx942}", []),
        ("clang -mcpu=native -c k.c", []),
        # NVIDIA profilers as a command prefix (ROC404)
        ("nsys profile -o out python train.py", ["ROC404"]),
        ("sudo /usr/local/cuda/bin/ncu --set full ./bench", ["ROC404"]),
        ("mpirun -np 8 -x NCCL_DEBUG nsys profile python train.py", ["ROC404"]),
        ("nvprof --print-gpu-trace ./bench", ["ROC404"]),
        ("command -v nsys >/dev/null && nsys profile python train.py", []),
        ('if [ -x "$(command -v nsys)" ]; then nsys profile python t.py; else python t.py; fi', []),
        ("python train.py --profiler nsys", []),
        ("echo 'run nsys profile python train.py'", []),
        ("$NSYS python train.py", []),
        ("nsys profile python a.py\nrocprofv3 --sys-trace -- python a.py", []),  # each platform's own
    ],
)
def test_shell_rules(text, codes):
    assert [f.code for f in findings("run.sh", text + "\n")] == codes


@pytest.mark.parametrize(
    "text,language,codes",
    [
        ('FROM ubuntu:22.04\nCMD ["nsys", "profile", "python", "train.py"]', "dockerfile", ["ROC404"]),
        (
            'FROM nvcr.io/nvidia/pytorch:24.05-py3\nCMD ["nsys", "profile", "python", "train.py"]',
            "dockerfile",
            [],
        ),
        ('FROM ubuntu:22.04\nENTRYPOINT ["python", "serve.py", "--profiler", "nsys"]', "dockerfile", []),
        (
            'containers:\n  - name: t\n    command: ["ncu", "--set", "full", "python", "k.py"]',
            "yaml",
            ["ROC404"],
        ),
        (
            "containers:\n  - name: t\n    command:\n      - nsys\n      - profile\n      - python",
            "yaml",
            ["ROC404"],
        ),
        ("steps:\n  - run: nsys profile python train.py", "yaml", ["ROC404"]),
    ],
)
def test_profilers_in_images_and_jobs(text, language, codes):
    name = {"dockerfile": "Dockerfile", "yaml": "deploy.yaml"}[language]
    assert [f.code for f in findings(name, text + "\n", language)] == codes


def test_exec_form_lists_are_tool_arguments():
    unit = read_unit(
        "Dockerfile", 'CMD ["hipcc", "--offload-arch=gfx942", "k.hip"]\n', Config(), "dockerfile"
    )
    assert [[w.value for w in a.words] for a in unit.tool_args] == [
        ["hipcc", "--offload-arch=gfx942", "k.hip"]
    ]
    assert all(a.exec_form for a in unit.tool_args)
    text = 'CMD ["hipcc", "--offload-arch=gfx942", "k.hip"]\n'
    (w,) = [w for a in unit.tool_args for w in a.words if w.value.startswith("--")]
    assert text[w.start : w.end] == "--offload-arch=gfx942"
    yaml = read_unit("pod.yaml", "command: ['hipcc', --offload-arch=gfx90a, k.hip]\n", Config(), "yaml")
    assert [[w.value for w in a.words] for a in yaml.tool_args] == [
        ["hipcc", "--offload-arch=gfx90a", "k.hip"]
    ]


def test_command_v_looks_a_program_up():
    assert (
        read_unit("x.sh", "command -v hipcc\ncommand hipcc --version\n", Config(), "shell")
        .tool_args[0]
        .words[0]
        .value
        == "hipcc"
    )
    assert len(read_unit("x.sh", "command -v hipcc\n", Config(), "shell").tool_args) == 0


def test_profiler_scripts_and_ci_jobs_are_silent():
    text = "nsys profile -o out python train.py\n"
    for name in ("scripts/run_nsys.sh", "profile/nsight/run.sh", ".github/workflows/run.sh", "build_cuda.sh"):
        assert findings(name, text, "shell") == [], name


def test_ci_definitions_do_not_pin_archs():
    text = "script:\n  - export PYTORCH_ROCM_ARCH=gfx942\n  - export TORCHINDUCTOR_MAX_AUTOTUNE=1\n"
    assert [f.code for f in findings(".gitlab-ci.yml", text)] == ["ROC302"]
    assert [f.code for f in findings("ci/build.yml", text)] == ["ROC503", "ROC302"]


def test_files_named_for_nvidia_are_silent():
    text = "export TORCHINDUCTOR_MAX_AUTOTUNE=1\nexport TORCH_CUDA_ARCH_LIST=8.0\n"
    for name in ("build_cuda.sh", "install-cu121.sh", "docker/nvidia/run.sh"):
        assert findings(name, text, "shell") == []
    assert [f.code for f in findings("build_cuda_rocm.sh", text, "shell")] == ["ROC302"]


# -- robustness ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", POSITIVE, ids=ids)
def test_broken_files_never_crash(path):
    text = path.read_text("utf-8")
    rng = random.Random(path.name)
    junk = ["'", '"', "`", "$(", "${", "(", ")", "\\", "<<EOF", "#", "[[", "]]", "{", "}", "\n", "|", ";;"]
    for _ in range(60):
        cut = rng.randrange(len(text) + 1)
        mutated = text[:cut] + rng.choice(junk) + text[cut + rng.randrange(3) :]
        findings(path, mutated)
        findings(path, text[:cut])
