"""The rules' narrowed searches equal the whole-module ones they replace.

ROC501's build facts (``rocm_lint.rules.build``) walk only the statements a sink or a binding it
follows can be on; ROC405-ROC407's ``setup()`` search (``rocm_lint.rules.dependencies``) walks
only the subtrees whose lines name ``setuptools``/``distutils`` (or what the imports bind to
them); ROC106's ``except`` fallbacks (``rocm_lint.rules.capability_model``) enter only the
statements whose lines hold ``try``.  Both must give exactly what the whole walk gives: on every Python fixture of the
project, and on sources written to reach the corners of the argument (a key spelled with
escapes or split literals, an alias of ``"nvcc"``, an identifier in letters NFKC folds, ``\\r``
line endings, gates, imported helpers)."""

import ast
from pathlib import Path

import pytest

from rocm_lint.config import Config
from rocm_lint.python.context import ModuleContext
from rocm_lint.rules.build import _learn_build_facts, _learn_build_facts_whole
from rocm_lint.rules.dependencies import _SETUP, _setup_lists, _setup_roots, _walk_naming

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PY_FIXTURES = sorted(p for p in FIXTURES.rglob("*.py"))

# (name, source, the whole walk finds something: nvcc strings, ROCm-side strings, imported names)
BUILD_SOURCES = [
    ("alias-key", 'KEY = "nvcc"\nflags = ["--use_fast_math"]\nargs = {KEY: flags}\n', (1, 1, 0)),
    ("alias-chain", 'A = "nvcc"\nB = A\nargs = {\n    B: ["-Xptxas=-v"],\n}\n', (1, 1, 0)),
    ("split-key", 'args = {"nv" "cc": ["--use_fast_math"]}\n', (1, 1, 0)),
    ("split-key-lines", 'args = {\n    "nv"\n    "cc": ["--use_fast_math"],\n}\n', (1, 1, 0)),
    ("escaped-key", 'args = {"\\x6evcc": ["--use_fast_math"]}\n', (1, 1, 0)),
    ("continued-key", 'args = {"nv\\\ncc": ["--use_fast_math"]}\n', (1, 1, 0)),
    (
        "subscript",
        'args = {}\nargs["nv" "cc"] = ["-Xptxas"]\nargs["nvcc"].append("--threads 4")\n',
        (2, 2, 0),
    ),
    ("nfkc-name", 'ｆlags = ["--use_fast_math"]\nargs = {"nvcc": flags}\n', (1, 1, 0)),
    (
        "nfkc-keyword",
        'flags = ["--use_fast_math"]\nload("x", ["a.cu"], ｅxtra_cuda_cflags=flags)\n',
        (1, 1, 0),
    ),
    (
        "provider-upper",
        'class B:\n    def NVCC_FLAGS(self):\n        f = ["--use_fast_math"]\n'
        '        f.append("-Xptxas")\n        return f\n',
        (2, 2, 0),
    ),
    (
        "provider-cuda-cflags",
        "class B:\n    def get_cuda_cflags(self):\n        out = []\n"
        '        out += ["--expt-relaxed-constexpr"]\n        return out\n',
        (1, 1, 0),
    ),
    (
        "module-function",
        'def extra():\n    x = 1\n    return ["-gencode=arch=compute_80,code=sm_80"]\n\n'
        "args = dict(nvcc=extra())\n",
        (1, 1, 0),
    ),
    (
        "chain",
        'base = ["-O3"]\narch = ["--threads", "4"]\nallf = base + arch\n'
        'def f():\n    return load("m", [], extra_cuda_cflags=allf)\n',
        (3, 3, 0),
    ),
    (
        "imported-helper",
        "from .flags import extra_nvcc_flags\nimport helpers\n"
        'load("m", [], extra_cuda_cflags=extra_nvcc_flags() + helpers.more())\n',
        (0, 0, 2),
    ),
    (
        "imported-rebound-gated",
        "import torch\nfrom .flags import flags\nif torch.version.cuda:\n"
        '    flags = ["--use_fast_math"]\nargs = {"nvcc": flags}\n',
        (0, 0, 1),
    ),
    (
        "gated",
        'import torch\nfrom torch.utils.cpp_extension import IS_HIP_EXTENSION\nflags = ["-O3"]\n'
        'if not IS_HIP_EXTENSION:\n    flags.append("--use_fast_math")\nelse:\n'
        '    flags.append("--offload-arch=gfx90a")\nargs = {"nvcc": flags}\n'
        'if IS_HIP_EXTENSION:\n    args["nvcc"] += ["-fgpu-rdc"]\n',
        (2, 3, 0),
    ),
    (
        "inherited-gate",
        "import torch\nfrom torch.utils.cpp_extension import IS_HIP_EXTENSION\n"
        'def _nv():\n    flags = ["--use_fast_math"]\n    return {"nvcc": flags}\n'
        'if not IS_HIP_EXTENSION:\n    args = _nv()\nflags = ["-O2"]\n',
        (0, 0, 0),
    ),
    (
        "parameter",
        'def build(flags):\n    flags.append("--use_fast_math")\n    return {"nvcc": flags}\n'
        'flags = ["-O3"]\n',
        (1, 1, 0),
    ),
    ("no-sink", 'flags = ["--use_fast_math"]\nprint(flags)\n', (0, 0, 0)),
]


