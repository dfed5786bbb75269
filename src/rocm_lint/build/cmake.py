"""What a ``CMakeLists.txt`` says per platform: subdirectories, sources, compile definitions.

Every command is read with the state of the ``if()``/``elseif``/``else`` branches around it,
evaluated three-valued in three builds (NVIDIA, ROCm, CPU-only; ``rocm_lint.build.logic``):

* ``add_subdirectory(dir)``: the directory is built where the branch runs;
* sources: literal paths of C++/CUDA/HIP files (and glob patterns) in ``set``/``list(APPEND)``/
  ``file(GLOB)``/``target_sources``/``add_library``... are compiled where they are written and,
  when written into a variable, where that variable is consumed (``${SRCS}`` in a target under
  ``if(GPU_LANG STREQUAL "CUDA")``);
* compile definitions: ``add_definitions(-DX)``, ``add_compile_definitions(X=1)``,
  ``target_compile_definitions(t PRIVATE X)``, and ``-DX`` in a flags variable
  (``CMAKE_HIP_FLAGS``, ``CMAKE_CUDA_FLAGS``, ``CMAKE_CXX_FLAGS``, any ``*FLAGS*``/``*DEFINITIONS*``
  list) or ``add_compile_options``/``target_compile_options``;
* whether the file stops a ROCm build (``message(FATAL_ERROR)`` where only ROCm goes;
  ``project(... CUDA)`` in a file that names HIP nowhere).

A condition is a ROCm test when it names the platform (``USE_ROCM``, ``HIP_FOUND``,
``CMAKE_HIP_COMPILER``, ``GPU_LANG STREQUAL "HIP"`` ...) or is a project option the project
itself ties to HIP (:func:`learn_options`: a branch of ``if(FASTOPS_ENABLE_ROCM)`` turns HIP on
and its ``else()`` turns CUDA on).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from rocm_lint.build.logic import (
    ALWAYS,
    CUDA_ATOM,
    ROCM_ATOM,
    UNKNOWN,
    Worlds,
    both,
    either,
    negate,
    platform_of,
)
from rocm_lint.configfiles.cmake import Arg, iter_commands

_CMAKE_ROCM_VAR = re.compile(
    r"(?:[A-Za-z0-9]+_)*?(?:USE_|WITH_|ENABLE_|BUILD_WITH_|BUILD_FOR_)(?:ROCM|HIP)(?:_FOUND|_ENABLED|_BUILD)?"
    r"|(?:BUILD_)?(?:ROCM|HIP)(?:_FOUND|_ENABLED|_BUILD)?"
    r"|hip_FOUND|CMAKE_HIP_COMPILER|__HIP_PLATFORM_AMD__|__HIP_PLATFORM_HCC__"
)
_CMAKE_CUDA_VAR = re.compile(
    r"(?:[A-Za-z0-9]+_)*?(?:USE_|WITH_|ENABLE_|BUILD_WITH_|BUILD_FOR_)CUDA(?:_FOUND|_ENABLED)?"
    r"|(?:BUILD_)?CUDA(?:_FOUND|_ENABLED)?"
    r"|CUDAToolkit_FOUND|CMAKE_CUDA_COMPILER"
)


def rocm_switch_name(name: str) -> bool:
    """Is ``name`` spelled as a ROCm switch (``USE_ROCM``, ``MYLIB_ENABLE_HIP``, ``HIP_FOUND``)?"""
    return len(name) <= 128 and _CMAKE_ROCM_VAR.fullmatch(name) is not None


def cuda_switch_name(name: str) -> bool:
    """Is ``name`` spelled as a CUDA switch (``USE_CUDA``, ``WITH_CUDA``, ``CUDAToolkit_FOUND``)?"""
    return len(name) <= 128 and _CMAKE_CUDA_VAR.fullmatch(name) is not None


_VAR_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# HIP or ROCm named anywhere (not `chip`, `ship`): a file that mentions them knows about ROCm.
HIP_WORD = re.compile(r"(?<![A-Za-z])(?:hip|rocm)", re.I)
CURRENT_DIR = re.compile(r"\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/")
_SOURCE_EXT = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hh|hpp|hxx|hip|inl|inc)$", re.I)
_DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")
_DEFINITION = re.compile(r"([A-Za-z_]\w*)(?:=(.*))?\Z", re.S)
_FLAGS_VAR = re.compile(r"FLAGS|DEFINITIONS|DEFINES|OPTIONS|ARGS", re.I)
_SCOPES = frozenset({"PUBLIC", "PRIVATE", "INTERFACE", "BEFORE"})
_TARGET_KINDS = frozenset(
    {
        "STATIC",
        "SHARED",
        "MODULE",
        "OBJECT",
        "INTERFACE",
        "EXCLUDE_FROM_ALL",
        "IMPORTED",
        "ALIAS",
        "WIN32",
        "MACOSX_BUNDLE",
    }
)
MAX_PATTERN = 300
MAX_ARGS = 4096


def _turns_on(name: str, args: Sequence[Arg]) -> Optional[str]:
    """ "hip" or "cuda" when the command turns that GPU language on."""
    words = [a.value for a in args]
    if name in ("enable_language", "project"):
        langs = {w.upper() for w in words[0 if name == "enable_language" else 1 :]}
        if "HIP" in langs:
            return "hip"
        if "CUDA" in langs:
            return "cuda"
    elif name == "find_package" and words:
        package = words[0].lower()
        if package in ("hip", "rocm", "hipcub", "rocprim", "hipblas", "rocblas"):
            return "hip"
        if package in ("cuda", "cudatoolkit", "cudnn"):
            return "cuda"
    elif name.startswith("hip_add_"):
        return "hip"
    elif name.startswith("cuda_add_"):
        return "cuda"
    elif name == "set" and words:
        if words[0].startswith("CMAKE_HIP_"):
            return "hip"
        if words[0].startswith("CMAKE_CUDA_"):
            return "cuda"
    return None


def _single_var(args: Sequence[Arg]) -> Optional[str]:
    """The variable a one-word condition tests (``V``, ``${V}``), or None."""
    if len(args) != 1 or args[0].quoted:
        return None
    ref = _VAR_REF.fullmatch(args[0].value)
    word = ref.group(1) if ref else args[0].value
    return word if re.fullmatch(r"[A-Za-z_]\w*", word) else None


def learn_options(text: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(ROCm option names, NVIDIA option names) the file ties to a platform: ``if(V)`` (or
    ``if(NOT V)``) whose branch turns HIP on (``enable_language(HIP)``, ``find_package(hip)``,
    ``hip_add_library``, ``set(CMAKE_HIP_...)``) while its ``else()`` turns CUDA on (or the
    mirror image).  A single-word condition only: ``if(A AND B)`` teaches nothing."""
    rocm: Set[str] = set()
    cuda: Set[str] = set()
    # per open if: (variable or None, negated, languages per branch, each branch's variable)
    stack: List[Tuple[Optional[str], bool, List[Set[str]], List[Optional[str]]]] = []
    for name, _, _, args in iter_commands(text):
        if name == "if":
            negated = bool(args) and args[0].value == "NOT" and not args[0].quoted
            var = _single_var(args[1:] if negated else args)
            stack.append((var, negated, [set()], [var]))
        elif name == "elseif" and stack:
            _, _, branches, conds = stack[-1]
            branches.append(set())
            conds.append(_single_var(args))
        elif name == "else" and stack:
            stack[-1][2].append(set())
            stack[-1][3].append(None)
        elif name == "endif" and stack:
            var, negated, branches, conds = stack.pop()
            if var is not None and len(branches) == 2 and conds[-1] is None:
                yes, no = branches
                if negated:
                    yes, no = no, yes
                if "hip" in yes and "hip" not in no and "cuda" in no and "cuda" not in yes:
                    rocm.add(var)
                elif "cuda" in yes and "cuda" not in no and "hip" in no and "hip" not in yes:
                    cuda.add(var)
            elif len(branches) > 2:
                # ``if(USE_CUDA) ... elseif(MYLIB_USE_ROCM) find_package(HIP) ... endif()``: the one
                # branch that turns HIP on, in a chain another branch of which turns CUDA on
                conds[0] = None if negated else var
                hip = [k for k, langs in enumerate(branches) if "hip" in langs]
                nv = [k for k, langs in enumerate(branches) if "cuda" in langs]
                if len(hip) == 1 and nv and hip[0] not in nv and conds[hip[0]]:
                    rocm.add(conds[hip[0]])
                if len(nv) == 1 and hip and nv[0] not in hip and conds[nv[0]]:
                    cuda.add(conds[nv[0]])
            for _, _, outer, _ in stack[-1:]:
                for langs in branches:
                    outer[-1].update(langs)
        elif stack:
            lang = _turns_on(name, args)
            if lang:
                stack[-1][2][-1].add(lang)
    return frozenset(rocm), frozenset(cuda)


