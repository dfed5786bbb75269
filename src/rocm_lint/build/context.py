"""What the project's build files say about a source file: its platform and its macros.

This module reads the build files from a file's directory up to the repository root (the
directory holding ``.git``; ``CMakeLists.txt`` with ``rocm_lint.build.cmake``, ``setup.py`` with
``rocm_lint.build.setup_py``) and answers two questions::

    file_platform(ws, path) -> "rocm" | "cuda" | None
    macro_facts(ws, path)   -> ((name, (defined, value) on NVIDIA, (defined, value) on ROCm), ...)

``"rocm"``: only a ROCm build compiles the file (the code behaves as if every line were under
``#ifdef USE_ROCM``); ``"cuda"``: a ROCm build never compiles it (a subdirectory or a source
list only an NVIDIA branch names, a CMakeLists that stops a ROCm build); ``None``: no fact (the
usual answer).  ``macro_facts``: the macros the build defines differently per platform
(``add_compile_definitions(FASTOPS_ON_AMD=1)`` under the project's ROCm option), which the
``#if`` model reads like ``USE_ROCM``.

A CMake project is first *run* (``rocm_lint.build.cmake_eval``: an abstract interpreter, once
per platform scenario): where it answers (a source the ROCm run definitely compiles and the
NVIDIA run never, or the reverse; the macros every way a build compiles a source defines), that
answer is the fact; where it has none, the readers below decide.  The project's ROCm macro is a
``macro_facts`` entry ``(name, (False|None, None), (True, value))`` for the sources that build
compiles: no separate API.

The project's own vocabulary is learned from its build: a CMake option whose branch turns HIP
on and whose ``else()`` turns CUDA on is a platform test in every CMakeLists.txt on the way up.

Conservative by design: an NVIDIA-only fact is kept only where the project builds for ROCm
somewhere (a build file on the way up names a ROCm condition or HIP), since a pure CUDA project
is the one to port and nothing in it may go silent; facts that disagree give no fact (a path
listed on both sides, a directory another CMakeLists beside it builds, a macro setup.py and
CMake define differently).

Every build file is read bounded (``read_bounded``, ``MAX_BUILD_FILE_BYTES``), parsed under a
guard (a huge, binary, undecodable or hostile file costs nothing but its facts), read once per
workspace (``rocm_lint.workspace``: the front end's caches, per file and per directory), and
noted with ``Workspace.note_read`` (present or not) for the content cache and the language server.  Nothing above the repository root is read.
"""

from __future__ import annotations

import ast
import os
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Tuple

from rocm_lint.build.cmake import (
    NO_VOCABULARY,
    CMakeFacts,
    Vocabulary,
    cmake_facts,
    learn_options,
    path_arguments,
)
from rocm_lint.build.cmake_eval import DEFINITE, MAYBE, NEVER, ProjectFacts, evaluate_project
from rocm_lint.build.compile_db import SOURCE_EXT, compile_key, rocm_compiled
from rocm_lint.build.logic import ALWAYS, CUDA, ROCM, Worlds
from rocm_lint.build.importers import EVERYWHERE, import_gate
from rocm_lint.build.setup_py import setup_file_facts
from rocm_lint.cpp.conditions import Node, parse_condition
from rocm_lint.workspace import Workspace, memoized

__all__ = ["CUDA", "ROCM", "file_platform", "macro_facts", "MAX_BUILD_FILE_BYTES"]

MAX_BUILD_FILE_BYTES = 4 * 1024 * 1024
MAX_COMPILE_DB_BYTES = 32 * 1024 * 1024
_COMPILE_DBS = ("compile_commands.json", os.path.join("build", "compile_commands.json"))
MAX_LEVELS = 12  # directories walked up from a file (as hipify_build_above)

