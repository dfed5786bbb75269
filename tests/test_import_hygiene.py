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
