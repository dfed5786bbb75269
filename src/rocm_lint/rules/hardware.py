"""ROC8: hardware-dependent choices made statically: fp8 formats (ROC801; the warp width, ROC802,
is ``rocm_lint.rules.warp_width``)."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from rocm_lint.lazy import LazyPattern
from rocm_lint.python.context import ModuleContext, ModuleFacts
from rocm_lint.rule import PyHit, Rule


def _imports_nvidia_dsl(ctx: ModuleContext) -> bool:
    """CuTe DSL / CUTLASS Python modules only ever run on NVIDIA GPUs (ROC707 covers CUTLASS)."""
    return any(q.split(".", 1)[0] == "cutlass" for q in ctx.imports.names.values())


IMPORTS_NVIDIA_DSL = ModuleFacts("hardware.imports_nvidia_dsl", _imports_nvidia_dsl)

ROC801 = Rule(
    "ROC801",
    "hard-coded-fp8-dtype",
    "fp8 dtype hard-coded: gfx942 (MI300) uses FNUZ fp8, gfx950 (MI350) and gfx12 (RDNA4) use OCP e4m3fn/e5m2",
    triggers=("float8_e4m3fn", "float8_e5m2", "fp8_dtype"),
    rocm_side=True,
    facts=(IMPORTS_NVIDIA_DSL,),
    messages={
        "ocp": "`torch.{dtype}` is the OCP fp8 format, which MI300 (gfx942) does not support in hardware "
        "(it uses FNUZ: hipBLASLt rejects or mis-scales OCP fp8 there): choose the dtype per GPU, "
        'e.g. `torch.float8_e4m3fnuz if "gfx94" in torch.cuda.get_device_properties(0).gcnArchName '
        "else torch.float8_e4m3fn`",
        "fnuz": "`torch.{dtype}` is the FNUZ fp8 format of MI300 (gfx942) only; MI350 (gfx950) and RDNA4 "
        "(gfx12) use OCP `float8_e4m3fn`/`float8_e5m2`: choose by `gcnArchName` (or vLLM's "
        "`current_platform.fp8_dtype()`) instead of by ROCm alone",
        "range": "`{value}` is the OCP e4m3 maximum (`torch.finfo(torch.float8_e4m3fn).max`), used here as "
        "the range of a tensor cast to `{dtype}`: MI300 (gfx942) computes in FNUZ e4m3, whose maximum is "
        "240, so once the dtype is chosen per GPU the values between 240 and 448 overflow (NaN); take "
        "the range from the dtype, `torch.finfo(fp8_dtype).max`",
    },
    runtime=True,  # rocm_lint.runtime.check() reports it live too
)
# -- ROC801: fp8 formats ---------------------------------------------------------------------
_OCP = {"torch.float8_e4m3fn": "float8_e4m3fn", "torch.float8_e5m2": "float8_e5m2"}
_FNUZ = {"torch.float8_e4m3fnuz": "float8_e4m3fnuz", "torch.float8_e5m2fnuz": "float8_e5m2fnuz"}
# Words in a test (if/ternary), a function name or a competing binding that show the fp8
# format is chosen per GPU architecture: ``"gfx94" in props.gcnArchName``,
# ``current_platform.fp8_dtype()``, ``is_fp8_fnuz()``, ``use_fnuz`` ...
_ARCH_WORDS = LazyPattern(r"gcnarchname|gfx\d|fnuz|fp8_dtype\s*\(|\bocp\b|mi300|mi3[05]5|mi350|cdna3", re.I)
# Tests and function names about the format of stored data (a checkpoint serialised as OCP
# e4m3fn is loaded as such on every GPU; vLLM converts it after loading), not a compute choice.
# Storage-only casts (``storage_dtype=``, ``fp8_input_store``, weight-only configs) go through
# PyTorch's software conversion and back, never through fp8 hardware, so they are safe too.
_STORED_FORMAT = LazyPattern(
    r"checkpoint|serializ|create_weights|load_state|state_dict|convert|storage|_store\b|store_|"
    r"weight_?only|layerwise_casting",
    re.I,
)
# Keywords that take a dtype; ``out_dtype=`` of torch._scaled_mm included.  ``elem_dtype=``
# (OCP MX element formats, OCP by specification) is left out.
_DTYPE_KEYWORD = LazyPattern(r"(^|_)dtype$")
_NOT_A_CHOICE_KEYWORDS = {"elem_dtype", "storage_dtype"}
# Path parts and function names of code that never runs on a ROCm GPU (NVIDIA-only
# libraries and architectures, CPU kernels), or whose fp8 type is OCP e4m3 by specification
# on every vendor (NVFP4 block scales, OCP MX formats): no per-GPU choice to make there.
_NOT_ROCM_GPU = LazyPattern(
    r"(?<![a-z0-9])(?:nvfp4|mxfp\d*|mx|mx_formats|fp4|nv|cutlass|cute|cutedsl|deep_?gemm|"
    r"trtllm|flashinfer|marlin|machete|flashmla|hopper|blackwell|sm_?90a?|sm_?100a?|nvidia|"
    r"modelopt|nunchaku|cpu|x86|hpu|xpu|npu|mps|tpu|habana|gaudi|ascend)(?![a-z0-9])"
)


def _words(name: str) -> str:
    """``fusedQuantizeNv`` -> ``fused_quantize_nv`` (so camelCase parts count as words)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _source(node: ast.AST, ctx: ModuleContext) -> str:
    text = ctx.segment(node)
    return text if text is not None else ast.dump(node)


