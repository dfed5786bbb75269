"""The partial parse (``rocm_lint.python.partial``, issue #28) finds what the whole parse finds.

Properties: on every Python fixture and notebook of the repository, and on generated modules
mixing trigger statements, platform predicates, gates, early exits, imports, decorators,
multi-line strings and continuation lines, the findings (and error lines) of a check that blanks
every block it can (``ROCM_LINT_PARTIAL_PARSE=always``) are those of the whole parse
(``ROCM_LINT_WHOLE_PARSE=1``), byte for byte.  The cut itself keeps every kept line at its
place and column, and a cut that lands inside a statement falls back to the whole parse.
Real trees: ``benchmarks/compare_partial_parse.py`` (integration test below).
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from conftest import FIXTURES, ROOT, is_snapshot
from rocm_lint import engine
from rocm_lint.config import Config
from rocm_lint.python import partial
from rocm_lint.python.analyzer import trigger_lines
from rocm_lint.python.context import platform_words

ALL_CODES = Config(extend_select=("ROC001",))


def _check(path: str, text: str, mode: str, monkeypatch, config: Config = Config()):
    monkeypatch.delenv(partial.ENV_WHOLE, raising=False)
    monkeypatch.delenv(partial.ENV_ALWAYS, raising=False)
    if mode == "whole":
        monkeypatch.setenv(partial.ENV_WHOLE, "1")
    else:
        monkeypatch.setenv(partial.ENV_ALWAYS, "always")
    result = engine.check_source(path, text, config)
    return [str(f) for f in result] if isinstance(result, list) else ["error: " + str(result)]


def _plan(path: str, text: str, config: Config = Config()):
    """The plan the engine would make for ``text`` in ``always`` mode (None: parsed whole)."""
    codes = engine.enabled_codes(config, path)
    found = engine.present_words(text, codes)
    from rocm_lint.python.project import Project

    walk = engine._walk_words(path, text, codes, Project(config), found)
    if walk is None:
        return None
    old = os.environ.get(partial.ENV_ALWAYS)
    os.environ[partial.ENV_ALWAYS] = "always"
    try:
        return partial.plan(
            text, trigger_lines(text, walk[1]), walk[0], "__main__" in text, platform=platform_words(config)
        )
    finally:
        if old is None:
            del os.environ[partial.ENV_ALWAYS]
        else:
            os.environ[partial.ENV_ALWAYS] = old


def _python_fixtures():
    found = sorted(
        p
        for pattern in ("**/*.py", "**/*.ipynb")
        for p in FIXTURES.glob(pattern)
        if p.is_file() and not is_snapshot(p)
    )
    return [pytest.param(p, id=str(p.relative_to(FIXTURES))) for p in found]


@pytest.mark.parametrize("path", _python_fixtures())
def test_every_fixture_finds_the_same(path, monkeypatch):
    text = engine.read_source(str(path))
    assert isinstance(text, str)
    for config in (Config(), ALL_CODES):
        assert _check(str(path), text, "partial", monkeypatch, config) == _check(
            str(path), text, "whole", monkeypatch, config
        )


def test_fixtures_do_exercise_the_partial_parse():
    """Not a vacuous property: some fixtures are checked from a cut text."""
    cut = [
        p
        for p in FIXTURES.glob("**/*.py")
        if not is_snapshot(p)
        and (lambda t: isinstance(t, str) and _plan(str(p), t) is not None)(engine.read_source(str(p)))
    ]
    assert len(cut) >= 2, cut  # few: the name closure keeps most of a fixture (docs/architecture.md)


# -- the cut --------------------------------------------------------------------------------
MODULE = '''import torch

DOC = """
def not_a_function():
    torch.backends.cuda.matmul.allow_tf32 = True
