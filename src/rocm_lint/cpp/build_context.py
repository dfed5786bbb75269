"""The platform a source file gets from the project's build files.

A directory may be built only for ROCm or only for NVIDIA by the build, whatever its ``#if``\\s
say.  This module reads the build files from a file's directory up to the repository root (the
directory holding ``.git``) and answers one question::

    file_platform(path) -> "rocm" | "cuda" | None

``"rocm"``: only a ROCm build compiles the file (the code behaves as if every line were under
``#ifdef USE_ROCM``); ``"cuda"``: a ROCm build never compiles it; ``None``: no fact (the usual
answer).  The facts read:

* **CMake** (``CMakeLists.txt``): ``add_subdirectory(dir)`` in a branch of an ``if()`` whose
  condition names the platform (``USE_ROCM``, ``HIP_FOUND``, ``CMAKE_HIP_COMPILER``,
  ``GPU_LANG STREQUAL "HIP"``; ``USE_CUDA``, ``CUDA_FOUND``, ``CMAKE_CUDA_COMPILER`` ...; ``NOT``,
  ``AND``, ``OR``, ``elseif``/``else``).  The condition is evaluated three-valued in three builds
  (ROCm, NVIDIA, CPU-only): a branch the NVIDIA and CPU builds never take makes the directory
  ROCm-only, one the ROCm build never takes makes it NVIDIA-only.  A CMakeLists that stops a ROCm
  build (``message(FATAL_ERROR)`` in a branch the ROCm build takes and the NVIDIA one does not, as
  ``if(NOT CMAKE_CUDA_COMPILER)``; ``project(x LANGUAGES CUDA)`` or ``enable_language(CUDA)`` in a
  file that names HIP/ROCm nowhere) makes its own directory tree NVIDIA-only.
* **setup.py**, read with ``ast`` (never run): string literals and glob patterns of source files
  (``"csrc/rocm/*.cu"``, ``"csrc/a.cpp"``) inside a branch of a ROCm test (``IS_HIP_EXTENSION``,
  ``IS_ROCM``, ``torch.version.hip``, ``ROCM_HOME is not None``, ``torch.version.cuda`` ...;
  ``not``/``and``/``or``, ``x if c else y``), evaluated as above.  A path written in both branches,
  or outside any, gives no fact; a path built by ``os.path.join``/``+``/f-strings is not read.

Conservative by design: an NVIDIA-only fact is kept only where the project builds for ROCm
somewhere (a build file on the way up names a ROCm condition or HIP), since a pure CUDA project
is the one to port and nothing in it may go silent; facts that disagree give no fact.

Every build file is read bounded (``read_bounded``, ``MAX_BUILD_FILE_BYTES``), parsed under a
guard (a huge, binary, undecodable or hostile file costs nothing but its facts), read once per
process (``lru_cache`` per file and per directory), and noted with ``note_read`` (present or not)
for the content cache.  Nothing above the repository root is read.
"""

from __future__ import annotations

import ast
import os
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from rocm_lint.configfiles.cmake import Arg, iter_commands
# Kleene's three-valued logic: the #if model's, one definition for both readers.
from rocm_lint.cpp.preproc import Tri
from rocm_lint.cpp.preproc import tri_and as _and
from rocm_lint.cpp.preproc import tri_not as _not
from rocm_lint.cpp.preproc import tri_or as _or
from rocm_lint.discovery import note_read, read_bounded

ROCM, CUDA = "rocm", "cuda"
MAX_BUILD_FILE_BYTES = 4 * 1024 * 1024
MAX_LEVELS = 12  # directories walked up from a file (as hipify_build_above)

# (NVIDIA build, ROCm build, CPU-only build): does the code run there?  None: unknown.
Worlds = Tuple[Tri, Tri, Tri]
ALWAYS: Worlds = (True, True, True)
_ROCM_ATOM: Worlds = (False, True, False)
_CUDA_ATOM: Worlds = (True, False, False)
_UNKNOWN: Worlds = (None, None, None)

# A fact: (base directory, glob components relative to it ("**": any number), platform or None).
Fact = Tuple[str, Tuple[str, ...], Optional[str]]

# -- three-valued logic --------------------------------------------------------------------------


def _all(op, a: Worlds, b: Worlds) -> Worlds:
    return op(a[0], b[0]), op(a[1], b[1]), op(a[2], b[2])  # type: ignore[return-value]