# A fact: (base directory, glob components relative to it ("**": any number), platform or None).
Fact = Tuple[str, Tuple[str, ...], Optional[str]]
# A macro a build file defines: (build system, name, where, value).
MacroEntry = Tuple[str, str, Worlds, str]
# What the #if model is seeded with: (name, (defined, value) on NVIDIA, (defined, value) on ROCm).
MacroFact = Tuple[str, Tuple[Optional[bool], Optional[Node]], Tuple[Optional[bool], Optional[Node]]]


# -- reading, once per workspace ---------------------------------------------------------------------
def _read(ws: Workspace, path: str) -> Optional[str]:
    try:
        data = ws.read_bounded(path, MAX_BUILD_FILE_BYTES)
    except OSError:
        return None  # absent or unreadable: no fact
    if not isinstance(data, bytes) or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


@memoized(maxsize=1024)
def _cmake_text(ws: Workspace, path: str) -> Optional[str]:
    return _read(ws, path)


@memoized(maxsize=1024)
def _options(ws: Workspace, path: str) -> Vocabulary:
    """The platform options one CMakeLists.txt defines (``build.cmake.learn_options``)."""
    text = _cmake_text(ws, path)
    if text is None:
        return NO_VOCABULARY
    try:
        return learn_options(text)
    except (RecursionError, MemoryError, ValueError):
        return NO_VOCABULARY


@memoized(maxsize=2048)
def _cmake_file(
    ws: Workspace, path: str, learned: Vocabulary = NO_VOCABULARY
) -> Optional[Tuple[CMakeFacts, Tuple[Tuple[str, ...], ...]]]:
    """``cmake_facts`` of a CMakeLists.txt and its path-like arguments split into components
    (``../ggml-cuda/*.cu``), or None: absent or unreadable (read once per process)."""
    text = _cmake_text(ws, path)
    if text is None:
        return None
    try:
        return cmake_facts(text, learned), path_arguments(text)
    except (RecursionError, MemoryError, ValueError):
        return None


def _cmake_paths(ws: Workspace, path: str) -> Tuple[Tuple[str, ...], ...]:
    read = _cmake_file(ws, path)
    return () if read is None else read[1]


MAX_SIBLINGS = 256


@memoized(maxsize=1024)
def _named_beside(ws: Workspace, directory: str, deciding: str) -> Tuple[bool, Tuple[str, ...]]:
    """Does a CMakeLists.txt beside ``directory`` (the deciding one, its parent's, its siblings')
    name a path into it?  ggml builds ``ggml-cuda/*.cu`` for HIP from ``ggml-hip/CMakeLists.txt``
    (``../ggml-cuda/*.cu``) while ``ggml-cuda/CMakeLists.txt`` itself requires CUDA: such a
    directory gets no fact.  Also the files looked at."""
    parent, name = os.path.split(directory)
    candidates = [deciding, os.path.join(parent, "CMakeLists.txt")]
    try:
        with os.scandir(parent) as entries:
            for k, entry in enumerate(entries):
                if k >= MAX_SIBLINGS:
                    return True, tuple(candidates)  # too many to read: assume the worst
                if entry.name != name and entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    candidates.append(os.path.join(parent, entry.name, "CMakeLists.txt"))
    except OSError:
        return True, tuple(candidates)
    for candidate in candidates:
        if os.path.dirname(candidate) == directory:
            continue
        if any(name in parts[:-1] for parts in _cmake_paths(ws, candidate)):
            return True, tuple(candidates)
    return False, tuple(candidates)


FileFacts = Tuple[Tuple[Fact, ...], bool, Tuple[str, ...], Tuple[MacroEntry, ...]]
_NOTHING: FileFacts = ((), False, (), ())


