"""YAML as people write it (#29 item 4): anchors, aliases and merge keys read by ruamel.yaml
(configfiles/yaml_tree.py), quoted flow-map keys, Helm/Jinja control lines blanked for the line
reader (configfiles/yamlish.py), and the bounds: hostile files cost a fallback, never a hang.
The fixtures (fixtures/config/compose-anchors.yml, k8s-anchors.yaml, helm/, ok/) pin the findings;
here: the readers underneath and the real tool on each shape."""

import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, run_cli
from rocm_lint.config import Config
from rocm_lint.configfiles import yaml_tree
from rocm_lint.configfiles.scanner import NVIDIA, read_unit
from rocm_lint.configfiles.yamlish import blank_template_lines, read_yaml
from rocm_lint.engine import check_source

CONFIG = FIXTURES / "config"


def found(text, path="docker-compose.yml"):
    result = check_source(path, text, Config(), "yaml")
    assert isinstance(result, list), result
    return [(f.line, f.col + 1, f.code) for f in result]  # columns as the CLI shows them


def settings(text, path="x.yml"):
    unit = read_unit(path, text, Config(), "yaml")
    return [(s.name, s.value, text[s.value_start : s.value_end], s.gate) for s in unit.settings]


ANCHORED = """\
x-env: &env
  PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:128
  TORCHINDUCTOR_MAX_AUTOTUNE: "1"
services:
  a:
    image: rocm/pytorch:latest
    environment: *env
  b:
    image: rocm/pytorch:latest
    environment:
      <<: *env
      OMP_NUM_THREADS: "4"
"""


# -- anchors, aliases, merge keys ---------------------------------------------------------------------
def test_an_anchored_environment_is_reported_once_at_its_definition():
    assert found(ANCHORED) == [(2, 28, "ROC301"), (3, 3, "ROC302")]


def test_an_alias_to_a_scalar_is_reported_where_the_scalar_is_defined():
    text = 'x-on: &on "1"\nservices:\n  a:\n    environment:\n      TORCHINDUCTOR_MAX_AUTOTUNE: *on\n'
    assert found(text) == [(1, 12, "ROC302")]


