"""C++ facts across files (``rocm_lint.cpp.facts``): masks, warp sizes, ballot and shuffle
wrappers, chip lists, integer type aliases and derived platform macros that a project header
defines, seen from the translation units that include it; gated definitions stay silent; each
header is read once per process."""

import os
from pathlib import Path

import pytest

from conftest import expected_findings
from rocm_lint.config import Config
from rocm_lint.engine import check_file
from rocm_lint.engine_paths import check_paths
from rocm_lint.workspace import Workspace


def _project(tmp_path, files):
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _found(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [(f.line, f.code, f.message) for f in result]


COMMON = """#pragma once
#include <cstdint>
#define WARP_MASK 0xffffffffull  // a 64-bit type, 32 lanes set
#define ALL_LANES WARP_MASK
#ifdef USE_ROCM
#define SAFE_MASK 0xffffffffffffffffull
#else
#define SAFE_MASK 0xffffffff
#endif
namespace util {
constexpr unsigned kMask32 = 0xffffffffu;
}
__device__ __forceinline__ unsigned long long warp_ballot(bool p) {
  return __ballot_sync(SAFE_MASK, p);
}
template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
#ifdef USE_ROCM
  return __shfl_xor(v, lane_mask);
#else
  return __shfl_xor_sync(0xffffffff, v, lane_mask);
#endif
}
#define IS_CDNA (defined(__gfx90a__) || defined(__gfx942__))
"""


def test_mask_macros_and_constants_of_a_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "include/common.cuh": COMMON,
            "src/k.cu": '#include "common.cuh"\n'
            "__device__ float a(float v) { return __shfl_xor_sync(WARP_MASK, v, 1); }\n"
            "__device__ float b(float v) { return __shfl_xor_sync(ALL_LANES, v, 1); }\n"
            "__device__ float c(float v) { return __shfl_xor_sync(util::kMask32, v, 1); }\n"
            "__device__ float d(float v) { return __shfl_xor_sync(SAFE_MASK, v, 1); }\n",
        },
    )
    got = _found(root / "src" / "k.cu")
    assert [(line, code) for line, code, _ in got] == [(2, "ROC602"), (3, "ROC602"), (4, "ROC602")]
    assert "WARP_MASK (0xffffffffull)" in got[0][2] and "util::kMask32 (0xffffffffu)" in got[2][2]
    # SAFE_MASK is 64-bit on ROCm


def test_ballot_wrapper_of_a_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "include/common.cuh": COMMON,
            "src/k.cu": '#include "common.cuh"\n'
            "__device__ int n(bool p) { return __popc(warp_ballot(p)); }\n"
            "__device__ int rank(bool p, int lane) {\n"
            "  unsigned long long b = warp_ballot(p);\n"
            "  return __popc(b & ((1u << lane) - 1));\n"
            "}\n"
            "__device__ int wide(bool p) { return __popcll(warp_ballot(p)); }\n",
        },
    )
    got = _found(root / "src" / "k.cu")
    assert [(line, code) for line, code, _ in got] == [(2, "ROC601"), (5, "ROC601")]
    assert "warp_ballot" in got[0][2] and "common.cuh:13" in got[0][2]
    assert "`b`" in got[1][2]


def test_shuffle_wrapper_of_a_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "include/common.cuh": COMMON,
            "src/k.cu": '#include "common.cuh"\n'
            "__device__ float sum(float v) {\n"
            "  for (int offset = 16; offset > 0; offset /= 2) v += shfl_xor(v, offset);\n"
            "  return v;\n"
            "}\n"
            "__device__ float gated(float v) {\n"
            "#ifdef USE_ROCM\n"
            "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += shfl_xor(v, offset);\n"
            "#else\n"
            "  for (int offset = 16; offset > 0; offset /= 2) v += shfl_xor(v, offset);\n"
            "#endif\n"
            "  return v;\n"
            "}\n",
        },
    )
    got = _found(root / "src" / "k.cu")
    assert [(line, code) for line, code, _ in got] == [(3, "ROC603")]
    assert "through `shfl_xor`" in got[0][2]


