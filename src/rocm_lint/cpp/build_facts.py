"""What the build says of a C++ file: whether the build above it hipifies its sources
(``hipify_build_above``) and whether each platform compiles it at all (``build_base``)."""

from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

from rocm_lint.build import context as build_context
from rocm_lint.build.headers import header_platform
from rocm_lint.workspace import Workspace, memoized


# A build that hipifies its sources: torch's CUDAExtension/BuildExtension, or an explicit hipify step
# (vLLM's CMake calls torch's hipify).
_HIPIFY_BUILD = re.compile(r"CUDAExtension|BuildExtension|hipify")
_BUILD_FILES = (
    "setup.py",
    "CMakeLists.txt",
    os.path.join("cmake", "utils.cmake"),
    os.path.join("cmake", "hipify.py"),
)

MAX_BUILD_FILE_BYTES = 4 * 1024 * 1024


def hipify_build_above(ws: Workspace, directory: str) -> bool:
    """Does a build file in ``directory`` or above (up to the repository root) hipify sources?
    Build files are read bounded (``read_bounded``: regular files only, at most
    ``MAX_BUILD_FILE_BYTES``); one that cannot be read says nothing.  The build files read are
    noted as the checked file's dependencies (the content cache) even when the answer is cached."""
    answer, read = _hipify_build_above(ws, directory)
    for path in read:
        ws.note_read(path)
    return answer


@memoized(maxsize=1024)
def _hipify_build_above(ws: Workspace, directory: str) -> Tuple[bool, Tuple[str, ...]]:
    here = directory
    read: List[str] = []
    for _ in range(12):
        for name in _BUILD_FILES:
            path = os.path.join(here, name)
            try:
                data = ws.read_bounded(path, MAX_BUILD_FILE_BYTES)
            except OSError:
                data = ""  # unreadable (or absent): no fact
            if isinstance(data, bytes):
                read.append(path)
                if _HIPIFY_BUILD.search(data.decode("utf-8", errors="replace")):
                    return True, tuple(read)
        if os.path.exists(os.path.join(here, ".git")):
            return False, tuple(read)
        parent = os.path.dirname(here)
        if parent == here:
            return False, tuple(read)
        here = parent
    return False, tuple(read)


def build_base(ws: Workspace, path: str) -> Tuple[Optional[bool], Optional[bool]]:
    """Whether (NVIDIA, ROCm) compile the file at all, as the project's build decides
    (``build_context.file_platform``): a ROCm-only directory reads as if every line were under
    ``#ifdef USE_ROCM``, a directory the ROCm build never compiles as if under ``#ifndef USE_ROCM``."""
    platform = build_context.file_platform(ws, path) or header_platform(
        ws, path
    )  # a header: from its includers
    if platform == build_context.ROCM:
        return False, True
    if platform == build_context.CUDA:
        return True, False
    return True, True
