"""ROC703-ROC705: CUDA version and arch guards that silently exclude ROCm (``#if CUDA_VERSION``,
``__CUDA_ARCH__`` feature gates, runtime version numbers compared with CUDA's)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple

from rocm_lint.domain import ROCM
from rocm_lint.finding import Applicability
from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, FixAvailability, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.conditions import Node
    from rocm_lint.cpp.scanner import CppUnit


_GUARD = (
    "`#{directive}` on {macros} with no ROCm term: undefined under HIP, so the condition {what}; "
    "say what ROCm should get (test `{gate}` or `HIP_VERSION`)"
)
ROC703 = Rule(
    "ROC703",
    "cuda-version-guard",
    "#if/#elif on CUDA_VERSION/CUDART_VERSION/__CUDACC_VER_MAJOR__ with no ROCm term: the macro is "
    "undefined on ROCm, so the branch is silently dropped (or taken)",
    triggers=("CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_"),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.SOMETIMES,
    languages=CPP_LANGUAGES,
    messages={
        "false": _GUARD.replace("{what}", "is false on ROCm: this branch is silently dropped there"),
        "true": _GUARD.replace("{what}", "is true on ROCm: this branch is silently taken there"),
        "unknown": _GUARD.replace("{what}", "depends on other macros on ROCm"),
    },
)
ROC704 = Rule(
    "ROC704",
    "cuda-runtime-version-compare",
    "cudaRuntimeGetVersion/cudaDriverGetVersion result compared with a number: HIP reports its own, "
    "unrelated version numbers",
    triggers=("cudaRuntimeGetVersion", "cudaDriverGetVersion"),
    languages=CPP_LANGUAGES,
    messages={
        "default": "`{variable}` from `{function}` compared with a CUDA version number: under HIP it "
        "holds HIP's own version (e.g. 60342134 for 6.3), so the comparison silently picks the "
        "wrong branch; compare `HIP_VERSION` on ROCm"
    },
)
ROC705 = Rule(
    "ROC705",
    "cuda-arch-gate",
    "__CUDA_ARCH__ feature gate (#if __CUDA_ARCH__ >= 800) with no ROCm branch: undefined under "
    "HIP-Clang, so the fast path is silently dropped on AMD",
    triggers=("__CUDA_ARCH__",),
    languages=CPP_LANGUAGES,
    messages={
        "default": "`__CUDA_ARCH__` feature gate with no ROCm branch: HIP-Clang never defines "
        "`__CUDA_ARCH__`, so on AMD GPUs this fast path is silently compiled out; add a ROCm "
        "branch (`|| defined(__HIP_DEVICE_COMPILE__)` if the code is portable, or a HIP "
        "implementation)"
    },
)


# -- version and arch guards ---------------------------------------------------------------------
CUDA_VERSION_MACROS = {
    "CUDA_VERSION",
    "CUDART_VERSION",
    "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__",
    "__CUDACC_VER_BUILD__",
}
_COMPARISONS = {"==", "!=", "<", ">", "<=", ">="}


def _compares(node: Optional[Node], names) -> List[str]:
    """Comparison operators in ``node`` with one of ``names`` on a side."""
    from rocm_lint.cpp.conditions import names_in

    if node is None:
        return []
    out = []
    if (
        node.kind == "binary"
        and node.value in _COMPARISONS
        and any(n in names for a in node.args for n in names_in(a))
    ):
        out.append(node.value)
    for a in node.args:
        out.extend(_compares(a, names))
    return out


def _mentions_rocm(unit: CppUnit, node: Optional[Node]) -> bool:
    from rocm_lint.cpp.conditions import names_in

    return any(unit.rocm_macro(n) for n in names_in(node))


def _version_blind(node):
    """``node`` with every CUDA version macro (``CUDA_VERSION``, ``defined(CUDART_VERSION)``) made
    unknown: a ``call`` node, which the #if model evaluates to "cannot tell"."""
    if node.kind in ("name", "defined") and node.value in CUDA_VERSION_MACROS:
        return replace(node, kind="call", args=())
    return replace(node, args=tuple(_version_blind(a) for a in node.args)) if node.args else node


# A statement that stops the function: `TORCH_CHECK(false, ...)`, `AT_ERROR(...)`, `throw`, `abort()`.
_STOP = LazyPattern(
    r"\b(?:TORCH_CHECK|TORCH_INTERNAL_ASSERT|assert)\s*\(\s*(?:false|0)\b|\bAT_ERROR\s*\("
    r"|\bthrow\b|\b(?:std\s*::\s*)?abort\s*\(\s*\)"
)


