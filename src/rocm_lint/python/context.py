"""What a Python checker may ask about the module it looks at: :class:`ModuleContext`.

One context per analysed module.  It is built in two phases: :meth:`ModuleContext.__init__`
collects the module's facts before any rule runs (imports and aliases, assignments, the ROCm
and NVIDIA predicates the module defines, see :mod:`rocm_lint.python.gates`); the walk
(:mod:`rocm_lint.python.analyzer`) then keeps ``state``, ``statement``, ``node``, ``function``
and ``stack`` current for the node being checked.  Checkers only read it; a value a rule wants
computed once per module goes through :meth:`ModuleContext.memo`.

Public API for checkers: ``path``, ``tree``, ``text``, ``config``, ``imports``, ``gates``,
``state``, ``statement``, ``node``, ``function``, ``single_bindings``, ``all_bindings``;
``qualname``, ``resolve``, ``bound_values``, ``constant``, ``string_text``, ``segment``, ``snippet``,
``parameter_default``, ``is_whole_statement``, ``alone_on_its_lines``, ``parent_of``,
``ancestors``, ``enclosing_statements``, ``caught``, ``source_lines``, ``memo``; ``project`` and
``exported`` for facts other modules of the project export (:mod:`rocm_lint.python.project`);
``values``, what an expression denotes on each platform (:mod:`rocm_lint.python.values`);
``workspace``, the front end's caches.  The source-text questions (``source_lines``, ``segment``,
``snippet``, ``is_whole_statement``, ``alone_on_its_lines``) are :mod:`rocm_lint.python.source_view`.
"""

from __future__ import annotations

