"""ROC709/ROC710: CUDA runtime features HIP lacks or runs differently (dynamic parallelism:
kernels launched from device code; managed memory, which migrates pages on ROCm only with
XNACK)."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Iterator, List, Tuple

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

ROC709 = Rule(
    "ROC709",
    "device-side-kernel-launch",
    "kernel launched from device code (CUDA dynamic parallelism: `<<<...>>>` or cudaDeviceSynchronize "
    "inside a __global__/__device__ function): HIP has no device-side launch, so it does not compile for ROCm",
    triggers=("<<<", "cudaDeviceSynchronize", "cudaLaunchDevice", "cudaGetParameterBuffer"),
    languages=CPP_LANGUAGES,
    messages={
        "launch": "kernel `{kernel}` launched from inside {where} `{function}` (CUDA dynamic parallelism): HIP "
        "does not support device-side kernel launches, so this does not compile for ROCm; launch the "
        "child work from the host (a second kernel on the same stream) or fold it into the parent",
        "runtime": "`{call}` in {where} `{function}` is CUDA's device runtime (dynamic parallelism, `-rdc=true` "
        "with cudadevrt): HIP has no device runtime, so this does not compile for ROCm; synchronise "
        "and launch from the host instead",
    },
)
ROC710 = Rule(
    "ROC710",
    "managed-memory-without-xnack",
    "CUDA managed memory (cudaMallocManaged, __managed__, cudaMemPrefetchAsync, cudaMemAdvise) in a file "
    "that never checks XNACK: on ROCm pages migrate only with HSA_XNACK=1 on MI200/MI300-class GPUs",
    triggers=("cudaMallocManaged", "__managed__", "cudaMemPrefetchAsync", "cudaMemAdvise"),
    languages=CPP_LANGUAGES,
    messages={
        "alloc": "`{api}` is managed memory: on ROCm it migrates pages on demand only on GPUs with XNACK "
        "(MI200/MI300 class) in a process run with `HSA_XNACK=1` on an HMM-enabled kernel; otherwise "
        "it is pinned host memory that every GPU access reads over the host link (no migration, no "
        "oversubscription); run with `HSA_XNACK=1` and check "
        "`hipDeviceAttributeConcurrentManagedAccess`, or use device memory and explicit copies on ROCm",
        "hint": "`{api}` steers page migration of managed memory: on ROCm pages migrate only with XNACK "
        "enabled (`HSA_XNACK=1` on MI200/MI300-class GPUs with an HMM-enabled kernel); without it the "
        "managed buffer stays in pinned host memory and this hint buys nothing; check "
        "`hipDeviceAttributeConcurrentManagedAccess` before relying on migration",
    },
    runtime=True,  # rocm_lint.runtime.check() reports XNACK off live
)

# A function with device code: its qualifier, then up to its body's `{` (a `;` first: a
# declaration; a `=` first: a `__device__` variable).
_QUALIFIER = LazyPattern(r"__(global|device)__\b")
_HEADER_STOP = LazyPattern(r"[;{}=(]")
_AFTER_PARENS = LazyPattern(r"[;{}(]")
# `kernel<<<`, `ns::kernel<T, 4><<<` (the launched name, template arguments allowed)
_LAUNCH = LazyPattern(r"<<<")
_PASS_TEST = LazyPattern(r"__CUDA_ARCH__|__HIP_DEVICE_COMPILE__")
_DEVICE_RUNTIME = LazyPattern(r"(cudaDeviceSynchronize|cudaLaunchDevice|cudaGetParameterBuffer)\s*\(")

_MANAGED_ALLOC = LazyPattern(r"(cudaMallocManaged)\s*\(|(__managed__)\b")
_MANAGED_HINT = LazyPattern(r"(cudaMemPrefetchAsync|cudaMemAdvise)\s*\(")
# A file that asks whether managed memory migrates (XNACK, the concurrent-access or pageable-access
# attributes, true on ROCm only with XNACK on) has chosen what to do without it.
_MIGRATION_CHECK = LazyPattern(r"HSA_XNACK|[xX]nack|XNACK|[cC]oncurrentManagedAccess|[pP]ageableMemoryAccess")


def _directive_spans(unit: CppUnit) -> List[Tuple[int, int]]:
    spans = unit.memo.get("directive_spans")
    if spans is None:
        spans = unit.memo["directive_spans"] = sorted((d.start, d.end) for d in unit.pre.directives)
    return spans  # type: ignore[return-value]


def _in_directive(unit: CppUnit, offset: int) -> bool:
    spans = _directive_spans(unit)
    i = bisect_right(spans, (offset, len(unit.code) + 1)) - 1
    return i >= 0 and spans[i][0] <= offset <= spans[i][1]


def _name_before(code: str, end: int, floor: int, template: bool = False) -> Tuple[int, str]:
    """(start, name) of the identifier that ends ``code[floor:end]`` (a qualified name with
    ``::``; with ``template``, after skipping one `<...>` argument list), or (-1, "")."""
    from rocm_lint.cpp.functions import opener_before

    i = end
    while i > floor and code[i - 1].isspace():
        i -= 1
    if template and i > floor and code[i - 1] == ">":
        i = opener_before(code, i - 1, "<", ">", floor)
        if i == -1:
            return -1, ""
        while i > floor and code[i - 1].isspace():
            i -= 1
    stop = i
    while i > floor and (code[i - 1].isalnum() or code[i - 1] in "_:"):
        i -= 1
    name = code[i:stop].strip(":")
    if not name or not (name[0].isalpha() or name[0] == "_"):
        return -1, ""
    return i, name


def _identifier_at(code: str, start: int, end: int) -> bool:
    """Is code[start:end] a whole identifier (not part of a longer name)?"""
    before = code[start - 1] if start else " "
    after = code[end] if end < len(code) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")


def _splits_passes(unit: CppUnit, start: int, end: int) -> bool:
    """Does a directive between ``start`` and ``end`` test which compiler pass is running?"""
    spans = _directive_spans(unit)
    i = bisect_right(spans, (start, -1))
    while i < len(spans) and spans[i][0] < end:
        if _PASS_TEST.search(unit.text, spans[i][0], spans[i][1] + 1):
            return True
        i += 1
    return False


def device_functions(unit: CppUnit) -> List[Tuple[int, int, str, str]]:
    """(body start, body end, qualifier, name) of every function defined `__global__` or
    `__device__` (also `__host__ __device__` and `__device__` lambdas), outside directives.
    Each body is the span between its braces; a device lambda inside a body is part of it.
    A `__host__ __device__` function whose body tests `__CUDA_ARCH__` (or HIP's
    `__HIP_DEVICE_COMPILE__`) splits its host and device passes itself: it is left out."""
    cached = unit.memo.get("device_functions")
    if cached is not None:
        return cached  # type: ignore[return-value]
    code = unit.code
    out: List[Tuple[int, int, str, str]] = []
    covered_to = -1
    for m in _QUALIFIER.finditer(code):
        if (
            m.start() < covered_to
            or not _identifier_at(code, m.start(), m.end())
            or _in_directive(unit, m.start())
        ):
            continue
        stop = _HEADER_STOP.search(code, m.end())
        if stop is None or stop.group() != "(":
            continue  # a declaration, a variable, or nothing
        _, name = _name_before(code, stop.start(), m.end())
        name = name or "lambda"
        pos = stop.start()
        body = -1
        for _ in range(8):  # `__launch_bounds__(256) k(...)`, `noexcept(...)`: a few paren groups
            close = unit.matching(pos)
            nxt = _AFTER_PARENS.search(code, close)
            if nxt is None or nxt.group() in ";}":
                break
            if nxt.group() == "{":
                body = nxt.start()
                break
            if nxt.group() == "(":  # `__launch_bounds__(256) kernel(`: the name comes after
                at, later = _name_before(code, nxt.start(), close)
                if at >= 0 and later not in ("noexcept", "throw", "decltype"):
                    name = later
            pos = nxt.start()
        if body < 0:
            continue
        end = unit.matching(body)
        if "__host__" in code[unit.statement_start(m.start()) : body] and _splits_passes(unit, body, end):
            covered_to = end
            continue
        out.append((body, end, m.group(1), name))
        covered_to = end  # a device lambda inside is part of this body
    unit.memo["device_functions"] = out
    return out


@ROC709.source_checker()
def find_device_side_launches(unit: CppUnit) -> Iterator[Hit]:
    code = unit.code
    if "<<<" not in code and not _DEVICE_RUNTIME.search(code):
        return
    for body, end, qualifier, name in device_functions(unit):
        where = "kernel" if qualifier == "global" else "device function"
        for m in _LAUNCH.finditer(code, body, end):
            at, kernel = _name_before(code, m.start(), max(body, m.start() - 400), template=True)
            if at < 0:
                continue
            yield ROC709.hit(at, m.end(), ROC709.message("launch", kernel=kernel, where=where, function=name))
        for m in _DEVICE_RUNTIME.finditer(code, body, end):
            if not _identifier_at(code, m.start(), m.start(1) + len(m.group(1))):
                continue
            yield ROC709.hit(
                m.start(), m.end(1), ROC709.message("runtime", call=m.group(1), where=where, function=name)
            )


@ROC710.source_checker()
def find_managed_memory(unit: CppUnit) -> Iterator[Hit]:
    code = unit.code
    if not any(t in code for t in ROC710.triggers) or unit.memo.setdefault(
        "ROC710.checked", bool(_MIGRATION_CHECK.search(unit.text))
    ):
        return
    for m in _MANAGED_ALLOC.finditer(code):
        api = m.group(1) or m.group(2)
        start = m.start(1) if m.group(1) else m.start(2)
        if _identifier_at(code, start, start + len(api)) and not _in_directive(unit, start):
            yield ROC710.hit(start, start + len(api), ROC710.message("alloc", api=api))
    for m in _MANAGED_HINT.finditer(code):
        if _identifier_at(code, m.start(), m.end(1)) and not _in_directive(unit, m.start()):
            yield ROC710.hit(m.start(), m.end(1), ROC710.message("hint", api=m.group(1)))