def _negate(a: Worlds) -> Worlds:
    return _not(a[0]), _not(a[1]), _not(a[2])


def platform_of(state: Worlds) -> Optional[str]:
    """ROCM where neither the NVIDIA nor the CPU build runs the code and ROCm may; CUDA where
    the ROCm build never runs it and NVIDIA may; else None."""
    cuda, rocm, cpu = state
    if cuda is False and cpu is False and rocm is not False:
        return ROCM
    if rocm is False and cuda is not False:
        return CUDA
    return None


# -- CMake -----------------------------------------------------------------------------------------
_CMAKE_ROCM_VAR = re.compile(
    r"(?:USE_|WITH_|ENABLE_|BUILD_WITH_|BUILD_FOR_|BUILD_)?(?:ROCM|HIP)(?:_FOUND|_ENABLED|_BUILD)?"
    r"|hip_FOUND|CMAKE_HIP_COMPILER|__HIP_PLATFORM_AMD__|__HIP_PLATFORM_HCC__")
_CMAKE_CUDA_VAR = re.compile(
    r"(?:USE_|WITH_|ENABLE_|BUILD_WITH_|BUILD_FOR_|BUILD_)?CUDA(?:_FOUND|_ENABLED)?"
    r"|CUDAToolkit_FOUND|CMAKE_CUDA_COMPILER")
_VAR_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# HIP or ROCm named anywhere (not `chip`, `ship`): a file that mentions them knows about ROCm.
_HIP_WORD = re.compile(r"(?<![A-Za-z])(?:hip|rocm)", re.I)
_CMAKE_UNARY = frozenset({"DEFINED", "EXISTS", "COMMAND", "TARGET", "POLICY", "TEST", "IS_DIRECTORY",
                          "IS_SYMLINK", "IS_ABSOLUTE"})
_CMAKE_BINARY = frozenset({"STREQUAL", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL",
                           "STRLESS", "STRGREATER", "STRLESS_EQUAL", "STRGREATER_EQUAL", "MATCHES",
                           "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER", "VERSION_LESS_EQUAL",
                           "VERSION_GREATER_EQUAL", "IN_LIST", "IS_NEWER_THAN", "PATH_EQUAL"})
_CURRENT_DIR = re.compile(r"\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/")


def _cmake_atom(name: str) -> Worlds:
    ref = _VAR_REF.fullmatch(name)
    if ref:
        name = ref.group(1)
    if _CMAKE_ROCM_VAR.fullmatch(name):
        return _ROCM_ATOM
    if _CMAKE_CUDA_VAR.fullmatch(name):
        return _CUDA_ATOM
    return _UNKNOWN


def _cmake_factor(words: Sequence[Arg]) -> Worlds:
    """``NOT* (X | DEFINED X | X STREQUAL "HIP")``; anything else is unknown."""
    negations = 0
    while words and words[0].value == "NOT" and not words[0].quoted:
        negations += 1
        words = words[1:]
    if len(words) == 1 and not words[0].quoted:
        value = _cmake_atom(words[0].value)
    elif len(words) == 2 and words[0].value == "DEFINED" and not words[0].quoted:
        value = _cmake_atom(words[1].value)
    elif len(words) == 3 and words[1].value == "STREQUAL" and not words[1].quoted:
        lang = words[2].value.strip().upper()
        value = _ROCM_ATOM if lang in ("HIP", "ROCM") else _CUDA_ATOM if lang == "CUDA" else _UNKNOWN
    else:
        value = _UNKNOWN
    return _negate(value) if negations % 2 else value


def cmake_condition(args: Sequence[Arg], raw: str) -> Worlds:
    """Where an ``if()`` condition holds (NVIDIA, ROCm, CPU-only), three-valued.  ``raw``: the
    command's text (a parenthesised group makes the condition unknown: the reader drops parens)."""
    if raw.count("(") > 1 or len(args) > 64:
        return _UNKNOWN
    result: Optional[Worlds] = None
    for alternative in _split(args, "OR"):
        term: Optional[Worlds] = None
        for factor in _split(alternative, "AND"):
            value = _cmake_factor(factor)
            term = value if term is None else _all(_and, term, value)
        if term is None:
            return _UNKNOWN
        result = term if result is None else _all(_or, result, term)
    return _UNKNOWN if result is None else result


