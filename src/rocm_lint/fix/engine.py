"""Build, verify and apply the fixes of one file (LibCST is imported only here)."""

from __future__ import annotations

import ast
import difflib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Applicability, Edit, Finding
from rocm_lint.fix.nvidia_path import check_nvidia_path
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
    # Fixes in top-level statements after this index read the flag (-1: all; len(body): none).
    usable_after: int = -1
    inline: Dict[int, str] = field(default_factory=dict)  # id(finding) -> torch name tested in place
    # The last line of the statement ``insert_after`` indexes: LibCST's module body counts
    # ``import os; import sys`` as one statement where ast counts two, so the insertion is
    # placed by line, not by index.
    insert_after_line: Optional[int] = None
    unplaced: Dict[int, str] = field(default_factory=dict)  # id(finding) -> why it has no safe place


NO_TORCH = (
    "torch is not imported unconditionally before this code: a fix would need a new or "
    "moved import of torch, so it is left to you"
)


def _reused_flag(
    tree: ast.Module,
    rocm_names: Dict[str, object],
    path: Optional[str] = None,
    config: Optional[Config] = None,
    text: Optional[str] = None,
) -> Optional[Tuple[str, int]]:
    """A module-level ROCm predicate bound once in the whole module (no local, parameter or
    later definition shadows it) that nothing can rebind after its definition (no later star
    import whose source may bind it, no dynamic write to the module's namespace): (name, index
    of its statement)."""
    from rocm_lint.fix.namespace import star_may_bind, writes_own_namespace
    from rocm_lint.fix.scopes import binding_count
    from rocm_lint.python.gates import ON_ROCM

    for i, stmt in enumerate(tree.body):
        names = []
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if (
                len(targets) == 1
                and isinstance(targets[0], ast.Name)
                and rocm_names.get(targets[0].id) == ON_ROCM
            ):
                names.append(targets[0].id)
        elif (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module == "torch.utils.cpp_extension"
            and len(stmt.names) == 1
        ):
            alias = stmt.names[0]
            if alias.name == "IS_HIP_EXTENSION":
                names.append(alias.asname or alias.name)
        elif isinstance(stmt, ast.ImportFrom) and len(stmt.names) == 1:
            alias = stmt.names[0]  # a ROCm flag another module of the project binds
            if rocm_names.get(alias.asname or alias.name) == ON_ROCM:
                names.append(alias.asname or alias.name)
        for name in names:
            if (
                binding_count(tree, name) == 1
                and writes_own_namespace(tree, text) is None
                and star_may_bind(name, tree, path, config, after=i) is None
            ):
                return name, i
    return None


