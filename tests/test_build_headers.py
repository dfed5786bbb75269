"""A header's platform from the files that include it (``rocm_lint.build.headers``): a header
included only by sources the ROCm build never compiles, or only on lines no ROCm build reaches,
is NVIDIA-only; anything unknown leaves it to port."""

import os
import re
from dataclasses import replace

import pytest

from rocm_lint.build import context as build_context
from rocm_lint.build.context import CUDA
from rocm_lint.build.headers import header_platform as _header_platform
from rocm_lint.config import Config
from rocm_lint.workspace import Workspace
from rocm_lint.engine import check_file
from rocm_lint.engine_paths import check_paths
from test_cpp_project import _project  # a repository (.git) holding ``files``


_WS = [Workspace()]  # the workspace the answers below come from; a new one forgets every cache


def header_platform(path):
    return _header_platform(_WS[0], path)


def _forget():
    _WS[0] = Workspace()


def recording_reads():
    return _WS[0].recording_reads()


@pytest.fixture(autouse=True)
def _fresh_caches():
    _forget()
    yield
    _forget()


# the ROCm build compiles csrc/common.cu and csrc/rocm/*; only the CUDA one csrc/nv_only.cu
CMAKE = """cmake_minimum_required(VERSION 3.21)
project(ext LANGUAGES CXX)
set(EXT_SRC "csrc/common.cu")
if(GPU_LANG STREQUAL "CUDA")
  list(APPEND EXT_SRC "csrc/nv_only.cu" "csrc/nv_two.cu")
  add_compile_definitions(EXT_HAS_MMA)
elseif(GPU_LANG STREQUAL "HIP")
  list(APPEND EXT_SRC "csrc/rocm/skinny.cu")
endif()
add_library(ext ${EXT_SRC})
"""
# a header with inline PTX (ROC701 on line 3)
MMA = '#pragma once\n__device__ inline unsigned lane() {\n  unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));\n  return r;\n}\n'


def _codes(path, config=None):
    result = check_file(str(path), config or Config())
    assert isinstance(result, list), result
    return [(f.line, f.code, f.scope) for f in result]


def _tree(tmp_path, **sources):
    files = {"CMakeLists.txt": CMAKE, "csrc/mma.cuh": MMA, "csrc/common.cu": "__global__ void k() {}\n"}
    files.update({f"csrc/{name.replace('__', '/')}.cu": text for name, text in sources.items()})
    return _project(tmp_path, files)


def test_a_header_only_an_nvidia_only_source_includes_is_silent_and_reported_apart(tmp_path):
    root = _tree(tmp_path, nv_only='#include "mma.cuh"\n')
    header = root / "csrc/mma.cuh"
    assert build_context.file_platform(_WS[0], str(header)) is None  # no build file names it
    assert header_platform(str(header)) == CUDA
    assert _codes(header) == []
    asked = replace(Config(), report_nvidia_only_sources=True)
    assert _codes(header, asked) == [(3, "ROC701", "nvidia-only")]


def test_an_include_under_a_macro_only_the_cuda_build_defines_is_nvidia_only(tmp_path):
    guarded = '#if defined(EXT_HAS_MMA)\n#include "mma.cuh"\n#endif\n__global__ void k() {}\n'
    root = _tree(tmp_path, common=guarded, nv_two='#include "mma.cuh"\n')
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA
    assert _codes(root / "csrc/mma.cuh") == []


def test_the_same_header_also_included_unguarded_from_a_rocm_source_is_reported(tmp_path):
    guarded = '#if defined(EXT_HAS_MMA)\n#include "mma.cuh"\n#endif\n'
    root = _tree(
        tmp_path, nv_only='#include "mma.cuh"\n', common=guarded, rocm__skinny='#include "../mma.cuh"\n'
    )
    assert header_platform(str(root / "csrc/mma.cuh")) is None
    assert _codes(root / "csrc/mma.cuh") == [(3, "ROC701", None)]
    # the ROCm-only source gone: the one the ROCm build compiles includes it only under the macro
    (root / "csrc/rocm/skinny.cu").write_text("__global__ void k() {}\n")
    _forget()
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA


@pytest.mark.parametrize(
    "common",
    [
        '#define MMA_HEADER "mma.cuh"\n#include MMA_HEADER\n',  # through a macro: who knows where
        '#include "sub/../mma.cuh"\n',  # nothing there: cannot tell which mma.cuh it means
        '#include "mma.cuh"\n',  # a source the ROCm build may compile
    ],
)
def test_unknown_includes_leave_the_header_to_port(tmp_path, common):
    root = _tree(tmp_path, nv_only='#include "mma.cuh"\n', common=common)
    assert header_platform(str(root / "csrc/mma.cuh")) is None
    assert _codes(root / "csrc/mma.cuh") == [(3, "ROC701", None)]


def test_a_header_nobody_includes_or_in_a_project_without_a_rocm_build_is_reported(tmp_path):
    root = _tree(tmp_path)  # nothing includes mma.cuh: another project may
    assert header_platform(str(root / "csrc/mma.cuh")) is None
    other = tmp_path / "pure"
    _project(
        other,
        {
            "CMakeLists.txt": 'project(p LANGUAGES CXX CUDA)\nif(GPU_LANG STREQUAL "CUDA")\n'
            "  add_library(p csrc/nv.cu)\nendif()\n",
            "csrc/nv.cu": '#include "mma.cuh"\n',
            "csrc/mma.cuh": MMA,
        },
    )
    assert _codes(other / "csrc/mma.cuh") == [(3, "ROC701", None)]  # all of it is to port


def test_a_header_an_nvidia_only_header_includes_is_nvidia_only_too(tmp_path):
    root = _tree(tmp_path, nv_only='#include "kernels/outer.cuh"\n')
    (root / "csrc/kernels").mkdir()
    (root / "csrc/kernels/outer.cuh").write_text('#pragma once\n#include "middle.cuh"\n')
    (root / "csrc/kernels/middle.cuh").write_text("#pragma once\n#include <mma.cuh>\n")
    assert header_platform(str(root / "csrc/kernels/outer.cuh")) == CUDA
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA  # <mma.cuh>: by the end of its path
    assert _codes(root / "csrc/mma.cuh") == []
    # the chain's top also included by a source the ROCm build compiles: all of it is to port
    (root / "csrc/common.cu").write_text('#include "kernels/outer.cuh"\n')
    _forget()
    assert header_platform(str(root / "csrc/mma.cuh")) is None


def test_an_include_cycle_ends(tmp_path):
    root = _tree(tmp_path, nv_only='#include "a.cuh"\n')
    (root / "csrc/a.cuh").write_text('#pragma once\n#include "b.cuh"\n')
    (root / "csrc/b.cuh").write_text('#pragma once\n#include "a.cuh"\n#include "mma.cuh"\n')
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA
    assert header_platform(str(root / "csrc/a.cuh")) == CUDA
    # a cycle no source enters: nothing known compiles it, no fact
    (root / "csrc/nv_only.cu").write_text("__global__ void k() {}\n")
    _forget()
    assert header_platform(str(root / "csrc/mma.cuh")) is None


def test_a_header_of_the_same_name_elsewhere_is_not_this_one(tmp_path):
    root = _tree(tmp_path, nv_only='#include "mma.cuh"\n', rocm__skinny='#include "mma.cuh"\n')
    (root / "csrc/rocm/mma.cuh").write_text("#pragma once\n")  # skinny.cu's own mma.cuh
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA
    assert header_platform(str(root / "csrc/rocm/mma.cuh")) is None


def test_the_includers_are_the_answers_dependencies(tmp_path):
    guarded = '#ifndef USE_ROCM\n#include "mma.cuh"\n#endif\n'
    root = _tree(tmp_path, nv_only='#include "mma.cuh"\n', common=guarded)
    with recording_reads() as reads:
        assert header_platform(str(root / "csrc/mma.cuh")) == CUDA
    with recording_reads() as again:  # answered from memory: noted all the same
        header_platform(str(root / "csrc/mma.cuh"))
    for name in ("csrc/common.cu", "csrc/nv_only.cu", "CMakeLists.txt"):
        assert str(root / name) in reads and str(root / name) in again, name


def _run(project, cache):
    cwd = os.getcwd()
    os.chdir(project)
    try:
        return check_paths(["."], Config(), jobs=1, cache_dir=str(cache))
    finally:
        os.chdir(cwd)


