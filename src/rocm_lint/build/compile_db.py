"""``compile_commands.json`` of a ROCm build: the exact list of what hipcc compiles.

When a project keeps the compilation database of a ROCm build (CMake's
``CMAKE_EXPORT_COMPILE_COMMANDS`` in the repository root or in ``build/``), a CUDA/C++ source it
does not list is one the ROCm build never compiles.  A database is a ROCm build's when one of its
commands runs hipcc or amdclang, compiles ``-x hip``, targets ``--offload-arch=gfx...`` or defines
``__HIP_PLATFORM_AMD__``; any other database (an NVIDIA build's) says nothing.

Sources are matched by name, not by path: a hipified build compiles ``csrc/hip/k.hip`` or
``k_hip.cpp`` for ``csrc/cuda/k.cu``, so a file counts as compiled when the database lists a
file whose stem, with ``_hip``/``.hip`` and ``cuda``/``hip`` spellings folded, is its own.  The
match errs towards "compiled" (the finding stays).
"""

from __future__ import annotations

import json
import os
import re
from typing import FrozenSet, Optional

ROCM_COMMAND = re.compile(
    r"\bhipcc\b|\bamdclang|--offload-arch=gfx|-x\s+hip\b|__HIP_PLATFORM_AMD__|--amdgpu-target"
)
SOURCE_EXT = re.compile(r"\.(?:cu|cpp|cc|cxx|c|hip)\Z", re.I)
_FOLD = re.compile(r"(?:[._-]hip|[._-]cuda)\Z")
MAX_ENTRIES = 200_000


def compile_key(path: str) -> str:
    """The name a source is matched by: its stem, lower case, ``_hip``/``_cuda`` dropped and
    ``cuda`` spelled ``hip``."""
    stem = os.path.basename(path).lower()
    while True:
        stem, ext = os.path.splitext(stem)
        if not ext or not SOURCE_EXT.search(ext):
            stem = stem + ext
            break
    return _FOLD.sub("", stem).replace("cuda", "hip")


def rocm_compiled(text: str) -> Optional[FrozenSet[str]]:
    """The keys (``compile_key``) of the files a ROCm build's database compiles, or None when
    ``text`` is not a ROCm build's database (or no database at all)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, list) or not data or len(data) > MAX_ENTRIES:
        return None
    keys = set()
    rocm = False
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            return None
        command = entry.get("command")
        if not isinstance(command, str):
            arguments = entry.get("arguments")
            command = (
                " ".join(a for a in arguments if isinstance(a, str)) if isinstance(arguments, list) else ""
            )
        rocm = rocm or bool(ROCM_COMMAND.search(command[:100_000]))
        keys.add(compile_key(entry["file"]))
    return frozenset(keys) if rocm else None