def _is_arch_test(test: ast.AST, ctx: ModuleContext) -> bool:
    return bool(_ARCH_WORDS.search(_source(test, ctx)))


def _dtype_use(node: ast.AST, ctx: ModuleContext) -> Optional[str]:
    """How the fp8 literal ``node`` is used as a dtype ('to', 'keyword', 'binding', 'argument':
    passed positionally to a project function's dtype parameter, 'default': a dtype parameter's
    default a caller relies on), else None.

    Skips ternary arms and ``and``/``or`` operands on the way up.  Comparisons, ``in``
    tests, ``isinstance``, containers (tuples of supported dtypes, dict tables),
    ``torch.finfo(...)`` and bit reinterpretation (``.view(dtype=...)``) are no dtype
    choice and return None.
    """
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            continue
        if isinstance(parent, ast.BoolOp):
            continue
        if isinstance(parent, ast.Call) and child in parent.args:
            func = parent.func
            if isinstance(func, ast.Attribute) and func.attr == "to":
                return "to"
            return "argument" if _dtype_parameter(parent, parent.args.index(child), ctx) else None
        if isinstance(parent, ast.arguments):
            return "default" if _relied_on_dtype_default(child, parent, ctx) else None
        if isinstance(parent, ast.keyword):
            if (
                not parent.arg
                or parent.arg in _NOT_A_CHOICE_KEYWORDS
                or not _DTYPE_KEYWORD.search(parent.arg)
            ):
                return None
            call = ctx.parent_of(parent)
            if isinstance(call, ast.Call):
                func = call.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "view" or _STORED_FORMAT.search(_words(name)):
                    return None  # bit reinterpretation; weight-only / storage configs
            return "keyword"
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and child is parent.value:
            return "binding"
        return None
    return None


def _dtype_parameter(call: ast.Call, index: int, ctx: ModuleContext) -> bool:
    """Is positional argument ``index`` of ``call`` a dtype parameter of the project function
    the call reaches (``quantize(x, torch.float8_e4m3fn)`` with ``def quantize(x, dtype)``)?"""
    fn = ctx.values.callee(call)
    if fn is None or any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return False
    positional = [*getattr(fn.args, "posonlyargs", []), *fn.args.args]
    if index >= len(positional):
        return False
    name = positional[index].arg
    return name not in _NOT_A_CHOICE_KEYWORDS and bool(_DTYPE_KEYWORD.search(name))