def _split(args: Sequence[Arg], word: str) -> List[Sequence[Arg]]:
    out: List[Sequence[Arg]] = []
    start = 0
    for k, a in enumerate(args):
        if a.value == word and not a.quoted:
            out.append(args[start:k])
            start = k + 1
    out.append(args[start:])
    return out


def _mentions_rocm(args: Sequence[Arg]) -> bool:
    return any(_cmake_factor([a]) == _ROCM_ATOM or _HIP_WORD.match(a.value.strip()) for a in args)


def cmake_facts(text: str) -> Tuple[Dict[str, Optional[str]], bool, bool]:
    """(subdirectory -> platform or None, does the file stop a ROCm build?, does it name ROCm?)
    from one CMakeLists.txt."""
    subdirs: Dict[str, List[Optional[str]]] = {}
    requires_cuda = False
    evidence = False
    stack: List[Tuple[Worlds, Worlds]] = []  # (outer state, taken so far)
    state = ALWAYS
    skipping = 0  # inside function()/macro(): not run where it is defined
    languages_cuda = False
    for name, start, end, args in iter_commands(text):
        if name in ("function", "macro"):
            skipping += 1
            continue
        if name in ("endfunction", "endmacro"):
            skipping = max(0, skipping - 1)
            continue
        if name in ("if", "elseif"):
            condition = cmake_condition(args, text[start:end])
            evidence = evidence or condition == _ROCM_ATOM or _mentions_rocm(args)
        if skipping:
            continue
        if name == "if":
            stack.append((state, condition))
            state = _all(_and, state, condition)
        elif name == "elseif" and stack:
            outer, taken = stack[-1]
            state = _all(_and, outer, _all(_and, _negate(taken), condition))
            stack[-1] = (outer, _all(_or, taken, condition))
        elif name == "else" and stack:
            outer, taken = stack[-1]
            state = _all(_and, outer, _negate(taken))
        elif name == "endif" and stack:
            state = stack.pop()[0]
        elif name == "add_subdirectory" and args and not args[0].computed or \
                name == "add_subdirectory" and args and _CURRENT_DIR.match(args[0].value):
            target = _CURRENT_DIR.sub("", args[0].value, count=1)
            if "$" not in target and not os.path.isabs(target):
                key = os.path.normpath(target)
                if key != "." and not key.startswith(".."):
                    subdirs.setdefault(key, []).append(platform_of(state))
        elif name == "message" and args and args[0].value in ("FATAL_ERROR", "SEND_ERROR"):
            if state[1] is True and state[0] is False:
                requires_cuda = True  # the ROCm build stops here, the NVIDIA one does not
        elif name in ("project", "enable_language") and state[1] is True:
            words = [a.value for a in args[1 if name == "project" else 0:] if not a.quoted]
            languages_cuda = languages_cuda or "CUDA" in words
        if name not in ("message", "if", "elseif") and not evidence:
            evidence = any(_HIP_WORD.search(a.value) for a in args)
    if languages_cuda and not _HIP_WORD.search(text):
        requires_cuda = True  # CMake stops where no CUDA compiler is found
    facts = {d: (ps[0] if len(set(ps)) == 1 else None) for d, ps in subdirs.items()}
    return facts, requires_cuda, evidence


# -- setup.py ---------------------------------------------------------------------------------------
_PY_ROCM_NAME = re.compile(r"(?:^|_)(?:rocm|hip)(?:_|$)", re.I)
_PY_NEGATIVE_NAME = re.compile(r"(?:^|_)(?:skip|disable|disabled|no|not|without)(?:_|$)", re.I)
_SOURCE_EXT = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hh|hpp|hxx|hip|inl|inc)$", re.I)
_GLOB_CALLS = frozenset({"glob", "iglob", "rglob"})
MAX_PATTERN = 300


def _py_atom(node: ast.AST, bindings: Optional[Dict[str, ast.AST]] = None, depth: int = 0) -> Worlds:
    if isinstance(node, ast.Name):
        if _PY_ROCM_NAME.search(node.id) and not _PY_NEGATIVE_NAME.search(node.id):
            return _ROCM_ATOM
        value = bindings.get(node.id) if bindings else None
        if value is not None:  # ``use_cuda = torch.version.cuda and CUDA_HOME is not None``
            return py_condition(value, depth + 1, bindings)
        return _UNKNOWN
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "version":
        return _ROCM_ATOM if node.attr == "hip" else _CUDA_ATOM if node.attr == "cuda" else _UNKNOWN
    return _UNKNOWN


