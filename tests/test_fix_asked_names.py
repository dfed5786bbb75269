"""No new name another module can see (issue 36): a module of the project that asks the fixed
module for ``is_rocm`` by itself would find the new flag.

``try: from pkg.utils import is_rocm`` / ``except ImportError: def is_rocm(): ...`` got a bool
where it called a function once the fix added the flag to ``pkg.utils`` (TypeError on NVIDIA);
an explicit import, ``getattr(utils, "is_rocm", None)`` and ``hasattr`` see it too.  The fixer
picks another name (``_is_rocm``), and the independent checker refuses a fix that adds one.
Each case fails on the main branch before this change.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from rocm_lint.config import Config
from rocm_lint.fix.api import fix_text
from rocm_lint.fix.nvidia_path import check_nvidia_path

UTILS = "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"

ASKERS = {
    "try_fallback": (
        "pkg/main.py",
        "try:\n    from pkg.utils import is_rocm\nexcept ImportError:\n\n"
        "    def is_rocm():\n        return False\n\n\nRESULT = is_rocm()\n",
    ),
    "relative_fallback": (
        "pkg/main.py",
        "try:\n    from .utils import is_rocm\nexcept ImportError:\n    is_rocm = None\n\n\nRESULT = is_rocm\n",
    ),
    "explicit_in_function": (
        "pkg/main.py",
        "def probe():\n    from pkg.utils import is_rocm\n\n    return is_rocm\n",
    ),
    "getattr": (
        "tools/report.py",
        "from pkg import utils\n\nRESULT = getattr(utils, 'is_rocm', 'absent')\n",
    ),
    "hasattr": (
        "tools/report.py",
        "import pkg.utils\n\nRESULT = hasattr(pkg.utils, 'is_rocm')\n",
    ),
}


def _project(tmp_path, asker):
    where, text = ASKERS[asker]
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / where).write_text(text)
    utils = tmp_path / "pkg" / "utils.py"
    utils.write_text(UTILS)
    return utils, where


@pytest.mark.parametrize("asker", sorted(ASKERS))
def test_the_flag_takes_a_name_no_module_asks_for(tmp_path, asker):
    utils, _ = _project(tmp_path, asker)
    fixed = fix_text(str(utils), UTILS, Config()).text
    assert "if not " in fixed, fixed  # still fixed
    assert "\nis_rocm =" not in fixed, fixed
    assert "_is_rocm = torch.version.hip is not None" in fixed


@pytest.mark.parametrize("asker", sorted(ASKERS))
def test_the_checker_refuses_a_flag_another_module_asks_for(tmp_path, asker):
    utils, where = _project(tmp_path, asker)
    bad = (
        "import torch\n\nis_rocm = torch.version.hip is not None\n\n"
        "if not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    why = check_nvidia_path(UTILS, bad, path=str(utils))
    assert why is not None and "is_rocm" in why, why
    good = bad.replace("is_rocm", "_is_rocm")
    assert check_nvidia_path(UTILS, good, path=str(utils)) is None


def test_a_module_that_does_not_import_it_does_not_count(tmp_path):
    """``getattr(x, "is_rocm")`` in a module that never imports ``pkg.utils`` asks someone else."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "other.py").write_text("import os\n\nRESULT = getattr(os, 'is_rocm', None)\n")
    utils = tmp_path / "pkg" / "utils.py"
    utils.write_text(UTILS)
    fixed = fix_text(str(utils), UTILS, Config()).text
    assert "\nis_rocm = torch.version.hip is not None" in fixed


def test_the_fallback_still_runs_on_nvidia(tmp_path):
    """Run it: under a stub torch (NVIDIA), main.py's `is_rocm()` is still its fallback function."""
    utils, _ = _project(tmp_path, "try_fallback")
    utils.write_text(fix_text(str(utils), UTILS, Config()).text)
    stubs = tmp_path / "stubs" / "torch"
    stubs.mkdir(parents=True)
    (stubs / "__init__.py").write_text(
        "import types\nversion = types.SimpleNamespace(hip=None, cuda='12.8')\n"
        "backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace()))\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path[:0] = sys.argv[1:]; import pkg.main as m; print(m.RESULT)",
            str(tmp_path / "stubs"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert out.stdout.strip() == "False", out.stderr