def _relied_on_dtype_default(default: ast.AST, args: ast.arguments, ctx: ModuleContext) -> bool:
    """``def f(x, dtype=torch.float8_e4m3fn)``: a dtype parameter's default that a caller may
    rely on (a call in the module leaves it out, or callers outside the module may)."""
    positional = [*getattr(args, "posonlyargs", []), *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    name = next((a.arg for a, d in pairs if d is default), None)
    fn = ctx.parent_of(args)
    if name is None or name in _NOT_A_CHOICE_KEYWORDS or not _DTYPE_KEYWORD.search(name):
        return False
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.values.default_relied_on(fn, name)


def _arch_chosen(node: ast.AST, ctx: ModuleContext) -> bool:
    """Is the statement holding ``node`` under an if/ternary on the GPU architecture, after
    an earlier arch test in an enclosing block (``if is_fp8_fnuz(): return ...``), or in a
    function about one format (``def normalize_e4m3fn_to_e4m3fnuz``, ``def nvfp4_quantize``)?"""
    for child, parent in ctx.ancestors(node):
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            if _is_arch_test(parent.test, ctx) or _STORED_FORMAT.search(_source(parent.test, ctx)):
                return True
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and child in block:
                    for earlier in block[: block.index(child)]:
                        if isinstance(earlier, ast.If) and _is_arch_test(earlier.test, ctx):
                            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
            _ARCH_WORDS.search(parent.name)
            or _STORED_FORMAT.search(parent.name)
            or _NOT_ROCM_GPU.search(_words(parent.name))
        ):
            return True
    return False


def _rebound_per_arch(stmt: ast.AST, ctx: ModuleContext) -> bool:
    """``e4m3 = torch.float8_e4m3fn`` with another binding of the same name elsewhere that
    picks per architecture (``e4m3 = torch.float8_e4m3fnuz`` under ``if is_rocm:``), or a
    target that is itself about the choice (``platform.fp8_dtype.return_value = ...``)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        text = ctx.segment(target)
        if text and re.search(r"fp8_dtype\.|fnuz", text):
            return True
        for value in ctx.bound_values(target):
            if value is stmt.value:
                continue
            text = ctx.segment(value)
            if text and _ARCH_WORDS.search(text):
                return True
    return False


def _fnuz_aware(ctx: ModuleContext) -> bool:
    """Does the module's code (not its comments) handle the FNUZ formats or the per-arch
    choice itself?  Then its OCP literals are deliberate: checkpoint formats that are
    normalised later (vLLM's ``normalize_e4m3fn_to_e4m3fnuz``), or an OCP-only path."""
    return ctx.memo("roc801.fnuz_aware", lambda: _handles_fnuz(ctx))


def _handles_fnuz(ctx: ModuleContext) -> bool:
    for sub in ast.walk(ctx.tree):
        name = None
        if isinstance(sub, ast.Attribute):
            # torch.float8_e4m3fnuz itself says "ROCm", not "which ROCm GPU"
            name = sub.attr if not sub.attr.startswith("float8_") else None
        elif isinstance(sub, ast.Name):
            name = sub.id
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = sub.name
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) < 40:
            name = sub.value if re.search(r"gfx9[45]", sub.value) else None
        if name and (
            name == "fp8_dtype"
            and isinstance(sub, ast.Attribute)
            or re.search(r"fnuz|gcnarchname|gfx9[45]", name, re.I)
        ):
            return True
    return False


def _not_rocm_gpu_path(ctx: ModuleContext) -> bool:
    parts = re.split(r"[/\\]", ctx.path)
    if parts[-1].startswith("convert"):  # offline checkpoint conversion scripts
        return True
    return any(_NOT_ROCM_GPU.search(_words(part)) for part in parts[-4:])


_FP8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _never_read(stmt: ast.AST, ctx: ModuleContext) -> bool:
    """Is a function-local name bound to the dtype never read in its function (`dtype =
    torch.float8_e4m3fn` left over after its use was commented out)?  It picks no format."""
    function = ctx.function
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if function is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return False
    name = targets[0].id
    return not any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Store)
        for n in ast.walk(function)
    )