def _context(source: str, path: str = "setup.py") -> ModuleContext:
    return ModuleContext(path, ast.parse(source), Config(), source)


@pytest.mark.parametrize("name,source,found", BUILD_SOURCES, ids=[s[0] for s in BUILD_SOURCES])
def test_build_facts_narrow_walk_equals_whole_walk(name, source, found):
    for text in (source, source.replace("\n", "\r\n"), source.replace("\n", "\r")):
        tree = ast.parse(text)
        narrow = _learn_build_facts(ModuleContext("build_ext.py", tree, Config(), text))
        whole = _learn_build_facts_whole(ModuleContext("build_ext.py", tree, Config(), text))
        assert narrow == whole, name
        if text == source:
            assert (len(whole.nvcc_constants), len(whole.sink_constants), len(whole.nvcc_imports)) == found, (
                name
            )


@pytest.mark.parametrize("path", PY_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_build_facts_narrow_walk_equals_whole_walk_on_fixtures(path):
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python the parser reads")
    narrow = _learn_build_facts(ModuleContext(str(path), tree, Config(), text))
    whole = _learn_build_facts_whole(ModuleContext(str(path), tree, Config(), text))
    assert narrow == whole


def test_build_facts_of_the_fixtures_are_not_all_empty():
    """The fixture comparison above compares something: ROC501's own fixtures reach nvcc."""
    reached = 0
    for path in PY_FIXTURES:
        text = path.read_text(encoding="utf-8")
        try:
            facts = _learn_build_facts(ModuleContext(str(path), ast.parse(text), Config(), text))
        except SyntaxError:
            continue
        reached += bool(facts.nvcc_constants)
    assert reached >= 3


SETUP_SOURCES = [
    ("from-import", 'from setuptools import setup\nsetup(install_requires=["nvidia-cublas-cu12"])\n', 1),
    ("alias", 'from setuptools import setup as s\nREQ = ["cupy-cuda12x"]\ns(install_requires=REQ)\n', 1),
    (
        "module",
        'import setuptools\nsetuptools.setup(\n    name="x",\n    install_requires=["torch==2.4.0"],\n)\n',
        1,
    ),
    ("distutils", 'import distutils.core as dc\ndc.setup(tests_require=["torch==2.4.0"])\n', 1),
    ("distutils-core", 'from distutils import core\ncore.setup(setup_requires=["torch==2.4.0"])\n', 1),
    ("unimported", 'setuptools.setup(install_requires=["torch==2.4.0"])\n', 1),
    ("shadowed", 'import other as setuptools\nsetuptools.setup(install_requires=["torch==2.4.0"])\n', 0),
    (
        "nested",
        "import setuptools\nif True:\n    def main():\n        return [setuptools.setup(\n"
        '            extras_require={"gpu": ["cupy-cuda12x"]})]\n',
        1,
    ),
    (
        "decorator",
        'import setuptools\n@setuptools.setup(install_requires=["torch==2.4.0"])\ndef f():\n    pass\n',
        1,
    ),
    (
        "two-calls",
        'from setuptools import setup\nL = ["torch==2.4.0"]\n'
        'def a():\n    x = [[setup(extras_require={"a": L})]]\nsetup(install_requires=L)\n',
        2,
    ),
    ("nfkc", 'from setuptools import setup\nｓetup(install_requires=["torch==2.4.0"])\n', 1),
]


def _setup_calls_whole(ctx):
    return [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call) and ctx.qualname(n.func) in _SETUP]


