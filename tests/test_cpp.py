"""The CUDA/C++ scanner: rule fixtures, the lexer against pygments, the preprocessor model,
suppressions, bad input, and fixes checked with gcc's preprocessor."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import FIXTURES, RULE_FIXTURES, expected_findings, nvcc_ptx, run_cli, translation_unit
from rocm_lint.config import Config
from rocm_lint.cpp.functions import functions_in
from rocm_lint.cpp.lexer import lex
from rocm_lint.cpp.nvidia_view import nvidia_view, same_on_nvidia
from rocm_lint.cpp.preproc import analyse, include_guard
from rocm_lint.engine import check_file, check_source
from rocm_lint.fix.text_edits import apply_text_fixes

CPP_SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".h", ".hpp")
CPP_FIXTURES = sorted(p for p in RULE_FIXTURES.iterdir() if p.suffix in CPP_SUFFIXES)
FIX_FIXTURES = sorted(p for p in (FIXTURES / "fixes").iterdir() if p.suffix in CPP_SUFFIXES)


def findings(text, path="t.cu", config=Config()):
    result = check_source(path, text, config)
    assert isinstance(result, list), result
    return result


def codes_by_line(text, path="t.cu", config=Config()):
    return sorted((f.line, f.code) for f in findings(text, path, config))


# -- rule fixtures (their findings: tests/test_fixture_snapshots.py) -----------------------------------
def test_cli_reports_cpp_fixtures():
    # the C++ fixtures only: ROC701 also reads Python (fixtures/rules/ROC701.py)
    proc = run_cli("check", "--output-format", "concise", "--quiet", "--select", "ROC6,ROC7", *CPP_FIXTURES)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    want = sum(
        sum(c for (_, code), c in expected_findings(p).items() if code[:4] in ("ROC6", "ROC7"))
        for p in CPP_FIXTURES
    )
    assert len(lines) == want
    assert all(re.match(r".+\.(?:cuh?|hip):\d+:\d+: ROC[67]\d\d ", line) for line in lines)


# -- which files ---------------------------------------------------------------------------------------
DEVICE_KERNEL = "__global__ void k(unsigned* o) { unsigned m = __ballot_sync(0xffffffff, 1); o[0] = m; }\n"


@pytest.mark.parametrize("name", ["k.cu", "k.cuh", "k.hip", "k.cuh.inl"])
def test_cuda_files_are_always_scanned(name):
    assert {c for _, c in codes_by_line(DEVICE_KERNEL, name)} == {"ROC601", "ROC602"}


@pytest.mark.parametrize("name", ["k.cpp", "k.cc", "k.h", "k.hpp"])
def test_cpp_files_are_scanned_with_device_code_or_for_the_cuda_host_api(name):
    assert {c for _, c in codes_by_line(DEVICE_KERNEL, name)} == {"ROC601", "ROC602"}
    # host code that uses the CUDA API is half of the port: its headers and version tests break
    # under HIP; the device-code rules (a CPU `32`, a host constant 0xffffffff) do not run on it
    # (a source: a host header is often one vendor's side of a split its includers make, and
    # stays unread)
    source = name in ("k.cpp", "k.cc")
    host_only = "#include <cuda_runtime.h>\nint lanes = 32;\nunsigned full = 0xffffffff;\n"
    assert codes_by_line(host_only, name) == ([(1, "ROC702")] if source else [])
    assert codes_by_line(host_only, "k.cu") == [(1, "ROC702")]
    version_test = "#include <cuda.h>\nint f() {\n#if CUDART_VERSION >= 12000\n  return 1;\n#endif\n}\n"
    assert codes_by_line(version_test, name) == ([(1, "ROC702"), (3, "ROC703")] if source else [])
    launcher = "void launch() {\n  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);\n}\n"
    assert codes_by_line(launcher, name) == ([(2, "ROC711")] if source else [])
    # a portable header that asks the compiler's version alone is no CUDA host code
    portable = "#if defined(__CUDACC__) && __CUDACC_VER_MAJOR__ <= 11\n#define OLD 1\n#endif\n"
    assert codes_by_line(portable, name) == []
    gated = "#ifndef USE_ROCM\n#include <cublas_v2.h>\n#endif\nint x = 32 % 32;\n"
    assert codes_by_line(gated, name) == []
    # a CPU file that never names the CUDA API is not read at all
    cpu = "#include <immintrin.h>\nint lanes = 32;\nunsigned full = 0xffffffff;\nint w = threads % 32;\n"
    assert codes_by_line(cpu, name) == []


# -- the lexer -----------------------------------------------------------------------------------------
def test_lexer_keeps_offsets_and_blanks_comments_and_literals():
    text = (
        "int a = 0xFFFF'FFFF; // c \\\n  continued\nchar c = '\\''; const char* s = \"a//b\\\"\";"
        ' /* x\n y */ auto r = R"x(a)")x";\n'
    )
    lexed = lex(text)
    assert len(lexed.code) == len(text)
    assert [len(line) for line in lexed.code.split("\n")] == [len(line) for line in text.split("\n")]
    assert "0xFFFF'FFFF" in lexed.code  # a digit separator is not a character literal
    assert "continued" not in lexed.code and "a//b" not in lexed.code and ")a(" not in lexed.code
    assert [lexed.string_value(*s) for s in lexed.strings] == ["\\'", 'a//b\\"', 'a)"']


def _pygments_classes(text):
    """Per character: 'c' comment, 's' string, '.' other, from pygments' CudaLexer."""
    from pygments.lexers import CudaLexer
    from pygments.token import Comment, String

    classes = ["."] * len(text)
    for start, tok, value in CudaLexer(stripnl=False, ensurenl=False).get_tokens_unprocessed(text):
        if tok in Comment.Preproc or tok in Comment.PreprocFile:
            kind = "."
        elif tok in Comment:
            kind = "c"
        elif tok in String:
            kind = "s"
        else:
            kind = "."
        for i in range(start, min(start + len(value), len(text))):
            classes[i] = kind
    return classes