def test_an_edited_includer_rechecks_the_header_in_the_content_cache(tmp_path):
    root = _tree(
        tmp_path / "proj",
        nv_only='#include "mma.cuh"\n',
        common='#ifndef USE_ROCM\n#include "mma.cuh"\n#endif\n',
    )
    cache = tmp_path / "cache"
    assert [f.path for f in _run(root, cache).findings] == []
    _forget()  # a new run is a new process
    (root / "csrc/common.cu").write_text('#include "mma.cuh"\n')
    _forget()
    found = _run(root, cache).findings
    assert [(os.path.basename(f.path), f.line, f.code) for f in found] == [("mma.cuh", 3, "ROC701")]


def test_an_include_no_build_compiles_or_an_includer_whose_guard_a_header_defines_is_no_fact(tmp_path):
    # `#if 0`: compiled by neither build, no NVIDIA-only include
    root = _tree(tmp_path, nv_only='#include "mma.cuh"\n', common='#if 0\n#include "mma.cuh"\n#endif\n')
    assert header_platform(str(root / "csrc/mma.cuh")) is None
    # outer.cuh includes mma.cuh under `#ifndef USE_ROCM`; its other include includes outer.cuh
    # back, defining outer's guard: the first inclusion still reads its lines as they are
    (root / "csrc/common.cu").write_text('#include "outer.cuh"\n')
    (root / "csrc/outer.cuh").write_text(
        '#ifndef OUTER_CUH_\n#define OUTER_CUH_\n#include "back.h"\n'
        '#ifndef USE_ROCM\n#include "mma.cuh"\n#endif\n#endif\n'
    )
    (root / "csrc/back.h").write_text('#pragma once\n#include "mid.h"\n')
    (root / "csrc/mid.h").write_text('#pragma once\n#include "outer.cuh"\n')
    _forget()
    assert header_platform(str(root / "csrc/mma.cuh")) == CUDA


# -- the include index's directive search ------------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

from rocm_lint.build.headers import _DEFINE_PATH, _INCLUDE, _OPENING  # noqa: E402
from rocm_lint.cpp.includes import _QUOTED_INCLUDE, directive_matches as _directives  # noqa: E402

_ANCHORED = {  # the patterns as they were: a `^[ \t]*` lead in multi-line mode, tried at every offset
    _INCLUDE: re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(["<])([^">\n]{1,512})[">]', re.M),
    _DEFINE_PATH: re.compile(
        rb'^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*[ \t]+["<]([^">\n]{1,512})[">][ \t]*$', re.M
    ),
    _QUOTED_INCLUDE: re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M),
    _OPENING: re.compile(r"^[ \t]*#[ \t]*if", re.M),
}
_PIECES = st.sampled_from(
    [
        b"#",
        b"include",
        b"define",
        b"if",
        b" ",
        b"\t",
        b"\n",
        b'"a.h"',
        b"<b/c.h>",
        b'"',
        b"<",
        b">",
        b"X",
        b"// ",
        b"\r\n",
        b'#include "d.h"',
        b'#define P "e.h"',
        b"x",
        b"  #  include <f.h>",
        b"#ifdef A",
        b"\x0c",
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=40), st.sampled_from(sorted(_ANCHORED, key=lambda p: str(p.pattern))))
def test_directives_are_the_anchored_matches(pieces, pattern):
    """``directive_matches`` (a literal-first search, then a blank lead checked) finds exactly the
    matches of the old ``^[ \t]*``-led pattern, with their line numbers and groups."""
    data = b"".join(pieces)
    if isinstance(pattern.pattern, str):
        data = data.decode()
    newline = "\n" if isinstance(data, str) else b"\n"
    ours = [(line, m.groups()) for m, line in _directives(pattern, data)]
    anchored = [
        (data.count(newline, 0, m.start()) + 1, m.groups()) for m in _ANCHORED[pattern].finditer(data)
    ]
    assert ours == anchored


def test_directives_on_one_long_line_are_linear():
    """Many `#include` on one line after a long blank lead: each line's lead is measured once."""
    data = b" " * 200_000 + b'#include "a.h"' * 20_000 + b"\n#include <b.h>\n"
    found = [(line, m.group(2)) for m, line in _directives(_INCLUDE, data)]
    assert found == [(1, b"a.h"), (2, b"b.h")]
