"""C++ fixes keep the NVIDIA program under every define the file may be built with (issue 15,
item 4): the style the file tests its ROCm macro in (``#if USE_ROCM`` by value: a build may pass
``-DUSE_ROCM=0``), line numbers (``__LINE__``), and a ROC601 that stays linear on kernels with
thousands of ballots.  Checked with the built-in verifier and with gcc's preprocessor."""

import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from conftest import NVIDIA_DEFINES, ROCM_DEFINES, translation_unit
from work_count import assert_linear_steps, cpu_limit
from rocm_lint.config import Config
from rocm_lint.cpp.lexer import lex
from rocm_lint.cpp.nvidia_view import same_on_nvidia
from rocm_lint.cpp.preproc import analyse
from rocm_lint.cpp.scanner import CppUnit
from rocm_lint.engine import check_source
from rocm_lint.fix.api import fix_text
from rocm_lint.lines import LineIndex

pytestmark = pytest.mark.integration  # the integration tier: make test / --all-tiers

needs_cpp = pytest.mark.skipif(shutil.which("cpp") is None, reason="gcc's preprocessor is not installed")
ZERO = NVIDIA_DEFINES + ("-DUSE_ROCM=0",)


def fixed(text, unsafe=False, path="k.cu"):
    result = fix_text(path, text, Config(), unsafe=unsafe, language="cuda")
    assert not isinstance(result, Exception), result
    return result


_INCLUDE_LINE = re.compile(r"^(\s*)#\s*include\s*([<\"])(.*)[>\"]", re.M)
_MARKER = re.compile(r'^# (\d+) "([^"]*)"')


def value_tested_macros(text):
    from rocm_lint.cpp.nvidia_view import value_tested_macros

    return value_tested_macros(text)