def _stopped_on_rocm_before(unit: CppUnit, offset: int) -> bool:
    """Does the function holding ``offset`` stop on ROCm before it (MinkowskiEngine's
    `#if defined __HIP_PLATFORM_HCC__` `TORCH_CHECK(false, "not supported on HIP")` `#endif` at the
    top of the body)?  Then nothing after runs on ROCm: a version guard there drops nothing."""
    from rocm_lint.cpp.functions import brace_tree, function_of, innermost_block

    code = unit.code
    tree = unit.memo.get("brace-tree")
    if tree is None:
        tree = unit.memo["brace-tree"] = brace_tree(code)
    found = function_of(code, offset, tree)
    if found is None:
        return False
    _, body, _ = found
    for m in _STOP.finditer(code, body, offset):
        line = unit.line_of(m.start())
        inner = function_of(code, m.start(), tree)
        if (
            unit.pre.rocm_only(line)
            and inner is not None
            and inner[1] == body
            and innermost_block(tree, m.start()) == body
        ):
            return True
    return False


def _decided_without_version(unit: CppUnit, node: Optional[Node]) -> bool:
    """Is the condition false on ROCm whatever the CUDA version macros say (``defined(__CUDA_ARCH__)
    && CUDA_VERSION < 8000``: the architecture test drops it, ROC705's business)?"""
    return node is not None and _rocm_value(unit, _version_blind(node)) is False


def _rocm_value(unit: CppUnit, node: Optional[Node]):
    from rocm_lint.cpp.conditions import Platform, truth

    world = Platform(ROCM, frozenset(unit.config.rocm_macros), frozenset(unit.config.cuda_macros))
    return truth(world.evaluate(node))