Vocabulary = Tuple[FrozenSet[str], FrozenSet[str]]
NO_VOCABULARY: Vocabulary = (frozenset(), frozenset())


def _atom(name: str, learned: Vocabulary) -> Worlds:
    ref = _VAR_REF.fullmatch(name)
    if ref:
        name = ref.group(1)
    if _CMAKE_ROCM_VAR.fullmatch(name) or name in learned[0]:
        return ROCM_ATOM
    if _CMAKE_CUDA_VAR.fullmatch(name) or name in learned[1]:
        return CUDA_ATOM
    return UNKNOWN


def _factor(words: Sequence[Arg], learned: Vocabulary) -> Worlds:
    """``NOT* (X | DEFINED X | X STREQUAL "HIP")``; anything else is unknown."""
    negations = 0
    while words and words[0].value == "NOT" and not words[0].quoted:
        negations += 1
        words = words[1:]
    if len(words) == 1 and not words[0].quoted:
        value = _atom(words[0].value, learned)
    elif len(words) == 2 and words[0].value == "DEFINED" and not words[0].quoted:
        value = _atom(words[1].value, learned)
    elif len(words) == 3 and words[1].value == "STREQUAL" and not words[1].quoted:
        lang = words[2].value.strip().upper()
        value = ROCM_ATOM if lang in ("HIP", "ROCM") else CUDA_ATOM if lang == "CUDA" else UNKNOWN
    else:
        value = UNKNOWN
    return negate(value) if negations % 2 else value


