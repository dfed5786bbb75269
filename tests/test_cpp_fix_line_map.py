"""The C++ fixes keep every NVIDIA line number under every configuration the file tests.

A fix that gates lines adds physical lines and restores the numbering with ``#line``.  A
``#line`` that sits inside an enclosing ``#if`` runs only where that branch is compiled: on
every build that skips it, every later ``__LINE__`` was off (issue 36: ``#if CUDART_VERSION <
5000``, six lines off on every real NVIDIA build).  The reference here is gcc's own
preprocessor: ``cpp -E`` of the original and of the fixed file, for every combination of the
macros the file tests (USE_ROCM undefined: the NVIDIA build), must give the same line map
(presumed line number and text of every output line) on generated files with nested
``#if``/``#elif``/``#else`` around the edited lines.
"""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess

import pytest

from rocm_lint.config import Config
from rocm_lint.fix.api import fix_text

CPP = shutil.which("cpp")
pytestmark = pytest.mark.skipif(CPP is None, reason="gcc's cpp is not installed")

# the macros generated files test, and the values each configuration gives them (None: undefined)
MACROS = {"HAVE_A": (None, 1), "HAVE_B": (None, 1), "VERSION": (None, 3, 7)}
CONDITIONS = ["#ifdef HAVE_A", "#if defined(HAVE_B)", "#if VERSION > 4", "#ifndef HAVE_A", "#if VERSION < 5"]
ELIFS = ["#elif defined(HAVE_B)", "#elif VERSION > 2"]


def _block(rng: random.Random, depth: int, out: list, counter: list) -> None:
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if depth < 3 and kind < 0.35:
            out.append(rng.choice(CONDITIONS))
            _block(rng, depth + 1, out, counter)
            if rng.random() < 0.4:
                out.append(rng.choice(ELIFS))
                _block(rng, depth + 1, out, counter)
            if rng.random() < 0.5:
                out.append("#else")
                _block(rng, depth + 1, out, counter)
            out.append("#endif")
        elif kind < 0.7:
            # a run of shuffles (ROC602's twin), sometimes several in a row
            for _ in range(rng.randint(1, 3)):
                out.append("  v += __shfl_xor_sync(0xffffffff, v, %d);" % rng.randint(1, 16))
        else:
            counter[0] += 1
            out.append("  int line%d = __LINE__;" % counter[0])


def generated(seed: int) -> str:
    rng = random.Random(seed)
    lines = ["#define CHECK(x) report(x, __LINE__)", "__device__ int kernel(int v) {"]
    _block(rng, 0, lines, [0])
    lines += ["  CHECK(v);", "  return v;", "}", "int tail = __LINE__;", ""]
    return "\n".join(lines)


def line_map(text: str, defines: dict, tmp_path) -> list:
    """(presumed line, text) of every non-blank line ``cpp -E`` gives, under ``defines``."""
    src = tmp_path / "unit.cu"
    src.write_text(text)
    args = [CPP, "-E", "-x", "c++", "-undef", "-nostdinc", "-UUSE_ROCM"]
    args += [f"-D{k}={v}" for k, v in defines.items() if v is not None]
    proc = subprocess.run(args + [str(src)], capture_output=True, text=True, check=True)
    out, line = [], 1
    for raw in proc.stdout.splitlines():
        if raw.startswith("# "):
            line = int(raw.split()[1])
            continue
        if raw.strip():
            out.append((line, raw.strip()))
        line += 1
    return out


def configurations():
    names = sorted(MACROS)
    for values in itertools.product(*(MACROS[n] for n in names)):
        yield dict(zip(names, values))


@pytest.mark.parametrize("seed", range(24))
def test_nvidia_line_map_is_unchanged_under_every_configuration(seed, tmp_path):
    text = generated(seed)
    result = fix_text("unit.cu", text, Config(), unsafe=True)
    fixed = result.text
    if fixed == text:
        pytest.skip("nothing fixed")
    for defines in configurations():
        assert line_map(text, defines, tmp_path) == line_map(fixed, defines, tmp_path), (defines, fixed)
    # idempotent
    assert fix_text("unit.cu", fixed, Config(), unsafe=True).text == fixed


def test_the_enclosing_if_shape_of_the_issue(tmp_path):
    """``#if CUDART_VERSION < 5000`` around a gated line, a later ``__LINE__`` outside it."""
    text = (
        "#if CUDART_VERSION < 5000\n"
        "__device__ int f(int v) {\n"
        "  v = __shfl_xor_sync(0xffffffff, v, 1);\n"
        "  return v;\n"
        "}\n"
        "#endif\n"
        "int after = __LINE__;\n"
    )
    fixed = fix_text("unit.cu", text, Config(), unsafe=True).text
    assert fixed != text
    for version in (None, 4000, 12080):
        defines = {"CUDART_VERSION": version}
        assert line_map(text, defines, tmp_path) == line_map(fixed, defines, tmp_path), fixed
    # the old placement (a `#line` only right after the gated block) is caught by the reference
    old = fixed.replace("#endif\n#line 7\n", "#endif\n")
    assert line_map(text, {"CUDART_VERSION": 12080}, tmp_path) != line_map(
        old, {"CUDART_VERSION": 12080}, tmp_path
    )