def py_condition(node: ast.AST, depth: int = 0, bindings: Optional[Dict[str, ast.AST]] = None) -> Worlds:
    """Where a Python test holds (NVIDIA, ROCm, CPU-only), three-valued; ``bindings``: names the
    file binds exactly once, read through to their value."""
    if depth > 20:
        return _UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _negate(py_condition(node.operand, depth + 1, bindings))
    if isinstance(node, ast.BoolOp):
        op = _and if isinstance(node.op, ast.And) else _or
        values = [py_condition(v, depth + 1, bindings) for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = _all(op, result, v)
        return result
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant) \
            and node.comparators[0].value is None:
        atom = _py_atom(node.left, bindings, depth)
        if isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            return atom
        if isinstance(node.ops[0], (ast.Is, ast.Eq)):
            return _negate(atom)
        return _UNKNOWN
    return _py_atom(node, bindings, depth)


def _single_bindings(tree: ast.AST) -> Dict[str, ast.AST]:
    """Names bound exactly once in the file (at any depth), with their value."""
    values: Dict[str, List[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            values.setdefault(node.target.id, []).append(node.value or node)
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            values.setdefault(node.target.id, []).extend([node, node])
    return {name: vs[0] for name, vs in values.items() if len(vs) == 1}


_SETUP_DIR_CALLS = frozenset({"dirname", "abspath", "realpath", "getcwd"})


def _path_value(node: ast.AST, bindings: Dict[str, ast.AST], depth: int = 0) -> Optional[str]:
    """A path expression's value relative to setup.py's directory ("" for the directory itself:
    ``os.path.dirname(os.path.abspath(__file__))``), through ``os.path.join`` and names bound
    once; None when it cannot be read."""
    if depth > 12:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr == "curdir":
        return "."
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return "setup.py"
        value = bindings.get(node.id)
        return _path_value(value, bindings, depth + 1) if value is not None else None
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "join" and node.args and not node.keywords:
            parts = [_path_value(a, bindings, depth + 1) for a in node.args]
            if any(p is None for p in parts):
                return None
            return "/".join(p for p in parts if p)  # type: ignore[misc]
        if name in _SETUP_DIR_CALLS and len(node.args) <= 1:
            if name == "getcwd":
                return ""
            inner = _path_value(node.args[0], bindings, depth + 1) if node.args else None
            if inner is None:
                return None
            if name == "dirname":
                return "" if inner in ("setup.py", ".") else None  # "" -> the parent: unknown
            return inner
    return None


def _source_pattern(text: str) -> Optional[Tuple[str, ...]]:
    """Glob components of a source path or pattern relative to setup.py, or None for strings
    that are not one (flags, names, directories, absolute or parent paths)."""
    if len(text) > MAX_PATTERN or "\\" in text or "\n" in text:
        return None
    if not (_SOURCE_EXT.search(text) or (("*" in text or "?" in text) and "/" in text)):
        return None
    if text.startswith("/") or text.count("**") > 2:
        return None
    parts = tuple(p for p in text.split("/") if p not in ("", "."))
    if not parts or ".." in parts or len(parts) > 32:
        return None
    return parts


def setup_facts(tree: ast.AST) -> Tuple[Dict[Tuple[str, ...], Optional[str]], bool]:
    """(source pattern -> platform or None, does a test name ROCm?) from a parsed setup.py."""
    seen: Dict[Tuple[str, ...], List[Optional[str]]] = {}
    evidence = [False]
    bindings = _single_bindings(tree)

    def test(node: ast.AST, state: Worlds) -> Tuple[Worlds, Worlds]:
        cond = py_condition(node, 0, bindings)
        if cond == _ROCM_ATOM or _ROCM_ATOM in _atoms(node):
            evidence[0] = True
        return _all(_and, state, cond), _all(_and, state, _negate(cond))

    def strings(node: ast.AST, state: Worlds, allowed: bool, depth: int = 0) -> None:
        if depth > 60:
            return
        if isinstance(node, ast.Constant):
            if allowed and isinstance(node.value, str):
                pattern = _source_pattern(node.value)
                if pattern is not None:
                    seen.setdefault(pattern, []).append(platform_of(state))
            return
        if isinstance(node, ast.IfExp):
            yes, no = test(node.test, state)
            strings(node.body, yes, allowed, depth + 1)
            strings(node.orelse, no, allowed, depth + 1)
            return
        if isinstance(node, ast.JoinedStr):
            return  # f"csrc/{x}.cu": computed
        if allowed and (isinstance(node, ast.Name) or isinstance(node, ast.Call) and isinstance(
                node.func, ast.Attribute) and node.func.attr == "join"):
            # ``os.path.join(this_dir, "csrc", "k.cu")``, a name bound once to a path
            value = _path_value(node, bindings)
            pattern = _source_pattern(value) if value else None
            if pattern is not None:
                seen.setdefault(pattern, []).append(platform_of(state))
            if isinstance(node, ast.Name) or value is not None:
                return
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                strings(elt, state, True, depth + 1)
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            for k, arg in enumerate(node.args):
                strings(arg, state, name in _GLOB_CALLS and k == 0, depth + 1)
            for kw in node.keywords:
                strings(kw.value, state, kw.arg == "sources", depth + 1)
            return
        if isinstance(node, ast.BinOp):
            strings(node.left, state, False, depth + 1)
            strings(node.right, state, False, depth + 1)
            return
        for child in ast.iter_child_nodes(node):
            strings(child, state, False, depth + 1)

    def block(stmts: Sequence[ast.stmt], state: Worlds, depth: int = 0) -> None:
        if depth > 40:
            return
        for stmt in stmts:
            if isinstance(stmt, (ast.If, ast.While)):
                yes, no = test(stmt.test, state)
                block(stmt.body, yes, depth + 1)
                block(stmt.orelse, no, depth + 1)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                block(stmt.body, state, depth + 1)
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)):
                for field in ("iter", "items"):
                    part = getattr(stmt, field, None)
                    if isinstance(part, ast.AST):
                        strings(part, state, False)
                for field in ("body", "orelse", "finalbody"):
                    block(getattr(stmt, field, []) or [], state, depth + 1)
                for handler in getattr(stmt, "handlers", []) or []:
                    block(handler.body, state, depth + 1)
            elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                if stmt.value is not None:
                    strings(stmt.value, state, True)
            else:
                strings(stmt, state, False)

    block(getattr(tree, "body", []), ALWAYS)
    facts = {p: (ps[0] if len(set(ps)) == 1 else None) for p, ps in seen.items()}
    return facts, evidence[0]