def condition(args: Sequence[Arg], raw: str, learned: Vocabulary = NO_VOCABULARY) -> Worlds:
    """Where an ``if()`` condition holds (NVIDIA, ROCm, CPU-only), three-valued.  ``raw``: the
    command's text (a parenthesised group makes the condition unknown: the reader drops parens)."""
    if raw.count("(") > 1 or len(args) > 64:
        return UNKNOWN
    result: Optional[Worlds] = None
    for alternative in _split(args, "OR"):
        term: Optional[Worlds] = None
        for factor in _split(alternative, "AND"):
            value = _factor(factor, learned)
            term = value if term is None else both(term, value)
        if term is None:
            return UNKNOWN
        result = term if result is None else either(result, term)
    return UNKNOWN if result is None else result


def _split(args: Sequence[Arg], word: str) -> List[Sequence[Arg]]:
    out: List[Sequence[Arg]] = []
    start = 0
    for k, a in enumerate(args):
        if a.value == word and not a.quoted:
            out.append(args[start:k])
            start = k + 1
    out.append(args[start:])
    return out


def source_pattern(text: str) -> Optional[Tuple[str, ...]]:
    """Glob components of a source path or pattern relative to the build file's directory, or
    None for strings that are not one (flags, names, directories, absolute or parent paths)."""
    if len(text) > MAX_PATTERN or "\\" in text or "\n" in text or "$" in text:
        return None
    if not (_SOURCE_EXT.search(text) or (("*" in text or "?" in text) and "/" in text)):
        return None
    if text.startswith("/") or text.count("**") > 2:
        return None
    parts = tuple(p for p in text.split("/") if p not in ("", "."))
    if not parts or ".." in parts or len(parts) > 32:
        return None
    return parts


