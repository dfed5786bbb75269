"""Walk a module once, tracking gates, and run the registered Python checkers.

The walk is pruned: a statement is only entered when one of its lines holds a
trigger word of an enabled rule (or a name bound on such a line).  Statements
that are skipped still feed the gate analysis (early exits such as
``if torch.version.hip: return`` change what follows).
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Applicability, Finding, Fix
from rocm_lint.lines import split_lines
from rocm_lint.python.gates import NVIDIA, ROCM, Fact, GateAnalysis
from rocm_lint.python.names import ImportMap
from rocm_lint.registry import PythonChecker, python_checkers

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}


class State(NamedTuple):
    """What is known about the code being visited."""

    nvidia_only: bool = False  # only ever runs where ROCm is not in use
    rocm_only: bool = False  # only ever runs on ROCm
    import_guarded: bool = False  # inside ``try:`` whose handler catches ImportError
    in_function: bool = False

    def apply(self, fact: Fact) -> "State":
        if fact == NVIDIA and not self.nvidia_only:
            return self._replace(nvidia_only=True)
        if fact == ROCM and not self.rocm_only:
            return self._replace(rocm_only=True)
        return self


class ModuleContext:
    """Everything a checker may ask about the module; ``state`` is the current node's."""

    def __init__(self, path: str, tree: ast.Module, config: Config, text: str = "") -> None:
        self.path = path
        self.tree = tree
        self.text = text  # the module's source, for file-level questions
        self._lines: Optional[List[str]] = None
        self._memo: Dict[str, object] = {}
        self.config = config
        self.imports = ImportMap()
        self.gates = GateAnalysis(self.imports, config.rocm_predicates, config.cuda_predicates)
        self.state = State()
        self.statement: Optional[ast.stmt] = None  # the innermost statement being visited
        self.node: Optional[ast.AST] = None  # the node being checked
        self.function: Optional[ast.AST] = None  # the innermost function being visited
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
        words = {"hip", "cuda", "rocm", "amd", "nvidia", "__version__"} | {
            p.rsplit(".", 1)[-1].lower() for p in self.config.rocm_predicates + self.config.cuda_predicates}

        def may_matter(node: ast.AST) -> bool:
            if lines is None:
                return True
            end = getattr(node, "end_lineno", None) or node.lineno
            text = " ".join(lines[node.lineno - 1:end]).lower()
            return any(w in text for w in words)

        def single_return(fn) -> bool:
            body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            return len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None

        functions = [fn for fn in functions if single_return(fn)]
        for fn in functions:
            if may_matter(fn):
                self.gates.learn_function(fn)
        for target, value in assignments:
            if not may_matter(value):
                continue
            before = len(self.gates.bound_names) + len(self.gates.bound_attrs)
            self.gates.learn_assignment(target, value)
            if len(self.gates.bound_names) + len(self.gates.bound_attrs) > before:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                words.add(name.lower())  # later bindings may build on this one
        for fn in functions:
            if may_matter(fn):
                self.gates.learn_function(fn)

    # -- helpers for checkers ----------------------------------------------------------
    def qualname(self, node: ast.AST) -> Optional[str]:
        return self.imports.qualname(node)

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

    def memo(self, key: str, factory):
        """A value computed once per module for the rules (``factory()`` on first use)."""
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

    def source_lines(self) -> List[str]:
        """The module's lines with their endings, split once (as ``ast`` counts lines)."""
        if self._lines is None:
            self._lines = split_lines(self.text or "", keepends=True)
        return self._lines

    def segment(self, node: ast.AST) -> Optional[str]:
        """``ast.get_source_segment`` without re-splitting the whole source on every call."""
        if not self.text or getattr(node, "end_lineno", None) is None:
            return None
        lines = self.source_lines()[node.lineno - 1:node.end_lineno]
        if not lines:
            return None
        if len(lines) == 1:
            return lines[0].encode("utf-8")[node.col_offset:node.end_col_offset].decode("utf-8", "replace")
        first = lines[0].encode("utf-8")[node.col_offset:].decode("utf-8", "replace")
        last = lines[-1].encode("utf-8")[:node.end_col_offset].decode("utf-8", "replace")
        return first + "".join(lines[1:-1]) + last

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

    def is_whole_statement(self, node: ast.AST) -> bool:
        """Is ``node`` the entire current statement (an assignment, or a call on its own line)?

        Only then may a fix gate the statement without gating anything else with it.
        """
        stmt = self.statement
        if stmt is node:
            return True
        return isinstance(stmt, ast.Expr) and stmt.value is node

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


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        return min(stmt.lineno, *(d.lineno for d in decorators))
    return stmt.lineno