def _atoms(node: ast.AST) -> List[Worlds]:
    return [_py_atom(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))]


# -- reading, once per process ---------------------------------------------------------------------
def _read(path: str) -> Optional[str]:
    try:
        data = read_bounded(path, MAX_BUILD_FILE_BYTES)
    except OSError:
        return None  # absent or unreadable: no fact
    if not isinstance(data, bytes) or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


CMakeRead = Tuple[Dict[str, Optional[str]], bool, bool, Tuple[Tuple[str, ...], ...]]


@lru_cache(maxsize=1024)
def _cmake_file(path: str) -> Optional[CMakeRead]:
    """``cmake_facts`` of a CMakeLists.txt and its path-like arguments split into components
    (``../ggml-cuda/*.cu``), or None: absent or unreadable (read once per process)."""
    text = _read(path)
    if text is None:
        return None
    try:
        subdirs, requires_cuda, evidence = cmake_facts(text)
        paths = set()
        for name, _, _, args in iter_commands(text):
            if name != "message":
                paths.update(tuple(a.value.split("/")) for a in args if "/" in a.value and len(a.value) < 4096)
    except (RecursionError, MemoryError, ValueError):
        return None
    return subdirs, requires_cuda, evidence, tuple(paths)


def _cmake_paths(path: str) -> Tuple[Tuple[str, ...], ...]:
    read = _cmake_file(path)
    return () if read is None else read[3]


MAX_SIBLINGS = 256


@lru_cache(maxsize=1024)
def _named_beside(directory: str, deciding: str) -> Tuple[bool, Tuple[str, ...]]:
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
        if any(name in parts[:-1] for parts in _cmake_paths(candidate)):
            return True, tuple(candidates)
    return False, tuple(candidates)


