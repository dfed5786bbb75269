"""ROC711: device limits that differ on AMD GPUs: dynamic shared memory raised above the 64 KiB of
LDS a workgroup has on MI200/MI300 (``cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
N)`` with N evaluated: a literal, a macro or constant of the file or its project headers, a local
assigned once, ``sizeof`` arithmetic; silent where N is not decided)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, Optional

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule

if TYPE_CHECKING:
    from rocm_lint.cpp.scanner import CppUnit

LDS_BYTES = 64 * 1024  # LDS per workgroup on gfx90a (MI200) and gfx942 (MI300); gfx950 has 160 KiB

ROC711 = Rule(
    "ROC711",
    "dynamic-shared-memory-above-lds",
    "dynamic shared memory raised above 64 KiB (`cudaFuncSetAttribute(..., "
    "cudaFuncAttributeMaxDynamicSharedMemorySize, N)` with N > 65536): MI200/MI300 give a workgroup "
    "64 KiB of LDS, so the attribute call and the launch fail on ROCm",
    triggers=("MaxDynamicSharedMemorySize",),
    languages=CPP_LANGUAGES,
    messages={
        "default": "`{call}` raises the kernel's dynamic shared memory to {bytes} bytes ({kib} KiB): an AMD "
        "workgroup has 64 KiB of LDS on MI200/MI300 (gfx90a, gfx942; 160 KiB on gfx950), so on ROCm the "
        "attribute call fails (`hipErrorInvalidValue`) and a launch asking that much fails with "
        "`invalid argument`; give ROCm a smaller tile (at most 64 KiB with the kernel's static "
        "`__shared__` memory), or pick the size from `cudaDevAttrMaxSharedMemoryPerBlockOptin` at run time",
    },
)

_SET_ATTRIBUTE = LazyPattern(r"cudaFuncSetAttribute|cuFuncSetAttribute")
_ATTRIBUTE = LazyPattern(
    r"(?:cudaFuncAttribute::)?cudaFuncAttributeMaxDynamicSharedMemorySize|CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"
)
# A file that asks the device how much it may opt into has a size for smaller devices.
_LIMIT_QUERY = LazyPattern(
    r"MaxSharedMemoryPerBlockOptin|sharedMemPerBlockOptin|MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"
    r"|cudaOccupancyAvailableDynamicSMemPerBlock"
)
_TYPE = r"(?:(?:const|constexpr|static|unsigned|signed|long|short)\s+)*(?:int|size_t|unsigned|long|int32_t|uint32_t|int64_t|uint64_t|auto)"


def _local_value(code: str, name: str, start: int, end: int) -> Optional[str]:
    """The initializer of a local ``int name = expr;`` in ``code[start:end]`` (the function's body
    up to the call) when that is the name's one assignment in the body and nothing takes its
    address or steps it; else None."""
    body = code[start:end]
    word = re.escape(name)
    decls = list(re.finditer(r"\b%s\s+%s\s*=\s*([^;{}]+);" % (_TYPE, word), body))
    if len(decls) != 1:
        return None
    writes = re.findall(
        r"(?<![\w.>:])%s\s*(?:[-+*/%%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*%s\b|\b%s\s*(?:\+\+|--)|&\s*%s\b"
        % (word, word, word, word),
        body,
    )
    return decls[0].group(1) if len(writes) == 1 else None


@ROC711.source_checker()
def dynamic_shared_memory_above_lds(unit: CppUnit) -> Iterator[Hit]:
    from rocm_lint.cpp.functions import brace_tree, function_of
    from rocm_lint.cpp.scanner import calls
    from rocm_lint.cpp.values import int_expression

    code = unit.code
    if _LIMIT_QUERY.search(code):
        return
    tree = None
    for m, paren in calls(unit, _SET_ATTRIBUTE):
        close = unit.matching(paren)  # just past `)`
        attr = _ATTRIBUTE.search(code, paren, close)
        if attr is None:
            continue
        comma = code.find(",", attr.end(), close)
        if comma == -1:
            continue
        value = code[comma + 1 : close - 1].strip()
        if not value or "," in value:
            continue
        if tree is None:
            tree = brace_tree(code)
        fn = function_of(code, m.start(), tree)

        def lookup(name: str, at: int = m.start(), fn=fn) -> Optional[str]:
            expanded = unit.expand(name, at)
            if expanded != name:
                return expanded
            if fn is not None and re.fullmatch(r"[A-Za-z_]\w*", name):
                return _local_value(code, name, fn[1] + 1, at)
            return None

        n = int_expression(value, lookup)
        if n is None or n <= LDS_BYTES:
            continue
        call = re.sub(r"\s+", " ", f"{m.group(0)}(..., {attr.group(0).split('::')[-1]}, {value})")
        if len(call) > 120:
            call = call[:117] + "..."
        kib = f"{n / 1024:.1f}".rstrip("0").rstrip(".")
        yield ROC711.hit(m.start(), close, ROC711.message(call=call, bytes=n, kib=kib))
