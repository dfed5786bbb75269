"""A lane simulator: what a function's shuffles compute on a 64-lane wavefront, next to what the
same code computes on 32-lane warps.

ROC603 asks whether code written for 32-lane warps gives the same result on a CDNA wavefront of
64 lanes.  A shape cannot say: a xor butterfly from offset 16 without a width stays inside each
32-lane half and is right; the same down-shuffle reduction is right when only the lanes with
``lane % 32 == 0`` read it and wrong when lane 0 alone does.  This module *runs* the function
twice over 64 lanes, each lane holding symbolic values:

- **wave64**, the hardware: one wavefront of 64 lanes, ``warpSize`` (``C10_WARP_SIZE``,
  ``__AMDGCN_WAVEFRONT_SIZE``) 64, a shuffle's default width 64, ``__lane_id()`` = lane;
- **warp32**, what the author meant: the same 64 threads as two independent 32-lane warps
  (lanes 0-31 and 32-63), ``warpSize`` 32, default width 32, a width above 32 taken as 32,
  ``__lane_id()`` = lane % 32.

``threadIdx.x`` is the lane number in both (a block's first wavefront; a function that reads
``threadIdx.y``/``.z`` is not evaluated: its lanes are not ``threadIdx.x``).  Then it compares
what the lanes *read*: every store (``a[i] = v``, ``*p += v``, an atomic), with its index, value
and the condition it stands under, lane by lane, in order; and the value a device function
returns.  Equal reads in both runs: the code computes on wave64 what it computes on 32-lane warps
(``SAME``).  Different: ``DIFFERENT``.  Anything the simulator cannot evaluate — a loop trip count
that depends on data around a shuffle, a shuffle's lane that is not a number, a call it cannot
see into, a lane-divergent shuffle, memory written and read back, ``threadIdx.y`` — gives
``UNKNOWN``, and the caller keeps its own rule (never a silence on a guess).

HIP's shuffle semantics (``hipamd/include/hip/amd_detail/amd_warp_functions.h``, ROCm/clr; the
same as CUDA's documented ``__shfl*_sync`` behaviour for a ``width``-lane segment), with
``self`` the lane's id within its wavefront, ``w`` the width (a power of two, default
``warpSize``) and the source lane then read through ``ds_bpermute`` (index modulo the wavefront):

- ``__shfl(v, src, w)``:      ``index = (src & (w - 1)) + (self & ~(w - 1))``
- ``__shfl_up(v, d, w)``:     ``index = self - d``; ``index < (self & ~(w - 1))`` -> ``self``
- ``__shfl_down(v, d, w)``:   ``index = self + d``; ``(self & (w - 1)) + d >= w`` -> ``self``
- ``__shfl_xor(v, m, w)``:    ``index = self ^ m``; ``index >= ((self + w) & ~(w - 1))`` -> ``self``
  (only a source *above* the segment returns the lane's own value; ``m >= w`` may read a lower
  segment, as CUDA documents: "able to access elements from earlier groups")

The ``_sync`` forms take a mask first and compute the same.  Votes span the lane's wavefront
(64 lanes) or its warp (32): ``__ballot``/``__any``/``__all`` values are the predicates of those
lanes, so a vote read afterwards differs unless nothing reads it.

Values are interned terms (``Terms``): an int, or a node (an operation, a function parameter of
one lane, a load from memory nobody in the function writes, a uniform name such as
``blockIdx.x``), so two runs agree exactly when their terms are the same object id.  Loops
with a trip count the lanes can compute (``for (int o = 16; o > 0; o >>= 1)``, ``o /= 2``,
``o = warpSize / 2``) are unrolled (up to ``MAX_TRIPS``); a loop whose count depends on data
and that holds no shuffle, vote, store or unknown call is one opaque per-lane step of the names
it reads.  Calls of the file's own functions are inlined (``MAX_DEPTH`` deep).

API
---
``hip_source(kind, self, arg, width, wave) -> int``
    The lane a shuffle of ``kind`` (``"idx"``, ``"up"``, ``"down"``, ``"xor"``) reads, HIP's
    formula above; ``self`` is the lane's id in its wavefront of ``wave`` lanes.
``Simulator(code, functions, resolve, dropped)``
    ``evaluate(index) -> Evaluation``: run function ``index`` of ``functions`` (a
    ``rocm_lint.cpp.functions.Functions`` of ``code``) on both models; ``resolve(name, offset,
    world)`` gives the integer value of a file constant or macro as ``world`` (``"rocm"`` for
    wave64, ``"cuda"`` for warp32: the author's 32) defines it, or the warp-size name it stands
    for, or None; ``dropped(offset)``: code the ROCm build does not compile (both runs read the
    ROCm build's code; a body with ``#else`` branches of which none is dropped is not run).
    ``Evaluation.verdict`` is ``SAME``, ``DIFFERENT`` or ``UNKNOWN``; ``Evaluation.shuffles`` the
    offsets of the shuffle calls it evaluated; ``Evaluation.reason`` says why when UNKNOWN.
``Simulator.trace(index, model) -> (reads, returns)``
    One model's run (``WAVE64`` or ``WARP32``): per lane, its reads in order and its return
    value, as terms ``Terms.unpack`` opens (the reference tests evaluate them on integers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from rocm_lint.cpp.functions import opener_before
from rocm_lint.cpp.statements import Parser, Unknown, tokenize

SAME, DIFFERENT, UNKNOWN = "same", "different", "unknown"
LANES = 64
MAX_TRIPS = 128  # iterations of one loop unrolled
MAX_DEPTH = 3  # calls of the file's functions inlined
MAX_STEPS = 20000  # statements and expressions evaluated per model
MAX_BODY = 20000  # characters of a function body


def hip_source(kind: str, self: int, arg: int, width: int, wave: int) -> int:
    """The lane HIP's ``__shfl*`` of ``kind`` reads for lane ``self`` of a ``wave``-lane
    wavefront (``amd_warp_functions.h``)."""
    if kind == "idx":
        index = (arg & (width - 1)) + (self & ~(width - 1))
    elif kind == "up":
        index = self - arg
        index = self if index < (self & ~(width - 1)) else index
    elif kind == "down":
        index = self + arg
        index = self if (self & (width - 1)) + arg >= width else index
    else:
        index = self ^ arg
        index = self if index >= ((self + width) & ~(width - 1)) else index
    return index % wave  # ds_bpermute: the address's lane bits


# -- terms -------------------------------------------------------------------------------------
class Sym:
    """A symbolic value: an interned node id (equal ids, equal values)."""

    __slots__ = ("id",)

    def __init__(self, id_: int) -> None:
        self.id = id_

    def __eq__(self, other) -> bool:
        return isinstance(other, Sym) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("sym", self.id))

    def __repr__(self) -> str:
        return f"Sym({self.id})"


class Terms:
    def __init__(self) -> None:
        self._ids: Dict[tuple, Sym] = {}
        self._keys: List[tuple] = []

    def node(self, *key) -> Sym:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = Sym(len(self._keys))
            self._keys.append(key)
        return found

    def unpack(self, sym: Sym) -> tuple:
        """The node ``sym`` stands for: (kind, ...) with children as ``("i", int)`` or
        ``("s", id)``."""
        return self._keys[sym.id]


def _key(v):
    return ("i", v) if isinstance(v, int) else ("s", v.id)


_COMMUTATIVE = frozenset({"+", "*", "&", "|", "^", "==", "!="})


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_INT_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
}


def _int_op(op: str, a: int, b: int) -> int:
    """``a op b`` as C computes it on integers (division truncates toward zero)."""
    if op in ("/", "%"):
        if b == 0:
            raise Unknown("division by zero")
        q = _c_div(a, b)
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        if b < 0 or b > 63:
            raise Unknown("a shift out of range")
        return a << b if op == "<<" else a >> b
    found = _INT_OPS.get(op)
    if found is None:
        raise Unknown(f"operator {op}")
    return found(a, b)


# -- what the simulator knows of CUDA and HIP ------------------------------------------------
_SHUFFLES = {
    "__shfl": "idx",
    "__shfl_sync": "idx",
    "__shfl_up": "up",
    "__shfl_up_sync": "up",
    "__shfl_down": "down",
    "__shfl_down_sync": "down",
    "__shfl_xor": "xor",
    "__shfl_xor_sync": "xor",
}
_VOTES = {
    "__ballot": "ballot",
    "__ballot_sync": "ballot",
    "__any": "any",
    "__any_sync": "any",
    "__all": "all",
    "__all_sync": "all",
}
_BARRIERS = frozenset(
    {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__builtin_assume"}
)
# C and CUDA math that reads only its arguments (a call of anything else the file does not define
# may reach other lanes: a header's shuffle helper)
_PURE = frozenset(
    (
        "max min fmax fmin fmaxf fminf abs fabs fabsf sqrt sqrtf rsqrtf exp expf __expf exp2f log "
        "logf __logf tanhf __fdividef __fadd_rn __fmul_rn fmaf __hadd __hmul __hmax __hmin "
        "__hadd2 __hmax2 __float2half __half2float __float2bfloat16 __bfloat162float static_cast "
        "float int unsigned double"
    ).split()
)
_ATOMIC = re.compile(r"atomic[A-Z]\w*$")
_PARAM_NAME = re.compile(r"(?<![\w])[A-Za-z_]\w*\Z")  # the name a parameter ends with


# -- models ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Model:
    name: str
    group: int  # lanes per wavefront/warp
    world: str  # whose macro values it reads: "rocm" or "cuda"


WAVE64 = Model("wave64", 64, "rocm")
WARP32 = Model("warp32", 32, "cuda")
_WARP_SIZE_NAMES = frozenset(
    {"warpSize", "C10_WARP_SIZE", "__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"}
)
_UNIFORM = re.compile(r"(?:blockIdx|blockDim|gridDim)$")


@dataclass
class Evaluation:
    verdict: str
    shuffles: FrozenSet[int] = frozenset()
    reason: str = ""


@dataclass
class _Frame:
    env: Dict[str, list]
    params: Set[str]
    returns: list = field(default_factory=lambda: [None] * LANES)
    done: list = field(default_factory=lambda: [False] * LANES)


class _Run:
    """One model's run of a function (and what it inlines)."""

    def __init__(self, sim: "Simulator", model: Model) -> None:
        self.sim = sim
        self.model = model
        self.terms = sim.terms
        self.reads: List[list] = [[] for _ in range(LANES)]
        self.shuffles: Set[int] = set()
        self.steps = 0
        self.stored: Dict[str, int] = {}  # memory this run wrote: stores per base name
        self.frames: List[_Frame] = []
        self.depth = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unknown("too many steps")

    # -- statements --------------------------------------------------------------------------
    def run(self, stmts, active: list) -> None:
        for s in stmts:
            self.stmt(s, active)

    def stmt(self, s, active: list) -> None:
        self.tick()
        frame = self.frames[-1]
        act = [self._still(a, frame.done[i]) for i, a in enumerate(active)]
        if not any(a is not False for a in act):
            return
        kind = s[0]
        if kind == "block":
            self.run(s[1], act)
        elif kind == "decl":
            for name, is_array, init, at in s[1]:
                if is_array:
                    frame.env[name] = None  # an array: its loads and stores are memory
                    continue
                old = frame.env.get(name) or [self.terms.node("undef", name, i) for i in range(LANES)]
                if init is None:
                    frame.env[name] = old
                else:
                    frame.env[name] = self._merge(act, self.eval(init, act), old)
        elif kind == "expr":
            self.eval(s[1], act)
        elif kind == "if":
            cond = self.eval(s[1], act)
            then_act = [self._and(a, c) for a, c in zip(act, cond)]
            else_act = [self._and(a, self._not(c)) for a, c in zip(act, cond)]
            if not any(isinstance(c, Sym) for a, c in zip(act, cond) if a is not False):
                self.stmt(s[2], then_act)
                if s[3] is not None:
                    self.stmt(s[3], else_act)
                return
            # a condition of data: each branch runs on its own copy of the names (a lane under a
            # condition computes as if active: its values matter only where it is), joined after
            before = dict(frame.env)
            self.stmt(s[2], then_act)
            after_then = frame.env
            frame.env = dict(before)
            if s[3] is not None:
                self.stmt(s[3], else_act)
            after_else = frame.env
            frame.env = before
            for name, old in before.items():
                t, e = after_then.get(name), after_else.get(name)
                if old is None or (t is old and e is old):
                    continue
                joined = []
                for i in range(LANES):
                    c = cond[i]
                    if act[i] is False:
                        joined.append(old[i])
                    elif isinstance(c, int):
                        joined.append(t[i] if c else e[i])
                    else:
                        joined.append(self.terms.node("sel", c.id, _key(t[i]), _key(e[i])))
                before[name] = joined
        elif kind == "for":
            self._loop(s, act)
        elif kind == "return":
            value = self.eval(s[1], act) if s[1] is not None else [0] * LANES
            for i, a in enumerate(act):
                if a is False:
                    continue
                if a is True:
                    frame.returns[i] = value[i]
                    frame.done[i] = True
                    continue
                # a return under a condition of data (`if (i >= n) return;`): the lane is done
                # where the condition holds
                old = frame.returns[i]
                frame.returns[i] = self.terms.node(
                    "sel", a.id, _key(value[i]), _key(old) if old is not None else ("none",)
                )
                done = frame.done[i]
                frame.done[i] = a if done is False else self.terms.node("or", done.id, a.id)
        else:
            raise Unknown(f"`{kind}`")

    def _loop(self, s, act: list) -> None:
        _, init, cond, step, body, at = s
        if init is not None:
            self.stmt(init, act)
        frame = self.frames[-1]
        live = list(act)
        for _ in range(MAX_TRIPS + 1):
            if cond is None:
                raise Unknown("a loop without a condition")
            c = self.eval(cond, live)
            if any(isinstance(x, Sym) for a, x in zip(live, c) if a is not False):
                self._opaque_loop(s, live)
                return
            live = [
                self._still(a, frame.done[i]) if (a is not False and c[i]) else False
                for i, a in enumerate(live)
            ]
            if not any(a is not False for a in live):
                return
            self.stmt(body, live)
            if step is not None:
                self.eval(step, live)
        raise Unknown("a loop of more than %d trips" % MAX_TRIPS)

    def _opaque_loop(self, s, act: list) -> None:
        """A loop whose trip count the lanes cannot compute: one per-lane step of what it reads,
        when it holds no shuffle, vote, store, return, break or unknown call."""
        names: Set[str] = set()
        assigned: Set[str] = set()
        declared: Set[str] = set()
        _walk_loop(("group", [s[2], s[3], s[4]]), names, assigned, self, declared)
        frame = self.frames[-1]
        if names & set(self.stored):
            raise Unknown("a loop reads memory the function wrote")
        assigned -= declared
        for name in sorted(assigned):
            if name not in frame.env or frame.env[name] is None:
                raise Unknown("a loop writes memory or a name the simulator does not hold")
        inputs = []
        for name in sorted(names - declared):
            if name == "threadIdx.x":
                inputs.append((name, list(range(LANES))))
            elif name in frame.env and frame.env[name] is not None:
                inputs.append((name, frame.env[name]))
            else:
                inputs.append((name, self.name_value(name, -1, act)))
        for name in sorted(assigned):
            old = frame.env[name]
            new = []
            for i in range(LANES):
                key = tuple(_key(v[i]) for _, v in inputs)
                new.append(self.terms.node("loop", s[5], name, key))
            frame.env[name] = self._merge(act, new, old)

    # -- expressions -------------------------------------------------------------------------
    def eval(self, e, act: list) -> list:
        self.tick()
        kind = e[0]
        if kind == "num":
            v = e[1]
            return [v] * LANES if isinstance(v, int) else [self.terms.node("float", v[1])] * LANES
        if kind == "name":
            return self.name_value(e[1], e[2], act)
        if kind == "opaque":
            raise Unknown("an initializer list or a string")
        if kind == "bin":
            op = e[1]
            if op in ("&&", "||"):
                a = self.eval(e[2], act)
                b = self.eval(e[3], act)
                return [self._logic(op, x, y) for x, y in zip(a, b)]
            a = self.eval(e[2], act)
            b = self.eval(e[3], act)
            return [self.op(op, x, y) for x, y in zip(a, b)]
        if kind == "un":
            op = e[1]
            if op == "&":
                return [self.terms.node("addr", _key(x)) for x in self._lvalue_key(e[2], act)]
            a = self.eval(e[2], act)
            if op == "-":
                return [(-x if isinstance(x, int) else self.terms.node("neg", x.id)) for x in a]
            if op == "+":
                return a
            if op == "!":
                return [self._not(x) for x in a]
            if op == "~":
                return [(~x if isinstance(x, int) else self.terms.node("inv", x.id)) for x in a]
            if op == "*":
                return self._load(e, act)
        if kind == "sel":
            c = self.eval(e[1], act)
            a = self.eval(e[2], act)
            b = self.eval(e[3], act)
            out = []
            for i in range(LANES):
                if isinstance(c[i], int):
                    out.append(a[i] if c[i] else b[i])
                else:
                    out.append(self.terms.node("sel", c[i].id, _key(a[i]), _key(b[i])))
            return out
        if kind == "comma":
            self.eval(e[1], act)
            return self.eval(e[2], act)
        if kind == "assign":
            return self._assign(e, act)
        if kind == "post":
            old = self.eval(e[2], act)
            self._assign(("assign", e[1], e[2], ("num", 1), e[3]), act)
            return old
        if kind == "index":
            return self._load(e, act)
        if kind == "member":
            base = e[1]
            if base[0] == "name" and base[1] == "threadIdx":
                if e[2] == "x":
                    return list(range(LANES))
                raise Unknown("threadIdx.%s: the lanes are not threadIdx.x" % e[2])
            if base[0] == "name" and _UNIFORM.match(base[1]):
                return [self.terms.node("u", base[1] + "." + e[2])] * LANES
            v = self.eval(base, act)
            return [self.terms.node("member", _key(x), e[2]) for x in v]
        if kind == "call":
            return self._call(e, act)
        raise Unknown(f"expression {kind}")

    def op(self, op: str, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return _int_op(op, a, b)
        ka, kb = _key(a), _key(b)
        if op in _COMMUTATIVE and kb < ka:
            ka, kb = kb, ka
        return self.terms.node("op", op, ka, kb)

    def _logic(self, op: str, a, b):
        if isinstance(a, int):
            if op == "&&":
                return (1 if (isinstance(b, int) and b) else (0 if isinstance(b, int) else b)) if a else 0
            return 1 if a else (int(bool(b)) if isinstance(b, int) else b)
        return self.terms.node("op", op, _key(a), _key(b))

    def _not(self, x):
        if x is True:
            return False
        if x is False:
            return True
        if isinstance(x, int):
            return int(not x)
        return self.terms.node("not", x.id)

    def _still(self, active, done):
        """A lane's active flag after its returns so far (``done``: False, True or a condition)."""
        if done is False or active is False:
            return active
        if done is True:
            return False
        return self._and(active, self._not(done))

    def _and(self, active, c):
        """An active flag (True, False or a Sym condition) narrowed by a condition value."""
        if active is False:
            return False
        if isinstance(c, int):
            return active if c else False
        if active is True:
            return c
        return self.terms.node("and", active.id, c.id)

    def _merge(self, act: list, new: list, old: list) -> list:
        out = []
        for i in range(LANES):
            a = act[i]
            # a lane active under a condition computes as if active (the branches join after)
            out.append(old[i] if a is False else new[i])
        return out

    def name_value(self, name: str, at: int, act: list) -> list:
        frame = self.frames[-1]
        if name in frame.env:
            v = frame.env[name]
            if v is None:
                return [self.terms.node("array", name)] * LANES
            return v
        if name in _WARP_SIZE_NAMES:
            return [self.model.group] * LANES
        if name in ("true", "false"):
            return [int(name == "true")] * LANES
        value = self.sim.resolve(name, at, self.model.world) if at >= 0 else None
        if isinstance(value, str) and value in _WARP_SIZE_NAMES:
            return [self.model.group] * LANES
        if isinstance(value, int):
            return [value] * LANES
        return [self.terms.node("u", name)] * LANES  # a global, a template parameter: uniform

    def _lvalue_key(self, e, act: list) -> list:
        if e[0] == "index":
            base = self._base_name(e[1])
            idx = self.eval(e[2], act)
            return [self.terms.node("cell", base, _key(i)) for i in idx]
        if e[0] == "name":
            return [self.terms.node("var", e[1])] * LANES
        if e[0] == "member":
            inner = self._lvalue_key(e[1], act)
            return [self.terms.node("field", _key(x), e[2]) for x in inner]
        if e[0] == "un" and e[1] == "*":
            return [self.terms.node("deref", _key(x)) for x in self.eval(e[2], act)]
        raise Unknown("an address the simulator does not follow")

    def _base_name(self, e) -> str:
        while e[0] in ("index", "member"):
            e = e[1]
        if e[0] == "name":
            return e[1]
        raise Unknown("memory through an expression")

    def _load(self, e, act: list) -> list:
        if e[0] == "index":
            base = self._base_name(e[1])
        else:
            base = self._base_name(e[2]) if e[2][0] in ("name", "index", "member") else "*"
        # memory this function wrote: what the load sees depends on every store before it (of
        # every wavefront of the block), the same in both runs when the stores so far were the
        # same (the reads compared at the end say whether they were)
        version = self.stored.get(base, 0) if base != "*" else sum(self.stored.values())
        return [self.terms.node("load", version, _key(x)) for x in self._lvalue_key(e, act)]

    def _assign(self, e, act: list) -> list:
        _, op, target, value_e, at = e
        value = self.eval(value_e, act)
        frame = self.frames[-1]
        if target[0] == "name" and target[1] in frame.env and frame.env[target[1]] is not None:
            old = frame.env[target[1]]
            if op != "=":
                value = [self.op(op[:-1], x, y) for x, y in zip(old, value)]
            frame.env[target[1]] = self._merge(act, value, old)
            return frame.env[target[1]]
        if target[0] == "name" and target[1] not in frame.env:
            raise Unknown(f"`{target[1]}` assigned without a declaration the simulator saw")
        # a store: what the lanes read out of the function
        where = self._lvalue_key(target, act)
        base = self._base_name(target if target[0] != "un" else target[2]) if target[0] != "un" else "*"
        if op != "=":
            value = [self.terms.node("op", op[:-1], ("s", w.id), _key(v)) for w, v in zip(where, value)]
        self.stored[base] = self.stored.get(base, 0) + 1
        for i in range(LANES):
            if act[i] is False:
                continue
            guard = "" if act[i] is True else act[i].id
            self.reads[i].append(("store", at, _key(where[i]), _key(value[i]), guard))
        return value

    def _call(self, e, act: list) -> list:
        _, callee, args, at = e
        if callee[0] == "member":
            raise Unknown("a method call")
        if callee[0] != "name":
            raise Unknown("a call through an expression")
        name = callee[1].split("::")[-1]
        if name in _SHUFFLES:
            return self._shuffle(_SHUFFLES[name], name.endswith("_sync"), args, callee[2], act)
        if name in _VOTES:
            return self._vote(_VOTES[name], name.endswith("_sync"), args, act)
        if name == "__activemask":
            return self._vote("ballot", False, [("num", 1)], act)
        if name == "__lane_id":
            return [i % self.model.group for i in range(LANES)]
        if name in _BARRIERS:
            for a in args:
                self.eval(a, act)
            return [0] * LANES
        values = [self.eval(a, act) for a in args]
        frame = self.frames[-1]
        if _ATOMIC.match(name) and args:
            where = values[0]
            self.stored["*"] = self.stored.get("*", 0) + 1
            for i in range(LANES):
                if act[i] is False:
                    continue
                guard = "" if act[i] is True else act[i].id
                self.reads[i].append(("atomic", name, tuple(_key(v[i]) for v in values), guard))
            return [self.terms.node("atomic", at, _key(w)) for w in where]
        if name in frame.env and frame.env[name] is not None:  # a functor parameter: `op(a, b)`
            fn = frame.env[name]
            return [
                self.terms.node("apply", _key(fn[i]), tuple(_key(v[i]) for v in values)) for i in range(LANES)
            ]
        callee_fn = self.sim.function_named(name)
        if callee_fn is not None:
            return self._inline(callee_fn, values, act)
        if name in _PURE:
            out = []
            for i in range(LANES):
                xs = [v[i] for v in values]
                if name in ("max", "min") and len(xs) == 2 and all(isinstance(x, int) for x in xs):
                    out.append(max(xs) if name == "max" else min(xs))
                elif name in ("int", "unsigned", "static_cast") and len(xs) == 1:
                    out.append(xs[0])
                else:
                    keys = [_key(x) for x in xs]
                    if name in ("max", "min", "fmaxf", "fminf", "fmax", "fmin") and len(keys) == 2:
                        keys.sort()
                    out.append(self.terms.node("apply", name, tuple(keys)))
            return out
        raise Unknown(f"a call of `{name}`, which the file does not define")

    def _inline(self, index: int, values: list, act: list) -> list:
        if self.depth >= MAX_DEPTH:
            raise Unknown("calls nested too deep")
        params, body = self.sim.parsed(index)
        if len(values) > len(params):
            raise Unknown("more arguments than parameters")
        env: Dict[str, list] = {}
        for k, (pname, default, pat) in enumerate(params):
            if k < len(values):
                env[pname] = values[k]
            elif default is not None:
                env[pname] = None
                self.frames.append(_Frame({}, set()))
                try:
                    env[pname] = self.eval(default, act)
                finally:
                    self.frames.pop()
            else:
                raise Unknown("a parameter without argument")
        frame = _Frame(env, {p[0] for p in params})
        self.frames.append(frame)
        self.depth += 1
        try:
            self.run(body, act)
        finally:
            self.depth -= 1
            self.frames.pop()
        void = self.terms.node("void")
        return [r if r is not None else void for r in frame.returns]

    def _shuffle(self, kind: str, sync: bool, args, at: int, act: list) -> list:
        if sync:
            if not args:
                raise Unknown("a shuffle without arguments")
            self.eval(args[0], act)
            args = args[1:]
        if len(args) not in (2, 3):
            raise Unknown("a shuffle with %d arguments" % len(args))
        values = self.eval(args[0], act)
        lanes = self.eval(args[1], act)
        group = self.model.group
        if len(args) == 3:
            widths = self.eval(args[2], act)
        else:
            widths = [group] * LANES
        out = list(values)
        for i in range(LANES):
            if act[i] is False:
                continue
            w, arg = widths[i], lanes[i]
            if not isinstance(w, int) or not isinstance(arg, int):
                raise Unknown("a shuffle whose lane or width is not a number")
            if w <= 0 or w & (w - 1) or w > 64:
                raise Unknown("a shuffle width that is not a power of two up to 64")
            if kind in ("up", "down") and arg < 0:
                raise Unknown("a negative shuffle delta")
            w = min(w, group)
            base = i - i % group
            src = base + hip_source(kind, i - base, arg, w, group)
            # a source lane that may be inactive (returned, or outside an `if`): what it holds
            # is undefined on either platform, the same unknown in both runs; one active under
            # the reader's own condition, or always, is read
            if act[src] is True or act[src] == act[i]:
                out[i] = values[src]
            elif act[src] is False:
                out[i] = self.terms.node("inactive", src)
            else:
                marker = self.terms.node("inactive", src)
                out[i] = self.terms.node("sel", act[src].id, _key(values[src]), _key(marker))
        self.shuffles.add(at)
        return out

    def _vote(self, kind: str, sync: bool, args, act: list) -> list:
        if sync:
            args = args[1:]
        if len(args) != 1:
            raise Unknown("a vote's arguments")
        preds = self.eval(args[0], act)
        if any(a is not True and a is not False for a in act):
            raise Unknown("a vote under a condition the lanes cannot compute")
        group = self.model.group
        out = []
        for i in range(LANES):
            base = i - i % group
            keys = tuple(_key(preds[j]) if act[j] is True else None for j in range(base, base + group))
            out.append(self.terms.node("vote", kind, keys))
        return out


def _walk_loop(node, names: Set[str], assigned: Set[str], run: _Run, declared: Set[str]) -> None:
    """The names a loop reads and the names it assigns; Unknown when it holds what a per-lane
    step cannot stand for."""
    if not isinstance(node, tuple) or not node:
        return
    kind = node[0]
    if kind in ("return", "break", "continue"):
        raise Unknown("a loop with a jump and a trip count the lanes cannot compute")
    if kind == "name":
        names.add(node[1])
        return
    if kind == "decl":
        for name, is_array, init, _ in node[1]:
            if is_array:
                raise Unknown("an array declared in a loop")
            declared.add(name)
            _walk_loop(init, names, assigned, run, declared)
        return
    if kind in ("assign", "post"):
        target = node[2]
        if target[0] != "name":
            raise Unknown("a store in a loop whose trip count the lanes cannot compute")
        assigned.add(target[1])
        names.add(target[1])
        for part in node[3:]:
            _walk_loop(part, names, assigned, run, declared)
        return
    if kind == "call":
        callee = node[1]
        name = callee[1].split("::")[-1] if callee[0] == "name" else ""
        if not (name in _PURE or name in _BARRIERS or name in run.frames[-1].env):
            raise Unknown("a call in a loop whose trip count the lanes cannot compute")
        for a in node[2]:
            _walk_loop(a, names, assigned, run, declared)
        return
    if kind == "member" and node[1][0] == "name" and node[1][1] == "threadIdx":
        names.add("threadIdx." + node[2])
        if node[2] != "x":
            raise Unknown("threadIdx.%s" % node[2])
        return
    for part in node[1:]:
        if isinstance(part, tuple):
            _walk_loop(part, names, assigned, run, declared)
        elif isinstance(part, list):
            for p in part:
                _walk_loop(p, names, assigned, run, declared)


# -- the simulator -----------------------------------------------------------------------------
def _no_value(name: str, at: int, world: str) -> None:
    return None


def _keep(offset: int) -> bool:
    return False


class Simulator:
    def __init__(
        self,
        code: str,
        functions,
        resolve: Callable[[str, int, str], object] = _no_value,
        dropped: Callable[[int], bool] = _keep,
    ) -> None:
        self.code = code
        self.functions = functions
        self.resolve = resolve
        self.dropped = dropped
        self.terms = Terms()
        self._by_name: Dict[str, List[int]] = {}
        for i, f in enumerate(functions.items):
            self._by_name.setdefault(f.name, []).append(i)
        self._parsed: Dict[int, object] = {}
        self._results: Dict[int, Evaluation] = {}

    def function_named(self, name: str) -> Optional[int]:
        found = self._by_name.get(name)
        if not found:
            return None
        if len(found) > 1:
            raise Unknown(f"`{name}` is overloaded")
        return found[0]

    def parsed(self, index: int):
        cached = self._parsed.get(index)
        if cached is None:
            f = self.functions.items[index]
            try:
                if f.end - f.start > MAX_BODY:
                    raise Unknown("a body too long")
                toks = tokenize(self.code, f.start + 1, f.end)
                kept = [t for t in toks if not self.dropped(t[2])]
                if len(kept) == len(toks) and re.search(
                    r"^[ \t]*#[ \t]*(?:else|elif)", self.code[f.start : f.end], re.M
                ):
                    raise Unknown("both branches of a conditional")
                body = Parser(kept).block()
                cached = (self._params(f.start), body)
            except Unknown as e:
                cached = e
            except (IndexError, RecursionError):
                cached = Unknown("a body the simulator cannot parse")
            self._parsed[index] = cached
        if isinstance(cached, Unknown):
            raise cached
        return cached

    def _params(self, brace: int) -> list:
        code = self.code
        close = code.rfind(")", max(0, brace - 160), brace)
        open_ = opener_before(code, close, "(", ")", close - 4000)
        if close == -1 or open_ == -1:
            raise Unknown("a parameter list")
        text = code[open_ + 1 : close]
        params = []
        depth = 0
        start = 0
        pieces = []
        for k, ch in enumerate(text):
            if ch in "(<[{":
                depth += 1
            elif ch in ")>]}":
                depth -= 1
            elif ch == "," and depth == 0:
                pieces.append((start, text[start:k]))
                start = k + 1
        pieces.append((start, text[start:]))
        for at, piece in pieces:
            piece = piece.strip()
            if not piece or piece == "void":
                continue
            default = None
            if "=" in piece:
                piece, dtext = piece.split("=", 1)
                piece = piece.strip()
                base = open_ + 1 + at + text[at:].find("=") + 1
                default = Parser(tokenize(code, base, base + len(dtext))).assignment()
            while piece.endswith("]") and "[" in piece:  # `float v[4]`: the name before its bounds
                piece = piece[: piece.rindex("[")].rstrip()
            m = _PARAM_NAME.search(piece[-200:])
            if m is None:
                raise Unknown("a parameter without a name")
            params.append((m.group(0), default, open_ + 1 + at))
        return params

    def evaluate(self, index: int) -> Evaluation:
        cached = self._results.get(index)
        if cached is None:
            cached = self._results[index] = self._evaluate(index)
        return cached

    def _run(self, index: int, model: Model) -> Tuple[_Run, _Frame]:
        params, body = self.parsed(index)
        run = _Run(self, model)
        env = {name: [self.terms.node("param", name, i) for i in range(LANES)] for name, _, _ in params}
        frame = _Frame(env, set(env))
        run.frames.append(frame)
        run.run(body, [True] * LANES)
        return run, frame

    def trace(self, index: int, model: Model) -> Tuple[List[list], list]:
        run, frame = self._run(index, model)
        return run.reads, frame.returns

    def _evaluate(self, index: int) -> Evaluation:
        try:
            runs = [self._run(index, model) for model in (WAVE64, WARP32)]
        except Unknown as e:
            return Evaluation(UNKNOWN, reason=str(e))
        except RecursionError:
            return Evaluation(UNKNOWN, reason="nesting too deep")
        (wide, wide_frame), (narrow, narrow_frame) = runs
        shuffles = frozenset(wide.shuffles | narrow.shuffles)
        if wide.reads != narrow.reads:
            return Evaluation(DIFFERENT, shuffles, "the lanes store different values")
        if wide_frame.returns != narrow_frame.returns:
            # the callers read the result: which lanes they read is not known here
            return Evaluation(UNKNOWN, shuffles, "the lanes return different values to callers not seen")
        return Evaluation(SAME, shuffles)