@lru_cache(maxsize=1024)
def _file_facts(path: str) -> Tuple[Tuple[Fact, ...], bool, Tuple[str, ...]]:
    """The facts one build file gives, whether it names ROCm, and the other build files read to
    decide them (each read once per process)."""
    base = os.path.dirname(path)
    facts: List[Fact] = []
    also: List[str] = []
    try:
        if os.path.basename(path) == "setup.py":
            text = _read(path)
            if text is None:
                return (), False, ()
            patterns, evidence = setup_facts(ast.parse(text, path))
            facts = [(base, pattern, platform) for pattern, platform in patterns.items()]
        else:
            read = _cmake_file(path)
            if read is None:
                return (), False, ()
            subdirs, requires_cuda, evidence, _ = read
            decided = [(d, p) for d, p in subdirs.items() if p is not None]
            if requires_cuda:
                decided.append((".", CUDA))
            for d, platform in decided:
                directory = os.path.normpath(os.path.join(base, d))
                named, looked = _named_beside(directory, path)
                also.extend(looked)
                if not named:
                    facts.append((base, (() if d == "." else tuple(d.split(os.sep))) + ("**",), platform))
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return (), False, ()  # an unreadable build file costs nothing but its facts
    return tuple(facts), evidence, tuple(also)


_BUILD_FILES = ("CMakeLists.txt", "setup.py")


@lru_cache(maxsize=1024)
def _directory_context(directory: str) -> Tuple[Tuple[Fact, ...], bool, Tuple[str, ...]]:
    """(facts of every build file from ``directory`` up to the repository root, does any of them
    name ROCm?, the build file paths looked at)."""
    facts: List[Fact] = []
    evidence = False
    looked: List[str] = []
    here = directory
    for _ in range(MAX_LEVELS):
        for name in _BUILD_FILES:
            path = os.path.join(here, name)
            looked.append(path)
            file_facts, file_evidence, also = _file_facts(path)
            looked.extend(also)
            facts.extend(file_facts)
            evidence = evidence or file_evidence
        parent = os.path.dirname(here)
        if os.path.exists(os.path.join(here, ".git")) or parent == here:
            break
        here = parent
    return tuple(facts), evidence, tuple(looked)


def _matches(parts: Tuple[str, ...], pattern: Tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    head = pattern[0]
    if head == "**":
        return any(_matches(parts[k:], pattern[1:]) for k in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _matches(parts[1:], pattern[1:])


@lru_cache(maxsize=4096)
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
        pieces.append("".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in head) + "/")
    return re.compile("".join(pieces) + r"\Z")


@lru_cache(maxsize=1024)
def _directory_index(directory: str):
    """:func:`_directory_context` with its facts split for the lookup: (platforms by the full path
    of a file named exactly, [(prefix, glob pattern, platform)], evidence, build files looked at).
    Build files mostly list their sources by name: a dict lookup, not a loop over them all."""
    facts, evidence, looked = _directory_context(directory)
    exact: Dict[str, set] = {}
    globs: List[Tuple[str, Tuple[str, ...], Optional[str]]] = []
    for base, pattern, platform in facts:
        prefix = base if base.endswith(os.sep) else base + os.sep
        if pattern and not any(c in part for part in pattern for c in "*?["):
            exact.setdefault(prefix + os.sep.join(pattern), set()).add(platform)
        else:
            globs.append((prefix, pattern, platform))
    return exact, tuple(globs), evidence, looked


def file_platform(path: str) -> Optional[str]:
    """``"rocm"``, ``"cuda"`` or None: the platform the project's build gives ``path`` (see the
    module docstring).  The build files looked at are noted as the check's dependencies."""
    path = os.path.abspath(path)
    exact, globs, evidence, looked = _directory_index(os.path.dirname(path))
    for build_file in looked:
        note_read(build_file)
    found = set(exact.get(path, ()))
    for prefix, pattern, platform in globs:
        if platform in found or not path.startswith(prefix):  # (a prefix test: os.path.relpath cost 80% of a C++ check)
            continue
        rel = path[len(prefix):]
        regex = _pattern_regex(pattern)
        if regex.match("/".join(rel.split(os.sep)) + "/") if regex is not None else \
                _matches(tuple(rel.split(os.sep)), pattern):
            found.add(platform)
    if len(found) != 1:
        return None
    platform = found.pop()
    if platform == CUDA and not evidence:
        return None  # a project that never builds for ROCm: all of it is to port
    return platform


def cache_clear() -> None:
    _file_facts.cache_clear()
    _cmake_file.cache_clear()
    _named_beside.cache_clear()
    _directory_context.cache_clear()
    _directory_index.cache_clear()