@memoized(maxsize=2048)
def _file_facts(ws: Workspace, path: str, learned: Vocabulary = NO_VOCABULARY) -> FileFacts:
    """The facts one build file gives (directories and sources per platform), whether it names
    ROCm, the other build files read to decide them, and the macros it defines per platform."""
    base = os.path.dirname(path)
    facts: List[Fact] = []
    also: List[str] = []
    try:
        if path.endswith(".py"):
            text = _read(ws, path)
            if text is None:
                return _NOTHING
            system = "setup.py" if os.path.basename(path) == "setup.py" else "jit"

            def gate() -> Worlds:
                # a module runs only where its importers do (asked only when it builds something)
                if system != "jit":
                    return EVERYWHERE
                where, importers = import_gate(ws, path, _chain(ws, base)[-1])
                also.extend(importers)
                return where

            patterns, evidence, macros = setup_file_facts(ast.parse(text, path), path, gate)
            facts = [(base, pattern, platform) for pattern, platform in patterns.items()]
        else:
            read = _cmake_file(ws, path, learned)
            if read is None:
                return _NOTHING
            cm = read[0]
            evidence, macros, system = cm.evidence, cm.macros, "cmake"
            decided = [(d, p) for d, p in cm.subdirs.items() if p is not None]
            if cm.requires_cuda:
                decided.append((".", CUDA))
            for d, platform in decided:
                directory = os.path.normpath(os.path.join(base, d))
                named, looked = _named_beside(ws, directory, path)
                also.extend(looked)
                if not named:
                    facts.append((base, (() if d == "." else tuple(d.split(os.sep))) + ("**",), platform))
            # a source listed for every platform says nothing beyond its directory's facts
            sources = [(pattern, platform) for pattern, platform in cm.sources.items() if platform]
            if any(platform == CUDA for _, platform in sources) and not os.path.exists(
                os.path.join(base, ".git")
            ):
                # sources listed for NVIDIA only, in a directory another build file beside it
                # compiles too (ggml-hip's `../ggml-cuda/*.cu`): no NVIDIA-only fact
                named, looked = _named_beside(ws, base, path)
                also.extend(looked)
                if named:
                    sources = [(pattern, platform) for pattern, platform in sources if platform != CUDA]
            facts.extend((base, pattern, platform) for pattern, platform in sources)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return _NOTHING  # an unreadable build file costs nothing but its facts
    entries = tuple((system, name, where, value) for name, defs in macros.items() for where, value in defs)
    if evidence:  # a build system that builds for ROCm: its silence on a macro is a "not defined"
        entries += ((system, "", ALWAYS, ""),)
    return tuple(facts), evidence, tuple(also), entries


_BUILD_FILES = ("CMakeLists.txt", "setup.py")
_JIT_BUILD = re.compile(
    r"cpp_extension\s+import\b[^\n]*\bload|cpp_extension\.load(?:_inline)?\s*\("
    r"|(?<!def )\b(?:CUDA|Cpp|HIP|SYCL)Extension\s*\("
)
MAX_JIT_SCAN = 64  # Python files looked at per directory for cpp_extension.load() builds
MAX_JIT_LEVELS = 3  # the source's directory, its parent and grandparent


@memoized(maxsize=1024)
def _jit_builders(ws: Workspace, directory: str) -> Tuple[str, ...]:
    """The Python modules of ``directory`` (setup.py aside) that build C++ with
    ``torch.utils.cpp_extension.load``/``load_inline``: their ``extra_cflags``/``extra_cuda_cflags``
    and ``sources`` per branch are build facts like setup.py's."""
    out: List[str] = []
    try:
        with os.scandir(directory) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith(".py") and e.name != "setup.py" and e.is_file(follow_symlinks=False)
            )
    except OSError:
        return ()
    for name in names[:MAX_JIT_SCAN]:
        # read without noting it as a dependency: only the builders found are (the caller notes
        # them with the other build files)
        try:
            data = ws.read_bounded(os.path.join(directory, name), MAX_BUILD_FILE_BYTES, note=False)
        except OSError:
            continue
        if (
            isinstance(data, bytes)
            and b"cpp_extension" in data
            and _JIT_BUILD.search(data.decode("utf-8", errors="replace"))
        ):
            out.append(os.path.join(directory, name))
    return tuple(out)


