"""The config-file scanner: shell, Dockerfile, YAML, .env and CMake fixtures with inline markers."""

from collections import Counter

import pytest

from conftest import FIXTURES, expected_findings, run_cli
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.engine import check_file, check_source
from rocm_lint.text.scanner import blank_comments, extract_settings

CONFIG = FIXTURES / "config"
FILES = sorted(p for p in CONFIG.rglob("*") if p.is_file())


def test_every_fixture_is_a_config_file():
    assert {language_of(p) for p in FILES} == {"shell", "dockerfile", "yaml", "dotenv", "cmake"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CONFIG)))
def test_findings_match_markers(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    assert Counter((f.line, f.code) for f in result) == expected_findings(path)


def test_cli_discovers_config_files_by_name():
    proc = run_cli("check", "--output-format", "concise", "--quiet", CONFIG)
    assert proc.returncode == 1, proc.stderr
    files = {line.split(":")[0].split("config/")[1] for line in proc.stdout.splitlines()}
    assert files == {".env", ".github/workflows/ci.yml", "CMakeLists.txt", "Dockerfile.rocm", "deployment.yaml",
                     "docker-compose.yml", "launch.sh"}
    assert len(proc.stdout.splitlines()) == sum(sum(expected_findings(p).values()) for p in FILES)


@pytest.mark.parametrize("path", [p for p in FILES if expected_findings(p)], ids=lambda p: p.name)
def test_crlf_gives_the_same_findings(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    lf = sorted((f.line, f.col, f.code) for f in check_file(str(path), Config()))
    crlf = sorted((f.line, f.col, f.code) for f in check_file(str(copy), Config()))
    assert lf == crlf


@pytest.mark.parametrize("line,language,names", [
    ("export A=1 B=2", "shell", ["A", "B"]),
    ("A=1 env B=2 cmd C=3", "shell", ["A", "B", "C"]),
    ("echo '${#A}' # A=1", "shell", []),
    ("ENV A=1 B=\"x y\"", "dockerfile", ["A", "B"]),
    ("ENV A x y", "dockerfile", ["A"]),
    ("RUN A=1 make", "dockerfile", ["A"]),
    ("LABEL A=1", "dockerfile", []),
    ("  A: \"1\"", "yaml", ["A"]),
    ("  - A=1", "yaml", ["A"]),
    ("set(A 1 2)", "cmake", ["A"]),
    ("set(ENV{A} 1)", "cmake", ["A"]),
    ("# set(A 1)", "cmake", []),
])
def test_settings(line, language, names):
    assert [s.name for s in extract_settings(blank_comments(line, language), language)] == names


def test_values_are_unquoted_with_exact_offsets():
    text = 'export PYTORCH_ROCM_ARCH="gfx942"\n'
    (s,) = extract_settings(text, "shell")
    assert s.value == "gfx942" and text[s.value_start:s.value_end] == "gfx942"


def test_hash_inside_quotes_and_parameter_length_is_not_a_comment():
    text = 'export PYTORCH_CUDA_ALLOC_CONF="a#b,max_split_size_mb:1"\n'
    assert [f.code for f in check_source("x.sh", text, Config())] == ["ROC301"]


def test_rules_are_registered_for_config_languages():
    from rocm_lint.registry import get_rule

    assert "shell" in get_rule("ROC301").languages and "python" in get_rule("ROC301").languages
    assert set(get_rule("ROC302").languages) == {"shell", "dockerfile", "yaml", "dotenv"}
    assert "cmake" in get_rule("ROC502").languages and "cmake" in get_rule("ROC503").languages
