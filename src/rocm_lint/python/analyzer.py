"""Walk a module once, tracking gates, and run the registered Python checkers.

The walk is pruned: a statement is only entered when one of its lines holds a
trigger word of an enabled rule (or a name bound on such a line).  Statements
that are skipped still feed the gate analysis (early exits such as
``if torch.version.hip: return`` change what follows).
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, cast

from rocm_lint.domain import NVIDIA
from rocm_lint.finding import Applicability, Finding, Fix, Recipe
from rocm_lint.python.context import ModuleContext, State, handler_catches
from rocm_lint.python.value_scopes import nvidia_only_import
from rocm_lint.rule import PythonChecker, Rule
from rocm_lint.words import line_numbers, whole_word_positions

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        return min(stmt.lineno, *(d.lineno for d in decorators))
    return stmt.lineno


class Analyzer:
    """One walk of one module, dispatching nodes to the enabled checkers."""

    def __init__(
        self,
        ctx: ModuleContext,
        checkers: Sequence[PythonChecker],
        lines_of_interest: Optional[List[int]],
        observers: Sequence[PythonChecker] = (),
    ) -> None:
        self.ctx = ctx
        self.lines = lines_of_interest  # sorted; None means "visit everything"
        self.dispatch: Dict[type, List[PythonChecker]] = {}
        self.observers: Dict[type, List[Callable[[ast.AST, ModuleContext], None]]] = {}
        for checker in checkers:
            for t in checker.node_types:
                self.dispatch.setdefault(t, []).append(checker)
        for observer in observers:
            for t in observer.node_types:
                fns = self.observers.setdefault(t, [])
                if observer.fn not in fns:  # one function observing for several rules runs once
                    fns.append(observer.fn)
        self.findings: List[Finding] = []
        self._inherited: Optional[FrozenSet[str]] = None

    def inherited_gates(self) -> FrozenSet[str]:
        """Module-level functions that inherit their callers' gate (see :func:`inherited_gates`);
        only the functions this walk enters are considered."""
        if self._inherited is None:
            self._inherited = inherited_gates(self.ctx, self.touches)
        return self._inherited

    def run(self) -> List[Finding]:
        self.walk_block(self.ctx.tree.body, self.module_state())
        return self.findings

    def module_state(self) -> State:
        """``pytestmark = pytest.mark.skipif(<rocm test>, ...)`` gates every test in the module."""
        state = State()
        for stmt in self.ctx.tree.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
            ):
                marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
                for mark in marks:
                    state = state.apply(
                        self.ctx.gates.decorator_facts(mark, self.ctx.config.rocm_skip_decorators)[0]
                    )
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
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and nvidia_only_import(stmt):
                state = state._replace(after_nvidia_import=True)  # ImportError on ROCm

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
                if self.ctx.function is None and stmt.name in self.inherited_gates():
                    inner = inner.apply(NVIDIA)  # only ever called where ROCm is not in use
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
            stmt = cast(ast.Try, stmt)  # (a TryStar has a Try's fields)
            guarded = state.import_guarded or any(_catches_import_error(h) for h in stmt.handlers)
            self.walk_block(stmt.body, state._replace(import_guarded=guarded))
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.visit_expr(handler.type, state)
                self.walk_block(handler.body, state)
            imports = any(nvidia_only_import(s) for s in stmt.body)
            body_only = state._replace(after_nvidia_import=True) if imports else state
            self.walk_block(stmt.orelse, body_only)  # runs only when the whole body did
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
            lines = self.lines
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):  # never happens in valid trees
                    continue
                if lines is not None:
                    # Pruning inside a statement: a sub-expression on lines that hold nothing of
                    # interest is not walked (a 1000-line dict literal with one trigger line).
                    lo = getattr(child, "lineno", None)
                    if lo is not None:
                        i = bisect.bisect_left(lines, lo)
                        if i == len(lines) or lines[i] > (getattr(child, "end_lineno", None) or lo):
                            continue
                self.visit_expr(child, state)

    def check(self, node: ast.AST, state: State) -> None:
        if state.nvidia_only:
            return
        if state.after_nvidia_import and not isinstance(node, (ast.Import, ast.ImportFrom, ast.alias)):
            return  # the module's other imports are still reported (ROC402 on each package)
        kind = type(node)
        checkers = self.dispatch.get(kind)
        observers = self.observers.get(kind) if self.observers else None
        if not checkers and not observers:
            return
        ctx = self.ctx
        ctx.state = state
        ctx.node = node
        if observers:
            for observe in observers:
                observe(node, ctx)
        if not checkers:
            return
        rocm_only = state.rocm_only
        for checker in checkers:
            rule = checker.rule
            if rocm_only and not rule.rocm_side:
                continue
            for hit in checker.fn(node, ctx):
                recipe, why = hit.recipe, hit.no_fix
                if recipe is not None and recipe.gates_statement and not ctx.alone_on_its_lines(node):
                    recipe = None  # `a = 1; <hazard>` or `if x: <hazard>`: no place for the gate
                    why = _NO_PLACE
                where = hit.node
                self.findings.append(
                    Finding(
                        ctx.path,
                        where.lineno,
                        where.col_offset,
                        rule.code,
                        hit.message,
                        getattr(where, "end_lineno", None) or where.lineno,
                        getattr(where, "end_col_offset", None) or where.col_offset,
                        fix=_fix_of(rule, recipe, why),
                    )
                )


class _GatedWalk(Analyzer):
    """The same gated walk (unpruned unless ``lines`` is given), handing every node and its
    state to ``visit``."""

    def __init__(
        self,
        ctx: ModuleContext,
        visit: Callable[[ast.AST, State], None],
        lines: Optional[List[int]] = None,
        inherit: bool = True,
    ) -> None:
        super().__init__(ctx, (), lines)
        self.visit = visit
        self.inherit = inherit

    def inherited_gates(self) -> FrozenSet[str]:
        if self._inherited is None:
            self._inherited = inherited_gates(self.ctx) if self.inherit else frozenset()
        return self._inherited

    def check(self, node: ast.AST, state: State) -> None:
        self.visit(node, state)


def walk_gated(
    ctx: ModuleContext,
    visit: Callable[[ast.AST, State], None],
    lines: Optional[List[int]] = None,
    *,
    inherit: bool = True,
) -> None:
    """Walk the whole module as the analyser does, calling ``visit(node, state)`` for every
    node with what is known there (NVIDIA-only, ROCm-only, import-guarded, in a function);
    ``ctx.statement`` and ``ctx.function`` are kept current.  For module facts (phase 1): the
    context's walk fields are restored afterwards, so it may also run on first use mid-walk.
    ``lines`` (sorted) prunes the walk to the statements that touch them, as the analyser does."""
    saved = (ctx.statement, ctx.function, ctx.state, ctx.node)
    try:
        _GatedWalk(ctx, visit, lines, inherit).run()
    finally:
        ctx.statement, ctx.function, ctx.state, ctx.node = saved


def inherited_gates(
    ctx: ModuleContext, wanted: Optional[Callable[[ast.stmt], bool]] = None
) -> FrozenSet[str]:
    """Module-level functions called only from NVIDIA-only code: their bodies inherit the gate.

    ``if not IS_HIP_EXTENSION: flags += _nvcc_flags()`` with ``def _nvcc_flags(): return
    ["--use_fast_math"]``: the helper never runs on ROCm.  Only functions nothing outside the
    module can call are considered (a private ``_name`` not in ``__all__``, or any function of a
    script: a ``setup.py`` or a module with a ``__main__`` block); every reference to the
    function (calls and plain uses, outside its own body) must be NVIDIA-only.  One level: a
    helper of a helper does not inherit through it.  Computed once per module, walking only
    the statements that mention the candidates; ``wanted(def)`` narrows the candidates to the
    functions a caller cares about (the analyser: those it will enter)."""
    key = "analyzer:inherited-gates" if wanted is None else f"analyzer:inherited-gates:{id(wanted)}"

    def compute() -> FrozenSet[str]:
        text = ctx.text
        script = os.path.basename(ctx.path) == "setup.py" or "__main__" in text
        exported = _dunder_all(ctx.tree)
        candidates = {
            stmt.name: stmt
            for stmt in ctx.tree.body
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (script or stmt.name.startswith("_") and not stmt.name.startswith("__"))
            and stmt.name not in exported
            and (wanted is None or wanted(stmt))
        }
        if not candidates:
            return frozenset()
        lines = trigger_lines(text, list(candidates))
        gated: Dict[str, bool] = {}

        def visit(node: ast.AST, state: State) -> None:
            if isinstance(node, ast.Name) and node.id in candidates:
                fn = candidates[node.id]
                if fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno):
                    return  # recursion: its own body
                gated[node.id] = gated.get(node.id, True) and (state.nvidia_only or state.after_nvidia_import)

        walk_gated(ctx, visit, lines, inherit=False)
        return frozenset(name for name, only in gated.items() if only)

    return ctx.memo(key, compute)


def _dunder_all(tree: ast.Module) -> FrozenSet[str]:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets
        ):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                return frozenset(e.value for e in stmt.value.elts if isinstance(e, ast.Constant))
    return frozenset()


def _fix_of(rule: Rule, recipe: Optional[Recipe], why: str = "") -> Optional[Fix]:
    """The Fix a recipe promises, with the rule's applicability (the fix engine makes the edits);
    for a rule that has fixes, at a place with none, a display-only fix that says why."""
    if rule.fix is None:
        return None
    if rule.fix == Applicability.DISPLAY:  # a rule that explains, on each finding, why it has no fix
        return Fix(Applicability.DISPLAY, "not fixed: " + why) if why else None
    if recipe is None:
        return Fix(Applicability.DISPLAY, "not fixed: " + (why or _NO_SAFE_REWRITE))
    return Fix(rule.fix, recipe.message, recipe=recipe)


_NO_PLACE = (
    "the statement shares its line with another (`if x: stmt`, `a = 1; stmt`): there is no place for "
    "the `if not is_rocm:` gate; put it on a line of its own and run --fix again"
)
_NO_SAFE_REWRITE = (
    "no rewrite of this shape is known to keep the NVIDIA program unchanged (the fix gates a "
    "statement of its own or replaces a literal value; this is inside a lambda or a larger "
    "expression): change it by hand as the message says"
)


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


_WORD = re.compile(r"\w+")


def extend_with_bound_names(text: str, lines: List[int], ctx: ModuleContext) -> List[int]:
    """Add the lines that mention a name bound on a trigger line (``MODE = "reduce-overhead"``)."""
    names = []
    line_set = set(lines)
    # ``self.opts = {...}`` bound once: followed to ``options=self.opts`` like a name.
    attributes = [
        (k, v[0])
        for k, v in ctx.all_bindings.items()
        if len(v) == 1 and k not in ctx.single_bindings and isinstance(v[0], ast.Dict)
    ]
    for name, value in [*ctx.single_bindings.items(), *attributes]:
        # Only literal values can carry a hazard to where they are used (a mode string, an
        # options dict, an allocator string); following every name would visit half the file.
        literal = isinstance(
            value, (ast.Constant, ast.Dict, ast.JoinedStr, ast.BinOp, ast.IfExp, ast.List, ast.Tuple)
        ) or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict")
        if not literal:
            continue
        if value.lineno in line_set or (getattr(value, "end_lineno", value.lineno) in line_set):
            names.append(name)
    if not names:
        return lines
    # Whole-word hits only: a name bound once is looked up where it is used.  A name is all
    # word characters, so a whole-word hit is a maximal run of them equal to a name (one pass
    # over the text; an alternation of every name cost names x text).
    wanted = set(names)
    if len(wanted) <= 32:  # a few names: str.find each (iterating every word of a big file cost more)
        starts = sorted(pos for name in wanted for pos in whole_word_positions(text, name))
    else:
        starts = [m.start() for m in _WORD.finditer(text) if m.group() in wanted]
    return sorted(set(lines) | set(line_numbers(text, starts)))