def _our_classes(text):
    lexed = lex(text)
    classes = ["."] * len(text)
    for a, b in lexed.comments:
        classes[a:b] = ["c"] * (b - a)
    for a, b in lexed.strings:
        classes[a:b] = ["s"] * (b - a)
    return classes


def _directive_lines(text):
    """Lines inside preprocessor directives: pygments lexes them as one Preproc token."""
    lines, inside = set(), False
    for n, line in enumerate(text.split("\n")):
        if inside or line.lstrip().startswith("#"):
            lines.add(n)
            inside = line.endswith("\\")
        else:
            inside = False
    return lines


def assert_agrees_with_pygments(text):
    ours, theirs = _our_classes(text), _pygments_classes(text)
    skip = _directive_lines(text)
    line = 0
    for i, ch in enumerate(text):
        if line not in skip and not ch.isspace() and ours[i] != theirs[i]:
            context = text[max(0, i - 30) : i + 30]
            raise AssertionError(
                f"offset {i} ({ch!r}): ours {ours[i]!r}, pygments {theirs[i]!r} in {context!r}"
            )
        if ch == "\n":
            line += 1


@pytest.mark.parametrize("path", CPP_FIXTURES + FIX_FIXTURES, ids=lambda p: p.name)
def test_lexer_agrees_with_pygments_on_fixtures(path):
    assert_agrees_with_pygments(path.read_text("utf-8"))


