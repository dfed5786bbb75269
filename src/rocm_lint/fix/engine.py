"""Build, verify and apply the fixes of one file (LibCST is imported only here)."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Set, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Applicability, Edit, Finding
from rocm_lint.fix.nvidia_path import same_on_nvidia
from rocm_lint.finding import GateStatement, GuardImport, RocmValue, WrapExpression
from rocm_lint.lines import char_col, split_lines

FLAG = "is_rocm"


@dataclass
class FixResult:
    text: str  # the fixed source (unchanged when nothing applied)
    applied: List[Finding] = field(default_factory=list)
    flag: str = FLAG  # the ROCm flag the fixes test
    torch_alias: str = "torch"
    inserted: List[str] = field(default_factory=list)  # module-level statements the fix added
    dropped: List[Tuple[Finding, str]] = field(default_factory=list)  # (finding, why)
    # Findings whose fix overlaps one taken in this pass: ``fix.api.fix_text`` runs another pass.
    overlapped: List[Finding] = field(default_factory=list)


# -- the ROCm flag ------------------------------------------------------------------------------
@dataclass
class FlagPlan:
    name: str
    insert_after: Optional[int]  # index in module body after which to insert; None: reuse existing
    statements: List[str]  # source of statements to insert
    torch_alias: str


def plan_flag(tree: ast.Module, first_fix_line: int, rocm_names: Dict[str, object]) -> FlagPlan:
    """Reuse a module-level ROCm predicate bound before the first fix, else insert ``is_rocm``."""
    from rocm_lint.python.gates import ON_ROCM

    torch_alias = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "torch":
                    torch_alias = torch_alias or (alias.asname or "torch")
        if getattr(stmt, "lineno", first_fix_line) >= first_fix_line:
            continue
        targets = list(getattr(stmt, "targets", [])) + ([stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        for target in targets:
            if isinstance(target, ast.Name) and rocm_names.get(target.id) == ON_ROCM:
                return FlagPlan(target.id, None, [], torch_alias or "torch")
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == "IS_HIP_EXTENSION":
                    return FlagPlan(alias.asname or alias.name, None, [], torch_alias or "torch")
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    # `is_rocm` already means "on ROCm" here, only bound later at module level: binding it
    # earlier to the same test changes nothing and keeps one name for one idea.
    params = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    nested = {t.id for s in ast.walk(tree) if isinstance(s, (ast.Assign, ast.AnnAssign)) and s not in tree.body
              for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}
    same_meaning = rocm_names.get(FLAG) == ON_ROCM and FLAG not in params and FLAG not in nested
    name = FLAG if FLAG not in taken or same_meaning else "_is_rocm_build"
    statements = []
    if torch_alias is None:
        statements.append("import torch")
        torch_alias = "torch"
    statements.append(f"{name} = {torch_alias}.version.hip is not None")
    # After the leading run of imports (skipping a docstring and __future__ imports).
    index = -1
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            index = i
        elif i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            index = i
        elif isinstance(stmt, ast.Try) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body):
            index = i
        else:
            break
    return FlagPlan(name, index, statements, torch_alias)


# -- applying recipes with LibCST -----------------------------------------------------------------
@lru_cache(maxsize=2)
def _parsed(text: str):
    """The LibCST tree of ``text`` and its positions, shared by every attempt on the same text
    (per-finding edits for JSON/SARIF and the one-by-one retries parse a file once, not per fix).
    LibCST trees are immutable, so sharing is safe; the fresh parse makes the copy unnecessary."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    return wrapper, wrapper.resolve(PositionProvider)