def plan_flag(
    tree: ast.Module,
    candidates: Sequence[Finding],
    rocm_names: Dict[str, object],
    path: Optional[str] = None,
    config: Optional[Config] = None,
    text: Optional[str] = None,
) -> FlagPlan:
    """Where the fixes of ``candidates`` test the platform: a ROCm predicate the module binds
    once at module level, else a new flag bound right after torch is imported, else inline.
    A module whose namespace code can observe (``fix.namespace``) gets no new name: inline."""
    from rocm_lint.finding import GateStatement, RocmValue, WrapExpression
    from rocm_lint.fix.format_place import flag_index
    from rocm_lint.fix.namespace import asked_by_other_modules, observed_namespace, star_may_bind
    from rocm_lint.fix.scopes import (
        fresh_flag_name,
        identifiers,
        imports_torch,
        module_rebinds,
        top_index,
        torch_alias_of,
        torch_at,
    )

    body = tree.body
    torch_index, module_alias = None, None
    for i, stmt in enumerate(body):
        if imports_torch(stmt):
            torch_index, module_alias = i, torch_alias_of(stmt)
            break
    if module_alias is not None and module_rebinds(tree, module_alias):
        module_alias = None
    add_import = False
    # Code sees the module's names (it reads its namespace, a project module star-imports it):
    # nothing is added, not even ``import torch``.  Asked only when a name would be added.
    observed = _Lazy(lambda: observed_namespace(tree, path, config, text))
    if (
        torch_index is not None
        and module_alias is None
        and "torch" not in identifiers(tree)
        and not observed()
    ):
        module_alias, add_import = "torch", True  # torch is imported already: the line only binds it
    plan = FlagPlan(FLAG, None, [], module_alias or "torch", usable_after=len(body))
    reused = _reused_flag(tree, rocm_names, path, config, text)
    flag_sites = [
        top_index(tree, f.line) for f in candidates if isinstance(f.recipe, (GateStatement, RocmValue))
    ]
    if (
        reused is not None
        and flag_sites
        and reused[1] >= min(flag_sites)
        and module_alias is not None
        and not observed()
    ):
        reused = None  # bound after a fix: a new flag right after the import serves them all
    if reused is not None:
        plan.name, plan.usable_after = reused[0], reused[1]
    elif module_alias is not None and torch_index is not None and not observed():
        name = fresh_flag_name(
            tree,
            path,
            avoid=lambda n: (
                star_may_bind(n, tree, path, config) is not None
                or asked_by_other_modules(n, path, config) is not None
            ),
        )
        if name is not None:
            # After the whole import block that holds torch's import (fix.format_place: a flag
            # between two imports makes the later ones E402 and splits isort's block).
            at = flag_index(body, torch_index, module_alias)
            plan.name, plan.insert_after, plan.usable_after = name, at, at
            plan.insert_after_line = getattr(body[at], "end_lineno", None) or body[at].lineno
            plan.statements = (["import torch"] if add_import else []) + [
                f"{name} = {module_alias}.version.hip is not None"
            ]
    alias_at = None if add_import else module_alias
    for f in candidates:
        if f.recipe is None:
            continue
        needs_flag = isinstance(f.recipe, (GateStatement, RocmValue))
        if needs_flag and top_index(tree, f.line) > plan.usable_after:
            continue
        if needs_flag or isinstance(f.recipe, WrapExpression):
            local = torch_at(tree, f.line, alias_at, torch_index)
            if local is not None:
                if needs_flag or local != plan.torch_alias:
                    plan.inline[id(f)] = local
            elif torch_index is not None and observed():
                plan.unplaced[id(f)] = (
                    f"{observed()}: a fix adds no name to it, and no name holds the "
                    "torch module here to test in place"
                )
            else:
                plan.unplaced[id(f)] = NO_TORCH
    return plan


class _Lazy:
    """A value computed on first call (the project scan behind ``observed_namespace`` runs only
    when a fix would add a name)."""

    def __init__(self, compute) -> None:
        self._compute, self._done, self._value = compute, False, None

    def __call__(self):
        if not self._done:
            self._value, self._done = self._compute(), True
        return self._value


# -- applying recipes with LibCST -----------------------------------------------------------------
@lru_cache(maxsize=4)
def _module_ast(text: str) -> ast.Module:
    """The fixer's ``ast`` of ``text``, parsed once for the plan and the LibCST positions (both
    only read it; the independent NVIDIA-path check parses its own copies, which it folds)."""
    return ast.parse(text)