class Analyzer:
    """One walk of one module, dispatching nodes to the enabled checkers."""

    def __init__(self, ctx: ModuleContext, enabled: Set[str], lines_of_interest: Optional[List[int]]) -> None:
        self.ctx = ctx
        self.enabled = enabled
        self.lines = lines_of_interest  # sorted; None means "visit everything"
        self.dispatch: Dict[type, List[PythonChecker]] = {}
        for checker in python_checkers():
            if checker.codes & enabled:
                for t in checker.node_types:
                    self.dispatch.setdefault(t, []).append(checker)
        self.findings: List[Finding] = []
        from rocm_lint.registry import all_rules

        self.rocm_side_codes = {r.code for r in all_rules() if r.rocm_side}

    def run(self) -> List[Finding]:
        self.walk_block(self.ctx.tree.body, self.module_state())
        return self.findings

    def module_state(self) -> State:
        """``pytestmark = pytest.mark.skipif(<rocm test>, ...)`` gates every test in the module."""
        state = State()
        for stmt in self.ctx.tree.body:
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
                marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
                for mark in marks:
                    state = state.apply(self.ctx.gates.decorator_facts(
                        mark, self.ctx.config.rocm_skip_decorators)[0])
        return state

    # -- pruning ----------------------------------------------------------------------
    def touches(self, stmt: ast.stmt) -> bool:
        if self.lines is None:
            return True
        lo = _first_line(stmt)
        hi = getattr(stmt, "end_lineno", None) or lo
        i = bisect.bisect_left(self.lines, lo)
        return i < len(self.lines) and self.lines[i] <= hi

    # -- statements -------------------------------------------------------------------
    def walk_block(self, stmts: Sequence[ast.stmt], state: State) -> None:
        gates = self.ctx.gates
        for stmt in stmts:
            if self.touches(stmt):
                self.visit_stmt(stmt, state)
            # Early exits: ``if torch.version.hip: return`` leaves NVIDIA-only code behind.
            if isinstance(stmt, ast.If):
                body_exits = gates.terminates(stmt.body)
                else_exits = gates.terminates(stmt.orelse)
                if body_exits != else_exits:
                    t, f = gates.facts(stmt.test)
                    state = state.apply(f if body_exits else t)
            elif isinstance(stmt, ast.Assert):
                state = state.apply(gates.facts(stmt.test)[0])

    def visit_stmt(self, stmt: ast.stmt, state: State) -> None:
        outer, self.ctx.statement = self.ctx.statement, stmt
        try:
            self._visit_stmt(stmt, state)
        finally:
            self.ctx.statement = outer

    def _visit_stmt(self, stmt: ast.stmt, state: State) -> None:
        self.check(stmt, state)
        stack = self.ctx.stack
        stack.append(stmt)
        try:
            self._visit_stmt_children(stmt, state)
        finally:
            stack.pop()

    def _visit_stmt_children(self, stmt: ast.stmt, state: State) -> None:
        gates = self.ctx.gates
        if isinstance(stmt, ast.If):
            t, f = gates.facts(stmt.test)
            self.visit_expr(stmt.test, state)
            self.walk_block(stmt.body, state.apply(t))
            self.walk_block(stmt.orelse, state.apply(f))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = state
            for dec in stmt.decorator_list:
                self.visit_expr(dec, state)
                inner = inner.apply(gates.decorator_facts(dec, self.ctx.config.rocm_skip_decorators)[0])
            if isinstance(stmt, ast.ClassDef):
                for node in stmt.bases + [k.value for k in stmt.keywords]:
                    self.visit_expr(node, state)
            else:
                self.visit_expr(stmt.args, state)
                if stmt.returns is not None:
                    self.visit_expr(stmt.returns, state)
                # A try around a def does not run around its body.
                inner = inner._replace(in_function=True, import_guarded=False)
            outer_fn = self.ctx.function
            if not isinstance(stmt, ast.ClassDef):
                self.ctx.function = stmt
            try:
                self.walk_block(stmt.body, inner)
            finally:
                self.ctx.function = outer_fn
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            guarded = state.import_guarded or any(_catches_import_error(h) for h in stmt.handlers)
            self.walk_block(stmt.body, state._replace(import_guarded=guarded))
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.visit_expr(handler.type, state)
                self.walk_block(handler.body, state)
            self.walk_block(stmt.orelse, state)
            self.walk_block(stmt.finalbody, state)
        else:
            for _name, value in ast.iter_fields(stmt):
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        self.walk_block(value, state)
                    else:
                        for item in value:
                            if isinstance(item, ast.AST):
                                self.visit_node(item, state)
                elif isinstance(value, ast.AST):
                    self.visit_node(value, state)

    def visit_node(self, node: ast.AST, state: State) -> None:
        if isinstance(node, ast.stmt):
            self.visit_stmt(node, state)
        elif isinstance(node, (ast.excepthandler,)) or type(node).__name__ == "match_case":
            self.ctx.stack.append(node)
            try:
                for child in ast.iter_child_nodes(node):
                    if not isinstance(child, ast.stmt):
                        self.visit_expr(child, state)
                self.walk_block(node.body, state)
            finally:
                self.ctx.stack.pop()
        else:
            self.visit_expr(node, state)

    # -- expressions ------------------------------------------------------------------
    def visit_expr(self, node: ast.AST, state: State) -> None:
        self.check(node, state)
        self.ctx.stack.append(node)
        try:
            self._visit_expr_children(node, state)
        finally:
            self.ctx.stack.pop()

    def _visit_expr_children(self, node: ast.AST, state: State) -> None:
        gates = self.ctx.gates
        if isinstance(node, ast.IfExp):
            t, f = gates.facts(node.test)
            self.visit_expr(node.test, state)
            self.visit_expr(node.body, state.apply(t))
            self.visit_expr(node.orelse, state.apply(f))
        elif isinstance(node, ast.BoolOp):
            acc = state
            is_and = isinstance(node.op, ast.And)
            for value in node.values:
                self.visit_expr(value, acc)
                t, f = gates.facts(value)
                acc = acc.apply(t if is_and else f)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):  # never happens in valid trees
                    continue
                self.visit_expr(child, state)

    def check(self, node: ast.AST, state: State) -> None:
        checkers = self.dispatch.get(type(node))
        if not checkers or state.nvidia_only:
            return
        ctx = self.ctx
        ctx.state = state
        ctx.node = node
        for checker in checkers:
            for where, code, message, *recipe in checker.fn(node, ctx):
                if code in self.enabled and (not state.rocm_only or code in self.rocm_side_codes):
                    fix_recipe = recipe[0] if recipe else None
                    if getattr(fix_recipe, "gates_statement", False) and not _alone_on_its_lines(ctx, node):
                        fix_recipe = None  # `a = 1; <hazard>` or `if x: <hazard>`: no place for the gate
                    self.findings.append(Finding(
                        ctx.path, where.lineno, where.col_offset, code, message,
                        getattr(where, "end_lineno", None) or where.lineno,
                        getattr(where, "end_col_offset", None) or where.col_offset,
                        fix=_fix_of(code, fix_recipe),
                        recipe=fix_recipe,
                    ))