@memoized(maxsize=1024)
def _chain(ws: Workspace, directory: str) -> Tuple[str, ...]:
    """``directory`` and its parents up to the repository root (the directory holding ``.git``)."""
    out: List[str] = []
    here = directory
    for _ in range(MAX_LEVELS):
        out.append(here)
        parent = os.path.dirname(here)
        if os.path.exists(os.path.join(here, ".git")) or parent == here:
            break
        here = parent
    return tuple(out)


def _vocabulary(ws: Workspace, directories: Tuple[str, ...]) -> Vocabulary:
    """The platform options every CMakeLists.txt on the way up defines: an option the root
    defines (``if(FASTOPS_ENABLE_ROCM) enable_language(HIP) ... else() enable_language(CUDA)``)
    is a platform test in the subdirectories too."""
    rocm: FrozenSet[str] = frozenset()
    cuda: FrozenSet[str] = frozenset()
    for here in directories:
        r, c = _options(ws, os.path.join(here, "CMakeLists.txt"))
        rocm, cuda = rocm | r, cuda | c
    both_sides = rocm & cuda
    return rocm - both_sides, cuda - both_sides


@memoized(maxsize=1024)
def _directory_context(
    ws: Workspace, directory: str
) -> Tuple[Tuple[Fact, ...], bool, Tuple[str, ...], Tuple[MacroEntry, ...]]:
    """(facts of every build file from ``directory`` up to the repository root, does any of them
    name ROCm?, the build file paths looked at, the macros they define)."""
    facts: List[Fact] = []
    macros: List[MacroEntry] = []
    evidence = False
    looked: List[str] = []
    directories = _chain(ws, directory)
    learned = _vocabulary(ws, directories)
    for depth, here in enumerate(directories):
        # cpp_extension.load() modules sit beside the sources or a level or two above them
        jit = _jit_builders(ws, here) if depth < MAX_JIT_LEVELS else ()
        for path in tuple(os.path.join(here, name) for name in _BUILD_FILES) + jit:
            looked.append(path)
            file_facts, file_evidence, also, entries = _file_facts(ws, path, learned)
            looked.extend(also)
            facts.extend(file_facts)
            macros.extend(entries)
            evidence = evidence or file_evidence
    return tuple(facts), evidence, tuple(looked), tuple(macros)