def test_an_environment_only_nvidia_services_use_stays_silent():
    nvidia = ANCHORED.replace("rocm/pytorch:latest", "nvidia/cuda:12.4.1-runtime-ubuntu22.04")
    assert {gate for _, _, _, gate in settings(nvidia)} == {NVIDIA}
    assert found(nvidia) == []
    # one service that can run on ROCm is enough
    mixed = ANCHORED.replace("rocm/pytorch:latest", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", 1)
    assert found(mixed) == [(2, 28, "ROC301"), (3, 3, "ROC302")]


def test_merge_keys_follow_yaml_precedence():
    text = (
        "x-a: &a\n  TORCHINDUCTOR_MAX_AUTOTUNE: '0'\nx-b: &b\n  TORCHINDUCTOR_MAX_AUTOTUNE: '1'\n"
        "services:\n  s:\n    environment:\n      <<: [*a, *b]\n"
    )
    assert found(text) == []  # the first merged mapping wins
    own = "x-b: &b\n  TORCHINDUCTOR_MAX_AUTOTUNE: '1'\nenvironment:\n  <<: *b\n  TORCHINDUCTOR_MAX_AUTOTUNE: '0'\n"
    assert found(own) == []  # an own key wins over a merged one
    assert found(own.replace("  TORCHINDUCTOR_MAX_AUTOTUNE: '0'\n", "")) == [(2, 3, "ROC302")]


def test_kubernetes_env_lists_behind_anchors_and_in_flow_style():
    text = (
        "containers:\n  - name: a\n    env: &e\n      - name: TORCHINDUCTOR_MAX_AUTOTUNE\n        value: '1'\n"
        "  - name: b\n    env: *e\n  - name: c\n"
        "    env: [{name: PYTORCH_HIP_ALLOC_CONF, value: 'max_split_size_mb:8'}]\n"
    )
    assert found(text, "pod.yaml") == [(5, 17, "ROC302"), (9, 50, "ROC301")]


def test_compose_lists_in_flow_style_but_not_argv():
    assert settings("environment: [A=1, 'B=x y']\nargs: [C=3]\n") == [
        ("A", "1", "1", None),
        ("B", "x y", "x y", None),
    ]
    listed = (
        'x-l: &l\n  - TORCHINDUCTOR_MAX_AUTOTUNE=1\n  - "PYTORCH_ALLOC_CONF=max_split_size_mb:8"\n'
        "services:\n  a:\n    environment: *l\n"
    )
    assert found(listed) == [(2, 5, "ROC302"), (3, 25, "ROC301")]


# -- quoted flow-map keys -----------------------------------------------------------------------------
def test_quoted_flow_map_keys_are_read_by_both_readers():
    text = 'env: {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", \'PYTORCH_ALLOC_CONF\': max_split_size_mb:64, B: 2}\n'
    assert [(e.name, e.value) for e in read_yaml(text).env] == [
        ("TORCHINDUCTOR_MAX_AUTOTUNE", "1"),
        ("PYTORCH_ALLOC_CONF", "max_split_size_mb:64"),
        ("B", "2"),
    ]
    assert found(text, "ci.yml") == [(1, 8, "ROC302"), (1, 64, "ROC301")]


# -- Helm / Jinja control lines -----------------------------------------------------------------------
HELM = """\
env:
{{- if .Values.debug }}
  - name: AMD_LOG_LEVEL
    value: "4"
{{- end }}
  - name: PYTORCH_HIP_ALLOC_CONF
    value: "max_split_size_mb:64"
  - name: TORCHINDUCTOR_MAX_AUTOTUNE
    value: {{ .Values.autotune | quote }}
"""


def test_control_lines_no_longer_hide_an_env_list():
    assert found(HELM, "templates/deployment.yaml") == [(7, 13, "ROC301")]


def test_blanking_keeps_offsets_and_only_touches_tag_only_lines():
    text = (
        HELM
        + "{% if x %}{# c #}\nrun: echo ${{ matrix.x }}\n  {{ oops\nv: {{ .Values.v }}\r\n{%- endif %}\r\n"
    )
    blank = blank_template_lines(text)
    assert len(blank) == len(text) and blank.count("\n") == text.count("\n")
    changed = [ln for ln, (a, b) in enumerate(zip(text.split("\n"), blank.split("\n"))) if a != b]
    assert changed == [1, 4, 9, 13]
    assert blank_template_lines("a: 1\n") == "a: 1\n"


# -- the fallback and the bounds ------------------------------------------------------------------------
def test_a_file_the_parser_rejects_is_read_by_the_line_reader():
    text = (
        "services:\n  a:\n    environment:\n      TORCHINDUCTOR_MAX_AUTOTUNE: '1'\n    labels: *undefined\n"
    )
    assert yaml_tree.tree_env(text) is None
    assert found(text) == [(4, 7, "ROC302")]


def test_the_pure_parser_gives_the_same_entries(monkeypatch):
    from ruamel.yaml import YAML

    text = (CONFIG / "compose-anchors.yml").read_text("utf-8")
    fast = yaml_tree.tree_env(text)
    monkeypatch.setattr(yaml_tree, "_parser", lambda: (YAML(typ="safe", pure=True), True))
    assert fast and yaml_tree.tree_env(text) == fast


def _laughs(levels=10, width=10):
    lines = ["x-l0: &l0 {TORCHINDUCTOR_MAX_AUTOTUNE: '1'}"]
    for i in range(1, levels):
        lines.append(f"x-l{i}: &l{i}\n  <<: [{', '.join([f'*l{i - 1}'] * width)}]")
    lines.append("x-s0: &s0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]")
    lines += [f"x-s{i}: &s{i} [{', '.join([f'*s{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines.append(f"services:\n  s:\n    environment: *l{levels - 1}\n  t:\n    environment: *s9\n")
    return "\n".join(lines)


@pytest.mark.parametrize(
    "name,text",
    [
        ("billion laughs", _laughs()),
        (
            "merge chain",
            "\n".join(
                f"x{i}: &m{i}\n  <<: *m{i - 1}\n  K{i}: v" if i else "x0: &m0\n  K0: v" for i in range(3000)
            )
            + "\nenvironment: *m2999\n",
        ),
        ("deep flow", "environment: " + "[" * 50000 + "]" * 50000 + "\n"),
        ("deep flow on many lines", "environment:\n" + "  [\n" * 20000 + "  ]\n" * 20000),
        ("deep block", "".join(" " * i + f"k{i}:\n" for i in range(3000)) + "env: {A: *x}\n"),
        ("huge", "x-e: &e {A: '1'}\n" + "".join(f"k{i}:\n  environment: *e\n" for i in range(60000))),
    ],
)
def test_hostile_files_cost_a_fallback_not_a_hang(name, text):
    t = time.perf_counter()
    entries = yaml_tree.tree_env(text)
    result = check_source("docker-compose.yml", text, Config(), "yaml")
    assert isinstance(result, list)
    assert time.perf_counter() - t < 5, name
    if name == "billion laughs":  # linear: the anchored entry once, with its one use
        assert [(e.name, e.value, len(e.uses)) for e in entries] == [("TORCHINDUCTOR_MAX_AUTOTUNE", "1", 1)]
        assert [f.line for f in result] == [1]
    elif name != "huge":
        assert entries is None


def test_nesting_depth():
    assert (
        yaml_tree.nesting_depth("a:\n  b:\n    - - [c, {d: e}]\n") == 7
    )  # an upper bound: the document counts as a level
    assert yaml_tree.nesting_depth("a: '[[['  # [[[\n") == 1
    assert yaml_tree.nesting_depth("a: [\n  [\n    {b: 1}]]\nc: 1\n") == 4


# -- through the real tool -----------------------------------------------------------------------------
@pytest.mark.integration  # subprocesses: --all-tiers
@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("docker-compose.yml", ANCHORED, ["2:28: ROC301", "3:3: ROC302"]),
        ("ci.yml", 'env: {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}\n', ["1:8: ROC302"]),
        ("deployment.yaml", HELM, ["7:13: ROC301"]),
        (
            "compose.yml",
            "services:\n  a:\n    environment:\n      TORCHINDUCTOR_MAX_AUTOTUNE: '1'\n"
            "    labels: *undefined\n",
            ["4:7: ROC302"],
        ),
        ("bomb.yml", _laughs(), ["1:12: ROC302"]),
    ],
)
def test_the_cli_on_each_shape(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    t = time.perf_counter()
    proc = run_cli("check", "--no-cache", "--output-format", "concise", "--quiet", path)
    assert time.perf_counter() - t < 30
    assert proc.returncode == 1, proc.stderr
    assert [line.split(":", 1)[1].split(" `")[0] for line in proc.stdout.splitlines()] == expected, (
        proc.stdout
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.integration
def test_ruamel_loads_only_for_yaml_that_needs_it(tmp_path):
    plain = tmp_path / "plain.yml"
    plain.write_text("env:\n  TORCHINDUCTOR_MAX_AUTOTUNE: '1'\n")
    anchored = tmp_path / "anchored.yml"
    anchored.write_text(ANCHORED)
    code = (
        "import sys\nfrom rocm_lint.cli import main\n"
        f"main(['check', '--quiet', '--exit-zero', '--no-cache', {str(plain)!r}])\n"
        "sys.stderr.write('PLAIN:%s\\n' % ('ruamel.yaml' in sys.modules))\n"
        f"main(['check', '--quiet', '--exit-zero', '--no-cache', {str(anchored)!r}])\n"
        "sys.stderr.write('ANCHORED:%s\\n' % ('ruamel.yaml' in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "PLAIN:False" in proc.stderr and "ANCHORED:True" in proc.stderr, proc.stderr


def test_an_entry_both_readers_find_is_one_setting():
    text = (
        'x-e: &e {B: 1}\nenv:\n  PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:128,\n    expandable_segments:True"\n'
        "  C: *e\n"
    )
    assert [name for name, *_ in settings(text)] == ["PYTORCH_CUDA_ALLOC_CONF"]
    assert found(text) == [(3, 29, "ROC301")]


@pytest.mark.parametrize(
    "change,shift",
    [
        (lambda t: "\ufeff" + t, lambda ln, col: col + (ln == 1)),  # a byte order mark
        (
            lambda t: "\n".join("\f" + ln if ln else ln for ln in t.split("\n")),
            lambda ln, col: col + 1,
        ),  # page breaks
        (lambda t: t.replace("\n", "\r\n"), lambda ln, col: col),
        (
            lambda t: "\ufeff" + "\n".join("\f" + ln if ln else ln for ln in t.split("\n")),
            lambda ln, col: col + 1 + (ln == 1),
        ),  # both
    ],
)
def test_marks_and_line_ends_hide_nothing(change, shift):
    text = (CONFIG / "compose-anchors.yml").read_text("utf-8")
    expected = found(text)
    assert len(expected) == 5
    assert found(change(text)) == [(ln, shift(ln, col), code) for ln, col, code in expected]