def test_chip_list_of_a_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "include/common.cuh": COMMON,
            "src/k.cu": '#include "common.cuh"\n#if IS_CDNA\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n'
            "__global__ void k(int* o) { o[threadIdx.x % WARP_SIZE] = 1; }\n",
        },
    )
    got = _found(root / "src" / "k.cu")
    assert [(line, code) for line, code, _ in got] == [(2, "ROC605")]
    assert "gfx900, gfx906, gfx908, gfx950" in got[0][2]


def test_nvidia_only_headers_and_gated_uses_stay_silent(tmp_path):
    root = _project(
        tmp_path,
        {
            "include/nv.cuh": "#pragma once\n#ifndef USE_ROCM\n#define NV_MASK 0xffffffff\n"
            "__device__ unsigned nv_ballot(bool p) { return __ballot_sync(0xffffffff, p); }\n#endif\n",
            "src/k.cu": '#include "nv.cuh"\n'
            "#ifndef USE_ROCM\n"
            "__device__ int n(bool p) { return __popc(nv_ballot(p)); }\n"
            "#endif\n"
            "__device__ float f(float v) { return __shfl_xor_sync(NV_MASK, v, 1); }\n"
            "__device__ int m(unsigned x) { return __popc(nv_ballot_count(x)); }\n",
        },
    )
    assert _found(root / "src" / "k.cu") == []


def test_depth_is_bounded_and_cycles_end(tmp_path):
    files = {f"h{i}.h": f'#pragma once\n#include "h{i + 1}.h"\n' for i in range(8)}
    files["h8.h"] = '#pragma once\n#include "h0.h"\n#define DEEP_MASK 0xffffffff\n'
    files["h2.h"] = '#pragma once\n#include "h3.h"\n#define NEAR_MASK 0xffffffff\n'
    files["k.cu"] = (
        '#include "h0.h"\n__device__ float f(float v) { return __shfl_xor_sync(NEAR_MASK, v, 1); }\n'
        "__device__ float g(float v) { return __shfl_xor_sync(DEEP_MASK, v, 1); }\n"
    )
    root = _project(tmp_path, files)
    assert [(line, code) for line, code, _ in _found(root / "k.cu")] == [(2, "ROC602")]


def test_a_shared_header_is_read_once(tmp_path, monkeypatch):
    files = {"include/common.cuh": COMMON}
    for i in range(30):
        files[f"src/k{i}.cu"] = (
            '#include "common.cuh"\n'
            "__device__ float f(float v) { return __shfl_xor_sync(WARP_MASK, v, 1); }\n"
        )
    root = _project(tmp_path, files)
    reads = []
    workspace = Workspace()
    real = workspace.read_bounded
    monkeypatch.setattr(
        workspace,
        "read_bounded",
        lambda path, limit, note=True: reads.append(path) or real(path, limit, note),
    )
    report = check_paths([str(root / "src")], Config(), jobs=1, workspace=workspace)
    assert len(report.findings) == 30 and not report.errors
    header = os.path.realpath(root / "include" / "common.cuh")
    assert reads.count(header) == 1


def test_unreadable_header_is_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "k.cu": '#include "gone.h"\n__device__ float f(float v) { return __shfl_xor_sync(GONE_MASK, v, 1); }\n',
        },
    )
    (root / "gone.h").symlink_to(root / "missing-target.h")
    assert _found(root / "k.cu") == []


# -- fixtures/cpp-project: a project's own platform macros and integer types, from its headers -------
CPP_PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "cpp-project"
CPP_PROJECT_SOURCES = sorted(CPP_PROJECT.rglob("*.cu"))


def _markers(path):
    return sorted(expected_findings(path).elements())


