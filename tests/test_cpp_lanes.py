"""The lane simulator (rocm_lint.cpp.lanes) against an independent model of HIP's shuffles, and
its verdicts on kernels of our own.

The reference is a brute-force emulator written from the documented behaviour (CUDA's
``__shfl*_sync`` and HIP's ``__shfl*`` descriptions: a ``width``-lane segment acts as its own
warp; ``__shfl`` reads ``srcLane`` modulo ``width`` in the segment; ``__shfl_up``/``__shfl_down``
do not wrap and leave the lowest/highest ``delta`` lanes unchanged; ``__shfl_xor`` may read an
earlier segment but returns the lane's own value for a later one), one integer per lane.  The
simulator runs C++ text symbolically; its terms are then evaluated on the same integers."""

from __future__ import annotations

import random

import pytest

from rocm_lint.config import Config
from rocm_lint.cpp.functions import functions_in
from rocm_lint.cpp.lanes import DIFFERENT, SAME, UNKNOWN, WARP32, WAVE64, Simulator, Sym, hip_source
from rocm_lint.cpp.scanner import read_cpp_unit

KINDS = {"idx": "__shfl", "up": "__shfl_up", "down": "__shfl_down", "xor": "__shfl_xor"}
WIDTHS = (1, 2, 4, 8, 16, 32, 64)


# -- the reference: documented semantics, one integer per lane -------------------------------------
def emulate(kind, values, arg, width, wave):
    """What each lane reads from a shuffle over ``values`` (``len(values)`` lanes, each ``wave``
    lanes one wavefront/warp), from the documented prose, not from HIP's formula."""
    out = []
    for lane, own in enumerate(values):
        wave_base = lane - lane % wave
        local = lane - wave_base  # the lane's id in its wavefront
        segment = local - local % width  # its width-lane segment's first lane
        if kind == "idx":
            src = segment + arg % width
        elif kind == "up":
            src = local - arg if local - arg >= segment else None  # no wrap: the lowest stay
        elif kind == "down":
            src = local + arg if local + arg < segment + width else None  # the highest stay
        else:
            src = local ^ arg
            src = None if src >= segment + width else src  # a later segment: own value
        out.append(own if src is None else values[wave_base + src])
    return out


def test_hip_formula_matches_the_documented_behaviour():
    """HIP's own index formula (hip_source) and the prose, every lane, offset and width."""
    for wave in (32, 64):
        values = list(range(100, 100 + wave))
        for width in (w for w in WIDTHS if w <= wave):
            for kind in KINDS:
                for arg in range(0, 64) if kind in ("idx", "xor") else range(1, 33):
                    got = [values[hip_source(kind, lane, arg, width, wave)] for lane in range(wave)]
                    assert got == emulate(kind, values, arg, width, wave), (kind, arg, width, wave)


# -- the simulator's terms, evaluated on integers --------------------------------------------------
def _unit(text, tmp_path, name="k.cu"):
    path = tmp_path / name
    path.write_text(text)
    return read_cpp_unit(str(path), text, Config())


def _simulator(unit):
    fns = functions_in(unit.code)
    return Simulator(unit.code, fns), fns


def value_of(terms, key, inputs, memo):
    """An integer for a term key: loads of ``x[i]`` are ``inputs[i]``, ``+`` adds, ``max``/``min``
    apply."""
    if key[0] == "i":
        return key[1]
    found = memo.get(key[1])
    if found is not None:
        return found
    node = terms.unpack(Sym(key[1]))
    kind = node[0]
    if kind == "load":
        cell = terms.unpack(Sym(node[2][1]))
        assert cell[0] == "cell" and cell[1] == "x", cell
        found = inputs[value_of(terms, cell[2], inputs, memo)]
    elif kind == "op":
        a, b = value_of(terms, node[2], inputs, memo), value_of(terms, node[3], inputs, memo)
        found = {"+": a + b, "-": a - b, "^": a ^ b, "*": a * b}[node[1]]
    elif kind == "apply":
        args = [value_of(terms, k, inputs, memo) for k in node[2]]
        found = {"max": max, "min": min}[node[1]](args)
    else:
        raise AssertionError(f"unexpected term {node}")
    memo[key[1]] = found
    return found


