"""Where a Python fix may test the platform: the fixer's plan (``rocm_lint.fix.nvidia_path``
checks the result on its own).

* The flag goes right after the module's first unconditional module-level import of torch (or
  after the leading imports when those come after it), so every name it reads is bound; only
  fixes in later top-level statements use it.
* ``import torch`` is added only right after a module-level ``from torch... import`` / ``import
  torch.x as y`` (torch is imported already: the line only binds a name the module never uses).
* A fix before that point, or in a module that imports torch lazily, tests
  ``<torch>.version.hip`` inline where a function imports torch before the fix; else it has no
  safe place and is reported without a fix.
* The flag's name is one the module never mentions (any scope, ``__all__``), that its package's
  ``__init__.py`` does not use, and that no star import of the module may bind.  Where code can
  see a new module-level name at all (``fix.namespace``: the module reads its own namespace, a
  project module star-imports it), no flag is added: the test is made in place.
* LibCST is only given modules it can parse without crashing (:func:`too_complex_for_libcst`).
"""

from __future__ import annotations

import ast
import os
import re
from typing import List, Optional, Set, Tuple

from rocm_lint.discovery import read_bounded

FLAG_NAMES = ("is_rocm", "_is_rocm", "_is_rocm_build", "_is_rocm_flag")
# LibCST's native parser crashes (SIGSEGV) on a 10,000-operand `or` and needs minutes for a
# 10,000-operand `+`; 5,000 operands parse.  Refuse well below.
MAX_OPERANDS = 1000
MAX_DEPTH = 150


def too_complex_for_libcst(tree: ast.AST) -> Optional[str]:
    """Why LibCST must not be given this module (None: it may)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"the file nests deeper than {MAX_DEPTH} levels: no fix is built for it"
        count = 0
        if isinstance(node, ast.BoolOp):
            count = len(node.values)
        elif isinstance(node, ast.Compare):
            count = len(node.comparators) + 1
        elif isinstance(node, ast.BinOp):
            count, left = 2, node.left
            while isinstance(left, ast.BinOp):
                count, left = count + 1, left.left
        elif isinstance(node, (ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict)):
            count = 0  # flat sequences parse fine
        if count > MAX_OPERANDS:
            return f"an expression of the file has more than {MAX_OPERANDS} operands: no fix is built for it"
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None


def identifiers(tree: ast.AST) -> Set[str]:
    """Every name the module binds or reads, in any scope, and every identifier-like string."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)
        elif getattr(node, "name", None) and isinstance(getattr(node, "name"), str):
            out.add(node.name)  # match patterns
        elif getattr(node, "rest", None) and isinstance(getattr(node, "rest"), str):
            out.add(node.rest)
    return out


def binding_count(tree: ast.AST, name: str) -> int:
    """How many times ``name`` is bound anywhere in the module (every scope)."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            count += 1
        elif isinstance(node, ast.arg) and node.arg == name:
            count += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            count += 1
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            count += 1
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            count += 1
        elif isinstance(node, ast.Global) and name in node.names:
            count += 1
        elif (
            not isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.alias)
            )
            and getattr(node, "name", None) == name
        ):
            count += 1  # match patterns
    return count


def imports_torch(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return not stmt.level and (stmt.module or "").split(".")[0] == "torch"
    return importorskip_alias(stmt) is not None


def importorskip_alias(stmt: ast.stmt) -> Optional[str]:
    """``X = pytest.importorskip("torch")``: X."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and stmt.value.args
        and isinstance(stmt.value.args[0], ast.Constant)
        and stmt.value.args[0].value == "torch"
    ):
        func = stmt.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "importorskip":
            return stmt.targets[0].id
    return None


def torch_alias_of(stmt: ast.stmt) -> Optional[str]:
    """The name ``stmt`` binds to the torch module itself (``import torch``, ``import torch as th``,
    ``import torch.nn``, ``th = pytest.importorskip("torch")``)."""
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.name == "torch":
                return a.asname or "torch"
            if a.asname is None and a.name.startswith("torch."):
                return "torch"
        return None
    return importorskip_alias(stmt)


def top_index(tree: ast.Module, line: int) -> int:
    """The index of the top-level statement that holds ``line`` (decorators included)."""
    for i, stmt in enumerate(tree.body):
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        if start <= line <= (stmt.end_lineno or stmt.lineno):
            return i
    return len(tree.body)