@pytest.mark.parametrize("path", CPP_PROJECT_SOURCES, ids=lambda p: p.name)
def test_cpp_project_file_reports_exactly_its_markers(path):
    assert [(line, code) for line, code, _ in _found(path)] == _markers(path)


def test_cpp_project_whole_tree_reports_exactly_the_markers():
    report = check_paths([str(CPP_PROJECT)], Config(), jobs=1)
    assert not report.errors
    got = sorted((os.path.relpath(f.path, CPP_PROJECT), f.line, f.code) for f in report.findings)
    want = sorted(
        (os.path.relpath(p, CPP_PROJECT), line, code)
        for p in CPP_PROJECT_SOURCES
        for line, code in _markers(p)
    )
    assert got == want


def test_cpp_project_facts_come_from_the_headers(tmp_path):
    """Without its headers the same kernels report what the headers' facts silence: the project
    macros gate nothing, and the project's type names are no 32-bit types."""
    root = _project(
        tmp_path,
        {
            "src/gated.cu": (CPP_PROJECT / "src" / "gated.cu").read_text(),
            "src/ballots.cu": (CPP_PROJECT / "src" / "ballots.cu").read_text(),
        },
    )
    gated = [(line, code) for line, code, _ in _found(root / "src" / "gated.cu")]
    # (line 15, a xor butterfly from 16 without a width, is silent either way: every lane holds
    # its 32-lane half's sum on wave64, as on a 32-lane warp: rocm_lint.cpp.lanes)
    assert (15, "ROC603") not in gated
    assert {
        (9, "ROC701"),
        (19, "ROC602"),
        (23, "ROC601"),
        (23, "ROC602"),
        (27, "ROC708"),
    } <= set(gated)
    assert [code for _, code, _ in _found(root / "src" / "ballots.cu")] == []


@pytest.mark.parametrize(
    "guard",
    [
        "#ifndef MYLIB_COMPAT_H\n#define MYLIB_COMPAT_H\n",
        "#if !defined(MYLIB_COMPAT_H)\n#define MYLIB_COMPAT_H\n",
        "#pragma once\n#ifndef MYLIB_COMPAT_H\n#define MYLIB_COMPAT_H 1\n",
    ],
)
def test_an_include_guard_does_not_hide_a_derived_macro(tmp_path, guard):
    root = _project(
        tmp_path,
        {
            "compat.h": guard + "#ifdef __HIPCC__\n#define MYLIB_ON_AMD\n#endif\n#endif\n",
            "k.cu": '#include "compat.h"\n#ifndef MYLIB_ON_AMD\n__device__ void l() { __syncwarp(0xffffffff); }\n#endif\n'
            "__device__ void m() { __syncwarp(0xffffffff); }\n",
        },
    )
    assert [(line, code) for line, code, _ in _found(root / "k.cu")] == [(5, "ROC602")]


def test_a_guard_that_is_not_one_decides_nothing(tmp_path):
    """`#ifndef X` followed by something else than `#define X` is a real condition: unknown."""
    root = _project(
        tmp_path,
        {
            "compat.h": "#ifndef MYLIB_NO_HIP\n#define MYLIB_OTHER 1\n#ifdef __HIPCC__\n#define MYLIB_ON_AMD\n#endif\n#endif\n",
            "k.cu": '#include "compat.h"\n#ifndef MYLIB_ON_AMD\n__device__ void l() { __syncwarp(0xffffffff); }\n#endif\n',
        },
    )
    assert [(line, code) for line, code, _ in _found(root / "k.cu")] == [(3, "ROC602")]


def test_an_integer_alias_given_two_widths_is_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "types.h": "#pragma once\n#if MYLIB_WIDE\ntypedef uint64_t lane_t;\n#else\ntypedef uint32_t lane_t;\n#endif\n",
            "k.cu": '#include "types.h"\n__device__ int f(bool p) { lane_t b = __ballot(p); return __popcll(b); }\n',
        },
    )
    assert _found(root / "k.cu") == []


