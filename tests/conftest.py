import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"
CONFIG_FIXTURES = FIXTURES / "config"
EXPECT = re.compile(r"(?:#|//|/\*)\s*expect:\s*((?:ROC[0-9]{3}\s*)+)")  # `#` Python/shell, `//` `/*` C++
# A positive fixture's findings, pinned next to it (``ROC101.py`` -> ``ROC101.py.expected``) and
# checked by tests/test_fixture_snapshots.py; not a fixture itself.
SNAPSHOT_SUFFIX = ".expected"
# The CLI keeps a cache beside the configuration (.rocm_lint_cache): the tests' runs keep theirs
# in one temporary directory instead of the fixtures (tests/test_cache.py uses its own).
os.environ.setdefault(
    "ROCM_LINT_CACHE_DIR", str(Path(__import__("tempfile").mkdtemp(prefix="rocm-lint-cache-")))
)


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        default=False,
        help="rewrite the fixtures' .expected snapshot files from the engine's findings "
        "instead of failing on a difference (tests/test_fixture_snapshots.py)",
    )
    parser.addoption(
        "--all-tiers",
        action="store_true",
        default=False,
        help="also run the integration tier (real Semgrep, pre-commit, the Action, the "
        "browser, compilers, differential runs): what `make test` and CI run",
    )


# The fast tier is what a plain `python -m pytest` runs: unit, snapshot and property tests.
# The integration tier (modules marked `pytestmark = pytest.mark.integration`) drives real
# external tools; `make test` (CI) passes --all-tiers and runs everything.
def pytest_configure(config):
    config.addinivalue_line("markers", "integration: drives a real external tool (run with --all-tiers)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--all-tiers") or os.environ.get("ROCM_LINT_ALL_TIERS"):
        return
    deselected = [item for item in items if item.get_closest_marker("integration")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("integration")]


def is_snapshot(path: Path) -> bool:
    return path.name.endswith(SNAPSHOT_SUFFIX)


def expected_findings(path: Path) -> Counter:
    """Counter of (line, code) from ``# expect: ROC101 ROC101`` markers."""
    out: Counter = Counter()
    for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            for code in m.group(1).split():
                out[(lineno, code)] += 1
    return out


def run_cli(*args, cwd=None, env=None, input=None):
    """Run the real console entry point in a subprocess."""
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    full_env.pop("FORCE_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "rocm_lint", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        input=input,
        timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli


_INCLUDE_LINE = re.compile(r"^(\s*)#\s*include\s*([<\"])(.*)[>\"]", re.M)
NVIDIA_DEFINES = (
    "-DCUDA_VERSION=12040",
    "-DCUDART_VERSION=12040",
    "-D__CUDACC_VER_MAJOR__=12",
    "-D__CUDACC_VER_MINOR__=4",
)
ROCM_DEFINES = ("-DUSE_ROCM", "-D__HIP_PLATFORM_AMD__", "-D__HIPCC__", "-D__HIP__")


def translation_unit(text, tmp_path, name, defines=NVIDIA_DEFINES):
    """gcc's preprocessor (``cpp -P``) on ``text`` as one platform's build sees it: the NVIDIA
    build by default (no ROCm macro defined), ``ROCM_DEFINES`` for the ROCm one. ``#include``
    lines become plain tokens (the CUDA and HIP headers are not installed here), so which header
    each platform includes is part of the result."""
    src = tmp_path / f"{name}.cu"
    src.write_text(_INCLUDE_LINE.sub(r"\1INCLUDE(\2\3)", text))
    proc = subprocess.run(
        ["cpp", "-P", "-x", "c++", "-undef", "-nostdinc", *defines, str(src)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stdout.splitlines() if line.strip()]


def nvcc_ptx(text, tmp_path, name):
    """The PTX nvcc makes of ``text`` (comments dropped). Libraries not installed here (cuDNN,
    cuRAND ...) get empty stub headers."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    src = tmp_path / f"{name}.cu"
    src.write_text(text)
    out = tmp_path / f"{name}.ptx"
    for _ in range(8):
        proc = subprocess.run(
            ["nvcc", "-rdc=true", "--ptx", "-arch=compute_75", "-w", f"-I{stubs}", str(src), "-o", str(out)],
            capture_output=True,
            text=True,
        )
        missing = re.search(r"fatal error: ([\w./]+): No such file", proc.stderr)
        if proc.returncode == 0 or not missing:
            break
        (stubs / missing.group(1)).parent.mkdir(parents=True, exist_ok=True)
        (stubs / missing.group(1)).write_text("")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in out.read_text().splitlines() if not line.startswith("//")]