def numbered_unit(text, tmp_path, name, defines=NVIDIA_DEFINES):
    """gcc's preprocessor *with* line markers: [(line number, code line)], each code line with
    the number ``__LINE__`` has there (``#include`` lines become tokens, as ``translation_unit``)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "k.cu").write_text(_INCLUDE_LINE.sub(r"\1INCLUDE(\2\3)", text))
    proc = subprocess.run(
        ["cpp", "-x", "c++", "-undef", "-nostdinc", *defines, "k.cu"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out, line, current = [], 0, None
    for raw in proc.stdout.splitlines():
        m = _MARKER.match(raw)
        if m:
            line, current = int(m.group(1)), m.group(2)
            continue
        if raw.strip():
            out.append((current, line, raw.strip()))
        line += 1
    return out


# -- the file's own define style (item 4: `#if USE_ROCM` files) -----------------------------------------
VALUE_STYLE = """\
#include <cuda_runtime.h>
#if USE_ROCM
#define LANES 64
#else
#define LANES 32
#endif
#if CUDA_VERSION >= 11000
#define FAST_PATH 1
#endif
__global__ void k(float* x) { x[threadIdx.x] = LANES; }
"""

MIXED_STYLE = """\
#include <cuda_fp16.h>
#ifdef USE_ROCM
#define A 1
#endif
#if defined(USE_ROCM) && USE_ROCM
#define B 1
#endif
#if CUDA_VERSION < 11080
#define OLD 1
#endif
__global__ void k(float* x) { x[threadIdx.x] = 0; }
"""

BALLOT_VALUE_STYLE = """\
#if !USE_ROCM
#define NV 1
#endif
#define FULL_MASK 0xffffffff
__device__ int votes(bool p) {
  unsigned mask = __ballot_sync(__activemask(), p);
  int n = __popc(mask);
  return n + __shfl_sync(FULL_MASK, n, 0);
}
"""


def test_value_style_file_gets_value_style_fixes():
    out = fixed(VALUE_STYLE).text
    assert "#ifdef USE_ROCM" not in out and "defined(USE_ROCM)" not in out
    assert "#if USE_ROCM\n#include <hip/hip_runtime.h>\n#else\n" in out
    assert "#if CUDA_VERSION >= 11000 && !USE_ROCM\n" in out
    assert fixed(out).text == out  # final: nothing left to fix, nothing fixed twice


def test_mixed_style_file_gets_a_gate_right_under_both_builds():
    out = fixed(MIXED_STYLE).text
    assert "#if defined(USE_ROCM) && USE_ROCM\n#include <hip/hip_fp16.h>\n" in out
    assert "#if CUDA_VERSION < 11080 || (defined(USE_ROCM) && USE_ROCM)\n" in out
    assert fixed(out).text == out


def test_defined_style_files_keep_ifdef():
    text = VALUE_STYLE.replace("#if USE_ROCM", "#ifdef USE_ROCM")
    out = fixed(text).text
    assert "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>" in out
    assert "&& !defined(USE_ROCM)" in out


def test_unsafe_fixes_follow_the_value_style():
    out = fixed(BALLOT_VALUE_STYLE, unsafe=True).text
    assert "#ifdef" not in out and "defined(" not in out
    assert "#if USE_ROCM\n  unsigned long long mask" in out
    assert "#if USE_ROCM\n#define FULL_MASK 0xffffffffffffffffull" in out
    assert fixed(out, unsafe=True).text == out


@needs_cpp
@pytest.mark.parametrize(
    "text,unsafe",
    [(VALUE_STYLE, False), (MIXED_STYLE, False), (BALLOT_VALUE_STYLE, True)],
    ids=["value", "mixed", "ballot-value"],
)
def test_nvidia_translation_unit_kept_with_use_rocm_absent_and_zero(text, unsafe, tmp_path):
    out = fixed(text, unsafe=unsafe).text
    assert out != text
    for n, defines in enumerate((NVIDIA_DEFINES, ZERO)):
        before = translation_unit(text, tmp_path, f"b{n}", defines)
        assert before == translation_unit(out, tmp_path, f"a{n}", defines), defines
    # and the ROCm build does get the ROCm side
    assert translation_unit(out, tmp_path, "rocm", ROCM_DEFINES) != translation_unit(
        text, tmp_path, "r0", ROCM_DEFINES
    )


# -- the verifier (item 4: the independent check) -------------------------------------------------------
IFDEF_FIX_OF_VALUE_FILE = VALUE_STYLE.replace(
    "#include <cuda_runtime.h>\n",
    "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime.h>\n#endif\n",
).replace("#if CUDA_VERSION >= 11000", "#if CUDA_VERSION >= 11000 && !defined(USE_ROCM)")


def test_verifier_checks_the_nvidia_view_with_the_macro_defined_to_0():
    """The fix the old code wrote: right with USE_ROCM absent, wrong with -DUSE_ROCM=0."""
    assert not same_on_nvidia(VALUE_STYLE, IFDEF_FIX_OF_VALUE_FILE)
    from rocm_lint.cpp.nvidia_view import nvidia_define_sets

    assert value_tested_macros(VALUE_STYLE) == {"USE_ROCM"}
    assert nvidia_define_sets(VALUE_STYLE) == [frozenset(), frozenset({"USE_ROCM"})]
    value_fix = IFDEF_FIX_OF_VALUE_FILE.replace("#ifdef USE_ROCM", "#if USE_ROCM").replace(
        "!defined(USE_ROCM)", "!USE_ROCM"
    )
    assert same_on_nvidia(VALUE_STYLE, value_fix)
    # a file that never reads the macro by value is checked with it absent only
    defined_only = VALUE_STYLE.replace("#if USE_ROCM", "#ifdef USE_ROCM")
    assert value_tested_macros(defined_only) == frozenset()
    assert same_on_nvidia(defined_only, IFDEF_FIX_OF_VALUE_FILE.replace("#if USE_ROCM", "#ifdef USE_ROCM"))


def test_verifier_reads_values_through_defines():
    text = "#define IS_HIP USE_ROCM\n#if IS_HIP\nx;\n#endif\n"
    assert value_tested_macros(text) == {"USE_ROCM"}
    assert value_tested_macros("#define IS_HIP defined(USE_ROCM)\n") == frozenset()


@needs_cpp
def test_gcc_agrees_that_the_ifdef_fix_breaks_the_zero_build(tmp_path):
    """The verifier's verdict is gcc's: same with USE_ROCM absent, different with -DUSE_ROCM=0."""
    t = lambda text, name, d: translation_unit(text, tmp_path, name, d)  # noqa: E731
    assert t(VALUE_STYLE, "a", NVIDIA_DEFINES) == t(IFDEF_FIX_OF_VALUE_FILE, "b", NVIDIA_DEFINES)
    assert t(VALUE_STYLE, "c", ZERO) != t(IFDEF_FIX_OF_VALUE_FILE, "d", ZERO)


# -- __LINE__ (item 4: fixes shifted every later line) ----------------------------------------------------
LINE_SENSITIVE = """\
#include <cuda_runtime.h>
#include <cstdio>
#define CUDA_CHECK(x) check((x), __FILE__, __LINE__)
__device__ int votes(bool p) {
  unsigned mask = __ballot_sync(__activemask(), p);
  int n = __popc(mask);
  CUDA_CHECK(n);
  return n + __shfl_sync(0xffffffff, n, 0);
}
void host() { CUDA_CHECK(cudaDeviceSynchronize()); }
"""


def test_fixes_keep_line_numbers_on_nvidia():
    out = fixed(LINE_SENSITIVE, unsafe=True).text
    assert out.count("#line") >= 4
    assert same_on_nvidia(LINE_SENSITIVE, out, lines=True)
    # the verifier sees a fix that shifts lines
    shifted = re.sub(r"^#line \d+\n", "", out, flags=re.M)
    assert same_on_nvidia(LINE_SENSITIVE, shifted) and not same_on_nvidia(LINE_SENSITIVE, shifted, lines=True)


@needs_cpp
@pytest.mark.parametrize(
    "text,unsafe,builds",
    [
        (
            LINE_SENSITIVE,
            True,
            (NVIDIA_DEFINES,),
        ),  # -DUSE_ROCM=0 only where the file reads the macro by value
        (VALUE_STYLE, False, (NVIDIA_DEFINES, ZERO)),
        (BALLOT_VALUE_STYLE, True, (NVIDIA_DEFINES, ZERO)),
    ],
    ids=["check-macro", "value", "ballot-value"],
)
def test_gcc_line_numbers_are_kept(text, unsafe, builds, tmp_path):
    out = fixed(text, unsafe=unsafe).text
    for n, defines in enumerate(builds):
        before = numbered_unit(text, tmp_path, f"b{n}", defines)
        assert before and before == numbered_unit(out, tmp_path, f"a{n}", defines)


def test_a_second_fix_pass_numbers_from_the_first_passes_line_directives():
    """A file fixed before (with #line directives) and then edited: the new fix's #line numbers
    follow what __LINE__ says there, not the physical line."""
    once = fixed(
        LINE_SENSITIVE.replace("  return n + __shfl_sync(0xffffffff, n, 0);\n", "  return n;\n"), unsafe=True
    ).text
    edited = once.replace("  return n;\n", "  return n + __shfl_sync(0xffffffff, n, 0);\n")
    twice = fixed(edited, unsafe=True).text
    assert twice != edited
    assert same_on_nvidia(edited, twice, lines=True)


# -- ROC601 on thousands of ballots (item 5: 1000/2000/4000 declarations took 26/99/253 s) ----------------------
def ballot_kernel(n):
    body = "".join(
        f"  unsigned m{i} = __ballot_sync(0xffffffffu, p);\n  int c{i} = __popc(m{i});\n" for i in range(n)
    )
    return "__global__ void k(bool p, int* out) {\n" + body + "  out[0] = 0;\n}\n"


def _fix_all(text):
    return fixed(text, unsafe=True)


# Two checks, neither on wall-clock time (tests/work_count.py).  Steps, counted exactly: a Python
# loop or call per pair of declarations grows 100x on 10x ballots.  The old quadratic paths were
# mostly inside C calls (a regex search and a `rfind` over the text before each ballot, a
# `finditer` over each variable's scope), which count one step however far they scan: a CPU-time
# hang guard at 4000 ballots covers them.  Arithmetic: today 4000 ballots check and fix in ~4 s of
# CPU (~0.6 s the check alone); the old check alone took ~250 s there (1000/2000/4000: 26/99/253 s),
# so a 60 s bound leaves 15x for a slow or busy machine (waiting for a core is not CPU time) and
# fails the old paths 4x over.  (The code before d5ab66f: 68x the steps from 40 to 400 ballots, and
# still running after 60 s of CPU time at 4000.)
def test_roc601_and_its_fix_scale_linearly_with_ballots():
    assert_linear_steps(_fix_all, ballot_kernel, 40)
    with cpu_limit(60, "check and fix 4000 ballots"):
        result = _fix_all(ballot_kernel(4000))
    assert len(result.applied) == 2 * 4000  # ROC601 and ROC602 on each declaration


def test_roc601_still_sees_overlapping_shift_tests():
    text = (
        "__device__ bool f(bool p, int x, int y) {\n  unsigned mask = __ballot(p);\n"
        "  return x & (1 << y) & mask;\n}\n"
    )
    got = [(f.line, f.code, "tested with" in f.message) for f in check_source("k.cu", text, Config(), "cuda")]
    assert (3, "ROC601", True) in got


def _naive_block_end(code, offset):
    depth = 0
    for i in range(offset, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            if depth == 0:
                return i
            depth -= 1
    return len(code)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="{}x;", max_size=40), st.data())
def test_block_end_is_the_first_unmatched_close(code, data):
    lexed = lex(code)
    unit = CppUnit("k.cu", code, Config(), lexed, analyse(code, lexed), LineIndex(code))
    offset = data.draw(st.integers(0, len(code)))
    assert unit.block_end(offset) == _naive_block_end(code, offset)


def assignment_kernel(n):
    body = "".join(
        f"  unsigned m{i};\n  m{i} = __ballot_sync(0xffffffffu, p);\n  int c{i} = __popc(m{i});\n"
        for i in range(n)
    )
    return "__global__ void k(bool p, int* out) {\n" + body + "  out[0] = 0;\n}\n"


def _check(text):
    return check_source("k.cu", text, Config(), "cuda")


def test_roc601_on_ballots_assigned_to_declared_variables_scales_linearly():
    """``m = __ballot(...)`` looks back for ``m``'s declaration: once per file, not per ballot.
    The old look-back was a regex search and an ``rfind`` per ballot (400/4000: 3.5/213 s), C calls
    the step count cannot see: the CPU-time guard holds it.  At 8000 ballots the check takes
    ~1 s of CPU today, the old look-back alone (put back in today's code) ~35 s at 4000, so ~140 s
    at 8000: a 30 s bound leaves 30x for a slow or busy machine and fails the old path 4x over."""
    assert_linear_steps(_check, assignment_kernel, 40)
    with cpu_limit(30, "check 8000 ballot assignments"):
        found = _check(assignment_kernel(8000))
    # each: the 32-bit ballot (ROC601), its mask (ROC602), its __popc (ROC601)
    assert isinstance(found, list) and len(found) == 3 * 8000


_TYPE32 = r"(?:unsigned\s+int|unsigned(?!\s+(?:long|char|short))|(?<!long\s)int|uint32_t|int32_t|uint|u32)"


def _naive_declared_32(code, name, before):
    pattern = re.compile(
        r"\b" + _TYPE32 + r"\s+(?:[A-Za-z_]\w*\s*(?:=[^,;]*)?,\s*)*" + re.escape(name) + r"\s*[;,=]"
    )
    start = code.rfind("{", 0, before)
    return bool(pattern.search(code, max(0, start - 2000) if start >= 0 else 0, before))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "unsigned ",
                "unsigned int ",
                "long int ",
                "uint32_t ",
                "int ",
                "m",
                "a",
                "=",
                "0",
                ", ",
                ";",
                "{",
                "}",
                " ",
                "\n",
                "f(x, y)",
                "long ",
            ]
        ),
        max_size=25,
    ),
    st.data(),
)
def test_declared_32_finds_what_a_search_would(pieces, data):
    from rocm_lint.rules.lane_masks import declared_32

    code = "".join(pieces)
    lexed = lex(code)
    unit = CppUnit("k.cu", code, Config(), lexed, analyse(code, lexed), LineIndex(code))
    before = data.draw(st.integers(0, len(code)))
    for name in ("m", "a"):
        assert declared_32(unit, name, before) == _naive_declared_32(code, name, before), (code, name, before)
