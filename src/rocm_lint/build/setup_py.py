"""What a ``setup.py`` says per platform, read with ``ast`` (never run): source files and macros.

* **sources**: string literals and glob patterns of source files (``"csrc/rocm/*.cu"``,
  ``"csrc/a.cpp"``, ``os.path.join(this_dir, "csrc", "k.cu")``) inside a branch of a ROCm test;
* **macros**: ``define_macros`` entries (``("USE_ROCM", None)``, ``("X", "1")``, also lists bound to
  or extended into a name holding ``macro``) and ``-DX[=v]`` strings (``extra_compile_args``'
  ``cxx``/``nvcc`` lists, ``extra_cflags`` of ``torch.utils.cpp_extension.load``), each with the
  builds its branch runs in.
* **source lists**: a name bound once to paths or globs (``cuda_sources = glob.glob(...)``) counts
  where it is added to the sources (``if use_cuda: sources += cuda_sources``, ``.extend``, ``+``),
  with that branch's builds, not where it is bound; one only used to filter gives no fact.

A ROCm test is one the build files use: ``IS_HIP_EXTENSION``, ``torch.version.hip``,
``ROCM_HOME is not None``, ``torch.version.cuda``, a name holding ``rocm``/``hip``, or a name the
file binds once to one of those (``is_rocm_pytorch = torch.version.hip is not None and ...``);
``not``/``and``/``or``, ``x if c else y``, evaluated three-valued in three builds
(``rocm_lint.build.logic``).  A path written in both branches, or outside any, gives no fact;
a path built by ``+`` or f-strings is not read.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Sequence, Tuple

from rocm_lint.build.cmake import source_pattern as _source_pattern
from rocm_lint.build.logic import (
    ALWAYS,
    CUDA_ATOM as _CUDA_ATOM,
    ROCM_ATOM as _ROCM_ATOM,
    UNKNOWN as _UNKNOWN,
    Worlds,
    both,
    either,
    negate as _negate,
    platform_of,
)

_PY_ROCM_NAME = re.compile(r"(?:^|_)(?:rocm|hip)(?:_|$)", re.I)
_PY_NEGATIVE_NAME = re.compile(r"(?:^|_)(?:skip|disable|disabled|no|not|without)(?:_|$)", re.I)
_GLOB_CALLS = frozenset({"glob", "iglob", "rglob"})


def _py_atom(node: ast.AST, bindings: Optional[Dict[str, ast.AST]] = None, depth: int = 0) -> Worlds:
    if isinstance(node, ast.Name):
        if _PY_ROCM_NAME.search(node.id) and not _PY_NEGATIVE_NAME.search(node.id):
            return _ROCM_ATOM
        value = bindings.get(node.id) if bindings else None
        if value is not None:  # ``use_cuda = torch.version.cuda and CUDA_HOME is not None``
            return py_condition(value, depth + 1, bindings)
        return _UNKNOWN
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "version"
    ):
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
        op = both if isinstance(node.op, ast.And) else either
        values = [py_condition(v, depth + 1, bindings) for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = op(result, v)
        return result
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    ):
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
_PASS_THROUGH_CALLS = frozenset({"list", "sorted", "tuple", "set"})
_SOURCES_NAME = re.compile(r"src|source", re.I)


def _source_lists(tree: ast.AST, bindings: Dict[str, ast.AST]) -> frozenset:
    """Names bound once to source paths or globs that the file reads somewhere
    (``cuda_sources = glob.glob(os.path.join(cuda_dir, "**/*.cu"))``).  Their paths count where
    the name is *added* to a source list (``if use_cuda: sources += cuda_sources``), in that
    branch, and not where they are bound: a list bound unconditionally and added only for one
    platform is that platform's, and one used only to filter (``[s for s in sources if s not in
    excluded]``) gives no fact."""
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names = set()
    for name, value in bindings.items():
        if name not in read or not isinstance(value, ast.expr):
            continue
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                func = node.func
                called = (
                    func.attr
                    if isinstance(func, ast.Attribute)
                    else func.id
                    if isinstance(func, ast.Name)
                    else ""
                )
                if called in _GLOB_CALLS:
                    names.add(name)
                    break
            elif (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and _source_pattern(node.value)
            ):
                names.add(name)
                break
    return frozenset(names)


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


_DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_EXTENDERS = frozenset({"append", "extend", "insert", "__iadd__"})
_CMAKE_BOOLEANS = frozenset({"ON", "OFF", "TRUE", "FALSE", "YES", "NO"})
Macros = Dict[str, List[Tuple[Worlds, str]]]


def _mentions_cmake(stmt: ast.AST) -> bool:
    """Does a statement name CMake (``cmake_args.append("-DUSE_ROCM=ON")``, ``["cmake", ...]``)?"""
    for node in ast.walk(stmt):
        word = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else node.value
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 64
            else ""
        )
        if "cmake" in word.lower():
            return True
    return False


def _holds_macro(node: ast.AST) -> bool:
    """Is ``node`` a name (or attribute) for a list of macros: ``define_macros``, ``macros``?"""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "macro" in name.lower()


def _macro_pair(node: ast.AST) -> Optional[Tuple[str, str]]:
    """``("X", None)`` -> ("X", "1"); ``("X", "2")`` -> ("X", "2"); anything else None."""
    if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
        return None
    name, value = node.elts
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and _MACRO_NAME.match(name.value)):
        return None
    if not isinstance(value, ast.Constant) or not isinstance(value.value, (str, int, type(None))):
        return None
    return name.value, "1" if value.value is None else str(value.value)


def setup_facts(tree: ast.AST) -> Tuple[Dict[Tuple[str, ...], Optional[str]], bool]:
    """(source pattern -> platform or None, does a test name ROCm?) from a parsed setup.py."""
    facts, evidence, _ = setup_file_facts(tree)
    return facts, evidence


def setup_file_facts(tree: ast.AST) -> Tuple[Dict[Tuple[str, ...], Optional[str]], bool, Macros]:
    """(source pattern -> platform or None, does a test name ROCm?, macro -> [(where, value)])
    from a parsed setup.py (or any build script that calls ``cpp_extension.load``)."""
    seen: Dict[Tuple[str, ...], List[Optional[str]]] = {}
    macros: Macros = {}
    evidence = [False]
    bindings = _single_bindings(tree)
    lists = _source_lists(tree, bindings)

    def test(node: ast.AST, state: Worlds) -> Tuple[Worlds, Worlds]:
        cond = py_condition(node, 0, bindings)
        if cond == _ROCM_ATOM or _ROCM_ATOM in _atoms(node):
            evidence[0] = True
        return both(state, cond), both(state, _negate(cond))

    def strings(node: ast.AST, state: Worlds, allowed: bool, depth: int = 0, in_macros: bool = False) -> None:
        if depth > 60:
            return
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                if allowed:
                    pattern = _source_pattern(node.value)
                    if pattern is not None:
                        seen.setdefault(pattern, []).append(platform_of(state))
                if node.value.lstrip().startswith("-D") and len(node.value) < 4096 and not cmake[0]:
                    for m in _DEFINE_FLAG.finditer(node.value):
                        if (m.group(2) or "").upper() not in _CMAKE_BOOLEANS:  # -DUSE_ROCM=ON: a CMake option
                            macros.setdefault(m.group(1), []).append((state, m.group(2) or "1"))
            return
        pair = _macro_pair(node) if in_macros else None
        if pair is not None:
            macros.setdefault(pair[0], []).append((state, pair[1]))
            return
        if isinstance(node, ast.IfExp):
            yes, no = test(node.test, state)
            strings(node.body, yes, allowed, depth + 1, in_macros)
            strings(node.orelse, no, allowed, depth + 1, in_macros)
            return
        if isinstance(node, ast.JoinedStr):
            return  # f"csrc/{x}.cu": computed
        if isinstance(node, ast.Name) and node.id in lists:
            if allowed:  # a source list added here: its paths, in this branch
                strings(bindings[node.id], state, True, depth + 1, in_macros)
            return
        if allowed and (
            isinstance(node, ast.Name)
            or isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
        ):
            # ``os.path.join(this_dir, "csrc", "k.cu")``, a name bound once to a path
            value = _path_value(node, bindings)
            pattern = _source_pattern(value) if value else None
            if pattern is not None:
                seen.setdefault(pattern, []).append(platform_of(state))
            if isinstance(node, ast.Name) or value is not None:
                return
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                strings(elt, state, True, depth + 1, in_macros)
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            extends = name in _EXTENDERS and isinstance(func, ast.Attribute) and _holds_macro(func.value)
            # ``sources.extend(cuda_sources)``, ``list(cuda_sources)``: the arguments are sources too
            adds = (
                name in _EXTENDERS
                and isinstance(func, ast.Attribute)
                and _names_sources(func.value)
                or name in _PASS_THROUGH_CALLS
                and allowed
            )
            for k, arg in enumerate(node.args):
                strings(arg, state, name in _GLOB_CALLS and k == 0 or adds, depth + 1, extends)
            for kw in node.keywords:
                strings(kw.value, state, kw.arg == "sources", depth + 1, kw.arg == "define_macros")
            return
        if isinstance(node, ast.BinOp):
            joined = allowed and isinstance(node.op, ast.Add)  # ``base_sources + cuda_sources``
            strings(node.left, state, joined, depth + 1, in_macros)
            strings(node.right, state, joined, depth + 1, in_macros)
            return
        if isinstance(node, ast.Starred):
            strings(node.value, state, allowed, depth + 1, in_macros)
            return
        if isinstance(node, ast.Dict):
            for value in node.values:
                strings(value, state, False, depth + 1, in_macros)
            return
        for child in ast.iter_child_nodes(node):
            strings(child, state, False, depth + 1)

    cmake = [False]  # in a statement that builds a CMake command line: its -D are CMake's

    def block(stmts: Sequence[ast.stmt], state: Worlds, depth: int = 0) -> None:
        if depth > 40:
            return
        for stmt in stmts:
            if not isinstance(
                stmt,
                (
                    ast.If,
                    ast.While,
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.ClassDef,
                    ast.For,
                    ast.AsyncFor,
                    ast.With,
                    ast.AsyncWith,
                    ast.Try,
                ),
            ):
                cmake[0] = _mentions_cmake(stmt)
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
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id in lists:
                    continue  # a source list's binding: its paths count where it is added
                if stmt.value is not None:
                    strings(stmt.value, state, True, 0, any(_holds_macro(t) for t in targets))
            else:
                strings(stmt, state, False)

    block(getattr(tree, "body", []), ALWAYS)
    facts = {p: (ps[0] if len(set(ps)) == 1 else None) for p, ps in seen.items()}
    return facts, evidence[0], macros


def _names_sources(node: ast.AST) -> bool:
    """Is ``node`` a name (or attribute) for a list of sources: ``sources``, ``ext_src``?"""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return bool(_SOURCES_NAME.search(name))


def _atoms(node: ast.AST) -> List[Worlds]:
    return [_py_atom(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))]
