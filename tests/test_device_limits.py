"""ROC711's evaluation of a dynamic shared memory size: ``cpp.values.int_expression`` against the
real C++ compiler (g++ computes each generated expression in a ``static_assert``), and the rule on
shapes of its own (a constant from a project header, a macro through two names, a local assigned
once or twice, a size the device is asked for)."""

import random
import shutil
import subprocess

import pytest

from rocm_lint.config import Config
from rocm_lint.cpp.values import int_expression
from rocm_lint.engine import check_file

NAMES = {"kTile": "16384", "kStages": "(3)", "SMEM": "kStages * kTile", "HALF": "sizeof(half)"}


@pytest.mark.parametrize(
    "text, value",
    [
        ("102400", 102400),
        ("96 * 1024", 98304),
        ("0x18000", 98304),
        ("96*1024u", 98304),
        ("(2 * kTile + 4 * 1024) * sizeof(half)", 36864 * 2),
        ("static_cast<int>(SMEM)", 49152),
        ("(int)SMEM * 2", 98304),
        ("size_t(SMEM) << 1", 98304),
        ("SMEM / 2 + 1", 24577),
        ("kStages * 32 * 1024 % 7", 98304 % 7),
        ("sizeof(float4) * 4096", 65536),
        ("HALF * kTile * 3", 98304),
        # undecided: a call, an unknown name, a floating value, a division by zero, a negative size
        ("pick(3)", None),
        ("d * 1024", None),
        ("1.5f * 1024", None),
        ("1024 / (kStages - 3)", None),
        ("kTile - 2 * kTile", None),
        ("sizeof(MyStruct) * 64", None),
    ],
)
def test_int_expression(text, value):
    assert int_expression(text, NAMES.get) == value


def _generated(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(
            ["kTile", "kStages", "SMEM", "sizeof(half)", "sizeof(float)", str(rng.randint(0, 5000))]
        )
    op = rng.choice(["+", "*", "-", "/", "%", "<<", ">>", "&", "|", "^"])
    left, right = _generated(rng, depth + 1), _generated(rng, depth + 1)
    if op in ("<<", ">>"):
        right = str(rng.randint(0, 8))
    shape = rng.choice(
        ["{} {} {}", "({} {} {})", "static_cast<long long>({}) {} {}", "(long long)({} {} {})"]
    )
    return shape.format(left, op, right) if shape.count("{}") == 3 else shape.format(f"{left} {op} {right}")


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_int_expression_agrees_with_the_compiler(tmp_path):
    """Every decided value is the compiler's (long long arithmetic, the same names)."""
    rng = random.Random(711)
    decided = []
    for _ in range(300):
        text = _generated(rng)
        value = int_expression(text, NAMES.get)
        if value is not None:
            decided.append((text, value))
    assert len(decided) > 100  # the comparison is not vacuous
    lines = [
        "typedef unsigned short half;",
        "constexpr long long kTile = 16384;",
        "constexpr long long kStages = (3);",
        "constexpr long long SMEM = kStages * kTile;",
    ]
    lines += [f'static_assert(({text}) == {value}LL, "{i}");' for i, (text, value) in enumerate(decided)]
    src = tmp_path / "values.cpp"
    src.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:2000]


def _check(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = check_file(str(tmp_path / "kernel.cu"), Config(select=("ROC711",)))
    assert isinstance(result, list), result
    return sorted(f.line for f in result)


KERNEL = "__global__ void k(float* x) {{ extern __shared__ float t[]; t[0] = x[0]; }}\n{body}\n"


def test_a_constant_of_an_included_header(tmp_path):
    files = {
        "sizes.h": "#pragma once\nconstexpr int kBlock = 128;\n#define TILE_BYTES (kBlock * 1024)\n",
        "kernel.cu": '#include "sizes.h"\n'
        + KERNEL.format(
            body="void go() {\n  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE_BYTES);\n}"
        ),
    }
    assert _check(tmp_path, files) == [4]


def test_a_header_value_at_the_limit_is_silent(tmp_path):
    files = {
        "sizes.h": "#pragma once\n#define TILE_BYTES (64 * 1024)\n",
        "kernel.cu": '#include "sizes.h"\n'
        + KERNEL.format(
            body="void go() {\n  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE_BYTES);\n}"
        ),
    }
    assert _check(tmp_path, files) == []


def test_a_value_chosen_for_rocm_is_read_as_rocm_sees_it(tmp_path):
    body = (
        "#ifdef USE_ROCM\n#define SMEM (64 * 1024)\n#else\n#define SMEM (160 * 1024)\n#endif\n"
        "void go() {\n  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);\n}"
    )
    assert _check(tmp_path, {"kernel.cu": KERNEL.format(body=body)}) == []


def test_a_file_that_asks_the_device_is_silent(tmp_path):
    body = (
        "void go(int dev) {\n  int optin = 0;\n"
        "  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);\n"
        "  if (optin >= 98304)\n"
        "    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304);\n}"
    )
    assert _check(tmp_path, {"kernel.cu": KERNEL.format(body=body)}) == []


def test_a_local_passed_by_address_is_undecided(tmp_path):
    body = (
        "void size_of(int* s);\nvoid go() {\n  int smem = 96 * 1024;\n  size_of(&smem);\n"
        "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);\n}"
    )
    assert _check(tmp_path, {"kernel.cu": KERNEL.format(body=body)}) == []
