"""Every finding of a rule that has fixes either carries one or says why not (#27: ROC703 on a
backslash-continued ``#if`` and ROC702 after an existing ``#line`` said nothing).  A finding
without a fix carries a display-only fix (JSON ``fix.applicability: display``) whose message is
the reason."""

import pytest

from conftest import ROOT

from rocm_lint.config import Config
from rocm_lint.engine_paths import check_paths
from rocm_lint.finding import Applicability
from rocm_lint.registry import find_rules

FIXABLE = {r.code for r in find_rules("ROC") if r.fix is not None}


def _unexplained(findings):
    out = []
    for f in findings:
        if f.code not in FIXABLE:
            continue
        fix = f.fix
        has_fix = fix is not None and fix.applicability != Applicability.DISPLAY and (fix.edits or fix.recipe)
        says_why = fix is not None and fix.applicability == Applicability.DISPLAY and fix.message.strip()
        if not (has_fix or says_why):
            out.append(f"{f.path}:{f.line}:{f.col + 1}: {f.code}")
    return out


def test_every_fixture_finding_has_a_fix_or_a_reason():
    """All fixtures: Python, C++ and config files."""
    report = check_paths([str(ROOT / "fixtures")], Config())
    codes = {f.code for f in report.findings if f.code in FIXABLE}
    assert {"ROC101", "ROC301", "ROC601", "ROC602", "ROC702", "ROC703"} <= codes
    assert not _unexplained(report.findings)


@pytest.mark.parametrize(
    "source,code,words",
    [
        (
            "#if (__CUDACC_VER_MAJOR__ > 11) || \\\n    (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 8)\n"
            "#define NEW 1\n#endif\n",
            "ROC703",
            "several lines",
        ),
        ('#line 100 "gen.cu"\n#include <cuda_fp16.h>\n__global__ void k() {}\n', "ROC702", "line numbers"),
        ("#include <nvtx3/nvToolsExt.h>\n__global__ void k() {}\n", "ROC702", "no HIP header"),
    ],
)
def test_the_cpp_reasons(tmp_path, source, code, words):
    path = tmp_path / "k.cu"
    path.write_text(source)
    found = [f for f in check_paths([str(path)], Config()).findings if f.code == code]
    assert found, code
    assert all(
        f.fix is not None and f.fix.applicability == Applicability.DISPLAY and words in f.fix.message
        for f in found
    ), [f.fix for f in found]


def test_a_python_shape_with_no_safe_rewrite_says_why(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\n\n\ndef f(x):\n    if x: torch.backends.cuda.matmul.allow_tf32 = True\n")
    found = check_paths([str(path)], Config()).findings
    assert [f.fix.applicability for f in found] == [Applicability.DISPLAY]
    assert "shares its line" in found[0].fix.message