def _transform(text: str, findings: Sequence[Finding], flag: FlagPlan):
    import libcst as cst

    lines = split_lines(text)
    wrapper, positions = _parsed(text)

    gate_lines: Dict[int, List[Finding]] = {}
    guard_lines: Dict[int, List[Finding]] = {}
    values: Dict[Tuple[int, int, int, int], Tuple[Finding, RocmValue]] = {}
    for f in findings:
        if isinstance(f.recipe, GateStatement):
            gate_lines.setdefault(f.line, []).append(f)
        elif isinstance(f.recipe, GuardImport):
            guard_lines.setdefault(f.line, []).append(f)
        elif isinstance(f.recipe, (RocmValue, WrapExpression)):
            l, c, el, ec = f.recipe.span
            key = (l, char_col(lines[l - 1], c), el, char_col(lines[el - 1], ec))  # LibCST counts characters
            values[key] = (f, f.recipe)

    # The line ranges the fixes touch: the rest of the tree is left unvisited.
    targets = [(line, line) for line in list(gate_lines) + list(guard_lines)]
    targets += [(key[0], key[2]) for key in values]
    applied: Set[int] = set()
    created: Dict[int, object] = {}  # the `if not is_rocm:` blocks made here (kept alive: ids are reused)
    flag_name = flag.name

    def merge_gates(body):
        """Consecutive statements gated by this fix share one `if not is_rocm:` block."""
        out = []
        for stmt in body:
            if out and created.get(id(stmt)) is stmt and created.get(id(out[-1])) is out[-1]:
                prev = out[-1]
                inner = stmt.body.body[0].with_changes(leading_lines=stmt.leading_lines)
                merged = prev.with_changes(body=prev.body.with_changes(body=list(prev.body.body) + [inner]))
                created[id(merged)] = merged
                out[-1] = merged
            else:
                out.append(stmt)
        return out

    # Contexts where a conditional expression needs no parentheses around it.
    bare_ok = (cst.Arg, cst.DictElement, cst.Assign, cst.AnnAssign, cst.Return, cst.Element,
               cst.Expr, cst.AugAssign, cst.StarredDictElement)

    class Fixer(cst.CSTTransformer):
        def __init__(self):
            super().__init__()
            self.parents = []

        def on_visit(self, node):
            self.parents.append(node)
            pos = positions.get(node)
            # (a def's or class's position starts at the keyword, after its decorators)
            if pos is not None and not getattr(node, "decorators", None) and not any(a <= pos.end.line and pos.start.line <= b for a, b in targets):
                return False  # nothing to fix below: skip the subtree (on_leave still runs)
            return super().on_visit(node)

        def leave_IndentedBlock(self, original, updated):
            return updated.with_changes(body=merge_gates(updated.body)) if created else updated

        def leave_Module(self, original, updated):
            return updated.with_changes(body=merge_gates(updated.body)) if created else updated

        def leave_SimpleStatementLine(self, original, updated):
            pos = positions[original]
            hits = [f for line, fs in gate_lines.items() if pos.start.line <= line <= pos.end.line for f in fs]
            guards = [f for line, fs in guard_lines.items() if pos.start.line <= line <= pos.end.line for f in fs]
            if not hits and not guards:
                return updated
            if len(updated.body) != 1:  # `a; b` on one line: no safe place to gate
                return updated
            inner = updated.with_changes(leading_lines=())
            if hits:
                applied.update(id(f) for f in hits)
                gate = cst.If(
                    test=cst.UnaryOperation(operator=cst.Not(), expression=cst.Name(flag_name)),
                    body=cst.IndentedBlock(body=[inner]),
                    leading_lines=updated.leading_lines,
                )
                created[id(gate)] = gate
                return gate
            names = _bound_names(updated.body[0])
            if not names:
                return updated
            applied.update(id(f) for f in guards)
            fallback = [cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(target=cst.Name(n))], value=cst.Name("None"))]) for n in names]
            return cst.Try(
                body=cst.IndentedBlock(body=[inner]),
                handlers=[cst.ExceptHandler(type=cst.Name("ImportError"), body=cst.IndentedBlock(body=fallback))],
                leading_lines=updated.leading_lines,
            )

        def on_leave(self, original, updated):
            result = super().on_leave(original, updated)
            self.parents.pop()
            if isinstance(original, cst.BaseExpression) and values:
                pos = positions.get(original)
                if pos is not None:
                    key = (pos.start.line, pos.start.column, pos.end.line, pos.end.column)
                    if key in values and isinstance(result, cst.BaseExpression):
                        f, recipe = values.pop(key)
                        applied.add(id(f))
                        parent = self.parents[-1] if self.parents else None
                        wrap = not isinstance(parent, bare_ok)
                        parens = dict(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if wrap else {}
                        if isinstance(recipe, WrapExpression):
                            inner = cst.Module([]).code_for_node(result)
                            source = recipe.template.format(expr=inner, torch=flag.torch_alias)
                            new = cst.parse_expression(source)
                            return new.with_changes(**parens) if wrap else new
                        return cst.IfExp(
                            test=cst.Name(flag_name),
                            body=cst.parse_expression(recipe.rocm_source),
                            orelse=result,
                            **parens,
                        )
            return result

    new_module = wrapper.visit(Fixer())
    uses_flag = any(isinstance(f.recipe, (GateStatement, RocmValue)) for f in findings if id(f) in applied)
    if uses_flag and flag.statements:
        stmts = [cst.parse_statement(s + "\n") for s in flag.statements]
        body = list(new_module.body)
        at = flag.insert_after + 1
        new_module = new_module.with_changes(body=body[:at] + stmts + body[at:])
    return new_module.code, applied, uses_flag


def _bound_names(stmt) -> List[str]:
    import libcst as cst

    names = []
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            if alias.asname is not None:
                names.append(alias.asname.name.value)
            else:
                names.append(cst.Module([]).code_for_node(alias.name).split(".")[0])
    elif isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar):
        for alias in stmt.names:
            names.append(alias.asname.name.value if alias.asname else alias.name.value)
    return names


