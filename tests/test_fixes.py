"""Autofix: before/after fixtures, the NVIDIA-path guarantee, idempotence, safe writes."""

import ast
import os
import random
import stat
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import FIXTURES, RULE_FIXTURES, run_cli
from rocm_lint.config import Config
from rocm_lint.engine import check_python_source
from rocm_lint.fix.engine import fix_source
from rocm_lint.fix.files import ChangedOnDisk, fix_file, write_atomic
from rocm_lint.fix.nvidia_path import same_on_nvidia

FIX_FIXTURES = sorted((FIXTURES / "fixes").glob("*.py"))


def fixed_text(text, *, unsafe=False, path="t.py"):
    findings = check_python_source(path, text, Config())
    assert isinstance(findings, list), findings
    return fix_source(path, text, findings, unsafe=unsafe)


@pytest.mark.parametrize("path", FIX_FIXTURES, ids=lambda p: p.name)
def test_fix_fixture(path):
    unsafe = "unsafe" in path.name
    text = path.read_text("utf-8")
    result = fixed_text(text, unsafe=unsafe, path=str(path))
    assert result.text == Path(str(path) + ".fixed").read_text("utf-8")
    ast.parse(result.text)
    # a second --fix changes nothing
    assert fixed_text(result.text, unsafe=unsafe, path=str(path)).text == result.text


@pytest.mark.parametrize("path", sorted(RULE_FIXTURES.glob("ROC*.py")), ids=lambda p: p.name)
def test_every_rule_fixture_keeps_the_nvidia_program(path):
    """Fix each rule fixture: it re-parses, folds to the original on NVIDIA, and is stable."""
    text = path.read_text("utf-8")
    result = fixed_text(text, path=str(path))
    ast.parse(result.text)
    assert same_on_nvidia(text, result.text, [result.flag], [result.torch_alias, "torch"], result.inserted)
    assert fixed_text(result.text, path=str(path)).text == result.text
    if not path.stem.endswith("_ok"):
        # what was fixed is no longer reported
        remaining = check_python_source(str(path), result.text, Config())
        assert len(remaining) == len(check_python_source(str(path), text, Config())) - len(result.applied)


def test_checker_catches_a_fix_that_changes_nvidia():
    original = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    wrong = "import torch\nis_rocm = torch.version.hip is not None\nif is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    right = wrong.replace("if is_rocm:", "if not is_rocm:")
    inserted = ["is_rocm = torch.version.hip is not None"]
    assert same_on_nvidia(original, right, ["is_rocm"], ["torch"], inserted)
    assert not same_on_nvidia(original, wrong, ["is_rocm"], ["torch"], inserted)
    swapped = original.replace("= True", '= "x"')
    assert not same_on_nvidia(original, swapped, ["is_rocm"], ["torch"], [])


def test_display_fix_never_applied():
    text = "import torch\nimport flash_attn\nfrom torch._inductor import config\n"
    assert fixed_text(text).text == text


def test_unsafe_needs_unsafe_fixes():
    text = "import pynvml\n"
    assert fixed_text(text).text == text
    assert "except ImportError" in fixed_text(text, unsafe=True).text


# -- property tests -------------------------------------------------------------------------------
HAZARDS = [
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "torch.set_float32_matmul_precision('high')",
    "torch._inductor.config.triton.cudagraphs = True",
    "torch._inductor.config.memory_planning = True",
    "os.environ['TORCHINDUCTOR_MAX_AUTOTUNE'] = '1'",
    "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True,max_split_size_mb:64'",
    "m = torch.compile(m, mode='reduce-overhead')",
    "m = torch.compile(m, options={'max_autotune': True})",
]
FILLER = [
    "x = 1",
    "print(x)",
    "# a comment",
    "",
    "y = [i for i in range(3)]",
    "def f():\n    return 2",
    "s = '''a\nmultiline\n  string'''",
    "if x:\n    pass\nelse:\n    x = 2",
]


def _assert_fix_invariants(text, path="gen.py"):
    result = fixed_text(text, path=path)
    ast.parse(result.text)
    if result.applied:
        assert same_on_nvidia(
            text, result.text, [result.flag], [result.torch_alias, "torch"], result.inserted
        )
    assert fixed_text(result.text, path=path).text == result.text
    return result