def _setup_calls_narrow(ctx):
    return [
        n
        for n in _walk_naming(ctx, _setup_roots(ctx))
        if isinstance(n, ast.Call) and ctx.qualname(n.func) in _SETUP
    ]


@pytest.mark.parametrize("name,source,calls", SETUP_SOURCES, ids=[s[0] for s in SETUP_SOURCES])
def test_setup_search_narrow_equals_whole(name, source, calls):
    for text in (source, source.replace("\n", "\r")):
        ctx = _context(text)
        whole = _setup_calls_whole(ctx)
        assert _setup_calls_narrow(ctx) == whole, name  # the same calls, in the same order
        assert len(whole) == calls, name


def test_setup_lists_first_section_wins_as_before():
    """A list passed to two calls keeps the section of the first call ``ast.walk`` meets (breadth
    first: the module-level call, though it comes later in the text)."""
    source = SETUP_SOURCES[9][1]
    ctx = _context(source)
    lists = _setup_lists(ctx)
    assert list(lists.values()) == [""]


@pytest.mark.parametrize("path", PY_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_setup_search_narrow_equals_whole_on_fixtures(path):
    text = path.read_text(encoding="utf-8")
    try:
        ctx = ModuleContext(str(path), ast.parse(text), Config(), text)
    except SyntaxError:
        pytest.skip("not Python the parser reads")
    assert _setup_calls_narrow(ctx) == _setup_calls_whole(ctx)


TRY_SOURCES = [
    (
        "module",
        "import torch\ntry:\n    cc = torch.cuda.get_device_capability()\nexcept RuntimeError:\n    cc = 0\n",
        1,
    ),
    (
        "nested",
        "class A:\n    def f(self):\n        with x:\n            for i in y:\n                try:\n"
        "                    pass\n                except Exception:\n                    cc: int = 0\n"
        "                    other = f()\n",
        1,
    ),
    (
        "two",
        "def f():\n    try:\n        a = 1\n    except E:\n        a = 2\n\ntry:\n    b = 1\nexcept E:\n"
        "    b = 3\nfinally:\n    c = 4\n",
        2,
    ),
    (
        "match",
        "match v:\n    case 1:\n        try:\n            pass\n        except E:\n            z = 0\n",
        1,
    ),
    ("nfkc", "ｘ = 1\ntry:\n    pass\nexcept E:\n    ｙ = 0\n", 1),
]


def _fallbacks_whole(ctx):
    from rocm_lint.rules.capability_model import _compound_statements

    return {
        id(stmt)
        for node in _compound_statements(ctx.tree.body)
        if isinstance(node, ast.Try)
        for handler in node.handlers
        for stmt in handler.body
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Constant)
    }


@pytest.mark.parametrize("name,source,count", TRY_SOURCES, ids=[s[0] for s in TRY_SOURCES])
def test_except_fallbacks_narrow_equals_whole(name, source, count):
    from rocm_lint.rules.capability_model import _except_fallbacks

    for text in (source, source.replace("\n", "\r")):
        ctx = _context(text)
        whole = _fallbacks_whole(ctx)
        assert _except_fallbacks(ctx) == whole, name
        assert len(whole) == count, name


@pytest.mark.parametrize("path", PY_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_except_fallbacks_narrow_equals_whole_on_fixtures(path):
    from rocm_lint.rules.capability_model import _except_fallbacks

    text = path.read_text(encoding="utf-8")
    try:
        ctx = ModuleContext(str(path), ast.parse(text), Config(), text)
    except SyntaxError:
        pytest.skip("not Python the parser reads")
    assert _except_fallbacks(ctx) == _fallbacks_whole(ctx)