LOGICAL = """#pragma once
template <typename T>
__device__ T shfl_xor_w(T v, int lane_mask, int width) { return __shfl_xor(v, lane_mask, width); }
template <typename T>
__device__ T shfl_xor_all(T v, int lane_mask) { return __shfl_xor(v, lane_mask); }
"""


def test_logical_warp_through_a_header_shuffle_wrapper(tmp_path):
    """A header's shuffle wrapper called with width 32 keeps the 32-lane logical warp; called
    without one, it spans the hardware wavefront next to 32-based lane math."""
    root = _project(
        tmp_path,
        {
            "include/shfl.cuh": LOGICAL,
            "src/k.cu": '#include "shfl.cuh"\n'
            "__device__ float logical(float v) {\n"
            "  for (int o = 16; o > 0; o /= 2) v += shfl_xor_w(v, o, 32);\n"
            "  return (threadIdx.x & 31) == 0 ? v : 0.f;\n"
            "}\n"
            "__device__ float mixed(float v) {\n"
            "  for (int o = 16; o > 0; o /= 2) v += shfl_xor_all(v, o);\n"
            "  return (threadIdx.x & 31) == 0 ? v : 0.f;\n"
            "}\n",
        },
    )
    assert [(line, code) for line, code, _ in _found(root / "src" / "k.cu")] == [(7, "ROC603"), (8, "ROC603")]


# -- one lex per header content, shared by the include follower, the facts and the scan -----------
from rocm_lint.cpp import includes as _includes  # noqa: E402
from rocm_lint.cpp.lexer import lex as _lex  # noqa: E402

_CFG_SAME = "#pragma once\n#define NV_PATH 1\n"
_CFG_SPLIT = (
    "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define NV_PATH 0\n#else\n#define NV_PATH 1\n#endif\n"
)
_KERNEL = (
    '#include "cfg.h"\n#if NV_PATH\n__global__ void k(unsigned *m) { *m = __ballot_sync(0xffffffff, 1); }\n'
    "#endif\n"
)


def test_shared_lex_is_one_per_content_and_bounded(monkeypatch):
    ws = Workspace()
    a = _includes.shared_lex(ws, "int a; // x\n")
    assert _includes.shared_lex(ws, "int a; // x\n") is a
    assert a == _lex("int a; // x\n")
    b = _includes.shared_lex(ws, "int b; /* y */\n")
    assert b == _lex("int b; /* y */\n") and b is not a
    monkeypatch.setattr(_includes, "MAX_LEXED_CHARS", 20)
    c = _includes.shared_lex(ws, "int c = 1; // zzzzzz\n")  # 21 characters: the others go
    assert list(ws.store(_includes._LEXED)) == ["int c = 1; // zzzzzz\n"] and c == _lex(
        "int c = 1; // zzzzzz\n"
    )


def test_a_header_changed_on_disk_is_read_and_lexed_again(tmp_path):
    """A long-lived workspace (the language server's): after the header changes on disk and the
    workspace is revalidated, the source's findings are a fresh run's, both ways."""
    root = _project(tmp_path, {"cfg.h": _CFG_SAME, "k.cu": _KERNEL})
    source = str(root / "k.cu")
    ws = Workspace()

    def found(workspace):
        result = check_file(source, Config(), workspace=workspace)
        assert isinstance(result, list), result
        return [(f.line, f.code) for f in result]

    first = found(ws)
    assert first == found(Workspace())
    (root / "cfg.h").write_text(_CFG_SPLIT + "\n")  # another size: the stamp changes
    ws.revalidate()
    second = found(ws)
    assert second == found(Workspace())
    assert first != second  # the header decides: NV_PATH is 0 on ROCm now
    (root / "cfg.h").write_text(_CFG_SAME)
    ws.revalidate()
    assert found(ws) == first