"""


def helper(x):
    return x + 1


@decorator(
    arg=1,
)
class Unrelated:
    def method(self):
        return 2


def uses():
    torch.backends.cuda.matmul.allow_tf32 = True
'''


def _lines(text):
    return text.split("\\n")


def test_the_cut_keeps_lines_and_columns(monkeypatch):
    plan = _plan("m.py", MODULE)
    assert plan is not None
    kept, whole = plan.source.split("\n"), MODULE.split("\n")
    assert len(kept) == len(whole)
    for i, (a, b) in enumerate(zip(kept, whole), 1):
        assert a == b or (a == "" and plan.dropped_block(i) is not None)
    assert "class Unrelated" not in plan.source and "def helper" not in plan.source
    assert "def not_a_function" in plan.source  # a column-0 line in a string starts nothing
    tree = ast.parse(plan.source)
    whole_tree = ast.parse(MODULE)
    kept_nodes = {
        (type(n).__name__, n.lineno, n.col_offset, getattr(n, "end_col_offset", None))
        for n in ast.walk(tree)
        if hasattr(n, "lineno")
    }
    whole_nodes = {
        (type(n).__name__, n.lineno, n.col_offset, getattr(n, "end_col_offset", None))
        for n in ast.walk(whole_tree)
        if hasattr(n, "lineno")
    }
    assert kept_nodes < whole_nodes  # the same nodes at the same places, fewer of them
    assert _check("m.py", MODULE, "partial", monkeypatch) == _check("m.py", MODULE, "whole", monkeypatch)


@pytest.mark.parametrize(
    "text",
    [
        # a column-0 continuation inside brackets cuts a def in two: the kept part does not parse
        "import torch\n\ndef f():\n    x = g(\n1)\n    return x\n\n"
        "def uses():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
        # a backslash continuation at column 0 keeps its block whole
        "import torch\n\ndef f():\n    y = 1 + \\\nfoo()\n    return y\n\n"
        "def uses():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
        # a matrix product at column 0 inside brackets is no decorator
        "import torch\n\nz = (a\n@ b)\n\ndef uses():\n    torch.backends.cuda.matmul.allow_tf32 = z\n",
        # a syntax error in a blanked def: the partial parse does not see it (documented)
        "import torch\n\ndef broken(:\n    pass\n\ndef uses():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
    ],
)
def test_a_wrong_cut_falls_back_or_agrees(text, monkeypatch):
    partial_result = _check("m.py", text, "partial", monkeypatch)
    whole_result = _check("m.py", text, "whole", monkeypatch)
    if "broken(" in text:
        assert whole_result[0].startswith("error: ") and "syntax error" in whole_result[0]
        assert partial_result and all("ROC" in f for f in partial_result)  # the def was never parsed
    else:
        assert partial_result == whole_result


def test_text_the_cut_does_not_handle_is_parsed_whole():
    # a non-ASCII identifier is NFKC-normalized by the parser (U+FB01 binds ``file``)
    assert _plan("m.py", MODULE.replace("def helper(x)", "def helper(\ufb01le)")) is None
    assert _plan("m.py", MODULE.replace("\n", "\r\n")) is None
    assert _plan("m.py", MODULE.replace("def helper", "\fdef helper")) is None


def test_a_last_block_without_a_newline_is_blanked_to_its_last_line():
    text = MODULE + "\n\ndef tail():\n    return 3"
    plan = _plan("m.py", text)
    last = text.count("\n") + 1
    assert (
        plan is not None and plan.dropped_block(last) is not None and plan.dropped_block(last - 1) is not None
    )


def test_whole_module_rules_keep_the_whole_parse():
    text = (
        "import torch\n\ndef f():\n    return 1\n\n\ndef g():\n    flags = ['--use_fast_math']\n"
        "    load(name='x', sources=['a.cu'], extra_cuda_cflags=flags)  # nvcc\n" + "\n" * 10
    )
    assert _plan("m.py", text) is None


def test_the_escape_hatch_parses_whole(monkeypatch):
    calls = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: calls.append(source) or real(source, *a, **k))
    _check("m.py", MODULE, "whole", monkeypatch)
    assert calls == [MODULE]
    calls.clear()
    _check("m.py", MODULE, "partial", monkeypatch)
    assert calls and calls[0] != MODULE


_MARKERS = re.compile(
    r"\bctx\.tree\b|\bwalk_gated\(ctx\b|all_bindings\.items\(\)|imports\.names\.values\(\)"
    r"|single_bindings\.items\(\)"
)


def test_every_whole_module_reader_is_declared():
    """A rule whose checkers or facts read the module beyond the names they ask about (its
    tree, a gated walk of all of it, every binding) must be declared in python/partial.py:
    parsed whole (WHOLE_MODULE) or with the words it looks for kept (READS, BINDS)."""
    from rocm_lint.registry import all_rules

    rules_dir = ROOT / "src" / "rocm_lint" / "rules"
    declared = partial.WHOLE_MODULE | set(partial.READS) | set(partial.BINDS) | partial.NAMES_ONLY
    missing = []
    for rule in all_rules():
        if "python" not in rule.languages or not (rule.python_checkers or rule.observers):
            continue
        modules = {sys.modules[c.fn.__module__].__file__ for c in rule.python_checkers + rule.observers}
        modules |= {sys.modules[f.compute.__module__].__file__ for f in rule.facts}
        texts = []
        for m in modules:
            text = Path(m).read_text()
            texts.append(text)
            for used in re.findall(r"from rocm_lint\.rules\.(\w+) import", text):
                texts.append((rules_dir / (used + ".py")).read_text())
        if any(_MARKERS.search(t) for t in texts) and rule.code not in declared:
            missing.append(rule.code)
    assert not missing, missing


# -- generated modules -----------------------------------------------------------------------
NAMES = [
    "mode",
    "flags",
    "opts",
    "is_rocm",
    "_helper",
    "cap",
    "MAX_BLOCK",
    "dev",
    "x",
    "a1",
    "b2",
    "c3",
    "d4",
    "e5",
    "f6",
    "flag",
    "use_flag_x",
]
TRIGGERS = [
    "torch.backends.cuda.matmul.allow_tf32 = {v}",
    "model = torch.compile(model, mode={n})",
    "torch._inductor.config.triton.cudagraphs = {v}",
    "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = {n}",
    "torch.set_float32_matmul_precision('high')",
    "major, minor = torch.cuda.get_device_capability()\n{i}use_fa3 = major >= 9",
    "{n} = torch.float8_e4m3fn",
    "if torch.version.hip:\n{i}    return {n}",
    "{n}()",
]
PLAIN = [
    "{n} = {v}",
    "{n} = 'reduce-overhead'",
    "{n} = {{'max_autotune': True}}",
    "return {n}",
    "{n} = torch.version.hip is not None",
    "{n} = not {m}",
    "import {m}",
    "from os import path as {n}",
    "self.{n} = {v}",
    "{n}: int = (\n{i}    {v})",
    "{n} = {m} + \\\n{i}    1",
    "s = '''\ndef {n}():\n'''",
    "assert not {n}",
    "{n} = {m}(\n{i}1)",
]


@st.composite
def statement(draw, indent: str):
    template = draw(st.sampled_from(TRIGGERS + PLAIN))
    n, m = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
    v = draw(st.sampled_from(["True", "False", "1", n, m]))
    return indent + template.format(n=n, m=m, v=v, i=indent)


@st.composite
def top_block(draw):
    kind = draw(st.sampled_from(["def", "class", "stmt", "if", "try", "decorated"]))
    name = draw(st.sampled_from(NAMES))
    body = draw(st.lists(statement("    "), min_size=1, max_size=4))
    if kind == "stmt":
        return draw(statement("")).replace("return ", "x = ")
    if kind == "class":
        inner = [line.replace("\n", "\n    ") for line in body]
        return f"class {name.title()}:\n    def m(self):\n" + "\n".join("    " + b for b in inner)
    if kind == "if":
        return (
            f"if {name}:\n    import sys\n    sys.exit()"
            if draw(st.booleans())
            else f"if not {name}:\n" + "\n".join(b.replace("return ", "y = ") for b in body)
        )
    if kind == "try":
        return "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None"
    head = (
        f"def {name}():\n"
        if kind == "def"
        else f"@pytest.mark.skipif(torch.version.hip, reason='x')\ndef {name}():\n"
    )
    return head + "\n".join(body)


_NAME = re.compile(r"\b(" + "|".join(map(re.escape, NAMES)) + r")\b")


@st.composite
def blocks_of_a_module(draw):
    """Blocks whose names are their own (a suffix) or shared with other blocks: shared names
    pull blocks into the kept text, blocks of their own can be blanked."""
    out = []
    for k, block in enumerate(draw(st.lists(top_block(), min_size=2, max_size=9))):
        suffix = draw(st.sampled_from([None, "", "_a"]))
        out.append(_NAME.sub(lambda m: m.group(1) + (f"_{k}" if suffix is None else suffix), block))
    return out


@given(blocks_of_a_module(), st.sampled_from(["m.py", "setup.py"]), st.booleans())
@settings(
    max_examples=int(os.environ.get("PARTIAL_EXAMPLES", "120")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
@example(
    ["def _nv():\n    torch.backends.cuda.matmul.allow_tf32 = True", "if not is_rocm:\n    _nv()"],
    "m.py",
    False,
)
@example(
    ["def f():\n    mode = 'reduce-overhead'", "def g():\n    model = torch.compile(model, mode=mode)"],
    "m.py",
    False,
)
def test_generated_modules_find_the_same(blocks, name, main):
    text = "import torch\nimport os\n\n" + "\n\n\n".join(blocks) + "\n"
    if main:
        text += "\nif __name__ == '__main__':\n    _helper()\n"
    try:
        ast.parse(text)
    except SyntaxError:
        return  # a generated class body or early exit out of place: not a module
    mp = pytest.MonkeyPatch()
    try:
        assert _check(name, text, "partial", mp) == _check(name, text, "whole", mp)
    finally:
        mp.undo()


hypothesmith = pytest.importorskip("hypothesmith")


@given(hypothesmith.from_grammar(auto_target=False), st.sampled_from(TRIGGERS[:5]))
@settings(
    max_examples=int(os.environ.get("PARTIAL_EXAMPLES", "30")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_grammar_generated_code_around_triggers(code, trigger):
    """hypothesmith's modules (any syntax: strings, continuations, decorators) between defs
    that hold trigger lines."""
    hazard = trigger.format(n="mode", v="True", i="    ")
    text = f"import torch\n\ndef first():\n    {hazard}\n\n{code}\n\ndef last():\n    {hazard}\n"
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return
    mp = pytest.MonkeyPatch()
    try:
        assert _check("m.py", text, "partial", mp) == _check("m.py", text, "whole", mp)
    finally:
        mp.undo()


@pytest.mark.integration
def test_real_tree_compare_script(tmp_path):
    """The script that compares both parses on real trees runs (on the repository's fixtures)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "compare_partial_parse.py"), str(FIXTURES)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert out.returncode == 0, out.stderr
    assert "identical" in out.stdout


def test_the_cut_is_opt_in(monkeypatch):
    """Off by default (it cuts nothing on real code today, docs/benchmarks.md): without
    ``ROCM_LINT_PARTIAL_PARSE`` no plan is made, with ``auto`` one is."""
    text = (
        "import torch\n\n\ndef unrelated():\n    return 1\n" * 400
        + "torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    plans = []
    real = partial.plan
    monkeypatch.setattr(partial, "plan", lambda *a, **k: plans.append(1) or real(*a, **k))
    monkeypatch.delenv(partial.ENV_WHOLE, raising=False)
    monkeypatch.delenv(partial.ENV_ALWAYS, raising=False)
    default = engine.check_source("m.py", text, Config())
    assert plans == [] and [f.code for f in default] == ["ROC101"]
    monkeypatch.setenv(partial.ENV_ALWAYS, "auto")
    assert engine.check_source("m.py", text, Config()) == default and plans