@settings(max_examples=120, deadline=None)
@given(
    stmts=st.lists(st.one_of(st.sampled_from(HAZARDS), st.sampled_from(FILLER)), min_size=1, max_size=10),
    in_function=st.booleans(),
)
def test_generated_modules(stmts, in_function):
    body = "\n".join(stmts)
    if in_function:
        body = "def main(m, x):\n    pass\n" + textwrap.indent(body, "    ")
    text = "import os\nimport torch\nx = 0\nm = None\n" + body + "\n"
    ast.parse(text)
    result = _assert_fix_invariants(text)
    hazards = sum(s in HAZARDS for s in stmts)
    assert len(result.applied) == hazards


def _torch_sources(n=12):
    torch_dir = Path(pytest.importorskip("torch").__file__).parent
    files = sorted(p for p in torch_dir.rglob("*.py") if 2_000 < p.stat().st_size < 30_000)
    return random.Random(13).sample(files, min(n, len(files)))


@pytest.mark.parametrize(
    "path", _torch_sources() if os.environ.get("ROCM_LINT_SKIP_TORCH") is None else [], ids=lambda p: p.name
)
@pytest.mark.integration  # a real external tool or torch itself: --all-tiers
def test_hazards_injected_into_real_torch_modules(path):
    """Inject each hazard into a real module (top level and a function body) and fix it."""
    text = path.read_text("utf-8")
    tree = ast.parse(text)
    rnd = random.Random(path.name)
    lines = text.splitlines(keepends=True)
    top = [s for s in tree.body if not isinstance(s, (ast.Expr,))]
    funcs = [
        s
        for s in ast.walk(tree)
        if isinstance(s, ast.FunctionDef) and s.body and not isinstance(s.body[0], ast.Expr)
    ]
    for hazard in rnd.sample(HAZARDS, 3):
        where = rnd.choice(top) if top else None
        if where is None:
            continue
        at = (
            where.lineno - 1
            if not getattr(where, "decorator_list", None)
            else where.decorator_list[0].lineno - 1
        )
        injected = (
            "".join(lines[:at])
            + "import os, torch\n"
            + hazard.replace("m = ", "_m = ").replace("(m,", "(None,")
            + "\n"
            + "".join(lines[at:])
        )
        try:
            ast.parse(injected)
        except SyntaxError:
            continue
        _assert_fix_invariants(injected, str(path))
        if funcs:
            fn = rnd.choice(funcs)
            first = fn.body[0]
            indent = " " * first.col_offset
            at = first.lineno - 1
            injected = (
                "".join(lines[:at])
                + indent
                + "import os, torch\n"
                + indent
                + hazard.replace("m = ", "_m = ").replace("(m,", "(None,")
                + "\n"
                + "".join(lines[at:])
            )
            try:
                ast.parse(injected)
            except SyntaxError:
                continue
            _assert_fix_invariants(injected, str(path))


# -- files on disk ---------------------------------------------------------------------------------
HAZARD = "torch.backends.cuda.matmul.allow_tf32 = True"


def test_cli_fix_and_diff(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(f"import torch\n\n{HAZARD}\n")
    proc = run_cli("check", "--diff", src)
    assert proc.returncode == 1
    assert "+if not is_rocm:" in proc.stdout and "Would fix 1 finding." in proc.stderr
    assert src.read_text() == f"import torch\n\n{HAZARD}\n"  # --diff writes nothing
    proc = run_cli("check", "--fix", src)
    assert proc.returncode == 0, proc.stderr
    assert "Fixed 1 finding, 0 remaining" in proc.stderr
    assert (
        src.read_text()
        == f"import torch\n\nis_rocm = torch.version.hip is not None\n\nif not is_rocm:\n    {HAZARD}\n"
    )
    assert run_cli("check", "--fix", src).returncode == 0


def test_fix_keeps_crlf_bom_encoding_and_mode(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b"\xef\xbb\xbfimport torch\r\n" + HAZARD.encode() + b"\r\n")
    crlf.chmod(0o751)
    latin = tmp_path / "latin.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\n" + HAZARD.encode()
    )  # no final newline
    assert run_cli("check", "--fix", tmp_path).returncode == 0
    data = crlf.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert b"if not is_rocm:\r\n" in data
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o751
    data = latin.read_bytes()
    assert b"caf\xe9" in data and data.endswith(b"= True")