def _alone_on_its_lines(ctx: "ModuleContext", node: ast.AST) -> bool:
    """Whether the statement holding ``node`` has its lines to itself: nothing but indentation
    before it (not `if x: `, `else: `, `a = 1; `) and nothing but a comment after it (not `; b`).
    Only then can the fix wrap it in ``if not is_rocm:``; the "fixable" count relies on it."""
    chain = [node] + [parent for _, parent in ctx.ancestors(node)]
    stmt = next((n for n in chain if isinstance(n, ast.stmt)), None)
    if stmt is None or not ctx.text or getattr(stmt, "end_lineno", None) is None:
        return True
    lines = ctx.source_lines()
    if not (0 < stmt.lineno <= stmt.end_lineno <= len(lines)):
        return True
    before = lines[stmt.lineno - 1].encode("utf-8")[:stmt.col_offset]
    after = lines[stmt.end_lineno - 1].encode("utf-8")[stmt.end_col_offset:].strip()
    return not before.strip() and (not after or after.startswith(b"#"))


def _fix_of(code: str, recipe) -> "Optional[Fix]":
    """The Fix a recipe promises, with the rule's declared applicability (edits come later)."""
    if recipe is None:
        return None
    from rocm_lint.registry import get_rule

    rule = get_rule(code)
    if rule is None or rule.fix is None or rule.fix == Applicability.DISPLAY:
        return None
    return Fix(rule.fix, recipe.message)


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


def _catches_import_error(handler: ast.excepthandler) -> bool:
    return handler_catches(handler, _IMPORT_ERRORS)


def trigger_lines(text: str, words: Sequence[str]) -> List[int]:
    """Sorted line numbers that hold one of ``words``.

    ``str.find`` per word beats one big regex alternation by far (the engine already knows
    which few words occur in the file); line numbers come from counting newlines between
    consecutive hits.
    """
    positions: List[int] = []
    find = text.find
    for word in words:
        pos = find(word)
        while pos != -1:
            positions.append(pos)
            pos = find(word, pos + len(word))
    positions.sort()
    lines: List[int] = []
    line, last = 1, 0
    count = text.count
    for pos in positions:
        line += count("\n", last, pos)
        last = pos
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def extend_with_bound_names(text: str, lines: List[int], ctx: ModuleContext) -> List[int]:
    """Add the lines that mention a name bound on a trigger line (``MODE = "reduce-overhead"``)."""
    names = []
    line_set = set(lines)
    for name, value in ctx.single_bindings.items():
        # Only literal values can carry a hazard to where they are used (a mode string, an
        # options dict, an allocator string); following every name would visit half the file.
        literal = isinstance(value, (ast.Constant, ast.Dict, ast.JoinedStr, ast.BinOp, ast.IfExp,
                                     ast.List, ast.Tuple)) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict")
        if not literal:
            continue
        if value.lineno in line_set or (getattr(value, "end_lineno", value.lineno) in line_set):
            names.append(name)
    if not names:
        return lines
    # Whole-word hits only: a name bound once is looked up where it is used.
    pattern = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, names)))
    starts = [m.start() for m in pattern.finditer(text)]
    extra: List[int] = []
    line, last = 1, 0
    for pos in starts:
        line += text.count("\n", last, pos)
        last = pos
        extra.append(line)
    return sorted(set(lines) | set(extra))