@lru_cache(maxsize=2)
def _parsed(text: str):
    """The LibCST tree of ``text`` and its positions, shared by every attempt on the same text
    (per-finding edits for JSON/SARIF and the one-by-one retries parse a file once, not per fix).
    LibCST trees are immutable, so sharing is safe; the fresh parse makes the copy unnecessary."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from rocm_lint.fix.positions import lazy_positions

    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = lazy_positions(wrapper, text, _module_ast(text))  # only the statements the fixer enters
    return wrapper, positions if positions is not None else _positions(wrapper, PositionProvider)


def _positions(wrapper, provider):
    """``wrapper.resolve(provider)`` without its empty batched pass: LibCST's resolver walks the
    whole module once more for the batchable providers even when there are none (a fifth of a
    fix's time).  PositionProvider depends on nothing, so generating it directly gives the same
    mapping; an older or newer LibCST without that internal takes the public way."""
    try:
        if not provider.METADATA_DEPENDENCIES:
            return provider()._gen(wrapper)
    except (AttributeError, TypeError):
        pass
    return wrapper.resolve(provider)


def _transform(text: str, findings: Sequence[Finding], flag: FlagPlan, path: str = "", skeleton=None):
    """Apply the recipes of ``findings`` with LibCST: (new text, ids of the applied findings,
    whether the ROCm flag is used); lines the fix makes too long are wrapped to the line length
    of ``path``'s project, and its isort setting of blank lines after imports is kept.  With a
    ``skeleton`` (``fix.skeleton``) LibCST reads only the statements the fixes touch."""
    from rocm_lint.fix.format_config import project_style
    from rocm_lint.fix.transform import apply_recipes

    style = project_style(path)
    if skeleton is not None:
        from rocm_lint.fix.skeleton import restore

        wrapper, positions = _parsed(skeleton.skeleton)
        new, applied, uses_flag = apply_recipes(
            wrapper,
            positions,
            split_lines(skeleton.skeleton),
            findings,
            flag,
            style.line_length,
            style.blank_after_imports,
            sort_within_sections=style.force_sort_within_sections,
        )
        restored = restore(skeleton, new)
        if restored is not None:
            if not VERIFY_SKELETON:
                return restored, applied, uses_flag
            whole = _transform(text, findings, flag, path)
            assert whole[0] == restored, f"skeleton fix differs from the whole module's: {path}"
            return whole
    wrapper, positions = _parsed(text)
    return apply_recipes(
        wrapper,
        positions,
        split_lines(text),
        findings,
        flag,
        style.line_length,
        style.blank_after_imports,
        sort_within_sections=style.force_sort_within_sections,
    )


# A development check: every skeleton transform is compared with the whole module's.
VERIFY_SKELETON = bool(os.environ.get("ROCM_LINT_VERIFY_SKELETON"))


def _skeleton(text: str, tree: ast.Module, candidates: Sequence[Finding], flag: FlagPlan):
    """The module with only what ``candidates``' fixes and the flag's insertion touch."""
    from rocm_lint.fix.skeleton import build

    touched = set()
    for f in candidates:
        span = getattr(f.recipe, "span", None)
        last = max(f.line, f.end_line or f.line, span[2] if span else f.line)
        touched.update(range(f.line, last + 1))
    if flag.insert_after_line is not None:
        touched.update((flag.insert_after_line, flag.insert_after_line + 1))
    try:
        return build(text, tree, touched)
    except (ValueError, IndexError, RecursionError):
        return None


# -- the public entry points ----------------------------------------------------------------------
def _allowed(f: Finding, unsafe: bool) -> bool:
    if f.fix is None or f.recipe is None:
        return False
    if f.fix.applicability == Applicability.SAFE:
        return True
    return unsafe and f.fix.applicability == Applicability.UNSAFE


def fix_source(
    path: str,
    text: str,
    findings: Sequence[Finding],
    *,
    unsafe: bool = False,
    rocm_names: Optional[Dict[str, object]] = None,
    config: Optional[Config] = None,
) -> FixResult:
    """Apply every allowed fix of ``findings`` to ``text``; verify; return the new text.

    ``rocm_names``: what the check learned about the module's ROCm predicates
    (:func:`learned_rocm_names`; derived with the default configuration when not given)."""
    candidates = [f for f in findings if _allowed(f, unsafe)]
    result = FixResult(text)
    if not candidates:
        return result
    from rocm_lint.fix.scopes import too_complex_for_libcst

    tree = _module_ast(text)
    refused = too_complex_for_libcst(tree)
    if refused:  # LibCST's native parser would crash or take minutes: report without a fix
        result.dropped = [(f, refused) for f in candidates]
        return result
    if rocm_names is None:
        rocm_names = learned_rocm_names(path, text, Config())
    flag = plan_flag(tree, candidates, rocm_names, path, config, text)
    unplaced = [(f, flag.unplaced[id(f)]) for f in candidates if id(f) in flag.unplaced]
    candidates = [f for f in candidates if id(f) not in flag.unplaced]
    if not candidates:
        result.dropped = unplaced
        return result

    skeleton = _skeleton(text, tree, candidates, flag)

    def attempt(subset: Sequence[Finding]):
        """((new text, ids applied, flag used), None) when the subset's fixes verify, else (None, why)."""
        try:
            new_text, applied, uses_flag = (
                _transform(text, subset, flag, path)
                if skeleton is None
                else _transform(text, subset, flag, path, skeleton)
            )
        except Exception as exc:  # LibCST could not represent it: never guess
            return None, f"cannot build the fix: {type(exc).__name__}"
        # The independent check: it is given the two sources, never this plan (it parses both:
        # a fixed text that does not parse is said so, as the fixer's own parse would).
        unsafe_used = any(f.fix.applicability != Applicability.SAFE for f in subset if id(f) in applied)
        why = check_nvidia_path(
            text, new_text, path=path, rocm_names=rocm_names, assume_imports_succeed=unsafe_used
        )
        if why is not None:
            try:
                ast.parse(new_text)
            except SyntaxError as exc:
                return None, f"the fixed file would not parse ({exc.msg})"
            return None, why
        return (new_text, applied, uses_flag), None

    outcome, result.dropped = apply_verified(candidates, attempt, lambda o: bool(o[1]))
    result.dropped = unplaced + result.dropped
    if outcome is None:
        return result
    new_text, applied, uses_flag = outcome
    result.text = new_text
    result.applied = [f for f in candidates if id(f) in applied]
    result.flag, result.torch_alias = flag.name, flag.torch_alias
    result.inserted = list(flag.statements) if uses_flag else []
    for f in candidates:
        if id(f) not in applied and all(f is not d for d, _ in result.dropped):
            result.dropped.append(
                (
                    f,
                    "no safe place for the fix here (one-line compound statement, "
                    "several statements on a line, or inside an expression)",
                )
            )
    return result


def learned_rocm_names(path: str, text: str, config: Config) -> Dict[str, object]:
    """Module-level names the module binds to a ROCm/NVIDIA test (``is_rocm = torch.version.hip
    is not None``, or a predicate of the configuration), as the checker's gate analysis sees them.
    Not cached: imported predicates are read from the project's modules, which may change."""
    from rocm_lint.python.context import ModuleContext

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    ctx = ModuleContext(path, tree, config, text)
    names = dict(ctx.imported_predicates())  # ``from .utils import ON_AMD``: reused, not re-created
    names.update(ctx.gates.bound_names)
    return names


def python_edits_for(
    path: str,
    text: str,
    finding: Finding,
    *,
    rocm_names: Optional[Dict[str, object]] = None,
    config: Optional[Config] = None,
) -> Tuple[Edit, ...]:
    """The edits of one finding's fix alone, as line-range replacements (JSON output, quick fixes)."""
    result = fix_source(path, text, [finding], unsafe=True, rocm_names=rocm_names, config=config)
    if not result.applied:
        return ()
    old = split_lines(text, keepends=True)
    new = split_lines(result.text, keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return line_edits(
        old, [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    )


def line_edits(old: List[str], hunks: Sequence[Tuple[int, int, List[str]]]) -> Tuple[Edit, ...]:
    """Whole-line edits for ``hunks`` ((i1, i2, new lines): ``old[i1:i2]`` replaced, in order and
    apart), each pure insertion in one canonical place.  A block inserted between lines equal to
    its own ends has several correct diffs (the flag's blank line before it or after it), and
    each finding's edits alone must equal the edits split from a whole file's fix, which are
    diffed over a different range: so an insertion is slid down while its first line equals the
    original line it goes before (and that line is no other hunk's), the place every diff of the
    same change reaches."""
    hunks = [(i1, i2, list(lines)) for i1, i2, lines in hunks]
    for n, (i1, i2, lines) in enumerate(hunks):
        if i1 != i2 or not lines:
            continue
        limit = hunks[n + 1][0] - 1 if n + 1 < len(hunks) else len(old)
        while i1 < limit and lines[0] == old[i1]:
            lines = lines[1:] + [old[i1]]
            i1 += 1
        hunks[n] = (i1, i1, lines)
    return tuple(Edit("".join(lines), (i1 + 1, 0), (i2 + 1, 0)) for i1, i2, lines in hunks)


def unified_diff(path: str, old: str, new: str) -> str:
    """difflib's unified diff; for large files an alignment linear in their size (fix.diff)."""
    from rocm_lint.fix.diff import unified_diff as diff_lines

    return "".join(
        diff_lines(
            split_lines(old, keepends=True),
            split_lines(new, keepends=True),
            fromfile=f"a/{path.lstrip('/')}",
            tofile=f"b/{path.lstrip('/')}",
        )
    )