def test_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    before = os.stat(path)
    path.write_text("x = 22\n")
    with pytest.raises(ChangedOnDisk):
        write_atomic(str(path), "x = 3\n", "utf-8", before)
    assert path.read_text() == "x = 22\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temp file left behind


def test_fix_that_would_not_parse_is_dropped(tmp_path, monkeypatch):
    from rocm_lint.fix import engine

    path = tmp_path / "a.py"
    path.write_text(f"import torch\n{HAZARD}\n")
    monkeypatch.setattr(
        engine, "_transform", lambda text, subset, flag, path="": ("def (:\n", {id(f) for f in subset}, True)
    )
    outcome = fix_file(str(path), Config(), unsafe=False, write=True)
    assert outcome.applied == [] and outcome.dropped
    assert "would not parse" in outcome.dropped[0][1]
    assert path.read_text() == f"import torch\n{HAZARD}\n"


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(f"import torch\n{HAZARD}\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert run_cli("check", "--fix", link).returncode == 0
    assert link.is_symlink() and "if not is_rocm:" in real.read_text()


def test_json_carries_fix_edits(tmp_path):
    import json

    src = tmp_path / "a.py"
    src.write_text(f"import torch\n{HAZARD}\n")
    (item,) = json.loads(run_cli("check", "--output-format", "json", src).stdout)
    assert item["fix"]["applicability"] == "safe"
    assert item["fix"]["edits"] == [
        {
            "content": f"\nis_rocm = torch.version.hip is not None\nif not is_rocm:\n    {HAZARD}\n",
            "location": {"row": 2, "column": 1},
            "end_location": {"row": 3, "column": 1},
        }
    ]


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_line_breaks_python_does_not_count_keep_edits_and_diffs_in_place(tmp_path, odd):
    """A form feed (or another character str.splitlines splits on) is not a line break for
    Python, flake8, git or an editor: edits, --diff and --fix must all agree with ast's lines."""
    import json
    import re
    import subprocess

    original = f"import torch\n\x0c\npad = '{odd}'\n{HAZARD}\nx = 1  # {odd} keep\n"
    src = tmp_path / "a.py"
    src.write_text(original, encoding="utf-8")
    (item,) = json.loads(run_cli("check", "--output-format", "json", src).stdout)
    assert item["location"]["row"] == 4
    lines = re.findall(r"[^\n]*\n", original)
    for edit in reversed(item["fix"]["edits"]):  # whole-line replacements, bottom up
        lines[edit["location"]["row"] - 1 : edit["end_location"]["row"] - 1] = [edit["content"]]
    from_edits = "".join(lines)
    diff = run_cli("check", "--diff", "a.py", cwd=tmp_path).stdout
    assert run_cli("check", "--fix", src).returncode == 0
    fixed = src.read_text(encoding="utf-8")
    assert from_edits == fixed and fixed.endswith(f"x = 1  # {odd} keep\n")
    src.write_text(original, encoding="utf-8")
    (tmp_path / "d.patch").write_text(diff, encoding="utf-8")
    subprocess.run(
        ["git", "apply", "--unsafe-paths", "d.patch"], cwd=tmp_path, check=True, capture_output=True
    )
    assert src.read_text(encoding="utf-8") == fixed


def test_gpu_benchmark_fixed_script_is_the_fix_of_the_original():
    """benchmarks/gpu_fix/model_script_fixed.py is exactly what --fix makes of model_script.py."""
    from conftest import ROOT

    original = (ROOT / "benchmarks" / "gpu_fix" / "model_script.py").read_text()
    fixed = (ROOT / "benchmarks" / "gpu_fix" / "model_script_fixed.py").read_text()
    assert fixed_text(original).text == fixed


def test_fix_the_sample_project(tmp_path):
    """--fix on the bundled sample project: every changed file keeps its NVIDIA program."""
    import shutil

    from conftest import FIXTURES

    copy = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample-project", copy)
    before = {p: p.read_text() for p in copy.rglob("*.py")}
    proc = run_cli("check", "--fix", "--unsafe-fixes", copy)
    assert "Fixed" in proc.stderr, proc.stderr
    changed = 0
    for path, old in before.items():
        new = path.read_text()
        if new != old:
            changed += 1
            ast.parse(new)
            result = fixed_text(old, unsafe=False, path=str(path))
            assert same_on_nvidia(
                old, result.text, [result.flag], [result.torch_alias, "torch"], result.inserted
            )
    assert changed >= 2
    assert run_cli("check", "--fix", "--unsafe-fixes", copy).stderr.count("Fixed") == 0  # nothing left to fix


def test_fix_reuses_a_configured_rocm_predicate(tmp_path):
    """The fix step reads the module with the user's configuration, as the check does: with
    ``rocm-predicates = ["on_amd"]`` and ``IS_AMD = on_amd()`` bound before the hazard, the fix
    gates on ``IS_AMD`` and inserts no second flag (it inserted ``is_rocm = ...`` when the fix
    engine rebuilt the module's facts with the default configuration)."""
    from rocm_lint.fix.api import fix_text

    text = (
        "import torch\nfrom platforms import on_amd\n\nIS_AMD = on_amd()\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    config = Config(rocm_predicates=Config().rocm_predicates + ("on_amd",))
    result = fix_text("t.py", text, config)
    assert result.text == text.replace("torch.backends", "if not IS_AMD:\n    torch.backends")
    assert "is_rocm" not in result.text
    # the CLI's --diff says the same
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nextend-rocm-predicates = ["on_amd"]\n')
    (tmp_path / "t.py").write_text(text)
    proc = run_cli("check", "--diff", "t.py", cwd=tmp_path)
    assert "+if not IS_AMD:" in proc.stdout and "is_rocm" not in proc.stdout, proc.stdout


def test_positions_without_the_empty_batched_pass_equal_libcst_resolve():
    """The fixer generates LibCST positions directly (LibCST's resolver walks the module once
    more for batchable providers even when there are none): the same mapping as resolve()."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from rocm_lint.fix.engine import _positions

    for path in FIX_FIXTURES:
        text = path.read_text("utf-8")
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        direct = _positions(wrapper, PositionProvider)
        assert direct == wrapper.resolve(PositionProvider) and len(direct) > 10


def _all_python_fixture_texts():
    from conftest import FIXTURES as ROOT_FIXTURES

    for path in sorted(ROOT_FIXTURES.rglob("*.py")):
        try:
            text = path.read_text("utf-8")
            ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        yield path, text


def test_lazy_positions_equal_libcst_positions_for_every_node():
    """fix.positions computes LibCST positions per top-level statement the fixer enters: after
    expanding every statement they equal LibCST's PositionProvider for every node of every
    Python fixture (decorators, async defs, `a; b` lines, comments and blank lines included),
    and before, each top-level statement's first and last line already do."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from rocm_lint.fix.positions import lazy_positions

    checked = 0
    extra = (
        "import os; import sys  # two\n\n\n@dec\n@dec2(1)\nasync def f():\n    # c\n    return 1\n"
        "    # tail\n\nclass C:\n    x = 1\n\n\nif x:\n    y = 2\n# trailing\n"
    )
    texts = list(_all_python_fixture_texts()) + [("extra", extra), ("crlf", extra.replace("\n", "\r\n"))]
    for path, text in texts:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        full = wrapper.resolve(PositionProvider)
        lazy = lazy_positions(wrapper, text)
        assert lazy is not None, path
        for stmt in wrapper.module.body:
            assert lazy[stmt].start.line == full[stmt].start.line, (path, stmt)
            if isinstance(stmt, cst.SimpleStatementLine):
                assert lazy[stmt].end.line == full[stmt].end.line, (path, stmt)
            lazy.expand(stmt)
        inside = set()
        stack = list(wrapper.module.body)
        while stack:  # the nodes of the top-level statements (not the module's header or footer)
            node = stack.pop()
            inside.add(id(node))
            stack.extend(node.children)
        for node, where in full.items():
            if id(node) in inside:
                assert lazy.get(node) == where, (path, node)
                checked += 1
    assert checked > 5000