# -- the public entry points ----------------------------------------------------------------------
def _allowed(f: Finding, unsafe: bool) -> bool:
    if f.fix is None or f.recipe is None:
        return False
    if f.fix.applicability == Applicability.SAFE:
        return True
    return unsafe and f.fix.applicability == Applicability.UNSAFE


def fix_source(path: str, text: str, findings: Sequence[Finding], *, unsafe: bool = False,
               rocm_names: Optional[Dict[str, object]] = None) -> FixResult:
    """Apply every allowed fix of ``findings`` to ``text``; verify; return the new text.

    ``rocm_names``: what the check learned about the module's ROCm predicates
    (:func:`learned_rocm_names`; derived with the default configuration when not given)."""
    candidates = [f for f in findings if _allowed(f, unsafe)]
    result = FixResult(text)
    if not candidates:
        return result
    tree = ast.parse(text)
    if rocm_names is None:
        rocm_names = learned_rocm_names(path, text, Config())
    flag = plan_flag(tree, min(f.line for f in candidates), rocm_names)

    def attempt(subset: Sequence[Finding]):
        try:
            new_text, applied, uses_flag = _transform(text, subset, flag)
            state["uses_flag"] = uses_flag
        except Exception as exc:  # LibCST could not represent it: never guess
            return None, set(), f"cannot build the fix: {type(exc).__name__}"
        try:
            ast.parse(new_text)
        except SyntaxError as exc:
            return None, set(), f"the fixed file would not parse ({exc.msg})"
        safe_only = all(f.fix.applicability == Applicability.SAFE for f in subset if id(f) in applied)
        if safe_only and not same_on_nvidia(text, new_text, [flag.name], [flag.torch_alias, "torch"],
                                            flag.statements if uses_flag else []):
            return None, set(), "the fix would change the NVIDIA program"
        return new_text, applied, None

    state = {}

    new_text, applied, why = attempt(candidates)
    if new_text is None:
        # Find the culprits one by one; keep the fixes that pass on their own.
        good = []
        for f in candidates:
            t, a, reason = attempt([f])
            if t is None:
                result.dropped.append((f, reason))
            elif a:
                good.append(f)
        if not good:
            return result
        new_text, applied, why = attempt(good)
        if new_text is None:
            result.dropped.extend((f, why) for f in good)
            return result
    result.text = new_text
    result.applied = [f for f in candidates if id(f) in applied]
    result.flag, result.torch_alias = flag.name, flag.torch_alias
    result.inserted = list(flag.statements) if state.get("uses_flag") else []
    for f in candidates:
        if id(f) not in applied and all(f is not d for d, _ in result.dropped):
            result.dropped.append((f, "no safe place for the fix here (one-line compound statement, "
                                      "several statements on a line, or inside an expression)"))
    return result


@lru_cache(maxsize=4)
def learned_rocm_names(path: str, text: str, config: Config) -> Dict[str, object]:
    """Module-level names the module binds to a ROCm/NVIDIA test (``is_rocm = torch.version.hip
    is not None``, or a predicate of the configuration), as the checker's gate analysis sees them."""
    from rocm_lint.python.context import ModuleContext

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return dict(ModuleContext(path, tree, config, text).gates.bound_names)


def python_edits_for(path: str, text: str, finding: Finding, *,
                     rocm_names: Optional[Dict[str, object]] = None) -> Tuple[Edit, ...]:
    """The edits of one finding's fix alone, as line-range replacements (JSON output, quick fixes)."""
    result = fix_source(path, text, [finding], unsafe=True, rocm_names=rocm_names)
    if not result.applied:
        return ()
    old = split_lines(text, keepends=True)
    new = split_lines(result.text, keepends=True)
    edits = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(Edit("".join(new[j1:j2]), (i1 + 1, 0), (i2 + 1, 0)))
    return tuple(edits)


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(split_lines(old, keepends=True), split_lines(new, keepends=True),
                                        fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}"))
