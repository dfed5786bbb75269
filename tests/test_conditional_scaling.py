"""A C++ file of many conditionals costs time linear in its directives: the ``#if`` model, the
rules that read every branch (ROC605's chip lists, ROC703's guards) and the fix path (check,
fix, verify on NVIDIA, re-check) all grow as the file does.  A file of a million ``#if`` lines
took 31 s to check and 66 s for ``--diff`` (issue #27): ROC605 scanned every directive for each
branch.  Measured without a clock (tests/work_count.py): 10x the directives may cost at most
12x the Python steps; the old per-branch scan made it ~100x."""

from rocm_lint.config import Config
from rocm_lint.engine import check_source
from rocm_lint.fix.api import fix_text
from work_count import assert_linear_steps


def flat(n: int) -> str:
    """``n`` conditionals one after the other, each closed at once, then a finding."""
    lines = ["__global__ void k(unsigned *m) {"]
    for i in range(n):
        lines.append("#ifdef USE_ROCM" if i % 2 else f"#if FOO_{i % 50} && !defined(BAR)")
        lines.append(f"#define WARP_{i % 7} 32" if i % 3 == 0 else "  m[0] += 1;")
        lines.append("#endif")
    lines += ["  m[1] = __ballot_sync(0xffffffff, threadIdx.x & 31);", "}"]
    return "\n".join(lines) + "\n"


def nested(n: int) -> str:
    """``n`` conditionals nested inside each other, a finding in the innermost one."""
    lines = ["__global__ void k(unsigned *m) {"]
    lines += [f"#if X{i % 7}" for i in range(n)]
    lines.append("  m[0] = __ballot_sync(0xffffffff, 1);")
    lines += ["#endif"] * n
    return "\n".join(lines + ["}"]) + "\n"


def _check(text: str):
    findings = check_source("many_ifs.cu", text, Config())
    assert isinstance(findings, list) and findings
    return findings


def _fix(text: str):
    result = fix_text("many_ifs.cu", text, Config(), unsafe=True)
    assert result.text != text  # the 32-bit mask and the lane math were fixed


def test_check_is_linear_in_flat_conditionals():
    assert_linear_steps(_check, flat, 100)


def test_check_is_linear_in_nested_conditionals():
    assert_linear_steps(_check, nested, 100)


def test_fix_is_linear_in_conditionals():
    assert_linear_steps(_fix, nested, 60)


def _fixed_pair(n: int):
    """A file of ``n`` conditionals and its fixed form (a line changed at each end): two
    near-identical texts whose lines repeat (each ``#if`` line too rare for difflib's junk
    heuristic), where difflib's alignment is quadratic."""
    body = [line for i in range(n) for line in (f"#if FOO_{i % 60}\n", "#endif\n")]
    old = ["#include <cuda_runtime.h>\n"] + body + ["  m = 0xffffffff;\n"]
    new = ["#include <hip/hip_runtime.h>\n"] + body + ["  m = ~0ull;\n"]
    return old, new


def test_the_diff_of_a_large_fixed_file_is_linear_and_difflibs(monkeypatch):
    """``--diff`` of a file of a million ``#if`` lines spent minutes in difflib: large files are
    aligned by Myers' algorithm (linear for few changes), printed in difflib's format."""
    import difflib

    from rocm_lint.fix import diff

    old, new = _fixed_pair(50)
    expected = "".join(difflib.unified_diff(old, new, fromfile="a/k.cu", tofile="b/k.cu"))
    assert "".join(diff.unified_diff(old, new, "a/k.cu", "b/k.cu")) == expected  # small: difflib itself
    monkeypatch.setattr(diff, "LINEAR_FROM", 0)
    assert "".join(diff.unified_diff(old, new, "a/k.cu", "b/k.cu")) == expected  # the linear path agrees
    assert_linear_steps(lambda pair: "".join(diff.unified_diff(*pair, "a/k.cu", "b/k.cu")), _fixed_pair, 300)
    monkeypatch.setattr(diff, "LINEAR_FROM", 10**9)
    try:
        assert_linear_steps(
            lambda pair: "".join(diff.unified_diff(*pair, "a/k.cu", "b/k.cu")), _fixed_pair, 300
        )
    except AssertionError as exc:
        assert "steps" in str(exc)  # difflib alone is what the linear path replaces
    else:
        raise AssertionError("difflib was linear on this input: the test no longer shows the difference")
