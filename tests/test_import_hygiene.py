"""Linting never imports torch or libcst: start-up time, and no risk of touching a user's ROCm torch."""

import subprocess
import sys

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
    check's start-up).  A C++ file then loads them and the lazily bound names are the real ones."""
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
        "import rocm_lint.rules.lane_masks as warp, rocm_lint.cpp.scanner as scanner\n"
        "sys.stderr.write('REAL:%s\\n' % (warp.calls is scanner.calls))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "LOADED:\n" in proc.stderr, proc.stderr
    assert "ROC601" in proc.stdout, proc.stdout + proc.stderr
    assert "REAL:True" in proc.stderr, proc.stderr


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
    unwanted = {"tomllib", "tomli", "configparser", "json", "libcst", "torch", "rocm_lint.fix",
                "rocm_lint.cache", "rocm_lint.notebook", "rocm_lint.semgrep", "rocm_lint.build"}
    prefixes = ("rocm_lint.cpp", "rocm_lint.configfiles", "rocm_lint.build.", "rocm_lint.fix.",
                "rocm_lint.output.json", "rocm_lint.output.sarif", "rocm_lint.output.html")
    assert not sorted(m for m in loaded if m in unwanted or m.startswith(prefixes))
