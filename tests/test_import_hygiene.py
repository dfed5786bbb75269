"""Linting never imports torch or libcst: start-up time, and no risk of touching a user's ROCm torch."""

import subprocess
import sys

import pytest

from conftest import FIXTURES


def test_check_imports_neither_torch_nor_libcst():
    code = (
        "import sys\n"
        "from rocm_lint.cli import main\n"
        f"rc = main(['check', '--quiet', '--exit-zero', {str(FIXTURES)!r}])\n"
        "bad = sorted(m for m in ('torch', 'libcst') if m in sys.modules)\n"
        "sys.stderr.write('IMPORTED:' + ','.join(bad) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "IMPORTED:\n" in proc.stderr, proc.stderr


def test_package_does_not_depend_on_torch():
    from importlib.metadata import requires

    deps = requires("rocm-lint") or []
    # libcst is a dependency (for --fix) but is imported only when fixing: see the test above
    assert not [d for d in deps if d.split()[0].lower().startswith("torch") and "extra" not in d]


def test_a_python_check_loads_no_cpp_or_config_file_reader(tmp_path):
    """The registry imports every rule family, and families mix languages (ROC3 reads Python and
    shell, ROC6/ROC7 hold a Python rule beside the C++ ones): their readers load only when a file
    of that language is checked, and their patterns compile on first use (a third of a one-file
    check's start-up).  A C++ file then loads them (imported inside the checkers that call them)."""
    py = tmp_path / "train.py"
    py.write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(int *o) { unsigned m = __ballot_sync(0xffffffff, o[0]); o[1] = m; }\n")
    code = (
        "import sys\n"
        "from rocm_lint.cli import main\n"
        f"main(['check', '--quiet', '--exit-zero', '--no-cache', {str(py)!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('rocm_lint.cpp', 'rocm_lint.configfiles')))\n"
        "sys.stderr.write('LOADED:' + ','.join(loaded) + '\\n')\n"
        f"main(['check', '--exit-zero', '--no-cache', '--output-format', 'concise', {str(cu)!r}])\n"
        "sys.stderr.write('LOADED_AFTER:%s\\n' % ('rocm_lint.cpp.scanner' in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "LOADED:\n" in proc.stderr, proc.stderr
    assert "ROC601" in proc.stdout, proc.stdout + proc.stderr
    assert "LOADED_AFTER:True" in proc.stderr, proc.stderr


def test_a_one_file_python_check_imports_only_what_python_needs(tmp_path):
    """Start-up of a one-file check (an editor, pre-commit) is mostly imports: a Python file in a
    project without config files loads no reader of another language, no fixer, no output format
    it does not print, no TOML or INI reader (there is no config file to read) and no JSON
    module.  The list is held here, not the time (``python -X importtime`` measures it)."""
    py = tmp_path / "train.py"
    py.write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    code = (
        "import sys\n"
        "from rocm_lint.cli import main\n"
        f"main(['check', '--exit-zero', '--no-cache', '--output-format', 'concise', {str(py)!r}])\n"
        "sys.stderr.write('LOADED:' + ','.join(sorted(sys.modules)) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "ROC101" in proc.stdout, proc.stdout + proc.stderr
    loaded = set(proc.stderr.split("LOADED:")[1].split("\n")[0].split(","))
    assert "rocm_lint.python.analyzer" in loaded  # the list is read from a real check
    unwanted = {
        "tomllib",
        "tomli",
        "configparser",
        "json",
        "libcst",
        "torch",
        "rocm_lint.fix",
        "rocm_lint.cache",
        "rocm_lint.notebook",
        "rocm_lint.semgrep",
        "rocm_lint.build",
    }
    prefixes = (
        "rocm_lint.cpp",
        "rocm_lint.configfiles",
        "rocm_lint.build.",
        "rocm_lint.fix.",
        "rocm_lint.output.json",
        "rocm_lint.output.sarif",
        "rocm_lint.output.html",
    )
    assert not sorted(m for m in loaded if m in unwanted or m.startswith(prefixes))


def _one_file_check(tmp_path, name: str, text: str, code: str):
    """The modules loaded by a one-file check of ``name`` (written in ``tmp_path``, a project
    without config files), after asserting that the check found ``code``."""
    path = tmp_path / name
    path.write_text(text)
    script = (
        "import sys\n"
        "from rocm_lint.cli import main\n"
        f"main(['check', '--exit-zero', '--no-cache', '--output-format', 'concise', {str(path)!r}])\n"
        "sys.stderr.write('LOADED:' + ','.join(sorted(sys.modules)) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert code in proc.stdout, proc.stdout + proc.stderr
    return set(proc.stderr.split("LOADED:")[1].split("\n")[0].split(","))


# Python's reader (the project model stays: the run over paths holds one for every language), the
# rule families of Python files only, and what no one-file check of another language needs.
_PYTHON_READER = (
    "rocm_lint.python.context",
    "rocm_lint.python.analyzer",
    "rocm_lint.python.predicates",
    "rocm_lint.python.gates",
    "rocm_lint.python.source_view",
    "rocm_lint.python.patterns",
)
_PYTHON_FAMILIES = (
    "rocm_lint.rules.backends",
    "rocm_lint.rules.inductor",
    "rocm_lint.rules.capability",
    "rocm_lint.rules.build",
    "rocm_lint.rules.hardware",
    "rocm_lint.rules.graph_capture",
    "rocm_lint.rules.warp_width",
    "rocm_lint.rules.cuda_version",
)
_NEVER = {
    "tomllib",
    "tomli",
    "configparser",
    "libcst",
    "torch",
    "rocm_lint.fix",
    "rocm_lint.cache",
    "rocm_lint.notebook",
    "rocm_lint.semgrep",
    "rocm_lint.cli_commands",
    "rocm_lint.cli_stdin",
    "shutil",
}
_NEVER_PREFIXES = (
    "rocm_lint.fix.",
    "rocm_lint.output.json",
    "rocm_lint.output.sarif",
    "rocm_lint.output.html",
)


@pytest.mark.integration  # a subprocess per check
def test_a_one_file_cpp_check_imports_only_what_cpp_needs(tmp_path):
    """A ``.cu`` file loads the C++ reader and the C++ rule families, not Python's reader nor the
    families of Python rules (the project pre-pass's facts are Python's: a run without a Python
    file collects none), nor the config-file readers of the settings rules."""
    loaded = _one_file_check(
        tmp_path,
        "k.cu",
        "__global__ void k(int *o) { unsigned m = __ballot_sync(0xffffffff, o[0]); o[1] = m; }\n",
        "ROC601",
    )
    assert "rocm_lint.cpp.scanner" in loaded and "rocm_lint.rules.lane_masks" in loaded
    unwanted = (
        set(_PYTHON_READER)
        | set(_PYTHON_FAMILIES)
        | _NEVER
        | {"rocm_lint.rules.allocator", "rocm_lint.rules.dependencies"}
    )
    assert not sorted(m for m in loaded if m in unwanted or m.startswith(_NEVER_PREFIXES))


@pytest.mark.integration  # a subprocess per check
def test_a_one_file_config_check_imports_only_what_its_language_needs(tmp_path):
    """A Dockerfile loads its reader and the families of its language's rules: not the C++
    reader, no family of C++ rules or of Python rules only.  (The settings families, ROC3/ROC4/ROC5,
    hold Python rules too and still import Python's reader: docs/benchmarks.md, what is left.)
    A requirements file with no trigger word of any rule loads no reader and no family at all."""
    loaded = _one_file_check(
        tmp_path,
        "Dockerfile",
        "FROM ubuntu:22.04\nENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n",
        "ROC301",
    )
    assert "rocm_lint.configfiles.scanner" in loaded and "rocm_lint.rules.allocator" in loaded
    cpp = (
        "rocm_lint.cpp.scanner",
        "rocm_lint.cpp.lexer",
        "rocm_lint.cpp.preproc",
        "rocm_lint.cpp.facts",
        "rocm_lint.rules.lane_masks",
        "rocm_lint.rules.warp_size",
        "rocm_lint.rules.cuda_cpp",
        "rocm_lint.rules.cuda_versions",
        "rocm_lint.rules.device_runtime",
    )
    unwanted = set(cpp) | set(_PYTHON_FAMILIES) - {"rocm_lint.rules.build"} | _NEVER
    assert not sorted(m for m in loaded if m in unwanted or m.startswith(_NEVER_PREFIXES))
    (tmp_path / "sub").mkdir()
    loaded = _one_file_check(tmp_path / "sub", "requirements.txt", "numpy==2.0\n", "")
    assert not sorted(
        m
        for m in loaded
        if m.startswith(("rocm_lint.rules.", "rocm_lint.configfiles", "rocm_lint.cpp", "rocm_lint.build"))
        or m in _PYTHON_READER
        or m in _NEVER
    )