import ast
import bisect
from typing import (
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from rocm_lint.config import Config
from rocm_lint.domain import NVIDIA_ONLY_IMPORTS
from rocm_lint.python import predicates
from rocm_lint.python.gates import NVIDIA, ROCM, Fact, GateAnalysis
from rocm_lint.python.names import ImportMap
from rocm_lint.python.project import PREDICATES, ExportedFacts, Project, register_context
from rocm_lint.python.project_text import NEVER_PROJECT
from rocm_lint.python.source_view import SourceView
from rocm_lint.python.values import ValueFlow

T = TypeVar("T")


class ModuleFacts(Generic[T]):
    """A fact about a whole module that one or more rules read (phase 1 of the analysis).

    Declared once, next to the rules that use it (``Rule(..., facts=(BUILD_FACTS,))``);
    ``compute(ctx)`` runs at most once per module, on first use, and reads the module as a whole
    (its tree, its context's bindings and gates, or a full gated walk with
    ``python.analyzer.walk_gated``), never the state of the walk in progress.  This is where
    project-wide facts plug in.
    """

    def __init__(self, name: str, compute: Callable[["ModuleContext"], T]) -> None:
        self.name = name
        self.compute = compute

    def __repr__(self) -> str:
        return f"ModuleFacts({self.name!r})"


class State(NamedTuple):
    """What is known about the code being visited."""

    nvidia_only: bool = False  # only ever runs where ROCm is not in use
    rocm_only: bool = False  # only ever runs on ROCm
    import_guarded: bool = False  # inside ``try:`` whose handler catches ImportError
    in_function: bool = False
    # after an import that only succeeds on NVIDIA (values.py): NVIDIA-only code for every
    # statement but the module's imports, each reported on its own (ROC402)
    after_nvidia_import: bool = False

    def apply(self, fact: Fact) -> "State":
        if fact == NVIDIA and not self.nvidia_only:
            return self._replace(nvidia_only=True)
        if fact == ROCM and not self.rocm_only:
            return self._replace(rocm_only=True)
        return self


class ModuleContext(SourceView):
    """Everything a checker may ask about the module; ``state`` is the current node's."""

    def __init__(
        self, path: str, tree: ast.Module, config: Config, text: str = "", project: Optional["Project"] = None
    ) -> None:
        self.path = path
        # The project model (phase 0): facts other modules export; lazily filled.
        self.project: "Project" = project if project is not None else Project(config)
        self.tree = tree
        self.text = text  # the module's source, for file-level questions
        self._lines: Optional[List[str]] = None
        self._memo: Dict[str, object] = {}
        self._qualnames: Dict[int, Optional[str]] = {}
        self.config = config
        self.imports = ImportMap()
        self.gates = GateAnalysis(
            self.imports, config.rocm_predicates, config.cuda_predicates, external=self._imported_predicate
        )
        self.state = State()
        self.statement: Optional[ast.stmt] = None  # the innermost statement being visited
        self.node: Optional[ast.AST] = None  # the node being checked
        self.function: Optional[_Function] = None  # the innermost function being visited
        self.stack: List[ast.AST] = []  # the visited node's ancestors, module first
        # Names assigned exactly once anywhere in the module, with their value:
        # lets ``MODE = "reduce-overhead"; torch.compile(m, mode=MODE)`` resolve.
        self.single_bindings: Dict[str, ast.AST] = {}
        # Every value assigned to a name (``x = ...``) or attribute (``self.x = ...``), by name.
        self.all_bindings: Dict[str, List[ast.AST]] = {}
        self._learn(tree)

    def _learn(self, tree: ast.Module) -> None:
        assignments: List[Tuple[ast.AST, ast.AST]] = []
        functions: List[ast.AST] = []
        counts: Dict[str, int] = {}
        for stmt in _statements(tree.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.imports.add_import(stmt)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    assignments.append((target, stmt.value))
                    key = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                    if key is not None:
                        self.all_bindings.setdefault(key, []).append(stmt.value)
                    if isinstance(target, ast.Name):
                        counts[target.id] = counts.get(target.id, 0) + 1
                        if len(targets) == 1:
                            self.single_bindings[target.id] = stmt.value
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(stmt)
        for name, n in counts.items():
            if n > 1:
                self.single_bindings.pop(name, None)
        for target, value in assignments:
            if isinstance(target, ast.Name) and counts.get(target.id) == 1:
                self.imports.add_alias(target.id, value)
        # Only bindings whose text could name a platform test are evaluated (most
        # assignments in a big module are not; evaluating them all dominated the run time).
        lines = self.source_lines() if self.text else None
        words = platform_words(self.config)
        # The lines that hold one of ``words``, found by one search of the lowered text per
        # word (words grow as bindings are learned); a node matters when one of its lines does
        # (a byte per line: a range is asked in C, 20k statements on one line stay linear).
        hit = bytearray(len(lines) if lines is not None else 0)
        low_lines = [line.lower() for line in lines] if lines is not None else []
        starts: List[int] = []
        offset = 0
        for line in low_lines:
            starts.append(offset)
            offset += len(line)
        low_text = "".join(low_lines)
        del low_lines

        def add_word(word: str) -> None:
            if word not in words:
                words.append(word)
            pos = low_text.find(word)
            while pos != -1:
                i = bisect.bisect_right(starts, pos) - 1
                hit[i] = 1
                pos = low_text.find(word, starts[i + 1]) if i + 1 < len(starts) else -1

        if lines is not None:
            for word in list(words):
                add_word(word)

        def may_matter(node: ast.AST) -> bool:
            if lines is None:
                return True
            end = min(getattr(node, "end_lineno", None) or node.lineno, len(lines))
            return hit.find(1, node.lineno - 1, end) != -1

        def single_return(fn) -> bool:
            body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            return len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None

        module_level = {id(stmt) for stmt in tree.body}
        for fn in functions:
            if id(fn) in module_level:
                self.gates.learn_constant_function(fn)  # def is_hip(): return False
                if not single_return(fn):
                    self.gates.learn_named_predicate(fn)  # def rocm_build() -> bool: ...
                    if '"hip"' in (self.segment(fn) or "") or "'hip'" in (self.segment(fn) or ""):
                        self.gates.learn_device_function(fn)  # if is_hip(): return "hip"

        def calls_a_predicate(fn) -> bool:
            """A function with no platform word may wrap a learned predicate (``ok = not
            _probe()``): its text is searched for their names (the few short functions asked)."""
            if may_matter(fn):
                return True
            names = [*self.gates.bound_functions, *self.gates.bound_attrs]
            short = (getattr(fn, "end_lineno", None) or fn.lineno) - fn.lineno < 4 * predicates.MAX_STATEMENTS
            text = self.segment(fn) if names and short else None
            return text is not None and any(name in text for name in names)

        def learn_functions() -> None:
            """Predicates in any shape (python/predicates.py); a few rounds: one may call another."""
            for _ in range(3):
                text_of = self.segment if self.text else None
                if not self.gates.learn_functions(functions, calls_a_predicate, text_of):
                    return

        learn_functions()
        if self.gates.device_functions:
            for target, value in assignments:
                self.gates.learn_device_name(target, value)
        learned = False
        for target, value in assignments:
            if not may_matter(value):
                continue
            before = len(self.gates.bound_names) + len(self.gates.bound_attrs)
            self.gates.learn_assignment(target, value)
            if len(self.gates.bound_names) + len(self.gates.bound_attrs) > before:
                learned = True
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if name.lower() not in words and lines is not None:
                    add_word(name.lower())  # later bindings may build on this one
        # AVAILABLE = False / if _is_cuda: AVAILABLE = True (python/predicates.py)
        for name, flag in predicates.platform_flags(tree, self.gates).items():
            if name not in self.gates.bound_names:
                self.gates.learn_flag(name, flag)
                learned = True
        if learned:
            learn_functions()

    # -- the project model ----------------------------------------------------------------
    def _imported_predicate(self, qualname: str):
        """What another module binds an imported name to: ("value"|"call", facts) for a
        predicate, ("device", None) for a platform name."""
        return self.project.lookup(self.path, qualname, PREDICATES)

    def imported_predicates(self) -> Dict[str, object]:
        """Names this module imports (``from .utils import ON_AMD``) that another project
        module binds to a platform test, with their facts (values only, not functions)."""
        found: Dict[str, object] = {}
        for local, qual in self.imports.names.items():
            if "." not in qual:
                continue
            facts = self._imported_predicate(qual)
            if facts is not None and facts[0] == "value":
                found[local] = facts[1]
        return found

    def exported(self, fact: "ExportedFacts[T]", node: ast.AST) -> Optional[T]:
        """What ``fact`` says about the name ``node`` refers to: a module-level name of this
        module, or a name imported from a project module (``from .utils import get_cc``).
        None when unknown (an unimported name, a third-party module, a local variable)."""
        if isinstance(node, ast.Name):
            root = node.id
        elif isinstance(node, ast.Attribute):
            root_node = node
            while isinstance(root_node, ast.Attribute):
                root_node = root_node.value
            if not isinstance(root_node, ast.Name):
                return None
            root = root_node.id
        else:
            return None
        if root in self.imports.names:
            qual = self.qualname(node)
            return self.project.lookup(self.path, qual, fact) if qual else None
        if isinstance(node, ast.Name):
            key = "exports:" + fact.name
            if key not in self._memo:
                self._memo[key] = {}  # while computing, the module's own exports are unknown
                self._memo[key] = dict(fact.compute(self))
            return self._memo[key].get(node.id)  # type: ignore[union-attr]
        return None

    # -- helpers for checkers ----------------------------------------------------------
    def qualname(self, node: ast.AST) -> Optional[str]:
        """The dotted name ``node`` stands for (``th.cuda.x`` -> ``torch.cuda.x``), or None.
        A chain rooted at a name the module binds to a torch object through a call, a
        parameter or a closure (``DEVICE = get_device_module()``; ``getattr(torch, "cuda")``)
        resolves through the value-flow layer (:attr:`values`) when both platforms agree.
        Asked by several rules of the same node: answered once (the imports are all learned in
        phase 1, and a node lives as long as its module)."""
        key = id(node)
        cache = self._qualnames
        if key not in cache:
            qual = self.imports.qualname(node)
            if qual is not None and not qual.startswith("torch"):
                qual = self._value_alias(node, qual)
            cache[key] = qual
        return cache[key]

    def _value_alias(self, node: ast.AST, qual: str) -> str:
        """``qual`` with its root replaced by the torch object the root name denotes."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.imports.names or not self._may_alias(root.id):
            return qual
        alias = self.values.denote(root).alias()
        return alias + qual[len(root.id) :] if alias is not None else qual

    def _may_alias(self, name: str, depth: int = 0) -> bool:
        """Could the layer find a torch object behind ``name``?  Cheap, asked before the layer is
        built: a name bound to ``getattr``/``import_module`` of torch, to a call of a function of
        the module that may return a torch object or of an imported project function, or to
        another such name (parameters are left to the rules that ask the layer: following every
        call site of every function read through an attribute cost more than the rest)."""
        fn = self.function
        key = f"may_alias:{name}:{id(fn) if depth == 0 else 0}"
        if key not in self._memo:
            self._memo[key] = False  # while computing
            found = any(self._may_denote_alias(v, depth) for v in self.all_bindings.get(name, ()))
            self._memo[key] = found
        return bool(self._memo[key])

    def _may_denote_alias(self, value: ast.AST, depth: int) -> bool:
        if isinstance(value, (ast.IfExp, ast.BoolOp)):
            parts = [value.body, value.orelse] if isinstance(value, ast.IfExp) else value.values
            return any(self._may_denote_alias(p, depth) for p in parts)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            qual = self.imports.names.get(value.func.id, value.func.id)
            if qual in ("getattr", "importlib.import_module"):
                return bool(value.args) and self._may_denote_alias(value.args[0], depth)
            if "." in qual:  # an imported project function, called bare (the project model's)
                project = qual.startswith(".") or qual.split(".", 1)[0] not in NEVER_PROJECT
                return project and not value.args and not value.keywords
            return depth < 3 and self._reaches_torch(qual, depth)
        root = value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.imports.names:
            return self.imports.names[root.id].startswith("torch")
        if isinstance(root, ast.Name) and depth < 3:
            return self._may_alias(root.id, depth + 1)
        return isinstance(root, ast.Call) and root is not value and self._may_denote_alias(root, depth)

    def _reaches_torch(self, name: str, depth: int = 0) -> bool:
        """May the module-level function ``name`` return a torch object: does one of its
        ``return`` values pass :meth:`_may_denote_alias` (a torch chain, ``getattr``, a call of
        another such function, a name bound to one)?"""
        key = f"returns_torch:{name}"
        if key not in self._memo:
            self._memo[key] = False  # while computing (recursion)
            fn = next(
                (
                    s
                    for s in self.tree.body
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name
                ),
                None,
            )
            returns = (
                [] if fn is None or depth > 2 else [n.value for n in _own_returns(fn) if n.value is not None]
            )
            self._memo[key] = any(self._may_denote_alias(v, depth + 1) for v in returns)
        return bool(self._memo[key])

    @property
    def values(self) -> "ValueFlow":
        """The module's value-flow layer (:mod:`rocm_lint.python.values`), built on first use."""
        return self.memo("values", lambda: ValueFlow(self))

    def resolve(self, node: ast.AST) -> ast.AST:
        """The expression ``node`` evaluates on ROCm, as far as it is known statically.

        Follows a name bound once in the module to its value, and picks the ROCm
        arm of a gated ternary (``"default" if is_rocm else "reduce-overhead"``).
        """
        for _ in range(8):  # bounded: bindings may refer to each other
            if isinstance(node, ast.Name) and node.id in self.single_bindings:
                node = self.single_bindings[node.id]
            elif isinstance(node, ast.IfExp):
                t, f = self.gates.facts(node.test)
                if t == ROCM or f == NVIDIA:
                    node = node.body
                elif f == ROCM or t == NVIDIA:
                    node = node.orelse
                else:
                    return node
            else:
                return node
        return node

    def bound_values(self, node: ast.AST) -> List[ast.AST]:
        """Every value the module assigns to this name or attribute name (empty if unknown)."""
        key = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
        return self.all_bindings.get(key, []) if key is not None else []

    def facts(self, facts: "ModuleFacts[T]") -> T:
        """The module's value of ``facts`` (computed on first use, once)."""
        key = "facts:" + facts.name
        if key not in self._memo:
            self._memo[key] = facts.compute(self)
        return self._memo[key]  # type: ignore[return-value]

    @property
    def workspace(self):
        """The front end's caches (``rocm_lint.workspace.Workspace``), through the project model."""
        return self.project.workspace

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """A value computed once per module for the rules (``factory()`` on first use);
        ``key`` is the rule's code or module name plus what is computed."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    def parent_of(self, node: ast.AST) -> Optional[ast.AST]:
        """The parent of the node being checked, or of one of its ancestors."""
        stack = self.stack
        if node is self.node:
            return stack[-1] if stack else None
        for i in range(len(stack) - 1, 0, -1):
            if stack[i] is node:
                return stack[i - 1]
        return None

    def ancestors(self, node: ast.AST) -> Iterator[Tuple[ast.AST, ast.AST]]:
        """(child, parent) pairs from ``node`` (the node being checked, or one of its
        ancestors) up to the module: the walk's own path, no parent map needed."""
        stack = self.stack
        if node is self.node:
            i = len(stack)
        else:
            i = next((k for k in range(len(stack) - 1, -1, -1) if stack[k] is node), 0)
        child = node
        while i > 0:
            parent = stack[i - 1]
            yield child, parent
            child, i = parent, i - 1

    def enclosing_statements(self, node: ast.AST) -> Iterator[Tuple[ast.AST, str]]:
        """(enclosing statement, field holding ``node``'s branch) from the innermost out,
        stopping at a def: a ``try``/``if`` around a function does not run around its body."""
        for child, parent in self.ancestors(node):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return
            if isinstance(parent, ast.excepthandler):
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                if child in (getattr(parent, field, None) or ()):
                    yield parent, field
                    break

    def caught(self, node: ast.AST, names) -> bool:
        """Is ``node`` inside the body of a ``try`` whose handlers catch one of ``names``?"""
        for parent, field in self.enclosing_statements(node):
            if field == "body" and (isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar"):
                if any(handler_catches(h, names) for h in parent.handlers):
                    return True
        return False

    def parameter_default(self, node: ast.AST) -> object:
        """For a name that is a parameter of the enclosing function: its default's constant
        value (``...`` if it has no constant default); ``None`` when it is not a parameter."""
        fn = self.function
        if fn is None or not isinstance(node, ast.Name):
            return None
        args = fn.args
        positional = list(getattr(args, "posonlyargs", [])) + list(args.args)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        for arg, default in pairs:
            if arg.arg == node.id:
                if isinstance(default, ast.Constant):
                    return default.value
                return ...
        return None

    def constant(self, node: ast.AST) -> object:
        """The constant value ``node`` has on ROCm, else ``...`` (unknown).

        A ROCm predicate is True there and an NVIDIA one False, so
        ``allow_tf32 = not is_rocm`` is known to be False on ROCm.
        """
        node = self.resolve(node)
        if isinstance(node, ast.Constant):
            return node.value
        t, f = self.gates.facts(node)
        if t == NVIDIA or f == ROCM:
            return False
        if t == ROCM:
            return True
        if isinstance(node, ast.Name):
            return self.values.value(node, ROCM).constant()  # a local, a parameter, a return ...
        return ...

    def string_text(self, node: ast.AST) -> Optional[str]:
        """The literal text of a string, f-string or ``"a" + "b"``; ``{}`` for holes."""
        node = self.resolve(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string_text(node.left), self.string_text(node.right)
            if left is not None or right is not None:
                return (left or "{}") + (right or "{}")
        return None


register_context(ModuleContext)


_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def platform_words(config: Config) -> List[str]:
    """The words (lower case, substrings of a line) that make a binding or function worth
    evaluating as a platform test in phase 1; the names learned as predicates join them."""
    words = ["hip", "cuda", "rocm", "amd", "nvidia", "__version__"]
    # an import that only succeeds on NVIDIA makes what follows it NVIDIA-only (values.py)
    for module in NVIDIA_ONLY_IMPORTS:
        top = module.split(".", 1)[0]
        words += [w for w in (f"import {top}", f"from {top}") if w not in words]
    for p in config.rocm_predicates + config.cuda_predicates:
        if p.rsplit(".", 1)[-1].lower() not in words:
            words.append(p.rsplit(".", 1)[-1].lower())
    return words


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (no expressions: this stays cheap)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        nested: List[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            nested.extend(getattr(stmt, name, None) or ())
        for clause in list(getattr(stmt, "handlers", None) or ()) + list(getattr(stmt, "cases", None) or ()):
            nested.extend(clause.body)
        stack.extend(reversed(nested))


def _own_returns(fn: _Function) -> Iterator[ast.Return]:
    """The ``return`` statements of ``fn`` itself (statements only, nested defs left out)."""
    stack = list(fn.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Return):
            yield stmt
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(stmt, field, None) or ())
            for clause in [*(getattr(stmt, "handlers", None) or ()), *(getattr(stmt, "cases", None) or ())]:
                stack.extend(clause.body)


def _is_parameter(fn: _Function, name: str) -> bool:
    args = fn.args
    every = [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return any(a is not None and a.arg == name for a in every)


def handler_catches(handler: ast.excepthandler, names) -> bool:
    """Does this ``except`` clause catch one of the exception ``names`` (a bare one catches all)?"""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for t in types:
        name = t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", None)
        if name in names:
            return True
    return False