@ROC801.checker(ast.Attribute, ast.Name)
def hard_coded_fp8_dtype(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    if (node.attr if isinstance(node, ast.Attribute) else node.id) not in _FP8_NAMES:
        return
    qual = ctx.qualname(node)
    ocp, fnuz = _OCP.get(qual), _FNUZ.get(qual)
    if ocp is None and fnuz is None:
        return
    use = _dtype_use(node, ctx)
    if use is None:
        return
    if ctx.facts(IMPORTS_NVIDIA_DSL) or _not_rocm_gpu_path(ctx) or _arch_chosen(node, ctx):
        return
    if ocp is not None and _fnuz_aware(ctx):
        return
    if use == "binding":
        stmt = next(p for c, p in ctx.ancestors(node) if isinstance(p, (ast.Assign, ast.AnnAssign)))
        if _rebound_per_arch(stmt, ctx) or _never_read(stmt, ctx):
            return
    if ocp is not None:
        yield PyHit(node, ROC801.message("ocp", dtype=ocp))
    else:
        yield PyHit(node, ROC801.message("fnuz", dtype=fnuz))


# -- ROC801: the OCP e4m3 range (448) written next to an e4m3 cast -----------------------------------
_E4M3 = {"torch.float8_e4m3fn", "torch.float8_e4m3fnuz"}
OCP_E4M3_MAX = 448


def _e4m3_dtype(node: ast.AST, ctx: ModuleContext, depth: int = 0) -> Optional[str]:
    """The e4m3 dtype an expression denotes (a literal, a name bound once to one, a ternary of two,
    ``current_platform.fp8_dtype()``), or None."""
    node = ctx.resolve(node) if depth < 3 else node
    qual = ctx.qualname(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
    if qual in _E4M3:
        return qual.split(".", 1)[1]
    if isinstance(node, ast.IfExp) and depth < 3:
        arms = {_e4m3_dtype(node.body, ctx, depth + 1), _e4m3_dtype(node.orelse, ctx, depth + 1)}
        known = {a for a in arms if a is not None}
        if len(known) == len(arms):
            return " / ".join(sorted(known))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fp8_dtype":
        return "current_platform.fp8_dtype()"
    return None


def _is_ocp_max(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and node.value == OCP_E4M3_MAX
    )


_CLAMPS = {"clamp", "clamp_", "clip", "clip_", "clamp_max", "clamp_min", "minimum", "maximum", "fmin", "fmax"}


def _range_position(child: ast.AST, parent: ast.AST) -> bool:
    """Is ``child`` a range where it stands: a bound of a clamp (`x.clamp(-448, 448)`,
    `torch.clamp(x, max=448)`) or a factor of a scale (`448.0 / amax`, `x * 448`)?  A shape, a
    padding or an index is not."""
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div)):
        return True
    if isinstance(parent, ast.keyword):
        return parent.arg in ("min", "max")
    if isinstance(parent, ast.Call) and child in parent.args:
        func = parent.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _CLAMPS
    return False


def _range_literals(node: ast.AST, ctx: ModuleContext, depth: int = 0) -> Iterator[ast.AST]:
    """The 448 literals an expression uses as a range (:func:`_range_position`): its own, and
    those of names bound once that it reads in a range position (``FP8_MAX = 448.0``), or whose
    value computes a range (``scale = 448.0 / amax``), two levels; a ternary on the GPU architecture
    (`448.0 if ocp else 240.0`) has chosen already."""
    if isinstance(node, ast.Name) and depth < 2:  # `clamped.to(fp8)`: what `clamped` holds
        bound = ctx.single_bindings.get(node.id)
        if bound is not None and not _is_ocp_max(bound):
            yield from _range_literals(bound, ctx, depth + 1)
        return
    for sub in ast.walk(node):
        if isinstance(sub, ast.IfExp) and _is_arch_test(sub.test, ctx):
            return
    for parent in ast.walk(node):
        for child in ast.iter_child_nodes(parent):
            if _is_ocp_max(child):
                if _range_position(child, parent):
                    yield child
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and depth < 2:
                bound = ctx.single_bindings.get(child.id)
                if bound is None:
                    continue
                if _is_ocp_max(bound):
                    if _range_position(child, parent):
                        yield bound
                else:
                    yield from _range_literals(bound, ctx, depth + 1)


@ROC801.checker(ast.Call)
def ocp_range_next_to_e4m3_cast(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "to"):
        return
    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "dtype"), None)
    dtype = _e4m3_dtype(arg, ctx) if arg is not None else None
    if dtype is None:
        return
    if ctx.facts(IMPORTS_NVIDIA_DSL) or _not_rocm_gpu_path(ctx):
        return
    if _arch_chosen(node, ctx) and "fnuz" not in dtype:
        return  # the OCP side of a per-GPU choice: 448 is its range (FNUZ's is 240, wrong anywhere)
    literal = next(_range_literals(func.value, ctx), None)
    if literal is None:
        return
    reported = ctx.memo("roc801.range_reported", set)
    if id(literal) in reported:
        return  # one constant (`FP8_MAX = 448.0`) read by several casts: once
    reported.add(id(literal))
    value = ctx.segment(literal) or "448"
    yield PyHit(literal, ROC801.message("range", value=value.lstrip("-"), dtype=dtype))
