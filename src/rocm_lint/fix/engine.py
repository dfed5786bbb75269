"""Build, verify and apply the fixes of one file (LibCST is imported only here)."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Applicability, Edit, Finding
from rocm_lint.fix.nvidia_path import same_on_nvidia
from rocm_lint.fix.verify import apply_verified
from rocm_lint.lines import split_lines

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
    """Apply the recipes of ``findings`` with LibCST: (new text, ids of the applied findings,
    whether the ROCm flag is used)."""
    from rocm_lint.fix.transform import apply_recipes

    wrapper, positions = _parsed(text)
    return apply_recipes(wrapper, positions, split_lines(text), findings, flag)


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
        """((new text, ids applied, flag used), None) when the subset's fixes verify, else (None, why)."""
        try:
            new_text, applied, uses_flag = _transform(text, subset, flag)
        except Exception as exc:  # LibCST could not represent it: never guess
            return None, f"cannot build the fix: {type(exc).__name__}"
        try:
            ast.parse(new_text)
        except SyntaxError as exc:
            return None, f"the fixed file would not parse ({exc.msg})"
        safe_only = all(f.fix.applicability == Applicability.SAFE for f in subset if id(f) in applied)
        if safe_only and not same_on_nvidia(text, new_text, [flag.name], [flag.torch_alias, "torch"],
                                            flag.statements if uses_flag else []):
            return None, "the fix would change the NVIDIA program"
        return (new_text, applied, uses_flag), None

    outcome, result.dropped = apply_verified(candidates, attempt, lambda o: bool(o[1]))
    if outcome is None:
        return result
    new_text, applied, uses_flag = outcome
    result.text = new_text
    result.applied = [f for f in candidates if id(f) in applied]
    result.flag, result.torch_alias = flag.name, flag.torch_alias
    result.inserted = list(flag.statements) if uses_flag else []
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
