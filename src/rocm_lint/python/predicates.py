"""A project's own predicates, in any shape that computes a fact: what a function returns.

``summarize(fn, gates)`` reads a function's body and answers, as :mod:`rocm_lint.python.gates`
answers for a test expression, a pair ``(when_true, when_false)``: what is known when a call
of the function is truthy, and when it is falsy.  Every ``return`` is one outcome; the walk
carries the facts its path holds (``if``/``else`` branches, early exits — ``if not
torch.cuda.is_available() or probe(): return False`` leaves ``not probe()`` behind —,
``assert``s, ``try`` handlers with the facts of the ``try``'s entry), so that::

    def _is_hip():
        hip = torch.version.hip is not None        # a local bound once
        return hip

    def _is_hip():
        if torch.cuda.is_available() and torch.version.hip:
            return True
        return False

are ROCm predicates.  A truthy outcome counts toward ``when_true`` with the path's fact, or
else the returned value's own truth fact; a falsy one (``return False``/``None``, falling off
the end) toward ``when_false`` likewise.  A side's fact is kept only when every outcome on that
side agrees on it: one ``return x or torch.cuda.is_available()`` that may be true on NVIDIA
makes the function no ROCm fact.

Sound by construction, never clever: a local counts only when bound exactly once by a plain
assignment outside any loop (a parameter, a loop variable or a name bound twice is unknown,
whatever a module-level name of the same spelling means); ``async`` functions and generators
(their call is always truthy), functions with a ``match`` and decorators that may replace
the function are no predicates.  The decorators kept are those that cache or re-dispatch the
same function (``functools.cache``/``lru_cache``, ``staticmethod``, ``classmethod``) and
``property``/``cached_property``, whose predicate is read as an attribute (``self.is_amd``).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.python.names import dotted
from rocm_lint.python.value_scopes import nvidia_only_import

Fact = Optional[str]
Facts = Tuple[Fact, Fact]
UNKNOWN: Facts = (None, None)

MAX_STATEMENTS = 40  # a predicate is short: longer functions are not read (cost bound)
# Decorators that return the same function, or one that returns what it returns.
_SAME_RESULT = frozenset(
    {
        "cache",
        "lru_cache",
        "cached",
        "memoize",
        "memoized",
        "staticmethod",
        "classmethod",
        "abstractmethod",
        "override",
        "final",
        "no_type_check",
    }
)
_ATTRIBUTE = frozenset({"property", "cached_property"})  # read as ``obj.name``, not called


def binding_kind(fn: ast.AST) -> Optional[str]:
    """ "call" for a function whose call returns its body's value, "attr" for a property,
    None when a decorator may change what a use of the name gives (``@x.setter`` included)."""
    kind = "call"
    for decorator in fn.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(target)
        last = name.rsplit(".", 1)[-1] if name else None
        if last in _ATTRIBUTE:
            kind = "attr"
        elif last not in _SAME_RESULT:
            return None
    return kind


class _Path(NamedTuple):
    rocm: bool = False  # the path runs only on ROCm
    nvidia: bool = False  # the path runs only where ROCm is not in use

    def apply(self, fact: Fact) -> "_Path":
        if fact == ROCM:
            return self._replace(rocm=True)
        if fact == NVIDIA:
            return self._replace(nvidia=True)
        return self

    def fact(self) -> Fact:
        return ROCM if self.rocm else NVIDIA if self.nvidia else None


def _join(paths: List[_Path]) -> _Path:
    """What holds after either of ``paths``: the facts they all hold."""
    return _Path(all(p.rocm for p in paths), all(p.nvidia for p in paths))


def _own_nodes(fn: ast.AST) -> Iterator[Tuple[ast.AST, bool]]:
    """(node, inside a loop) for every node of ``fn``'s body, nested scopes' bodies left out
    (their names are yielded as bindings: a nested ``def probe`` binds ``probe`` here)."""
    stack: List[Tuple[ast.AST, bool]] = [(s, False) for s in reversed(fn.body)]
    while stack:
        node, in_loop = stack.pop()
        yield node, in_loop
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        loop = in_loop or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        stack.extend((child, loop) for child in reversed(list(ast.iter_child_nodes(node))))


def _statements(fn: ast.AST) -> Optional[List[Tuple[ast.AST, bool]]]:
    """(statement or ``except``/``case`` clause, inside a loop) for the function's own
    statements (not those of nested defs), None past MAX_STATEMENTS: no expression is walked."""
    found: List[Tuple[ast.AST, bool]] = []
    stack: List[Tuple[ast.AST, bool]] = [(s, False) for s in reversed(fn.body)]
    while stack:
        stmt, in_loop = stack.pop()
        found.append((stmt, in_loop))
        if len(found) > MAX_STATEMENTS:
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        loop = in_loop or isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        children: List[ast.AST] = []
        for name in ("body", "orelse", "finalbody"):
            children.extend(getattr(stmt, name, None) or ())
        for clause in list(getattr(stmt, "handlers", None) or ()) + list(getattr(stmt, "cases", None) or ()):
            found.append((clause, loop))
            children.extend(clause.body)
        stack.extend((child, loop) for child in reversed(children))
    return found


def _targets(stmt: ast.AST) -> List[ast.AST]:
    """The expressions a statement binds or deletes."""
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


def _locals(
    fn: ast.AST, statements: List[Tuple[ast.AST, bool]], source: Optional[str] = None
) -> Optional[Dict[str, Optional[ast.AST]]]:
    """The function's local names: the value of those bound once by a plain assignment outside
    loops, None for the others (parameters, loop variables, names bound twice).  Names declared
    ``global``/``nonlocal`` are left to the module.  None when the function is no predicate at
    all (a generator, a ``match``).  ``statements`` are :func:`shape`'s.  The expressions are
    walked only where ``source`` (the function's text, when known) holds ``yield``, ``await``
    or ``:=``: comprehension variables bind in their own scope."""
    args = fn.args
    params = [a.arg for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    found: Dict[str, Optional[ast.AST]] = {name: None for name in params}
    declared: set = set()
    counts: Dict[str, int] = {}

    def bind(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n
        found.setdefault(name, None)

    for stmt, in_loop in statements:
        if type(stmt).__name__ in ("Match", "match_case"):
            return None
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            declared.update(stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(stmt.name, 2)
        elif isinstance(stmt, ast.ExceptHandler) and stmt.name:
            bind(stmt.name, 2)
        for target in _targets(stmt):
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    bind(node.id)
        if not in_loop and isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id not in params:
                found[targets[0].id] = stmt.value  # kept only if it stays the one binding
    if source is None or "yield" in source or "await" in source or ":=" in source:
        for node, _ in _own_nodes(fn):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                return None
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                bind(node.target.id)
    for name, value in list(found.items()):
        if name in declared:
            del found[name]
        elif value is not None and counts.get(name, 0) != 1:
            found[name] = None
    return found


class _Outcomes:
    """The function's outcomes: the fact each truthy and each falsy one holds."""

    def __init__(self, gates) -> None:
        self.gates = gates
        self.true: List[Fact] = []
        self.false: List[Fact] = []

    def returned(self, value: Optional[ast.AST], path: _Path) -> None:
        if path.rocm and path.nvidia:
            return  # no platform takes this path
        p = path.fact()
        if value is None:
            self.false.append(p)
        elif isinstance(value, ast.Constant):
            (self.true if value.value else self.false).append(p)
        elif isinstance(value, ast.IfExp):  # return True if torch.version.hip else False
            t, f = self.gates.facts(value.test)
            self.returned(value.body, path.apply(t))
            self.returned(value.orelse, path.apply(f))
        else:
            t, f = self.gates.facts(value)
            self.true.append(p or t)
            self.false.append(p or f)

    def block(self, stmts: List[ast.stmt], path: _Path) -> Optional[_Path]:
        """Walk a block; the path after it, None when it never completes normally."""
        for stmt in stmts:
            after = self.statement(stmt, path)
            if after is None:
                return None
            path = after
        return path

    def statement(self, s: ast.stmt, path: _Path) -> Optional[_Path]:
        gates = self.gates
        if isinstance(s, ast.Return):
            self.returned(s.value, path)
            return None
        if isinstance(s, (ast.Raise, ast.Continue, ast.Break)):
            return None  # a loop's body: the loop itself goes on with its entry path
        if isinstance(s, ast.If):
            t, f = gates.facts(s.test)
            live = [
                p
                for p in (self.block(s.body, path.apply(t)), self.block(s.orelse, path.apply(f)))
                if p is not None
            ]
            return _join(live) if live else None
        if isinstance(s, ast.Assert):
            return path.apply(gates.facts(s.test)[0])
        if isinstance(s, ast.Expr):
            return None if gates.terminates([s]) else path
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            self.block(s.body, path)
            self.block(s.orelse, path)
            return path  # the loop may run no time, or leave it by a break
        if isinstance(s, (ast.With, ast.AsyncWith)):
            after = self.block(s.body, path)
            return path if after is None else after  # a context manager may swallow the exit
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            body = self.block(s.body, path)
            if body is not None and s.orelse:
                body = self.block(s.orelse, body)
            # a handler may start anywhere in the body: with the facts of the try's entry
            live = [p for p in [body, *(self.block(h.body, path) for h in s.handlers)] if p is not None]
            if s.finalbody and self.block(s.finalbody, path) is None:
                return None
            return _join(live) if live else None
        if isinstance(s, (ast.Import, ast.ImportFrom)) and nvidia_only_import(s):
            return path.apply(NVIDIA)  # it raises ImportError on ROCm: what follows runs on NVIDIA
        return path  # assignments, other imports, nested defs, pass ...

    def facts(self) -> Facts:
        return (_agree(self.true), _agree(self.false))


def _agree(facts: List[Fact]) -> Fact:
    first = facts[0] if facts else None
    return first if first is not None and all(f == first for f in facts) else None


def shape(fn: ast.AST) -> Optional[List[Tuple[ast.AST, bool]]]:
    """The function's own statements when it may be a predicate: not ``async`` (a coroutine is
    always truthy), short, some ``return`` gives a value; else None.  Statements only: cheap."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return None
    statements = _statements(fn)
    if statements is None or not any(
        isinstance(s, ast.Return) and s.value is not None for s, _ in statements
    ):
        return None
    return statements


def function_scope(
    fn: ast.AST, statements: Optional[List[Tuple[ast.AST, bool]]] = None, source: Optional[str] = None
) -> Optional[Dict[str, Optional[ast.AST]]]:
    """The function's locals (see :func:`_locals`), None when it is no predicate."""
    if statements is None:
        statements = shape(fn)
    return None if statements is None else _locals(fn, statements, source)


def summarize(fn: ast.AST, gates, scope: Optional[Dict[str, Optional[ast.AST]]] = None) -> Facts:
    """(when_true, when_false) of a call of ``fn`` (see the module docstring); ``scope`` is
    ``function_scope(fn)`` when the caller has it already."""
    if scope is None:
        scope = function_scope(fn)
        if scope is None:
            return UNKNOWN
    outcomes = _Outcomes(gates)
    with gates.local_scope(scope):
        end = outcomes.block(fn.body, _Path())
        if end is not None:
            outcomes.returned(None, end)  # falling off the end returns None
    return outcomes.facts()


def constant_only(fn: ast.AST) -> bool:
    """Is ``fn``'s body a straight line that returns a constant (``def is_hip(): return
    False``)?  Then it is no platform test, whatever its name says."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return False
    simple = (ast.Return, ast.Expr, ast.Pass, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)
    returns = [s for s in fn.body if isinstance(s, ast.Return)]
    return (
        bool(returns)
        and all(isinstance(s, simple) for s in fn.body)
        and all(s.value is None or isinstance(s.value, ast.Constant) for s in returns)
        and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for s in fn.body for n in ast.walk(s))
    )


# -- module flags that a platform test sets --------------------------------------------------------
def platform_flags(tree: ast.Module, gates) -> Dict[str, Facts]:
    """Module-level flags that only a platform branch turns on, as a project writes them::

        symm_mem_available = False
        if _is_cuda:                     # the module's (or an imported) NVIDIA predicate
            symm_mem_available = True

    ``symm_mem_available`` is then an NVIDIA fact when true (``if not symm_mem_available:
    return`` leaves NVIDIA-only code behind), as a ROCm one when every ``True`` sits under a ROCm
    test.  Sound by construction: the name is bound only by plain ``NAME = True/False/None``
    statements at module level (``if``/``try``/``with``/loop bodies included), at least one of
    them truthy, every truthy one under the same platform, and nothing else in the module binds,
    deletes or declares it ``global`` (a function could turn it on anywhere).
    """
    nested = [
        s
        for s in tree.body
        if isinstance(s, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(s).__name__ == "TryStar"
    ]
    if not any(
        isinstance(n, (ast.Assign, ast.AnnAssign))
        and isinstance(n.value, ast.Constant)
        and n.value.value is True
        for s in nested
        for n in ast.walk(s)
    ):
        return {}  # no flag turned on in a block: nothing to learn (most modules)
    bindings: Dict[str, List[Tuple[bool, Fact]]] = {}
    recognised: set = set()

    def walk(stmts: List[ast.stmt], path: _Path) -> None:
        for s in stmts:
            if isinstance(s, (ast.Assign, ast.AnnAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                value = s.value
                if (
                    len(targets) == 1
                    and isinstance(targets[0], ast.Name)
                    and isinstance(value, ast.Constant)
                    and (value.value is None or isinstance(value.value, bool))
                ):
                    if not (path.rocm and path.nvidia):  # a branch no platform takes binds nothing
                        bindings.setdefault(targets[0].id, []).append((bool(value.value), path.fact()))
                    recognised.add(id(targets[0]))
            elif isinstance(s, ast.If):
                t, f = gates.facts(s.test)
                walk(s.body, path.apply(t))
                walk(s.orelse, path.apply(f))
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                walk(s.body, path)
                for h in s.handlers:
                    walk(h.body, path)
                walk(s.orelse, path)
                walk(s.finalbody, path)
            elif isinstance(s, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                walk(s.body, path)
                walk(getattr(s, "orelse", []), path)

    walk(tree.body, _Path())
    candidates: Dict[str, Facts] = {}
    for name, bound in bindings.items():
        on = [fact for truthy, fact in bound if truthy]
        if (
            on
            and on[0] in (ROCM, NVIDIA)
            and all(fact == on[0] for fact in on)
            and gates.facts(ast.Name(id=name, ctx=ast.Load())) == UNKNOWN
        ):
            # (a name the analysis already reads, ``IS_ROCM`` by its name, keeps what it says)
            candidates[name] = (on[0], None)
    if not candidates:
        return {}
    # Any other binding of the name anywhere in the module (a function's ``global`` included)
    # makes it no flag.
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if node.id in candidates and id(node) not in recognised:
                del candidates[node.id]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                candidates.pop(name, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            candidates.pop(node.name, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                candidates.pop((alias.asname or alias.name).split(".")[0], None)
        elif isinstance(node, ast.arg):  # a parameter of that name would read as the flag
            candidates.pop(node.arg, None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            candidates.pop(node.name, None)
        if not candidates:
            break
    return candidates
