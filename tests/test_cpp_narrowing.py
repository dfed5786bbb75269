"""The C++ checkers narrowed by their trigger words (``cpp.scanner.WORD_BOUND_RULES``) give the
same findings, fixes included, as every checker run on every file."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import FIXTURES
from rocm_lint.config import Config
from rocm_lint.cpp import narrowing as scanner
from rocm_lint.engine import check_source
from rocm_lint.registry import all_rules

CPP_FIXTURES = sorted(
    p for p in Path(FIXTURES).rglob("*") if p.suffix in (".cu", ".cuh", ".hip", ".cpp", ".h")
)


def _both(monkeypatch, path: str, text: str):
    narrowed = check_source(path, text, Config())
    with monkeypatch.context() as m:
        m.setattr(scanner, "WORD_BOUND_RULES", frozenset())
        every = check_source(path, text, Config())
    return narrowed, every


def test_the_narrowed_rules_have_triggers():
    rules = {r.code: r for r in all_rules()}
    for code in scanner.WORD_BOUND_RULES:
        assert rules[code].triggers, code


@pytest.mark.parametrize("path", CPP_FIXTURES, ids=lambda p: p.name)
def test_narrowing_keeps_the_fixture_findings(monkeypatch, path):
    text = path.read_text(encoding="utf-8", errors="replace")
    narrowed, every = _both(monkeypatch, str(path), text)
    assert narrowed == every


_WORDS = [
    "asm",
    'asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(a), "l"(b));',
    '__asm__("mov.u32 %0, %%laneid;" : "=r"(x));',
    "#include <mma.h>\n",
    '#include "./mma.h"\n',
    "nvcuda::wmma::fragment<a> f;",
    "#include <cutlass/gemm.h>\n",
    "#include <cuda/std/atomic>\n",
    "cute::Tensor t;",
    "cutlass::half_t h;",
    "__nanosleep(10);",
    "__syncwarp(mask);",
    "__pipeline_commit();",
    "cuda::memcpy_async(a, b, c);",
    "k<<<1, 32>>>(x);",
    "cudaDeviceSynchronize();",
    "cudaMallocManaged(&p, n);",
    "__managed__ int g;",
    "cudaMemAdvise(p, n, a, d);",
    "int v; cudaRuntimeGetVersion(&v); if (v < 11000) {}",
    "__global__ void k(int *x) {",
    "__device__ void d() {",
    "}",
    "\n",
    "// asm cp.async\n",
    "/* <<< */",
    '"nvcuda"',
    "#define M(x) x\n",
    "#if defined(__HIP_PLATFORM_AMD__)\n",
    "#else\n",
    "#endif\n",
    ";",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_WORDS), max_size=25))
def test_narrowing_keeps_generated_findings(pieces):
    text = " ".join(pieces)
    with pytest.MonkeyPatch.context() as monkeypatch:
        narrowed, every = _both(monkeypatch, "t.cu", text)
    assert narrowed == every
