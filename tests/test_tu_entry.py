"""A header inside its translation units (``rocm_lint.cpp.tu_entry``): the macros, integer type
aliases and constants in effect at its ``#include`` line, per platform, as the meet over every
translation unit that compiles it; no fact where the includers disagree or none is found."""

import os

from rocm_lint.config import Config
from rocm_lint.cpp.tu_entry import MAX_ROOTS, entry_environment
from rocm_lint.engine import check_file
from rocm_lint.workspace import Workspace
from test_cpp_project import _project  # a repository (.git) holding ``files``

INL = """__device__ int count(bool p) {
  Word b = __ballot_sync(0xffffffffffffffffull, p);
  return __popcll(b);
}
"""
DEFS = "#pragma once\n#include <stdint.h>\n"


def _codes(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [(f.line, f.code) for f in result]


def _entry(path):
    return entry_environment(Workspace(), str(path))


def _macro(entry, world, name):
    """(defined, body) of ``name`` at the entry on ``world`` (0 NVIDIA, 1 ROCm), or None: no fact."""
    found = (entry.macros[world] or {}).get(name)
    return None if found is None else found[:2]


# -- typedefs and aliases -----------------------------------------------------------------------


def test_an_inl_gets_the_typedef_its_includer_makes_after_the_defining_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/defs.h": DEFS,
            "src/kern.cu": '#include "defs.h"\ntypedef uint32_t Word;\n#include "impl.inl"\n',
            "src/impl.inl": INL,
        },
    )
    entry = _entry(root / "src/impl.inl")
    assert entry is not None and entry.facts.int_aliases == {"Word": 32}
    assert _codes(root / "src/impl.inl") == [(2, "ROC601")]


def test_a_using_alias_of_unsigned_counts_too(tmp_path):
    root = _project(
        tmp_path,
        {"src/kern.cu": 'using Word = unsigned;\n#include "impl.inl"\n', "src/impl.inl": INL},
    )
    assert _codes(root / "src/impl.inl") == [(2, "ROC601")]


def test_a_typedef_two_includes_up_through_an_alias_of_an_alias(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/types.h": "#pragma once\ntypedef unsigned int u32_t;\n",
            "src/kern.cu": '#include "types.h"\ntypedef u32_t Word;\n#include "warp/mid.cuh"\n',
            "src/warp/mid.cuh": '#pragma once\n#include "detail/impl.inl"\n',
            "src/warp/detail/impl.inl": INL,
        },
    )
    entry = _entry(root / "src/warp/detail/impl.inl")
    assert entry is not None and entry.facts.int_aliases.get("Word") == 32
    assert _codes(root / "src/warp/detail/impl.inl") == [(2, "ROC601")]


def test_a_64_bit_word_and_a_typedef_after_the_include_are_silent(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/wide.cu": 'typedef unsigned long long Word;\n#include "impl.inl"\n',
            "src/late.cu": '#include "late.inl"\ntypedef uint32_t Word;\n',
            "src/impl.inl": INL,
            "src/late.inl": INL,
        },
    )
    assert _entry(root / "src/impl.inl").facts.int_aliases == {"Word": 64}
    assert _codes(root / "src/impl.inl") == []
    assert "Word" not in _entry(root / "src/late.inl").facts.int_aliases
    assert _codes(root / "src/late.inl") == []


def test_two_includers_that_disagree_on_the_width_give_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/a.cu": 'typedef uint32_t Word;\n#include "impl.inl"\n',
            "src/b.cu": 'typedef uint64_t Word;\n#include "impl.inl"\n',
            "src/impl.inl": INL,
        },
    )
    assert "Word" not in _entry(root / "src/impl.inl").facts.int_aliases
    assert _codes(root / "src/impl.inl") == []


def test_a_typedef_only_the_nvidia_build_compiles_is_no_rocm_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/kern.cu": "#ifndef USE_ROCM\ntypedef uint32_t Word;\n#else\ntypedef uint64_t Word;\n"
            '#endif\n#include "impl.inl"\n',
            "src/impl.inl": INL,
        },
    )
    assert _entry(root / "src/impl.inl").facts.int_aliases == {"Word": 64}
    assert _codes(root / "src/impl.inl") == []


def test_a_header_with_no_includer_keeps_the_per_file_view(tmp_path):
    root = _project(
        tmp_path, {"src/impl.inl": INL, "src/other.cu": '#include "defs.h"\n', "src/defs.h": DEFS}
    )
    assert _entry(root / "src/impl.inl") is None
    assert _codes(root / "src/impl.inl") == []  # `Word` unknown, as before


# -- compat headers that drop the mask ----------------------------------------------------------

COMPAT = """#pragma once
#ifdef __HIP_PLATFORM_AMD__
#include <hip/hip_runtime.h>
#define __shfl_xor_sync(mask, var, lane, width) __shfl_xor(var, lane, width)
#endif
"""
REDUCE = """#pragma once
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o, 32);
  return v;
}
"""


def test_a_kernel_header_reached_through_a_mask_dropping_compat_header_is_not_roc602(tmp_path):
    root = _project(
        tmp_path,
        {
            "csrc/compat.h": COMPAT,
            "csrc/ops.cu": '#include "compat.h"\n#include "kernels/reduce.cuh"\n',
            "csrc/kernels/reduce.cuh": REDUCE,
        },
    )
    entry = _entry(root / "csrc/kernels/reduce.cuh")
    assert set(entry.facts.mask_free_sync) == {"__shfl_xor_sync"}
    assert _macro(entry, 0, "__shfl_xor_sync") is None  # never defined on NVIDIA: no fact either way
    assert [c for _, c in _codes(root / "csrc/kernels/reduce.cuh")] == []