@ROC703.source_checker()
def find_cuda_version_guards(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.conditions import names_in
    from rocm_lint.cpp.gates import rocm_condition, rocm_gate_macro

    code = unit.code
    # groups a later #elif of which names ROCm: the chain says what ROCm gets
    # (`#if __CUDACC_VER_MAJOR__ > 9 ... <cuda_fp16.h>` `#elif defined(__HIPCC__)` `<hip/hip_fp16.h>`)
    answered: Dict[int, int] = {}
    for k, d in enumerate(unit.pre.directives):
        if d.name == "elif" and d.condition is not None and _mentions_rocm(unit, d.condition):
            answered[d.group] = k
    for k, d in enumerate(unit.pre.directives):
        if d.name not in ("if", "elif") or d.condition is None or d.reached[1] is False:
            continue  # (an #elif after a branch every ROCm build takes is never evaluated there)
        if (
            not _compares(d.condition, CUDA_VERSION_MACROS)
            or _mentions_rocm(unit, d.condition)
            or _decided_without_version(unit, d.condition)
            or answered.get(d.group, -1) > k
            or _stopped_on_rocm_before(unit, d.start)
        ):
            continue
        macro = rocm_gate_macro(unit)
        edits: Tuple[Tuple[int, int, str], ...] = ()
        value = _rocm_value(unit, d.condition)
        end = d.end
        while end > d.arg_start and code[end - 1] in " \t\r\n\\":
            end -= 1
        begin = d.arg_start
        while begin < end and code[begin] in " \t":
            begin += 1
        cond = unit.text[begin:end]
        complex_ = "||" in code[begin:end] or "?" in code[begin:end]
        if value is False:
            gate = rocm_condition(unit, negate=True)
            new = f"({cond}) && {gate}" if complex_ else f"{cond} && {gate}"
            edits = ((begin, end, new),)
            key = "false"
        elif value is True:
            gate = rocm_condition(unit)
            new = f"({cond}) || {gate}" if "?" in code[begin:end] else f"{cond} || {gate}"
            edits = ((begin, end, new),)
            key = "true"
        else:
            key = "unknown"
        no_fix = (
            ""
            if edits
            else (
                "whether the condition holds on ROCm cannot be told from it (it is not decided "
                "by the version macros alone)"
            )
        )
        if "\n" in unit.text[begin:end]:
            edits = ()  # a condition continued over several lines: shown, not rewritten
            no_fix = (
                "the condition continues over several lines (a backslash): a rewrite would have to "
                "re-flow the continuation, so it is shown, not rewritten"
            )
        names = sorted({n for n in names_in(d.condition) if n in CUDA_VERSION_MACROS})
        yield ROC703.hit(
            d.start,
            d.end,
            ROC703.message(key, directive=d.name, macros=", ".join(names), gate=macro),
            edits=edits,
            fix_message="state the ROCm behaviour explicitly (same result on both platforms)",
            no_fix=no_fix,
        )


def _arch_blind(node, names):
    """``node`` with ``__CUDA_ARCH__`` and the other macros only NVIDIA's compilers define
    (``__CUDACC_VER_MAJOR__``, ``CUDA_VERSION``, ``__NVCC__`` ...) made unknown: what is left
    is the project's own terms."""
    if node.kind in ("name", "defined") and node.value in names:
        return replace(node, kind="call", args=())
    return replace(node, args=tuple(_arch_blind(a, names) for a in node.args)) if node.args else node


def _dropped_whatever_the_arch(unit: CppUnit, d) -> bool:
    """Is the condition false on ROCm whatever ``__CUDA_ARCH__`` says, because another term names
    a macro the file defines only in code ROCm never compiles (ggml's ``defined(GGML_CUDA_USE_PDL)
    && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= HOPPER``, GGML_CUDA_USE_PDL defined under
    ``!defined(GGML_USE_HIP)``)?  The project drops the branch on ROCm on purpose, not the arch
    test.  A CUDA version test (``__CUDACC_VER_MAJOR__ >= 12 && __CUDA_ARCH__ >= 900``) does not
    count: ROC703 leaves such a condition to this rule."""
    from rocm_lint.cpp.conditions import CUDA_ONLY, Platform, truth

    world = Platform(ROCM, frozenset(unit.config.rocm_macros), frozenset(unit.config.cuda_macros))
    for name, defs in unit.pre.macros.items():
        before = [x for x in defs if x.line < d.line]
        if before and all(x.rocm is False and x.cuda is not False for x in before):
            world.local[name] = (False, None)
    return truth(world.evaluate(_arch_blind(d.condition, CUDA_ONLY | {"__CUDACC__"}))) is False


@ROC705.source_checker()
def find_cuda_arch_gates(unit: CppUnit) -> Iterator[Hit]:
    groups: Dict[int, list] = {}
    for d in unit.pre.directives:
        if d.group >= 0 and d.name in ("if", "ifdef", "ifndef", "elif", "else"):
            groups.setdefault(d.group, []).append(d)
    for members in groups.values():
        if any(_mentions_rocm(unit, d.condition) for d in members):
            continue  # the group has a ROCm branch
        if members[0].outer[1] is False:
            continue  # the whole group is NVIDIA-only
        reported = False
        for i, d in enumerate(members):
            ops = _compares(d.condition, {"__CUDA_ARCH__"}) if d.name in ("if", "elif") else []
            dropped = unit.pre.status(d.end_line + 1).rocm is False
            if ops and dropped and any(op in (">=", ">", "==") for op in ops):
                if _dropped_whatever_the_arch(unit, d):
                    continue
                target = d
            elif (
                d.name == "else"
                and dropped
                and any(
                    op in ("<", "<=") for m in members[:i] for op in _compares(m.condition, {"__CUDA_ARCH__"})
                )
            ):
                target = members[0]
            else:
                continue
            if reported:
                break
            reported = True
            yield ROC705.hit(target.start, target.end, ROC705.message())


@ROC704.source_checker()
def find_runtime_version_compares(unit: CppUnit) -> Iterator[Hit]:
    code = unit.code
    if "GetVersion" not in code:
        return
    for m in re.finditer(
        r"\b(cudaRuntimeGetVersion|cudaDriverGetVersion)\s*\(\s*&\s*([A-Za-z_][\w.]*)\s*\)", code
    ):
        name = re.escape(m.group(2))
        end = unit.block_end(m.end())
        pattern = re.compile(
            r"\b" + name + r"\s*(?:[<>]=?|[!=]=)\s*\(?\s*\d|\d\s*\)?\s*(?:[<>]=?|[!=]=)\s*" + name + r"\b"
            r"|\b" + name + r"\s*/\s*\d+\s*(?:[<>]=?|[!=]=)"
        )
        for c in pattern.finditer(code, m.end(), end):
            yield ROC704.hit(c.start(), c.end(), ROC704.message(variable=m.group(2), function=m.group(1)))