@dataclass
class CMakeFacts:
    subdirs: Dict[str, Optional[str]] = field(default_factory=dict)  # directory -> platform or None
    requires_cuda: bool = False  # the file stops a ROCm build
    requires_hip: bool = (
        False  # the file is a HIP build: find_package(hip REQUIRED) or enable_language(HIP), unconditionally
    )
    evidence: bool = False  # the file names ROCm
    sources: Dict[Tuple[str, ...], Optional[str]] = field(default_factory=dict)  # pattern -> platform
    macros: Dict[str, List[Tuple[Worlds, str]]] = field(default_factory=dict)  # name -> [(where, value)]


def _strip_dir(value: str) -> str:
    return CURRENT_DIR.sub("", value, count=1)


def _definitions(name: str, args: Sequence[Arg]) -> List[Tuple[str, str]]:
    """(macro, value) pairs a command defines, ``-DX`` giving X=1."""
    out: List[Tuple[str, str]] = []
    if name in ("add_compile_definitions", "target_compile_definitions"):
        for a in args[1 if name.startswith("target") else 0 :]:
            if a.value in _SCOPES and not a.quoted:
                continue
            value = a.value[2:] if a.value.startswith("-D") else a.value
            m = _DEFINITION.match(value)
            if m and "$" not in value:
                out.append((m.group(1), m.group(2) if m.group(2) is not None else "1"))
        return out
    flags = name in ("add_definitions", "add_compile_options", "target_compile_options") or (
        name in ("set", "list", "string")
        and len(args) > 1
        and any(_FLAGS_VAR.search(a.value) for a in args[:2] if not a.quoted)
    )
    if flags:
        for a in args:
            for m in _DEFINE_FLAG.finditer(a.value):
                value = m.group(2)
                if value is not None and "$" in value:
                    continue
                out.append((m.group(1), value if value else "1"))
    return out


