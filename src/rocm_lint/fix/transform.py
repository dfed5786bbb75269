"""The LibCST side of the Python fixes: apply recipes to a module's concrete syntax tree.

Imported only when a file has something to fix (checking never imports LibCST).  Each recipe
becomes a local rewrite: ``GateStatement`` wraps its statement in ``if not <flag>:`` (neighbouring
gated statements share one block), ``GuardImport`` wraps an import in ``try/except ImportError``,
``RocmValue`` and ``WrapExpression`` replace one expression.  Subtrees that hold nothing to fix
are not visited.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from rocm_lint.finding import Finding, GateStatement, GuardImport, RocmValue, WrapExpression
from rocm_lint.lines import char_col

_EMPTY = cst.Module([])

# Contexts where a conditional expression needs no parentheses around it.
_BARE_OK = (
    cst.Arg,
    cst.DictElement,
    cst.Assign,
    cst.AnnAssign,
    cst.Return,
    cst.Element,
    cst.Expr,
    cst.AugAssign,
    cst.StarredDictElement,
)


class RecipeTransformer(cst.CSTTransformer):
    """One pass over a module applying the recipes of its findings."""

    def __init__(
        self,
        positions,
        lines: List[str],
        findings: Sequence[Finding],
        flag_name: str,
        torch_alias: str,
        inline: Optional[Dict[int, str]] = None,
        *,
        line_length: Optional[int] = None,
        module: Optional[cst.Module] = None,
        blank_after_imports: int = 1,
    ) -> None:
        super().__init__()
        self.positions = positions
        self.lines = lines
        # Formatter-clean: statements the fix pushes past the project's line length are wrapped
        # (fix.layout); the statements holding a replaced value, by id of the original node.
        self.line_length = line_length if module is not None and "\t" not in module.default_indent else None
        self.module = module
        self.widened: Set[int] = set()
        self.guards: Dict[int, cst.Try] = {}  # the try/except ImportError blocks made here
        self.blank_after_imports = blank_after_imports
        self.flag_name = flag_name
        self.torch_alias = torch_alias
        # id(finding) -> the torch name to test inline (`torch.version.hip is None`) instead of the flag
        self.inline = inline or {}
        self.parents: List[cst.CSTNode] = []
        self.gate_lines: Dict[int, List[Finding]] = {}
        self.guard_lines: Dict[int, List[Finding]] = {}
        self.values: Dict[Tuple[int, int, int, int], Tuple[Finding, object]] = {}
        for f in findings:
            if isinstance(f.recipe, GateStatement):
                self.gate_lines.setdefault(f.line, []).append(f)
            elif isinstance(f.recipe, GuardImport):
                self.guard_lines.setdefault(f.line, []).append(f)
            elif isinstance(f.recipe, (RocmValue, WrapExpression)):
                ln, c, el, ec = f.recipe.span
                key = (
                    ln,
                    char_col(lines[ln - 1], c),
                    el,
                    char_col(lines[el - 1], ec),
                )  # LibCST counts characters
                self.values[key] = (f, f.recipe)
        # The line ranges the fixes touch: the rest of the tree is left unvisited.
        self.targets = [(line, line) for line in list(self.gate_lines) + list(self.guard_lines)]
        self.targets += [(key[0], key[2]) for key in self.values]
        # For the overlap test of every visited node in O(log n): the targets by first line, and
        # the furthest last line among the targets up to each one.
        self.targets.sort()
        self._starts = [a for a, _ in self.targets]
        self._reach: List[int] = []
        for _, b in self.targets:
            self._reach.append(max(b, self._reach[-1]) if self._reach else b)
        self.applied: Set[int] = set()
        # The `if not is_rocm:` blocks made here, with their test (kept alive: ids are reused).
        self.created: Dict[int, Tuple[object, str]] = {}
        # id(gate) -> its statements laid out at the gate's own level (fix.format_nest)
        self.shallow: Dict[int, List[cst.BaseStatement]] = {}

    def merge_gates(self, body):
        """Consecutive statements gated by this fix share one `if not is_rocm:` block."""
        created = self.created
        out = []
        for stmt in body:
            mine = created.get(id(stmt), (None, None))
            theirs = created.get(id(out[-1]), (None, None)) if out else (None, None)
            if (
                out
                and mine[0] is stmt
                and theirs[0] is out[-1]
                and mine[1] == theirs[1]
                and not self._pushes_comment(stmt.leading_lines)
            ):
                prev = out[-1]
                inner = stmt.body.body[0].with_changes(leading_lines=_unindented_blanks(stmt.leading_lines))
                merged = prev.with_changes(body=prev.body.with_changes(body=list(prev.body.body) + [inner]))
                created[id(merged)] = (merged, mine[1])
                if id(prev) in self.shallow and id(stmt) in self.shallow:
                    self.shallow[id(merged)] = self.shallow[id(prev)] + [
                        self.shallow[id(stmt)][0].with_changes(leading_lines=stmt.leading_lines)
                    ]
                out[-1] = merged
            else:
                out.append(stmt)
        return out

    def _pushes_comment(self, lines) -> bool:
        """Would a comment line of ``lines``, moved into the block of a merged gate, run past
        the line length it kept before (E501: ruff format does not wrap comments)?  Then the
        statement gets its own gate, and the comment stays where it was, above it."""
        if self.line_length is None or self.module is None:
            return False
        here = self._indent()
        deeper = here + len(self.module.default_indent)
        for line in lines:
            if line.comment is not None:
                width = len(line.whitespace.value) + len(line.comment.value)
                if deeper + width > self.line_length >= here + width:
                    return True
        return False

    def on_visit(self, node):
        self.parents.append(node)
        pos = self.positions.get(node)
        # (a def's or class's position starts at the keyword, after its decorators)
        if (
            pos is not None
            and not getattr(node, "decorators", None)
            and not self._touches(pos.start.line, pos.end.line)
        ):
            return False  # nothing to fix below: skip the subtree (on_leave still runs)
        expand = getattr(self.positions, "expand", None)
        if expand is not None:
            expand(node)  # entering a top-level statement: its nodes' positions (fix.positions)
        return super().on_visit(node)

    def _touches(self, first: int, last: int) -> bool:
        """Does any target's line range overlap ``first..last``?"""
        k = bisect_right(self._starts, last)  # the targets that start on or before ``last``
        return k > 0 and self._reach[k - 1] >= first

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self.merge_gates(updated.body)) if self.created else updated

    def leave_Module(self, original, updated):
        if self.created:
            updated = updated.with_changes(body=self.merge_gates(updated.body))
        if self.guards:
            # A guarded import is code, not an import: isort/ruff (I001) want the blank line after
            # an import block before it.
            body = list(updated.body)
            for i in range(1, len(body)):
                if (
                    self.guards.get(id(body[i])) is body[i]
                    and not body[i].leading_lines
                    and _is_import(body[i - 1])
                ):
                    body[i] = body[i].with_changes(leading_lines=[cst.EmptyLine()] * self.blank_after_imports)
            updated = updated.with_changes(body=body)
        return updated

    # -- wrapping what a fix made too long ---------------------------------------------------------
    def _indent(self) -> int:
        """The columns of the block the node being left is in."""
        return sum(
            len(node.indent if node.indent is not None else self.module.default_indent)
            for node in self.parents
            if isinstance(node, cst.IndentedBlock)
        )

    def _was_short(self, original) -> bool:
        """Was ``original`` (a ``with`` statement's header) one line within the line length
        before the fix?"""
        if isinstance(original, cst.With):
            first, last = self.positions.get(original), self.positions.get(original.items[-1])
            if first is None or last is None or first.start.line != last.end.line:
                return False
            original = original.items[-1]
        pos = self.positions.get(original)
        if pos is None or pos.start.line != pos.end.line or pos.start.line > len(self.lines):
            return False
        return len(self.lines[pos.start.line - 1].rstrip("\r\n")) <= self.line_length

    def _wrapped_if(self, original, updated):
        """An ``if`` (not an ``elif``) whose one-line test a fix made too long."""
        parent = self.parents[-2] if len(self.parents) > 1 else None
        pos = self.positions.get(original.test)
        if (
            isinstance(parent, cst.If)
            or pos is None
            or pos.start.line != pos.end.line
            or len(self.lines[pos.start.line - 1].rstrip("\r\n")) > self.line_length
        ):
            return updated
        from rocm_lint.fix.layout import wrap_if

        new = wrap_if(updated, self._indent(), self.line_length, self.module.config_for_parsing)
        return updated if new is None else new

    def _wrapped(self, original, updated, wrap, deeper: int = 0):
        if self.line_length is None or not self._was_short(original):
            return updated
        new = wrap(updated, self._indent() + deeper, self.line_length, self.module.config_for_parsing)
        return updated if new is None else new

    def _rewrapped(self, original, updated, deeper: int):
        """A statement over several lines, every one within the line length before the fix and
        one past it after: laid out again (``fix.format_wrap``)."""
        pos = self.positions.get(original)
        if (
            self.line_length is None
            or pos is None
            or pos.start.line == pos.end.line
            or not isinstance(updated, cst.SimpleStatementLine)
        ):
            return updated
        if any(
            len(line.rstrip("\r\n")) > self.line_length
            for line in self.lines[pos.start.line - 1 : pos.end.line]
        ):
            return updated  # the project does not hold this statement to the length
        from rocm_lint.fix.format_wrap import rewrap_statement, widths

        indent = self._indent() + deeper
        if max(widths(updated.with_changes(leading_lines=()), indent)) <= self.line_length:
            return updated
        new = rewrap_statement(updated, indent, self.line_length, self.module.config_for_parsing)
        return updated if new is None else new

    def leave_If(self, original, updated):
        if id(original) in self.widened and self.line_length is not None:
            updated = self._wrapped_if(original, updated)
        if not self.created or self.line_length is None:
            return updated
        from rocm_lint.fix.format_nest import collapse_gate

        parent = self.parents[-2] if len(self.parents) > 1 else None
        new = collapse_gate(
            updated,
            parent,
            self.created,
            self.shallow,
            self._indent(),
            self.line_length,
            self.module.config_for_parsing,
        )
        return updated if new is None else new

    def leave_With(self, original, updated):
        if id(original) not in self.widened:
            return updated
        from rocm_lint.fix.layout import wrap_with

        return self._wrapped(original, updated, wrap_with)

    def leave_Decorator(self, original, updated):
        if id(original) not in self.widened:
            return updated
        from rocm_lint.fix.layout import wrap_decorator

        return self._wrapped(original, updated, wrap_decorator)

    def leave_SimpleStatementLine(self, original, updated):
        pos = self.positions[original]
        hits = [
            f for line, fs in self.gate_lines.items() if pos.start.line <= line <= pos.end.line for f in fs
        ]
        guards = [
            f for line, fs in self.guard_lines.items() if pos.start.line <= line <= pos.end.line for f in fs
        ]
        shallow = updated  # (laid out at its own level: for a gate merged into an enclosing `if`)
        if id(original) in self.widened or (hits and len(updated.body) == 1):
            from rocm_lint.fix.layout import wrap_statement

            # a gated statement moves one level deeper
            deeper = len(self.module.default_indent) if hits and self.module else 0
            if hits and deeper:
                shallow = self._rewrapped(original, self._wrapped(original, updated, wrap_statement, 0), 0)
            updated = self._wrapped(original, updated, wrap_statement, deeper)
            updated = self._rewrapped(original, updated, deeper)
        if not hits and not guards:
            return updated
        if len(updated.body) != 1:  # `a; b` on one line: no safe place to gate
            return updated
        inner = updated.with_changes(leading_lines=())
        if hits:
            self.applied.update(id(f) for f in hits)
            alias = self.inline.get(id(hits[0]))
            test = (
                cst.parse_expression(f"{alias}.version.hip is None")
                if alias
                else cst.UnaryOperation(operator=cst.Not(), expression=cst.Name(self.flag_name))
            )
            gate = cst.If(
                test=test, body=cst.IndentedBlock(body=[inner]), leading_lines=updated.leading_lines
            )
            self.created[id(gate)] = (gate, alias or "")
            self.shallow[id(gate)] = [shallow.with_changes(leading_lines=())]
            return gate
        names = bound_names(updated.body[0])
        if not names:
            return updated
        self.applied.update(id(f) for f in guards)
        fallback = [
            cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(n))], value=cst.Name("None"))]
            )
            for n in names
        ]
        guard = cst.Try(
            body=cst.IndentedBlock(body=[inner]),
            handlers=[cst.ExceptHandler(type=cst.Name("ImportError"), body=cst.IndentedBlock(body=fallback))],
            leading_lines=updated.leading_lines,
        )
        self.guards[id(guard)] = guard
        return guard

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        self.parents.pop()
        if isinstance(original, cst.BaseExpression) and self.values:
            pos = self.positions.get(original)
            if pos is not None:
                key = (pos.start.line, pos.start.column, pos.end.line, pos.end.column)
                if key in self.values and isinstance(result, cst.BaseExpression):
                    return self._replace_value(key, result)
        return result

    def _replace_value(self, key, result):
        f, recipe = self.values.pop(key)
        self.applied.add(id(f))
        for node in reversed(self.parents):  # the statement (or header part) now longer
            if isinstance(node, (cst.SimpleStatementLine, cst.With, cst.Decorator, cst.If)):
                self.widened.add(id(node))
                break
            if isinstance(node, (cst.BaseCompoundStatement, cst.IndentedBlock)):
                break
        parent = self.parents[-1] if self.parents else None
        wrap = not isinstance(parent, _BARE_OK)
        parens = dict(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if wrap else {}
        if isinstance(recipe, WrapExpression):
            inner = cst.Module([]).code_for_node(result)
            if not isinstance(result, (cst.Comparison, cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                inner = f"({inner})"  # (a comparison binds tighter than `and`/`or`: no parentheses)
            source = recipe.template.format(expr=inner, torch=self.inline.get(id(f), self.torch_alias))
            new = cst.parse_expression(source)
            return new.with_changes(**parens) if wrap and _needs_parens(parent, new) else new
        alias = self.inline.get(id(f))
        if (
            recipe.rocm_source == "False"
            and isinstance(result, cst.Name)
            and result.value == "True"
            and not result.lpar
        ):
            # `False if is_rocm else True` reads as `not is_rocm` (ruff's SIM211)
            if alias:
                return cst.parse_expression(f"{alias}.version.hip is None")
            return cst.UnaryOperation(operator=cst.Not(), expression=cst.Name(self.flag_name))
        return cst.IfExp(
            test=cst.parse_expression(f"{alias}.version.hip is not None")
            if alias
            else cst.Name(self.flag_name),
            body=cst.parse_expression(recipe.rocm_source),
            orelse=result,
            **parens,
        )


def _needs_parens(parent, new) -> bool:
    """Whether ``new`` (a boolean operation put where an expression was) needs parentheses in
    ``parent``: not as an `if`/`while`/`assert` test, nor inside an operation of the same
    operator (`a and (b and c)` is `a and b and c`)."""
    if isinstance(parent, (cst.If, cst.While, cst.Assert)):
        return False
    if isinstance(parent, cst.BooleanOperation) and isinstance(new, cst.BooleanOperation):
        return type(parent.operator) is not type(new.operator)
    return True


def _unindented_blanks(lines):
    """Leading lines moved one block deeper: a blank line stays empty (LibCST would write the
    block's indentation on it: a whitespace-only line, pycodestyle's W293), a comment follows."""
    return [
        line.with_changes(indent=False, whitespace=cst.SimpleWhitespace("")) if line.comment is None else line
        for line in lines
    ]


def bound_names(stmt) -> List[str]:
    """The names an import statement binds (what ``except ImportError`` sets to None)."""
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


def _is_import(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
    )


def _module_names(stmt) -> Optional[List[str]]:
    """The modules a plain ``import a, b.c`` line imports (None for anything else)."""
    if not (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Import)
    ):
        return None
    return [_EMPTY.code_for_node(alias.name) for alias in stmt.body[0].names]


def _imports_torch(stmt) -> bool:
    """A one-statement line importing torch or a submodule (``from torch.x import y``,
    ``import torch.nn as nn``)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    small = stmt.body[0]
    if isinstance(small, cst.ImportFrom):
        module = _EMPTY.code_for_node(small.module) if small.module is not None else ""
        return not small.relative and (module == "torch" or module.startswith("torch."))
    names = _module_names(stmt) or []
    return any(n == "torch" or n.startswith("torch.") for n in names)


def _from_module(stmt) -> Optional[List[str]]:
    """The module a one-statement ``from a.b import c`` line imports from (None otherwise)."""
    if (
        not (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.ImportFrom)
        )
        or stmt.body[0].relative
        or stmt.body[0].module is None
    ):
        return None
    return [_EMPTY.code_for_node(stmt.body[0].module)]


def _isort_place_of_import_torch(body, at: int, sort_within: bool = False) -> Optional[int]:
    """Where isort (ruff's defaults: plain imports before ``from`` imports in a section, sorted by
    module; with ``force-sort-within-sections`` both kinds sorted together by module) wants an
    added ``import torch``, when that is right before the first module-level torch import (before
    ``at``): its index, else None (the import then goes after it)."""
    k = next((i for i in range(min(at, len(body))) if _imports_torch(body[i])), None)
    if k is None:
        return None
    names = _module_names(body[k])
    if names is not None and not all(n.lower() > "torch" for n in names):
        return None  # a plain import that sorts before ``torch`` (it already binds the name)
    if (
        k > 0
        and not body[k].leading_lines
        and isinstance(body[k - 1], cst.SimpleStatementLine)
        and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in body[k - 1].body)
    ):
        previous = _module_names(body[k - 1])
        if previous is None and sort_within:
            previous = _from_module(body[k - 1])
        if previous is None or not all(n.lower() < "torch" for n in previous):
            return None  # isort's place is further up, away from the torch import
    return k


def _index_after_line(module, positions, line: Optional[int], default: int) -> int:
    """The index in LibCST's module body of the statement holding ``line`` (the plan's insertion
    point, an ast position); ``default`` when no line is known."""
    if line is None:
        return default
    found = default
    for i, stmt in enumerate(module.body):
        where = positions.get(stmt)
        if where is None:
            return default
        if where.start.line > line:
            break
        found = i
    return found


def apply_recipes(
    wrapper,
    positions,
    lines: List[str],
    findings: Sequence[Finding],
    flag,
    line_length: Optional[int] = None,
    blank_after_imports: Optional[int] = None,
    *,
    sort_within_sections: bool = False,
):
    """Rewrite the module held by ``wrapper``: (new source, ids of the applied findings, whether
    the ROCm flag is used; its statements are inserted where the plan says when it is new).
    Findings in ``flag.inline`` test ``<torch>.version.hip`` in place instead of the flag."""
    fixer = RecipeTransformer(
        positions,
        lines,
        findings,
        flag.name,
        flag.torch_alias,
        flag.inline,
        line_length=line_length,
        module=wrapper.module,
        blank_after_imports=blank_after_imports or 1,
    )
    new_module = wrapper.visit(fixer)
    applied = fixer.applied
    uses_flag = any(
        isinstance(f.recipe, (GateStatement, RocmValue)) and id(f) not in flag.inline
        for f in findings
        if id(f) in applied
    )
    if uses_flag and flag.statements:
        stmts = [cst.parse_statement(s + "\n") for s in flag.statements]
        body = list(new_module.body)
        at = _index_after_line(wrapper.module, positions, flag.insert_after_line, flag.insert_after) + 1
        before = (
            _isort_place_of_import_torch(body, at, sort_within_sections)
            if flag.statements[0] == "import torch"
            else None
        )
        if before is not None:
            # ``import torch`` right before the torch import isort puts it before (it imports
            # nothing that statement would not import first); the flag stays after the imports
            added = stmts.pop(0)
            body = (
                body[:before]
                + [
                    added.with_changes(leading_lines=body[before].leading_lines),
                    body[before].with_changes(leading_lines=()),
                ]
                + body[before + 1 :]
            )
            at += 1
        if 0 < at <= len(body):
            # Formatter-clean: the blank line isort/ruff (I001) want after an import block (or
            # the project's ``lines-after-imports``), the two ruff format and pycodestyle (E305)
            # want after a def or class.
            # (An ``import torch`` the plan adds joins the import block; the blank lines go before
            # the first statement that is not an import.)
            after_def = isinstance(body[at - 1], (cst.FunctionDef, cst.ClassDef))
            first = next((i for i, st in enumerate(stmts) if not _is_import(st)), None)
            if first is not None:
                blank = max(blank_after_imports or 1, 2 if after_def and first == 0 else 1)
                stmts[first] = stmts[first].with_changes(leading_lines=[cst.EmptyLine()] * blank)
        new_module = new_module.with_changes(body=body[:at] + stmts + body[at:])
    return new_module.code, applied, uses_flag
