"""What a ``setup.py`` (or a module that builds C++ with ``torch.utils.cpp_extension`` at run time)
says per platform: the sources it compiles and the macros it defines, from the evaluation of the
script in an NVIDIA, a ROCm and a CPU-only scenario (``rocm_lint.build.setup_eval``; never run).

* **sources**: a source is the ROCm build's alone (``"rocm"``) where the NVIDIA and CPU-only
  scenarios never compile it and the ROCm one may; NVIDIA's (``"cuda"``) where the ROCm scenario
  never compiles it; no fact otherwise (compiled everywhere, or nowhere);
* **macros**: each ``define_macros`` entry and ``-DX[=v]`` flag with where it is defined.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple, Union

from rocm_lint.build.logic import Worlds, both, platform_of
from rocm_lint.build.setup_eval import evaluate

Macros = Dict[str, List[Tuple[Worlds, str]]]
ALL: Worlds = (True, True, True)


def setup_facts(
    tree: ast.AST, path: Optional[str] = None
) -> Tuple[Dict[Tuple[str, ...], Optional[str]], bool]:
    """(source pattern -> platform or None, does a test name ROCm?) from a parsed setup.py."""
    facts, evidence, _ = setup_file_facts(tree, path)
    return facts, evidence


def setup_file_facts(
    tree: ast.AST, path: Optional[str] = None, gate: Union[Worlds, Callable[[], Worlds]] = ALL
) -> Tuple[Dict[Tuple[str, ...], Optional[str]], bool, Macros]:
    """(source pattern -> platform or None, does a test name ROCm?, macro -> [(where, value)])
    from a parsed build script; ``path``: its file (globs are evaluated in its directory);
    ``gate``: where the script runs at all (a module imported only under an NVIDIA test), or a
    function computing it, called only when the script compiles or defines something."""
    if not isinstance(tree, ast.Module):
        return {}, False, {}
    result = evaluate(tree, path)
    if result is None:
        return {}, False, {}
    if callable(gate):
        gate = gate() if (result.sources or result.macros) else ALL
    facts = {pattern: platform_of(both(where, gate)) for pattern, where in result.sources.items()}
    macros: Macros = {}
    for (name, value), where in result.macros.items():
        macros.setdefault(name, []).append((both(where, gate), value))
    return facts, result.evidence or gate != ALL, macros