class _Walk:
    """One pass over a file's commands with the branch state; variables resolved at the end."""

    def __init__(self, text: str, learned: Vocabulary) -> None:
        self.text = text
        self.learned = learned
        self.facts = CMakeFacts()
        self.subdirs: Dict[str, List[Optional[str]]] = {}
        self.direct: List[Tuple[Worlds, Tuple[str, ...]]] = []
        self.defs: List[Tuple[str, Worlds, Tuple[str, ...]]] = []  # (variable, where written, pattern)
        self.uses: Dict[str, List[Tuple[Worlds, Optional[str]]]] = {}  # variable -> [(where, consumer var)]

    def run(self) -> CMakeFacts:
        facts = self.facts
        stack: List[Tuple[Worlds, Worlds]] = []  # (outer state, taken so far)
        state = ALWAYS
        skipping = 0  # inside function()/macro(): not run where it is defined
        languages_cuda = False
        text = self.text
        for name, start, end, args in iter_commands(text):
            if name in ("function", "macro"):
                skipping += 1
                continue
            if name in ("endfunction", "endmacro"):
                skipping = max(0, skipping - 1)
                continue
            cond = UNKNOWN
            if name in ("if", "elseif"):
                cond = condition(args, text[start:end], self.learned)
                facts.evidence = facts.evidence or cond == ROCM_ATOM or self._mentions_rocm(args)
            if skipping:
                continue
            if name == "if":
                stack.append((state, cond))
                state = both(state, cond)
            elif name == "elseif" and stack:
                outer, taken = stack[-1]
                state = both(outer, both(negate(taken), cond))
                stack[-1] = (outer, either(taken, cond))
            elif name == "else" and stack:
                outer, taken = stack[-1]
                state = both(outer, negate(taken))
            elif name == "endif" and stack:
                state = stack.pop()[0]
            elif (
                name == "add_subdirectory"
                and args
                and (not args[0].computed or CURRENT_DIR.match(args[0].value))
            ):
                target = _strip_dir(args[0].value)
                if "$" not in target and not os.path.isabs(target):
                    key = os.path.normpath(target)
                    if key != "." and not key.startswith(".."):
                        self.subdirs.setdefault(key, []).append(platform_of(state))
            elif name == "message" and args and args[0].value in ("FATAL_ERROR", "SEND_ERROR"):
                if state[1] is True and state[0] is False:
                    facts.requires_cuda = True  # the ROCm build stops here, the NVIDIA one does not
            elif name in ("project", "enable_language") and state[1] is True:
                words = [a.value for a in args[1 if name == "project" else 0 :] if not a.quoted]
                languages_cuda = languages_cuda or "CUDA" in words
            if name not in ("message", "if", "elseif", "else", "endif") and len(args) <= MAX_ARGS:
                self._sources(name, args, state)
                for macro, value in _definitions(name, args):
                    facts.macros.setdefault(macro, []).append((state, value))
            if name not in ("message", "if", "elseif") and not facts.evidence:
                facts.evidence = any(HIP_WORD.search(a.value) for a in args)
            if (
                state == ALWAYS
                and not facts.requires_hip
                and args
                and (
                    (
                        name == "find_package"
                        and args[0].value.lower() == "hip"
                        and any(a.value == "REQUIRED" for a in args)
                    )
                    or (name == "enable_language" and any(a.value == "HIP" and not a.quoted for a in args))
                )
            ):
                facts.requires_hip = True
        if languages_cuda and not HIP_WORD.search(text):
            facts.requires_cuda = True  # CMake stops where no CUDA compiler is found
        facts.subdirs = {d: (ps[0] if len(set(ps)) == 1 else None) for d, ps in self.subdirs.items()}
        facts.sources = self._resolve_sources()
        return facts

    def _mentions_rocm(self, args: Sequence[Arg]) -> bool:
        return any(_factor([a], self.learned) == ROCM_ATOM or HIP_WORD.match(a.value.strip()) for a in args)

    def _sources(self, name: str, args: Sequence[Arg], state: Worlds) -> None:
        own: Optional[str] = None  # the variable a set/list/file(GLOB) writes
        first = 0
        if name == "set" and args:
            own, first = args[0].value, 1
        elif name == "list" and len(args) > 1 and args[0].value in ("APPEND", "PREPEND", "INSERT"):
            own, first = args[1].value, 3 if args[0].value == "INSERT" else 2
        elif name == "file" and len(args) > 1 and args[0].value in ("GLOB", "GLOB_RECURSE"):
            own, first = args[1].value, 2
        for a in args[first:]:
            for ref in _VAR_REF.findall(a.value):
                if ref != own:
                    self.uses.setdefault(ref, []).append((state, own))
            pattern = source_pattern(_strip_dir(a.value))
            if pattern is None:
                continue
            if own is not None:
                self.defs.append((own, state, pattern))
            else:
                self.direct.append((state, pattern))

    def _where_used(self, var: str, seen: FrozenSet[str] = frozenset()) -> Worlds:
        """Where ``var``'s contents are compiled: the union of the states of its uses (through
        other variables); everywhere when it is never used here (a subdirectory or a function
        defined elsewhere may use it)."""
        uses = self.uses.get(var)
        if not uses or var in seen or len(seen) > 16:
            return ALWAYS
        result: Optional[Worlds] = None
        for where, consumer in uses:
            if consumer is not None:
                where = both(where, self._where_used(consumer, seen | {var}))
            result = where if result is None else either(result, where)
        return result if result is not None else ALWAYS

    def _resolve_sources(self) -> Dict[Tuple[str, ...], Optional[str]]:
        seen: Dict[Tuple[str, ...], Worlds] = {}
        cache: Dict[str, Worlds] = {}
        entries = list(self.direct)
        for var, where, pattern in self.defs:
            if var not in cache:
                cache[var] = self._where_used(var)
            entries.append((both(where, cache[var]), pattern))
        for where, pattern in entries:
            seen[pattern] = either(seen[pattern], where) if pattern in seen else where
        return {p: platform_of(w) for p, w in seen.items()}


def cmake_facts(text: str, learned: Vocabulary = NO_VOCABULARY) -> CMakeFacts:
    """The facts of one CMakeLists.txt, with the project's learned option names."""
    return _Walk(text, learned).run()


def path_arguments(text: str) -> Tuple[Tuple[str, ...], ...]:
    """Path-like arguments (``../ggml-cuda/*.cu``) of every command but ``message``, split."""
    paths = set()
    for name, _, _, args in iter_commands(text):
        if name != "message":
            paths.update(tuple(a.value.split("/")) for a in args if "/" in a.value and len(a.value) < 4096)
    return tuple(paths)