def _stored(sim, fns, name, model, inputs):
    """Per store statement, the 64 integers the lanes store (in the order the stores run)."""
    index = [f.name for f in fns.items].index(name)
    reads, _ = sim.trace(index, model)
    n = len(reads[0])
    assert all(len(r) == n for r in reads)
    memo = {}
    return [[value_of(sim.terms, reads[lane][k][3], inputs, memo) for lane in range(64)] for k in range(n)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_offset_and_width_against_the_emulator(kind, tmp_path):
    """Each shuffle builtin, every offset (1..32; every source lane 0..63 for ``__shfl`` and
    every xor mask up to 63), every width 1..64, on wave64 and on 32-lane warps."""
    args = range(0, 64) if kind in ("idx", "xor") else range(1, 33)
    inputs = random.Random(7).sample(range(1, 1 << 20), 64)  # distinct: each lane's value names it
    kernels = []
    for width in WIDTHS:
        body = "\n".join(
            f"  out[{k} * 64 + threadIdx.x] = {KINDS[kind]}(v, {arg}, {width});" for k, arg in enumerate(args)
        )
        kernels.append(
            f"__global__ void k{width}(const int* x, int* out) {{\n  int v = x[threadIdx.x];\n{body}\n}}\n"
        )
    unit = _unit("".join(kernels), tmp_path)
    sim, fns = _simulator(unit)
    for width in WIDTHS:
        for model, wave in ((WAVE64, 64), (WARP32, 32)):
            stored = _stored(sim, fns, f"k{width}", model, inputs)
            for k, arg in enumerate(args):
                # a width above a 32-lane warp's is taken as 32 there
                want = emulate(kind, inputs, arg, min(width, wave), wave)
                assert stored[k] == want, (kind, arg, width, model.name)


def _emulate_steps(steps, inputs, wave):
    v = list(inputs)
    for kind, arg, width, op in steps:
        got = emulate(kind, v, arg, min(width or wave, wave), wave)
        v = [a + b if op == "+" else max(a, b) if op == "max" else a ^ b for a, b in zip(v, got)]
    return v


def test_random_sequences_against_the_emulator(tmp_path):
    """Sequences of three to five shuffles with and without a width, combined by ``+``, ``max`` or
    ``^``: the simulator's symbolic result, evaluated, is the emulator's on both models."""
    rng = random.Random(603)
    inputs = [rng.randrange(1, 1 << 16) for _ in range(64)]
    cases = []
    for n in range(120):
        steps = []
        for _ in range(rng.randrange(3, 6)):
            kind = rng.choice(sorted(KINDS))
            arg = rng.randrange(0, 64) if kind in ("idx", "xor") else rng.randrange(1, 33)
            width = rng.choice((None,) + WIDTHS)
            steps.append((kind, arg, width, rng.choice(("+", "max", "^"))))
        cases.append(steps)
    kernels = []
    for n, steps in enumerate(cases):
        lines = []
        for kind, arg, width, op in steps:
            call = f"{KINDS[kind]}(v, {arg}" + (f", {width})" if width else ")")
            lines.append(f"  v = max(v, {call});" if op == "max" else f"  v {op}= {call};")
        kernels.append(
            f"__global__ void s{n}(const int* x, int* out) {{\n  int v = x[threadIdx.x];\n"
            + "\n".join(lines)
            + "\n  out[threadIdx.x] = v;\n}\n"
        )
    unit = _unit("".join(kernels), tmp_path)
    sim, fns = _simulator(unit)
    for n, steps in enumerate(cases):
        for model, wave in ((WAVE64, 64), (WARP32, 32)):
            assert _stored(sim, fns, f"s{n}", model, inputs) == [_emulate_steps(steps, inputs, wave)], (
                steps,
                model.name,
            )


def test_loops_unroll_as_the_emulator_steps(tmp_path):
    """``o >>= 1``, ``o /= 2``, ``o = o / 2``, ``o <<= 1`` and ``o *= 2`` loops run the offsets the
    loop's own arithmetic gives (from ``warpSize / 2``: 32 on wave64, 16 on a 32-lane warp)."""
    text = """
__global__ void a(const int* x, int* out) {
  int v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);
  out[threadIdx.x] = v;
}
__global__ void b(const int* x, int* out) {
  int v = x[threadIdx.x];
  for (unsigned o = warpSize / 2; o >= 1; o = o / 2) v = max(v, __shfl_xor(v, o));
  out[threadIdx.x] = v;
}
__global__ void c(const int* x, int* out) {
  int v = x[threadIdx.x];
  for (int o = 1; o < 32; o *= 2) v ^= __shfl_up(v, o, 32);
  out[threadIdx.x] = v;
}
"""
    inputs = [3 * i + 1 for i in range(64)]
    sim, fns = _simulator(_unit(text, tmp_path))
    for model, wave in ((WAVE64, 64), (WARP32, 32)):
        a = [("down", o, None, "+") for o in (16, 8, 4, 2, 1)]
        b = [("xor", o, None, "max") for o in ((32, 16, 8, 4, 2, 1) if wave == 64 else (16, 8, 4, 2, 1))]
        c = [("up", o, 32, "^") for o in (1, 2, 4, 8, 16)]
        for name, steps in (("a", a), ("b", b), ("c", c)):
            assert _stored(sim, fns, name, model, inputs) == [_emulate_steps(steps, inputs, wave)], name


# -- verdicts ----------------------------------------------------------------------------------------
def _verdicts(text, tmp_path):
    unit = _unit(text, tmp_path)
    fns = functions_in(unit.code)

    def resolve(name, at, world):
        from rocm_lint.cpp.values import literal_value

        d = unit.pre.macro(name, unit.line_of(at), world)
        text = unit.expand(d.body if d is not None and d.params is None else name, at)
        value = literal_value(text)
        return value if value is not None else text

    sim = Simulator(unit.code, fns, resolve, unit.nvidia_only)
    return {f.name: sim.evaluate(i) for i, f in enumerate(fns.items)}


VERDICT_CASES = [
    # a xor butterfly from 16, no width: every lane holds its half's maximum, as on a 32-lane warp
    (
        """__global__ void k(const float* x, float* y) {
  float m = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int s = 16; s; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
  y[blockIdx.x * blockDim.x + threadIdx.x] = m;
}""",
        SAME,
    ),
    # a down reduction read by the lanes with lane % 32 == 0 (three forms of the test)
    (
        """__global__ void k(const int* x, int* y) {
  const unsigned t = threadIdx.x;
  int s = x[t];
  for (int d = 16; d > 0; d = d / 2) s += __shfl_down(s, d);
  if (t % 32 == 0) y[t / 32] = s;
}""",
        SAME,
    ),
    (
        """__global__ void k(const int* x, int* y) {
  int s = x[threadIdx.x];
  const int lane = threadIdx.x & 0x1f;
  for (int d = 16; d >= 1; d /= 2) { s += __shfl_down(s, d); }
  if (!lane) atomicAdd(y + (threadIdx.x >> 5), s);
}""",
        SAME,
    ),
    # lane 0 of each wavefront alone reads it: lanes 32-63's partial is lost
    (
        """__global__ void k(const int* x, int* y) {
  int s = x[threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) s += __shfl_down(s, d);
  if (threadIdx.x % warpSize == 0) y[threadIdx.x / warpSize] = s;
}""",
        DIFFERENT,
    ),
    (
        """__global__ void k(const int* x, int* y) {
  int s = x[threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) s += __shfl_down(s, d);
  y[threadIdx.x] = __shfl(s, 0);
}""",
        DIFFERENT,
    ),
    # a broadcast inside the 32-lane group keeps the halves apart
    (
        """__global__ void k(const int* x, int* y) {
  int s = x[threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) s += __shfl_down(s, d);
  y[threadIdx.x] = __shfl(s, 0, 32);
}""",
        SAME,
    ),
    # a vote spans the wavefront: read, it differs
    (
        """__global__ void k(const int* x, unsigned long long* y) {
  unsigned long long b = __ballot(x[threadIdx.x] > 0);
  if ((threadIdx.x & 31) == 0) y[threadIdx.x >> 5] = b;
}""",
        DIFFERENT,
    ),
    # a width-less shuffle's result used as a 32-lane index: lanes 32-63 take lane 0's slot
    (
        """__global__ void k(const int* x, int* y) {
  const int lane = threadIdx.x & 31;
  const int slot = __shfl(x[threadIdx.x] & 31, 0);
  y[(threadIdx.x >> 5) * 32 + slot] = lane;
}""",
        DIFFERENT,
    ),
    (
        """__global__ void k(const int* x, int* y) {
  const int lane = threadIdx.x & 31;
  const int slot = __shfl(x[threadIdx.x] & 31, 0, 32);
  y[(threadIdx.x >> 5) * 32 + slot] = lane;
}""",
        SAME,
    ),
    # an inclusive scan guarded by the 32-lane id stays in each half
    (
        """__global__ void k(const int* x, int* y) {
  int lane = threadIdx.x & 31;
  int v = x[threadIdx.x];
  for (int o = 1; o < 32; o <<= 1) {
    int t = __shfl_up(v, o);
    if (lane >= o) v += t;
  }
  y[threadIdx.x] = v;
}""",
        SAME,
    ),
    # ... and not when the guard is the hardware lane id
    (
        """__global__ void k(const int* x, int* y) {
  int lane = __lane_id();
  int v = x[threadIdx.x];
  for (int o = 1; o < 32; o <<= 1) {
    int t = __shfl_up(v, o);
    if (lane >= o) v += t;
  }
  y[threadIdx.x] = v;
}""",
        DIFFERENT,
    ),
    # a trip count from data around the shuffle: not evaluated
    (
        """__global__ void k(const int* x, int* y, int n) {
  int v = x[threadIdx.x];
  for (int o = n; o > 0; o >>= 1) v += __shfl_xor(v, o);
  y[threadIdx.x] = v;
}""",
        UNKNOWN,
    ),
    # a lane chosen by data: not evaluated
    (
        """__global__ void k(const int* x, const int* src, int* y) {
  int v = x[threadIdx.x];
  y[threadIdx.x] = __shfl(v, src[threadIdx.x]);
}""",
        UNKNOWN,
    ),
    # a shuffle helper of another file: not evaluated
    (
        """__global__ void k(const int* x, int* y) {
  int v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += shfl_down_helper(v, o);
  y[threadIdx.x] = v;
}""",
        UNKNOWN,
    ),
    # threadIdx.y: the lanes are not threadIdx.x
    (
        """__global__ void k(const int* x, int* y) {
  int v = x[threadIdx.y * 32 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);
  y[threadIdx.y] = v;
}""",
        UNKNOWN,
    ),
    # lanes that returned early (a row past the end, one row per 32 lanes): the 32-lane leaders
    # read sums that never cross a row
    (
        """__global__ void k(const float* x, float* y, int rows) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  float v = x[row * 32 + lane];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);
  if (lane == 0) y[row] = v;
}""",
        SAME,
    ),
    # ... and a width-less broadcast after it crosses the rows
    (
        """__global__ void k(const float* x, float* y, int rows) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  float v = x[row * 32 + lane];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor(v, o);
  y[row * 32 + lane] = __shfl(v, 0);
}""",
        DIFFERENT,
    ),
    # a branch on data joins its values: the maximum is taken only where the data says
    (
        """__global__ void k(const float* x, float* y, const int* keep) {
  float v = x[threadIdx.x];
  if (keep[threadIdx.x]) v = v * 2.f; else v = 0.f;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor(v, o));
  y[threadIdx.x] = v;
}""",
        SAME,
    ),
    # a per-lane loop of unknown length before the exchange is one opaque step
    (
        """__global__ void k(const float* x, float* y, int cols) {
  int lane = threadIdx.x % 32, row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  float m = -1e30f;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, x[row * cols + c]);
  for (int k = 16; k > 0; k >>= 1) m = fmaxf(m, __shfl_xor(m, k));
  if (lane == 0) y[row] = m;
}""",
        SAME,
    ),
]


@pytest.mark.parametrize("text,verdict", VERDICT_CASES, ids=range(len(VERDICT_CASES)))
def test_verdicts(text, verdict, tmp_path):
    assert _verdicts(text, tmp_path)["k"].verdict == verdict


def test_a_helper_inlined_through_two_functions_is_judged_by_its_readers(tmp_path):
    """The reduction three calls deep: its result is read by lane % 32 == 0 in one kernel and
    by lane 0 of the wavefront in another; nothing in the file calls the helper's caller chain
    from elsewhere."""
    text = """
#define HALF 16
__device__ float step(float v, int o) { return v + __shfl_down(v, o); }
__device__ float tree(float v) {
  for (int o = HALF; o > 0; o /= 2) v = step(v, o);
  return v;
}
__device__ float reduce(float v) { return tree(v); }
__global__ void halves(const float* x, float* y) {
  float v = reduce(x[threadIdx.x]);
  if ((threadIdx.x & 31) == 0) y[threadIdx.x >> 5] = v;
}
__global__ void whole(const float* x, float* y) {
  float v = reduce(x[threadIdx.x]);
  if (__lane_id() == 0) y[blockIdx.x] = v;
}
"""
    got = _verdicts(text, tmp_path)
    assert got["halves"].verdict == SAME
    assert got["whole"].verdict == DIFFERENT
    assert got["step"].verdict == UNKNOWN  # on its own: its offset is a parameter
    assert got["tree"].verdict == UNKNOWN  # on its own: its callers are not seen


def test_macros_take_each_platforms_value(tmp_path):
    """A warp size the ROCm build defines as 64 and CUDA as 32: the loop from half of it is a
    whole-wavefront reduction on wave64 and a 32-lane one on CUDA, both read by lane 0: the
    same reads (one sum per wavefront/warp)."""
    text = """
#ifdef __HIP_PLATFORM_AMD__
#define WAVE 64
#else
#define WAVE 32
#endif
__global__ void k(const int* x, int* y) {
  int v = x[threadIdx.x];
  for (int o = WAVE / 2; o > 0; o /= 2) v += __shfl_xor(v, o);
  if (threadIdx.x % WAVE == 0) y[threadIdx.x / WAVE] = v;
}
"""
    # wave64 reads lane 0 only (the sum of 64), the 32-lane warps lanes 0 and 32: different
    # values in different slots, which is what a 64-wide wavefront computes on purpose; the
    # simulator reports the difference, the rule decides what 32 it was about.
    assert _verdicts(text, tmp_path)["k"].verdict == DIFFERENT


def test_nvidia_only_branches_are_not_run(tmp_path):
    text = """
__global__ void k(const int* x, int* y) {
  int v = x[threadIdx.x];
#ifdef USE_ROCM
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);
#else
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
#endif
  y[threadIdx.x] = v;
}
"""
    got = _verdicts(text, tmp_path)["k"]
    assert got.verdict == SAME and len(got.shuffles) == 1


# -- the rule ------------------------------------------------------------------------------------
def _roc603_lines(text, tmp_path, name):
    from rocm_lint.engine import check_file

    path = tmp_path / name
    path.write_text(text)
    return sorted(f.line for f in check_file(str(path), Config()) if f.code == "ROC603")


HELPERS = """
__device__ float butterfly(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);
  return v;
}
__device__ float down_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);
  return v;
}
__global__ void leaders(const float* x, float* y) {
  float v = down_sum(x[threadIdx.x]) + butterfly(x[threadIdx.x]);
  if ((threadIdx.x & 31) == 0) y[threadIdx.x >> 5] = v;
}
"""


def test_a_translation_unit_judges_its_helpers_by_their_callers(tmp_path):
    """In a .cu file the down reduction's only caller reads the 32-lane leaders: silent."""
    assert _roc603_lines(HELPERS, tmp_path, "k.cu") == []


def test_a_header_judges_each_helper_alone(tmp_path):
    """In a header any includer may call the down reduction and read lane 0 of the wavefront
    alone: not decided, so it stays hardware-width code and the unit around it (its caller's
    32-lane math, the butterfly that caller also calls) is reported as before."""
    assert _roc603_lines(HELPERS, tmp_path, "k.cuh") == [3, 7, 12, 12]


def test_shuffles_under_data_conditions_and_trip_counts(tmp_path):
    """A xor partner inside the 32-lane half is the same lane in both runs, active or not: the
    same reads.  A trip count passed by the only caller is followed into the helper; one from a
    kernel parameter is not known: the finding stays."""
    text = """
__device__ float reduce_upto(float v, int first) {
  for (int o = 16; o > 0; o >>= 1) if (o <= first) v += __shfl_xor(v, o);
  return v;
}
"""
    assert _roc603_lines(text, tmp_path, "k.cu") == []
    helper = """
__device__ float reduce_from(float v, int start) {
  for (int o = start; o > 0 && o <= 16; o >>= 1) v += __shfl_xor(v, o);
  return v;
}
"""
    known = helper + (
        "__global__ void k(const float* x, float* y) { y[threadIdx.x & 31] = reduce_from(x[threadIdx.x], 16); }\n"
    )
    assert _roc603_lines(known, tmp_path, "k2.cu") == []
    unknown = helper + (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  y[threadIdx.x & 31] = reduce_from(x[threadIdx.x], n);\n}\n"
    )
    assert _roc603_lines(unknown, tmp_path, "k3.cu") == [7]


@pytest.mark.parametrize(
    "body",
    [
        "switch (threadIdx.x & 1) { case 0: v += 1; break; }",
        "do { v += __shfl_xor(v, 1); } while (v < 0);",
        "auto add = [](int a, int b) { return a + b; }; v = add(v, 1);",
        'asm volatile("" : "+r"(v));',
        "for (;;) { v += __shfl_xor(v, 16); break; }",
        "v += tile.shfl_down(v, 16);",
    ],
)
def test_code_outside_the_subset_is_not_evaluated(body, tmp_path):
    text = (
        "__global__ void k(const int* x, int* y) {\n  int v = x[threadIdx.x];\n  "
        + body
        + "\n  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);\n  y[threadIdx.x] = v;\n}\n"
    )
    assert _verdicts(text, tmp_path)["k"].verdict == UNKNOWN