def _function_chain(tree: ast.Module, line: int) -> List[ast.AST]:
    """The defs and classes that hold ``line``, outermost first."""
    chain: List[ast.AST] = []
    body = tree.body
    while True:
        for stmt in body:
            if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                break
        else:
            return chain
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            chain.append(stmt)
        nested = (
            [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
            + [h.body for h in getattr(stmt, "handlers", [])]
            + [c.body for c in getattr(stmt, "cases", [])]
        )
        inner = [
            s
            for block in nested
            if isinstance(block, list)
            for s in block
            if isinstance(s, ast.stmt) and s.lineno <= line <= (s.end_lineno or s.lineno)
        ]
        if not inner:
            return chain
        body = [inner[0]]
        if inner[0] is stmt:
            return chain


def _local_bindings(func: ast.AST, name: str) -> List[ast.AST]:
    """The nodes that bind ``name`` in ``func``'s own scope (not in nested defs)."""
    found: List[ast.AST] = []
    args = func.args if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if args is not None:
        every = (
            list(args.posonlyargs)
            + list(args.args)
            + list(args.kwonlyargs)
            + [a for a in (args.vararg, args.kwarg) if a]
        )
        found += [a for a in every if a.arg == name]
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                found.append(node)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            found.append(node)
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            found.append(node)
        elif isinstance(node, (ast.ExceptHandler,)) and node.name == name:
            found.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def torch_in_function(func: ast.AST, line: int) -> Optional[str]:
    """The name a statement of ``func``'s body imports torch as, before the top-level statement
    of the body that holds ``line``, when nothing else in ``func`` binds that name."""
    for stmt in func.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            return None
        alias = torch_alias_of(stmt) if isinstance(stmt, ast.Import) else None
        if alias is not None:
            binders = _local_bindings(func, alias)
            if all(isinstance(b, ast.alias) for b in binders) and all(
                _binds_torch(func, b, alias) for b in binders
            ):
                return alias
    return None


def _binds_torch(func: ast.AST, alias_node: ast.alias, name: str) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Import) and any(a is alias_node for a in node.names):
            return torch_alias_of(ast.Import(names=[alias_node])) == name
    return False


def torch_at(
    tree: ast.Module, line: int, module_alias: Optional[str], bound_at: Optional[int]
) -> Optional[str]:
    """A name that surely reads the torch module at ``line``: a torch import earlier in the
    enclosing function, else the module's alias (bound by top-level statement ``bound_at``) when
    the line's top-level statement comes later and no enclosing scope binds the name."""
    chain = _function_chain(tree, line)
    for func in reversed(chain):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = torch_in_function(func, line)
            if local:
                return local
            break
    if module_alias is None or bound_at is None or top_index(tree, line) <= bound_at:
        return None
    if any(_local_bindings(f, module_alias) for f in chain):
        return None
    return module_alias


def module_rebinds(tree: ast.Module, name: str) -> bool:
    """``name`` is bound at module level (or declared global) by something other than a torch import."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Global) and name in node.names:
            return True
    for stmt in tree.body:
        stack: List[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if getattr(node, "name", None) == name:
                    return True
                continue
            if isinstance(node, (ast.Import, ast.Assign)) and torch_alias_of(node) == name:
                continue
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
                return True
            if isinstance(node, ast.ExceptHandler) and node.name == name:
                return True
            stack.extend(ast.iter_child_nodes(node))
    return False


def package_view(path: Optional[str]) -> Tuple[Set[str], bool, Set[str]]:
    """(words of the package's ``__init__.py``, whether it star-imports this module, the names
    of the modules beside it)."""
    if not path:
        return set(), False, set()
    folder, base = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(base)[0]
    try:
        siblings = {os.path.splitext(n)[0] for n in os.listdir(folder)}
    except OSError:
        siblings = set()
    init = os.path.join(folder, "__init__.py")
    if stem == "__init__" or not os.path.isfile(init):
        return set(), False, siblings
    try:
        data = read_bounded(init, 1 << 20)
        if isinstance(data, str):
            raise OSError(data)
        text = data.decode("utf-8", "replace")
    except OSError:
        return set(), False, siblings
    star = re.search(r"^\s*from\s+[.\w]*\b" + re.escape(stem) + r"\s+import\s+\*", text, re.M) is not None
    return set(re.findall(r"[A-Za-z_]\w*", text)), star, siblings


def fresh_flag_name(tree: ast.Module, path: Optional[str], avoid=None) -> Optional[str]:
    """A flag name the module never mentions and its package does not use or re-export
    (nor one ``avoid(name)`` refuses: a name a star import of the module may bind)."""
    taken = identifiers(tree)
    words, star, siblings = package_view(path)
    has_all = "__all__" in taken
    for name in FLAG_NAMES:
        if name in taken or name in words or name in siblings:
            continue
        if avoid is not None and avoid(name):
            continue
        if star and not has_all and not name.startswith("_"):
            continue
        return name
    return None