def _matches(parts: Tuple[str, ...], pattern: Tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    head = pattern[0]
    if head == "**":
        return any(_matches(parts[k:], pattern[1:]) for k in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _matches(parts[1:], pattern[1:])


@lru_cache(maxsize=4096)  # pure: a compiled regex of its argument
def _pattern_regex(pattern: Tuple[str, ...]) -> Optional["re.Pattern[str]"]:
    """:func:`_matches` as one regex over the parts joined and ended by ``/`` (each part a glob
    of ``*`` and ``?``, ``**`` any number of parts); None for a glob with ``[...]`` (matched part
    by part).  Consecutive ``**`` are one (two would only multiply the ways to match)."""
    pieces: List[str] = []
    for head in pattern:
        if head == "**":
            if not pieces or pieces[-1] != "(?:[^/]*/)*":
                pieces.append("(?:[^/]*/)*")
            continue
        if "[" in head or "/" in head:
            return None
        pieces.append(
            "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in head) + "/"
        )
    return re.compile("".join(pieces) + r"\Z")


@memoized(maxsize=1024)
def _directory_index(ws: Workspace, directory: str):
    """:func:`_directory_context` with its facts split for the lookup: (platforms by the full path
    of a file named exactly, [(prefix, glob pattern, platform)], evidence, build files looked at).
    Build files mostly list their sources by name: a dict lookup, not a loop over them all."""
    facts, evidence, looked, _ = _directory_context(ws, directory)
    exact: Dict[str, set] = {}
    globs: List[Tuple[str, Tuple[str, ...], Optional[str]]] = []
    for base, pattern, platform in facts:
        prefix = base if base.endswith(os.sep) else base + os.sep
        if pattern and not any(c in part for part in pattern for c in "*?["):
            exact.setdefault(prefix + os.sep.join(pattern), set()).add(platform)
        else:
            globs.append((prefix, pattern, platform))
    return exact, tuple(globs), evidence, looked


@memoized(maxsize=256)
def _rocm_database(ws: Workspace, root: str) -> Optional[FrozenSet[str]]:
    """What the ROCm build's ``compile_commands.json`` in ``root`` (or ``root/build``) compiles
    (``rocm_lint.build.compile_db``), or None where there is none."""
    for name in _COMPILE_DBS:
        try:
            data = ws.read_bounded(os.path.join(root, name), MAX_COMPILE_DB_BYTES)
        except OSError:
            continue
        if isinstance(data, bytes):
            keys = rocm_compiled(data.decode("utf-8", errors="replace"))
            if keys is not None:
                return keys
    return None


# -- the interpreter's answer -------------------------------------------------------------------------
MAX_PROJECTS = 3  # CMake projects tried per file, from the top CMakeLists.txt on the way down


@memoized(maxsize=64)
def _cmake_project(ws: Workspace, directory: str) -> Optional[ProjectFacts]:
    """``build.cmake_eval.evaluate_project`` of the CMake project whose top CMakeLists.txt is in
    ``directory`` (nothing above the repository root read)."""
    root = _chain(ws, directory)[-1]
    return evaluate_project(root, os.path.join(directory, "CMakeLists.txt"), lambda p: _cmake_text(ws, p))


@memoized(maxsize=1024)
def _projects(ws: Workspace, directory: str) -> Tuple[Tuple[str, ...], Tuple[ProjectFacts, ...]]:
    """The CMake projects above ``directory`` (top first, the directories on the way up whose
    CMakeLists.txt exists), and the build files each read; interpreted once per workspace."""
    tops = [
        here
        for here in reversed(_chain(ws, directory))
        if _cmake_text(ws, os.path.join(here, "CMakeLists.txt"))
    ]
    looked: List[str] = []
    projects: List[ProjectFacts] = []
    for top in tops[:MAX_PROJECTS]:
        facts = _cmake_project(ws, top)
        looked.append(os.path.join(top, "CMakeLists.txt"))
        if facts is not None:
            looked.extend(facts.files)
            projects.append(facts)
    return tuple(looked), tuple(projects)


def _interpreted(ws: Workspace, path: str) -> Optional[ProjectFacts]:
    """The first project (top down) whose run compiles ``path`` or reads it as a build file."""
    looked, projects = _projects(ws, os.path.dirname(path))
    for build_file in looked:
        ws.note_read(build_file)
    for facts in projects:
        if facts.reaches(path):
            return facts
    return None


_NO_ANSWER = "no answer"


def _interpreted_platform(ws: Workspace, path: str) -> Optional[str]:
    """What the CMake interpreter says of ``path``: ``"rocm"`` (the ROCm scenario compiles it
    definitely, the NVIDIA one never), ``"cuda"`` (the ROCm scenario never compiles or reads it,
    the NVIDIA one may), None (both compile it definitely), or ``_NO_ANSWER``."""
    facts = _interpreted(ws, path)
    if facts is None:
        return _NO_ANSWER
    if SOURCE_EXT.search(path) and (facts.source(CUDA, path) or facts.source(ROCM, path)):
        nv, ro = facts.compiled(CUDA, path), facts.compiled(ROCM, path)
        if ro == DEFINITE and nv == NEVER:
            return ROCM
        if ro == NEVER and nv in (DEFINITE, MAYBE):
            return CUDA
        if ro == DEFINITE and nv == DEFINITE:
            return None
        return _NO_ANSWER
    # a build file: read by one scenario's run only
    reads = {platform: path in facts.scenarios[platform].files for platform in (CUDA, ROCM)}
    if reads[CUDA] and not reads[ROCM] and not facts.scenarios[ROCM].lost:
        return CUDA
    if reads[ROCM] and not reads[CUDA] and not facts.scenarios[CUDA].lost:
        return ROCM
    return _NO_ANSWER


def file_platform(ws: Workspace, path: str) -> Optional[str]:
    """``"rocm"``, ``"cuda"`` or None: the platform the project's build gives ``path`` (see the
    module docstring).  The build files looked at are noted as the check's dependencies."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    if not SOURCE_EXT.search(path) or not _has_database(ws, path):
        answer = _interpreted_platform(ws, path)
        if answer != _NO_ANSWER:
            return answer
    exact, globs, evidence, looked = _directory_index(ws, directory)
    for build_file in looked:
        ws.note_read(build_file)
    if SOURCE_EXT.search(path):
        root = _chain(ws, directory)[-1]
        for name in _COMPILE_DBS:
            ws.note_read(os.path.join(root, name))
        compiled = _rocm_database(ws, root)
        if compiled is not None:  # the exact list of what the ROCm build compiles
            return None if compile_key(path) in compiled else CUDA
    found = set(exact.get(path, ()))
    for prefix, pattern, platform in globs:
        if platform in found or not path.startswith(
            prefix
        ):  # (a prefix test: os.path.relpath cost 80% of a C++ check)
            continue
        rel = path[len(prefix) :]
        regex = _pattern_regex(pattern)
        if (
            regex.match("/".join(rel.split(os.sep)) + "/")
            if regex is not None
            else _matches(tuple(rel.split(os.sep)), pattern)
        ):
            found.add(platform)
    if len(found) != 1:
        return None
    platform = found.pop()
    if platform == CUDA and not evidence:
        return None  # a project that never builds for ROCm: all of it is to port
    return platform


def _has_database(ws: Workspace, path: str) -> bool:
    """Does the build root hold a ROCm ``compile_commands.json`` (the exact answer, asked first)?"""
    return _rocm_database(ws, _chain(ws, os.path.dirname(path))[-1]) is not None


def _side(entries: List[Tuple[Worlds, str]], world: int) -> Tuple[Optional[bool], Optional[str]]:
    """(defined?, value) of a macro in one build from its definitions."""
    defined: Optional[bool] = False
    values = set()
    for where, value in entries:
        if where[world] is True:
            defined = True
        elif where[world] is None and defined is False:
            defined = None
        if where[world] is not False:
            values.add(value)
    if defined is False:
        return False, None
    return defined, (values.pop() if defined and len(values) == 1 else None)


def _seed(side: Tuple[Optional[bool], Optional[str]]) -> Tuple[Optional[bool], Optional[Node]]:
    defined, value = side
    return defined, (parse_condition(value) if value is not None else None)


@memoized(maxsize=1024)
def _hip_builds_beside(ws: Workspace, directory: str) -> Tuple[Tuple[str, ...], Tuple[MacroEntry, ...]]:
    """The HIP builds beside ``directory`` that compile sources in it (ggml-hip's CMakeLists.txt,
    which requires HIP and globs ``../ggml-cuda/*.cu``), and the macros they define, on the ROCm
    side only (``add_compile_definitions(GGML_USE_HIP)`` there is the ROCm macro of those sources);
    also the build files looked at."""
    if os.path.exists(os.path.join(directory, ".git")):
        return (), ()  # nothing above the repository root is read
    named, looked = _named_beside(ws, directory, os.path.join(directory, "CMakeLists.txt"))
    if not named:
        return looked, ()
    parent, name = os.path.split(directory)
    entries: List[MacroEntry] = []
    for candidate in looked:
        if os.path.dirname(candidate) in (directory, parent):
            continue  # the directory's own build file, or its parent's: on the chain already
        read = _cmake_file(ws, candidate)
        if read is None or not read[0].requires_hip or not any(name in parts[:-1] for parts in read[1]):
            continue
        entries.extend(
            ("cmake", macro, (None, where[1], None), value)
            for macro, defs in read[0].macros.items()
            for where, value in defs
        )
    return looked, tuple(entries)


@memoized(maxsize=1024)
def _directory_macros(ws: Workspace, directory: str, without_cmake: bool = False) -> Tuple[MacroFact, ...]:
    entries = _directory_context(ws, directory)[3] + _hip_builds_beside(ws, directory)[1]
    by_system: Dict[str, Dict[str, List[Tuple[Worlds, str]]]] = {}
    for system, name, where, value in entries:
        if without_cmake and system == "cmake":
            continue
        by_system.setdefault(system, {}).setdefault(name, []).append((where, value))
    names = {name for defs in by_system.values() for name in defs} - {""}
    out: List[MacroFact] = []
    for name in sorted(names):
        sides = set()
        for defs in by_system.values():
            mine = defs.get(name, [])
            if any(where[0] is True and where[1] is True for where, _ in mine):
                sides.add(None)  # defined for every platform too: no platform fact
            else:
                sides.add((_side(mine, 0), _side(mine, 1)))
        if len(sides) != 1:
            continue  # the build systems disagree (setup.py defines it, CMake does not)
        pair = sides.pop()
        if pair is None or pair[0] == pair[1]:
            continue
        out.append((name, _seed(pair[0]), _seed(pair[1])))
    return tuple(out)


def macro_facts(ws: Workspace, path: str) -> Tuple[MacroFact, ...]:
    """The macros the project's build defines for ``path`` per platform, as the ``#if`` model's
    seed (``rocm_lint.cpp.preproc.analyse``): ``add_compile_definitions(FASTOPS_ON_AMD=1)`` in a
    branch only the ROCm build takes gives ``("FASTOPS_ON_AMD", (False, None), (True, 1))``.
    Only macros whose definition differs between the NVIDIA and the ROCm build; none where the
    build systems on the way up disagree or where the macro is also defined for every platform.
    For a source a CMake target compiles, the CMake interpreter's scenarios answer
    (:func:`_interpreted_macros`): the project's own ROCm macro is the entry whose ROCm side is
    ``(True, value)`` and whose NVIDIA side is not (``MYLIB_USE_HIP`` a function in an included
    ``.cmake`` file defines, ``$<$<BOOL:${MYLIB_ENABLE_ROCM}>:MYLIB_USE_HIP>``).
    The build files looked at are noted as the check's dependencies."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    for build_file in _directory_context(ws, directory)[2] + _hip_builds_beside(ws, directory)[0]:
        ws.note_read(build_file)
    interpreted = _interpreted_macros(ws, path)
    if interpreted is None:
        return _directory_macros(ws, directory)
    # the CMake interpreter answers for the source; the other build systems (setup.py, JIT
    # builders) still count for the macros it does not name
    named = {fact[0] for fact in interpreted}
    others = tuple(f for f in _directory_macros(ws, directory, True) if f[0] not in named)
    return interpreted + others


def _interpreted_macros(ws: Workspace, path: str) -> Optional[Tuple[MacroFact, ...]]:
    """The macros the CMake interpreter's scenarios define for a source one of them compiles:
    per platform (True, value) where that build definitely compiles the source with the macro,
    (False, None) where it definitely compiles it without (and nothing unknown contributes),
    (None, None) otherwise; only macros whose two sides differ.  None: no answer."""
    if not SOURCE_EXT.search(path):
        return None
    facts = _interpreted(ws, path)
    if facts is None:
        return None
    nv, ro = facts.source(CUDA, path), facts.source(ROCM, path)
    if nv is None and ro is None:
        return None
    names = sorted({m[0] for side in (nv, ro) if side is not None for m in side.macros})
    out: List[MacroFact] = []
    for name in names:
        pair = tuple(side.macro(name) if side is not None else (None, None) for side in (nv, ro))
        if pair[0] == pair[1]:
            continue
        out.append((name, _seed(pair[0]), _seed(pair[1])))
    return tuple(out)