# -- the project's ROCm macro -------------------------------------------------------------------
KERNEL = (
    "#include <cuda_fp16.h>\n"
    "__device__ int k(int v) {\n"
    "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
    "  return v;\n"
    "}\n"
    "int x = __LINE__;\n"
)


def _project(tmp_path, cmake: str):
    (tmp_path / "src").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(cmake)
    path = tmp_path / "src" / "kernel.cu"
    path.write_text(KERNEL)
    return path


def test_a_plain_cmake_project_gets_its_own_rocm_macro(tmp_path):
    path = _project(
        tmp_path,
        "cmake_minimum_required(VERSION 3.18)\nproject(fastops LANGUAGES CXX)\n"
        'option(WITH_HIP "AMD" OFF)\nif(WITH_HIP)\n  enable_language(HIP)\n'
        "  add_compile_definitions(FASTOPS_USE_HIP)\nelse()\n  enable_language(CUDA)\nendif()\n"
        "add_library(fastops src/kernel.cu)\n",
    )
    fixed = fix_text(str(path), KERNEL, Config(), unsafe=True).text
    assert "#ifdef FASTOPS_USE_HIP" in fixed and "USE_ROCM" not in fixed, fixed

    # NVIDIA: the same line map; ROCm (the build's macro defined): what ROC602's page asks for
    # (includes left out: cpp -E would look for the headers)
    def bare(text):
        return text.replace("#include <cuda_fp16.h>", "").replace("#include <hip/hip_fp16.h>", "")

    assert line_map(bare(KERNEL), {}, tmp_path) == line_map(bare(fixed), {}, tmp_path)
    texts = [t for _, t in line_map(bare(fixed), {"FASTOPS_USE_HIP": 1}, tmp_path)]
    assert "v += __shfl_xor_sync(0xffffffffffffffffull, v, 1);" in texts
    assert "v += __shfl_xor_sync(0xffffffff, v, 1);" not in texts


def test_no_build_facts_keep_use_rocm(tmp_path):
    path = tmp_path / "kernel.cu"
    path.write_text(KERNEL)
    fixed = fix_text(str(path), KERNEL, Config(), unsafe=True).text
    assert "#ifdef USE_ROCM" in fixed


def test_a_macro_defined_for_both_platforms_is_not_the_rocm_macro(tmp_path):
    path = _project(
        tmp_path,
        "cmake_minimum_required(VERSION 3.18)\nproject(fastops LANGUAGES CXX)\n"
        "add_compile_definitions(FASTOPS_GPU)\n"
        'option(WITH_HIP "AMD" OFF)\nif(WITH_HIP)\n  enable_language(HIP)\nelse()\n'
        "  enable_language(CUDA)\nendif()\nadd_library(fastops src/kernel.cu)\n",
    )
    fixed = fix_text(str(path), KERNEL, Config(), unsafe=True).text
    assert "FASTOPS_GPU" not in fixed and "#ifdef USE_ROCM" in fixed, fixed


# -- readable: adjacent twins merged, one HIP runtime include per file ----------------------------
def test_three_shuffles_in_a_row_share_one_block(tmp_path):
    text = (
        "__device__ int k(int v) {\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 2);\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 4);\n"
        "  return v;\n"
        "}\n"
        "int x = __LINE__;\n"
    )
    fixed = fix_text("unit.cu", text, Config(), unsafe=True).text
    assert fixed.count("#ifdef USE_ROCM") == 1 and fixed.count("#line") == 2, fixed
    assert fixed.count("0xffffffffffffffffull") == 3
    for defines in ({}, {"X": 1}):
        assert line_map(text, defines, tmp_path) == line_map(fixed, defines, tmp_path)


def test_one_hip_runtime_include_per_file(tmp_path):
    text = "#include <cuda.h>\n#include <cuda_runtime.h>\n#include <vector>\n#include <cuda_runtime.h>\nint x = __LINE__;\n"
    fixed = fix_text("unit.cu", text, Config()).text
    assert fixed.count("#include <hip/hip_runtime.h>") == 1, fixed

    # NVIDIA: the same includes at the same lines (cpp -E would look for the headers: compare
    # the text the NVIDIA build keeps instead, through the line map of the includes as code)
    def as_code(t):
        return t.replace("#include <", "include <")

    assert line_map(as_code(text), {}, tmp_path) == line_map(as_code(fixed), {}, tmp_path)


def test_a_hip_include_inside_a_conditional_does_not_stand_for_a_later_one():
    text = "#if X\n#include <cuda.h>\n#endif\n#include <cuda_runtime.h>\n"
    fixed = fix_text("unit.cu", text, Config()).text
    assert fixed.count("#include <hip/hip_runtime.h>") == 2, fixed