def test_the_compat_header_after_the_kernel_header_or_in_one_includer_only_gives_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "csrc/compat.h": COMPAT,
            "csrc/late.cu": '#include "late.cuh"\n#include "compat.h"\n',
            "csrc/late.cuh": REDUCE,
            "csrc/one.cu": '#include "compat.h"\n#include "reduce.cuh"\n',
            "csrc/two.cu": '#include "reduce.cuh"\n',
            "csrc/reduce.cuh": REDUCE,
        },
    )
    assert _codes(root / "csrc/late.cuh") == [(3, "ROC602")]
    assert _entry(root / "csrc/reduce.cuh").facts.mask_free_sync == {}
    assert _codes(root / "csrc/reduce.cuh") == [(3, "ROC602")]


def test_a_compat_macro_that_keeps_the_mask_is_no_fact(tmp_path):
    keeps = COMPAT.replace("__shfl_xor(var, lane, width)", "__shfl_xor_sync(mask, var, lane, width)")
    root = _project(
        tmp_path,
        {
            "csrc/compat.h": keeps,
            "csrc/ops.cu": '#include "compat.h"\n#include "reduce.cuh"\n',
            "csrc/reduce.cuh": REDUCE,
        },
    )
    assert _codes(root / "csrc/reduce.cuh") == [(3, "ROC602")]


# -- macros --------------------------------------------------------------------------------------

PLATFORM = """#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define MYLIB_HIP 1
#else
#define MYLIB_HIP 0
#endif
"""
GATED = """#pragma once
#if !MYLIB_HIP
__device__ float warp_sum(float v) { return v + __shfl_xor_sync(0xffffffff, v, 1, 32); }
#endif
"""


def test_a_platform_macro_the_includer_defines_gates_the_header(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/platform.h": PLATFORM,
            "src/a.cu": '#include "platform.h"\n#include "gated.cuh"\n',
            "src/b.cu": '#include "platform.h"\n#include "mid.h"\n',
            "src/mid.h": '#pragma once\n#include "gated.cuh"\n',
            "src/gated.cuh": GATED,
        },
    )
    entry = _entry(root / "src/gated.cuh")
    assert _macro(entry, 0, "MYLIB_HIP") == (True, "0")
    assert _macro(entry, 1, "MYLIB_HIP") == (True, "1")
    assert _codes(root / "src/gated.cuh") == []  # NVIDIA-only code


def test_a_macro_two_includers_define_differently_gives_no_fact(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/platform.h": PLATFORM,
            "src/a.cu": '#include "platform.h"\n#include "gated.cuh"\n',
            "src/b.cu": '#define MYLIB_HIP 0\n#include "gated.cuh"\n',
            "src/gated.cuh": GATED,
        },
    )
    entry = _entry(root / "src/gated.cuh")
    assert _macro(entry, 0, "MYLIB_HIP") == (True, "0")  # both say 0 on NVIDIA
    assert _macro(entry, 1, "MYLIB_HIP") is None  # 1 and 0 on ROCm
    assert _codes(root / "src/gated.cuh") == [(3, "ROC602")]


def test_an_undef_and_a_guard_are_followed(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/cfg.h": "#ifndef CFG_H\n#define CFG_H\n#define WIDTH 32\n#endif\n",
            "src/a.cu": '#include "cfg.h"\n#undef WIDTH\n#include "cfg.h"\n#include "use.inl"\n',
            "src/use.inl": "#if WIDTH == 32\n#endif\n",
        },
    )
    entry = _entry(root / "src/use.inl")
    assert _macro(entry, 0, "WIDTH") == (False, None)  # the guard kept the second inclusion out
    assert _macro(entry, 1, "WIDTH") == (False, None)


def test_a_header_without_a_guard_included_twice_meets_both_entries(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/a.cu": '#define MODE 1\n#include "body.inl"\n#undef MODE\n#define MODE 2\n#include "body.inl"\n',
            "src/body.inl": "#if MODE == 1\n#endif\n",
        },
    )
    assert _macro(_entry(root / "src/body.inl"), 1, "MODE") is None


def test_too_many_translation_units_give_no_fact(tmp_path):
    files = {f"src/k{i}.cu": 'typedef uint32_t Word;\n#include "impl.inl"\n' for i in range(MAX_ROOTS + 1)}
    root = _project(tmp_path, {**files, "src/impl.inl": INL})
    assert _entry(root / "src/impl.inl") is None


# -- the workspace ---------------------------------------------------------------------------------


def test_the_answer_depends_on_the_includers_it_read_and_an_edit_invalidates_it(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/defs.h": DEFS,
            "src/kern.cu": '#include "defs.h"\ntypedef uint32_t Word;\n#include "impl.inl"\n',
            "src/impl.inl": INL,
        },
    )
    ws = Workspace()
    with ws.recording_reads() as reads:
        assert entry_environment(ws, str(root / "src/impl.inl")).facts.int_aliases == {"Word": 32}
    assert {os.path.basename(p) for p in reads} >= {"kern.cu", "defs.h"}
    with ws.recording_reads() as again:  # cached: the dependencies are noted again
        entry_environment(ws, str(root / "src/impl.inl"))
    assert again == reads
    kern = root / "src/kern.cu"
    kern.write_text('#include "defs.h"\ntypedef uint64_t Word;\n#include "impl.inl"\n')
    os.utime(kern, ns=(1, 1))
    assert ws.revalidate()
    assert entry_environment(ws, str(root / "src/impl.inl")).facts.int_aliases == {"Word": 64}