_PIECES = st.sampled_from(
    [
        "int x = 1;",
        "// line comment\n",
        "/* block */",
        "/* multi\nline */",
        '"str"',
        '"esc\\"aped"',
        "'c'",
        "'\\n'",
        "a / b",
        "x /= 2;",
        "\n",
        " ",
        "__shfl_sync(0xffffffff, v, 1);",
        '"//not comment"',
        "'\"'",
        '"/*not*/"',
        "0xffffffff",
        "f(a, b);",
        "{",
        "}",
        'R"(raw\nstring)"',
        '"\'"',
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=25))
def test_lexer_agrees_with_pygments_on_generated_code(pieces):
    text = " ".join(pieces) + "\n"
    assert_agrees_with_pygments(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab/*\"'\\\n #R(){};0x")), max_size=80))
def test_lexer_never_fails_and_keeps_length(text):
    lexed = lex(text)
    assert len(lexed.code) == len(text)
    assert all(c == t or c == " " for c, t in zip(lexed.code, text))
    analyse(text, lexed)  # the preprocessor model never raises either


_KERNEL_PIECES = st.sampled_from(
    [
        "#ifdef USE_ROCM\n",
        "#else\n",
        "#endif\n",
        "#if CUDA_VERSION >= 11000\n",
        "#if __CUDA_ARCH__ >= 800\n",
        "#define FULL_MASK 0xffffffff\n",
        "#define WARP_SIZE 32\n",
        "unsigned m = __ballot_sync(FULL_MASK, p);\n",
        "int n = __popc(m);\n",
        "v += __shfl_xor_sync(0xffffffff, v, 16, 32);\n",
        "int lane = threadIdx.x & 31;\n",
        'asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));\n',
        "#include <cuda_fp16.h>\n",
        "// comment\n",
        "for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);\n",
        "{\n",
        "}\n",
        "(",
        ")",
        "/* x",
        '"',
        "__shared__ float s[warpSize];\n",
        "cg::this_grid().sync();\n",
        "#elif defined(__HIP_PLATFORM_AMD__)\n",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_KERNEL_PIECES, max_size=30))
def test_scanner_and_fixes_never_fail_and_keep_the_nvidia_view(pieces):
    text = "".join(pieces)
    result = findings(text)
    assert all(1 <= f.line <= text.count("\n") + 1 for f in result)
    fixed = fix(text, unsafe=True)
    assert same_on_nvidia(text, fixed.text)


# -- the preprocessor model ------------------------------------------------------------------------
def status(text):
    pre = analyse(text)
    return {n: (pre.status(n).cuda, pre.status(n).rocm) for n in range(1, text.count("\n") + 2)}


@pytest.mark.parametrize(
    "cond,cuda,rocm",
    [
        ("#ifdef USE_ROCM", False, True),
        ("#ifndef USE_ROCM", True, False),
        ("#if !defined(USE_ROCM)", True, False),
        ("#if defined(__HIP_PLATFORM_AMD__)", False, True),
        ("#if defined(__HIP_PLATFORM_HCC__) || defined(__HIPCC__)", False, True),
        ("#if defined __HIP__", False, True),
        ("#ifdef __HIP_DEVICE_COMPILE__", False, None),
        ("#if defined(__gfx942__)", False, None),
        ("#if HIP_VERSION >= 60000000", False, None),
        ("#if ROCM_VERSION >= 60200", False, None),
        ("#if TORCH_HIP_VERSION < 600", True, None),  # undefined on NVIDIA: 0 < 600
        ("#if __CUDA_ARCH__ >= 800", None, False),
        ("#if CUDA_VERSION >= 11000", None, False),
        ("#if CUDA_VERSION < 11000", None, True),
        ("#if !defined(USE_ROCM) && CUDA_VERSION >= 12000", None, False),
        ("#if defined(USE_ROCM) || CUDA_VERSION >= 12000", None, True),
        ("#if 0", False, False),
        ("#if 1", True, True),
        ("#ifdef SOME_PROJECT_FLAG", None, None),
        ("#if (defined(USE_ROCM) ? 0 : 1)", True, False),
    ],
)
def test_condition_status(cond, cuda, rocm):
    assert status(f"{cond}\nx\n#endif\n")[2] == (cuda, rocm)


def test_else_and_elif_branches_and_nesting():
    text = (
        "#ifdef USE_ROCM\nr\n#elif defined(FOO)\nf\n#else\nc\n#endif\n"
        "#ifndef __HIP_PLATFORM_AMD__\n#if CUDA_VERSION >= 11000\nn\n#endif\n#endif\n"
    )
    s = status(text)
    assert s[2] == (False, True)
    assert s[4] == (None, False)
    assert s[6] == (None, False)
    assert s[10] == (None, False)
    assert s[13] == (True, True)


def test_local_defines_carry_the_platform():
    text = "#ifdef USE_ROCM\n#define IS_HIP 1\n#else\n#define IS_HIP 0\n#endif\n#if IS_HIP\nr\n#else\nc\n#endif\n"
    s = status(text)
    assert s[7] == (False, True) and s[9] == (True, False)


def test_configured_macros_gate():
    text = "#ifndef MY_AMD_BUILD\nunsigned m = __ballot_sync(0xffffffff, 1);\n#endif\n"
    assert codes_by_line(text)  # unknown macro: not a gate
    cfg = Config(rocm_macros=("MY_AMD_BUILD",))
    assert codes_by_line(text, config=cfg) == []


def test_stringification_on_a_continuation_line_is_not_a_directive():
    text = "#define STR(x) \\\n  #x\n#ifdef USE_ROCM\nr\n#endif\n"
    assert status(text)[4] == (False, True)


def test_config_file_reads_rocm_macros(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nrocm-macros = ["MY_AMD_BUILD"]\n')
    (tmp_path / "k.cu").write_text("#ifndef MY_AMD_BUILD\n#include <cuda_runtime.h>\n#endif\n")
    proc = run_cli("check", "--output-format", "concise", tmp_path / "k.cu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- suppressions and bad input --------------------------------------------------------------------
@pytest.mark.parametrize(
    "comment,silent",
    [
        ("// rocm-lint: ignore[ROC602]", True),
        ("// rocm-lint: ignore[ROC6]", True),
        ("// rocm-lint: ignore", True),
        ("// NOLINT(ROC602)", True),
        ("// NOLINT", True),
        ("/* NOLINT(ROC602) */", True),
        ("// NOLINT(bugprone-branch-clone)", False),
        ("// rocm-lint: ignore[ROC601]", False),
    ],
)
def test_suppression_comments(comment, silent):
    text = f"__device__ float f(float v) {{ return __shfl_sync(0xffffffff, v, 0); }}  {comment}\n"
    assert (codes_by_line(text) == []) is silent


def test_nolintnextline():
    text = (
        "// NOLINTNEXTLINE(ROC602)\n__device__ float f(float v) { return __shfl_sync(0xffffffff, v, 0); }\n"
    )
    assert codes_by_line(text) == []


def test_crlf_and_latin1_and_unterminated_input(tmp_path):
    body = "#include <cuda_fp16.h>\r\n/* caf\xe9 */\r\n__global__ void k() { unsigned m = __ballot(1); }\r\n/* open"
    path = tmp_path / "k.cu"
    path.write_bytes(body.encode("latin-1"))
    result = check_file(str(path), Config())
    assert sorted((f.line, f.code) for f in result) == [(1, "ROC702"), (3, "ROC601")]


def test_binary_file_is_reported(tmp_path):
    path = tmp_path / "k.cu"
    path.write_bytes(b"__global__\0\x01")
    proc = run_cli("check", path)
    assert proc.returncode == 2 and "binary" in proc.stdout + proc.stderr


# -- fixes ---------------------------------------------------------------------------------------------
def fix(text, path="t.cu", unsafe=False):
    result = apply_text_fixes(path, text, findings(text, path), "cuda", unsafe=unsafe)
    return result


@pytest.mark.parametrize("path", FIX_FIXTURES, ids=lambda p: p.name)
def test_fix_fixture(path):
    unsafe = "unsafe" in path.name
    text = path.read_text("utf-8")
    result = fix(text, str(path), unsafe=unsafe)
    assert result.text == Path(str(path) + ".fixed").read_text("utf-8")
    assert fix(result.text, str(path), unsafe=unsafe).text == result.text  # idempotent


@pytest.mark.skipif(shutil.which("cpp") is None, reason="gcc's preprocessor is not installed")
@pytest.mark.parametrize("path", FIX_FIXTURES, ids=lambda p: p.name)
def test_fix_keeps_the_nvidia_translation_unit(path, tmp_path):
    text = path.read_text("utf-8")
    fixed = Path(str(path) + ".fixed").read_text("utf-8")
    before, after = translation_unit(text, tmp_path, "before"), translation_unit(fixed, tmp_path, "after")
    assert before and before == after
    assert same_on_nvidia(text, fixed)


def test_nvidia_view_sees_changes_on_the_nvidia_side():
    old = "#if CUDA_VERSION >= 11000\nx\n#endif\n"
    assert same_on_nvidia(old, "#if CUDA_VERSION >= 11000 && !defined(USE_ROCM)\nx\n#endif\n")
    assert not same_on_nvidia(old, "#if CUDA_VERSION >= 11000 && !defined(FOO)\nx\n#endif\n")
    assert not same_on_nvidia(old, "#if CUDA_VERSION >= 11000\ny\n#endif\n")
    assert not same_on_nvidia("a;\n", "#ifdef SOMETHING\na;\n#endif\n")
    assert same_on_nvidia("a;\n", "#ifdef USE_ROCM\nb;\n#else\na;\n#endif\n")
    assert nvidia_view("#ifdef USE_ROCM\nb;\n#else\na; // c\n#endif\n") == ["a;"]


def test_cli_fix_writes_cpp_and_keeps_bytes(tmp_path):
    src = (FIXTURES / "fixes" / "cuda_headers.cu").read_text("utf-8")
    path = tmp_path / "k.cu"
    path.write_bytes(src.replace("\n", "\r\n").encode())
    path.chmod(0o640)
    proc = run_cli("check", "--fix", path)
    assert proc.returncode == 1  # cudnn.h has no drop-in HIP header: it remains
    data = path.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert data.decode().replace("\r\n", "\n") == (FIXTURES / "fixes" / "cuda_headers.cu.fixed").read_text(
        "utf-8"
    )
    assert path.stat().st_mode & 0o777 == 0o640


def test_fix_that_would_change_nvidia_is_refused(monkeypatch):
    import rocm_lint.fix.text_edits as te

    monkeypatch.setattr(te, "_same_on_nvidia", lambda *a: False)
    text = "#include <cuda_fp16.h>\n__global__ void k() {}\n"
    result = fix(text)
    assert result.text == text and result.dropped


# -- hipified builds --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        ("setup.py", "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"),
        ("CMakeLists.txt", "add_custom_command(COMMAND python hipify.py ${SRCS})\n"),
    ],
)
def test_headers_of_hipified_builds_are_not_flagged(tmp_path, build):
    (tmp_path / ".git").mkdir()
    (tmp_path / build[0]).write_text(build[1])
    src = tmp_path / "csrc" / "k.cu"
    src.parent.mkdir()
    src.write_text("#include <cuda_fp16.h>\n#include <cudnn.h>\n__global__ void k() {}\n")
    got = [(f.line, f.code) for f in check_file(str(src), Config())]
    assert got == [(2, "ROC702")]  # hipify maps cuda_fp16.h; cudnn.h has no drop-in twin


def test_torch_extension_source_is_hipified(tmp_path):
    (tmp_path / ".git").mkdir()
    text = "#include <torch/extension.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"
    assert codes_by_line(text, str(tmp_path / "k.cu")) == []
    plain = "#include <cuda_runtime.h>\n__global__ void k() {}\n"
    assert codes_by_line(plain, str(tmp_path / "k.cu")) == [(1, "ROC702")]


@pytest.mark.skipif(
    not hasattr(__import__("os"), "mkfifo") or not Path("/dev/zero").exists(),
    reason="no FIFOs or /dev/zero here",
)
def test_build_files_and_headers_are_read_bounded(tmp_path):
    """A FIFO named setup.py, a header linked to /dev/zero, an oversized header: never read
    (the run does not hang or eat memory), and each is simply no fact."""
    import os

    from rocm_lint.cpp import includes

    code = (
        '#include "zero.h"\n#include "big.h"\n#include "pipe.h"\n'
        "#ifdef FROM_HEADER\n#define W 64\n#endif\n#include <cudnn.h>\n__global__ void k() {}\n"
    )
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / "setup.py")
    os.mkfifo(tmp_path / "pipe.h")
    (tmp_path / "zero.h").symlink_to("/dev/zero")
    (tmp_path / "big.h").write_text("#define FROM_HEADER 1\n" + "//" + "x" * includes.MAX_HEADER_BYTES + "\n")
    (tmp_path / "k.cu").write_text(code)
    script = (
        "import sys, os; from rocm_lint.config import Config; from rocm_lint.engine import check_file; "
        "from rocm_lint.cpp.includes import read_header; from rocm_lint.cpp.build_facts import hipify_build_above; "
        "from rocm_lint.workspace import Workspace; ws = Workspace(); "
        "d = os.path.dirname(sys.argv[1]); "
        "print([(f.line, f.code) for f in check_file(sys.argv[1], Config())], hipify_build_above(ws, d), "
        "[read_header(ws, os.path.join(d, h)) for h in ('zero.h', 'big.h', 'pipe.h', 'missing.h')])"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    proc = subprocess.run(
        [__import__("sys").executable, "-c", script, str(tmp_path / "k.cu")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )  # used to block on the FIFO
    assert proc.returncode == 0, proc.stderr
    # no hipify build seen, no header fact (FROM_HEADER stays unknown: W 64 is not ROCm-only)
    assert proc.stdout.strip() == "[(7, 'ROC702')] False [None, None, None, None]"


def test_feature_macros_of_project_headers_gate(tmp_path):
    """DeepSpeed's idiom: a project header defines PTX_AVAILABLE under __CUDA_ARCH__ only."""
    (tmp_path / "includes").mkdir()
    (tmp_path / "includes" / "utils.h").write_text(
        "#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#define HALF_OK 1\n#else\n"
        "#if __CUDA_ARCH__ >= 530\n#define HALF_OK 1\n#define PTX_AVAILABLE\n#endif\n#endif\n"
    )
    (tmp_path / "includes" / "memory.h").write_text('#pragma once\n#include "utils.h"\n')
    kernel = (
        '#include "memory.h"\n'
        "__device__ void f(unsigned* p) {\n#ifdef PTX_AVAILABLE\n"
        '  asm volatile("st.shared.u32 [%0], 1;" :: "r"(p));\n#endif\n'
        "#ifdef HALF_OK\n"
        '  asm volatile("st.shared.u32 [%0], 2;" :: "r"(p));\n#endif\n}\n'
    )
    src = tmp_path / "kernels" / "k.cu"
    src.parent.mkdir()
    src.write_text(kernel)
    got = [(f.line, f.code) for f in check_file(str(src), Config())]
    assert got == [(7, "ROC701")]  # HALF_OK is also defined for ROCm: that PTX is compiled there


def test_platform_values_of_project_headers(tmp_path):
    """bitsandbytes' idiom: compat.cuh defines BNB_HIP 1 on ROCm and 0 elsewhere."""
    (tmp_path / "compat.cuh").write_text(
        "#pragma once\n#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)\n#define BNB_HIP 1\n"
        "#else\n#define BNB_HIP 0\n#endif\n#define IS_CDNA (defined(__gfx90a__) || defined(__gfx942__))\n"
    )
    src = tmp_path / "common.cuh"
    src.write_text(
        '#include "compat.cuh"\n#if BNB_HIP\n#if IS_CDNA\n#define WARP_SIZE 64\n#else\n'
        "#define WARP_SIZE 32\n#endif\n#else\n#define WARP_SIZE 32\n#endif\n"
        "__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n"
    )
    # BNB_HIP gates the NVIDIA 32 away; the ROCm side's chip list misses gfx900/906/908/950 (ROC605)
    got = [(f.line, f.code) for f in check_file(str(src), Config())]
    assert got == [(3, "ROC605")]


@pytest.mark.integration  # a real external tool or torch itself: --all-tiers
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no CUDA toolkit here")
@pytest.mark.parametrize("path", FIX_FIXTURES, ids=lambda p: p.name)
def test_fix_keeps_nvcc_ptx_identical(path, tmp_path):
    """The real NVIDIA toolchain: nvcc's PTX of the fixed file equals the original's."""
    before = nvcc_ptx(path.read_text("utf-8"), tmp_path, "before")
    after = nvcc_ptx(Path(str(path) + ".fixed").read_text("utf-8"), tmp_path, "after")
    assert len(before) > 20 and before == after


def test_a_lone_carriage_return_ends_a_line_for_every_part_of_the_scan():
    """Compilers, noqa and the fixes count a lone CR as a line end: the #if model must too, or a
    suppression comment moved to its own line by a CR hides the directives below (found by the
    fuzz target: a fix then revealed findings a second fix changed)."""
    from rocm_lint.config import Config
    from rocm_lint.engine import check_source
    from rocm_lint.fix.api import fix_text

    text = (
        "#include <cuda_runtime.h>\r  // rocm-lint: ignore[ROC702]\n\n"
        "#if CUDA_VERSION >= 11000\n#define HAS_BF16 1\n#endif\n"
    )
    same_with_lf = text.replace("\r", "\n")
    found = [(f.code, f.line) for f in check_source("k.cu", text, Config(), "cuda")]
    assert found == [(f.code, f.line) for f in check_source("k.cu", same_with_lf, Config(), "cuda")]
    assert found == [("ROC702", 1), ("ROC703", 4)]
    # Fixes count lines as LF-ended text (#line numbers, gated line spans): a file with lone CRs
    # gets its findings without fixes (the fuzz target found a wrong #line and a second pass).
    assert all(
        f.fix is None or (f.fix.applicability.value == "display" and "lone CR" in f.fix.message)
        for f in check_source("k.cu", text, Config(), "cuda")
    )
    assert fix_text("k.cu", text, Config(), unsafe=True, language="cuda").text == text


def test_many_calls_in_one_statement_are_fixed_in_linear_time():
    """statement_start is a binary search (walking back from each call was quadratic: a line of
    1,600 masked shuffles took minutes to fix).

    Counted, not timed (tests/work_count.py): the old walk back was a Python loop, a few line
    events per character from each call back to the statement's start, so its count grows
    ~100x on a 10x line (measured: 20 -> 200 calls gave 10.0x steps today, 68x with the old
    walk back; the ratio only grows with n)."""
    from work_count import assert_linear_steps

    from rocm_lint.config import Config
    from rocm_lint.fix.api import fix_text

    def make(n):
        return (
            "__device__ float f(float v) {\n  return "
            + "__shfl_xor_sync(0xffffffff, v, 16) + " * n
            + "v;\n}\n"
        )

    assert_linear_steps(lambda text: fix_text("k.cu", text, Config(), unsafe=True, language="cuda"), make, 20)


def test_no_fix_in_a_file_with_an_unterminated_string_literal():
    """Found by the fuzz target: with an unterminated string literal on a ballot line the fix's
    statement ran on into the next function, and the second --fix offered a fix the first did not.
    Such a file is not valid C++: its findings are reported, nothing is fixed (``#error Don't``
    in a directive does not count)."""
    from rocm_lint.config import Config
    from rocm_lint.fix.api import fix_text

    text = (
        "#include <cstdint>\n__device__ int count_votes(bool p) {\n"
        '  unsigned mask = __ballot_sync("__activemask(), p);\n  return __popc(mask);\n}\n'
        "__device__ int highest(bool p) {\n  uint32_t m = __ballot(p);\n  return 31 - __clz(m);\n}\n"
    )
    result = fix_text("k.cu", text, Config(), unsafe=True, language="cuda")
    once = result.text
    # (ROC601 itself no longer offers a fix for a ballot call that does not close before its
    # statement ends; any other fix in such a file is dropped with the literal's reason)
    assert once == text and all("line 3 holds an unterminated" in why for _, why in result.dropped)
    directive = "#ifndef __CUDACC__\n#error This won't build without nvcc\n#endif\n" + text.replace(
        '"__activemask(), p', "__activemask(), p"
    )
    assert fix_text("k.cu", directive, Config(), unsafe=True, language="cuda").text != directive
    assert fix_text("k.cu", once, Config(), unsafe=True, language="cuda").text == once


# -- functions and their calls (rocm_lint.cpp.functions), the unit of a logical warp ------------------
FUNCTIONS = """
template <typename T> __device__ T reduce(T v) { if (v) { v += 1; } return v; }
struct Op { __device__ float operator()(float a, float b) const { return a + b; } };
__device__ float helper(float v) -> float { auto f = [&](int x) { return reduce<float>(x); }; return f(1); }
__global__ void kernel(float* x) {
  x[0] = helper(x[0]) + reduce<float> (x[1]);
  while (x[0] > 0) { x[0] -= 1; }
}
"""


def test_functions_are_the_outermost_bodies_with_their_calls():
    code = lex(FUNCTIONS).code
    fns = functions_in(code)
    names = [f.name for f in fns.items]
    assert names == ["reduce", "helper", "kernel"]  # (an `operator()` body has no name to call it by)
    index = {n: i for i, n in enumerate(names)}
    assert fns.callees[index["kernel"]] == {index["helper"], index["reduce"]}
    assert fns.callees[index["helper"]] == {index["reduce"]}  # inside its lambda
    assert fns.callees[index["reduce"]] == set()
    assert fns.callers()[index["reduce"]] == {index["helper"], index["kernel"]}
    inside = code.index("x[0] -= 1")
    assert fns.at(inside) == index["kernel"] and fns.at(code.index("struct Op")) == -1


@pytest.mark.parametrize(
    "text, guard",
    [
        ("#ifndef A_H\n#define A_H\nint x;\n#endif\n", "A_H"),
        ("// c\n#pragma once\n#if !defined(A_H)\n#define A_H 1\n#endif\n", "A_H"),
        ("#if !defined A_H\n#define A_H\n#endif\n", "A_H"),
        ("#ifndef A_H\n#define B_H\n#endif\n", None),
        ("#include <x.h>\n#ifndef A_H\n#define A_H\n#endif\n", None),
        ("#ifdef A_H\n#define A_H\n#endif\n", None),
        ("int x;\n", None),
    ],
)
def test_include_guard(text, guard):
    assert include_guard(lex(text).code) == guard


def test_a_byte_order_mark_does_not_hide_the_first_directive(tmp_path):
    """A UTF-8 BOM before `#include <cuda_runtime.h>` on line 1 (editors on Windows write one):
    compilers skip it, so the include is a directive and ROC702 reports it, at column 1 (the mark
    is kept apart when the file is read, and written back by a fix: tests/test_hostile_inputs.py).
    An editor's buffer that keeps the mark in its text gets the finding without a fix."""
    from rocm_lint.engine import check_source

    path = tmp_path / "k.cu"
    path.write_bytes(b"\xef\xbb\xbf#include <cuda_runtime.h>\n__global__ void k() {}\n")
    [finding] = check_file(str(path), Config())
    assert (finding.line, finding.col, finding.code) == (1, 10, "ROC702")
    assert finding.fix.applicability.value == "safe"
    [buffer] = check_source(str(path), "\ufeff#include <cuda_runtime.h>\n__global__ void k() {}\n", Config())
    assert (buffer.line, buffer.code) == (1, "ROC702")
    assert buffer.fix.applicability.value == "display" and "byte-order mark" in buffer.fix.message
