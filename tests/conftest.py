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
EXPECT = re.compile(r"(?:#|//|/\*)\s*expect:\s*((?:ROC[0-9]{3}\s*)+)")  # `#` Python/shell, `//` `/*` C++


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
        cwd=cwd, env=full_env, capture_output=True, text=True, input=input, timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli
