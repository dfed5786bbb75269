"""A gate that is the whole body of an ``if``: one ``if``, not two (ruff's ``SIM102``).

pytorch/benchmark sets two cuBLAS options under ``if current_name in {...}:``; gating them made
``if ...:`` hold nothing but ``if not is_rocm:``, and ruff's default rules (``SIM102``,
collapsible-if) flagged the new line.  Where the enclosing ``if`` has no ``else``/``elif``, is no
``elif`` itself and its test is on one line, the gate's test joins it instead::

    if current_name in {"a", "b"} and not is_rocm:
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

The same program on both platforms: the test is evaluated once either way (``bool`` of the
enclosing test, then the flag), and with no other branch nothing else runs when it is false.  On
NVIDIA the flag is False and the test folds back to the original (the independent check,
``fix.nvidia_path``, proves it before anything is written).  The statements go back to their own
level, laid out for it.  Not done where the joined header would run past the line length.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

_EMPTY = cst.Module([])
# tests that bind looser than `and`: parenthesised before joining
_LOOSE = (cst.IfExp, cst.Lambda, cst.NamedExpr)


def _joined_test(test: cst.BaseExpression, gate_test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, _LOOSE) or (
        isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)
    ):
        if not test.lpar:
            test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=test, operator=cst.And(), right=gate_test)


def _operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands of an unparenthesised ``and`` chain (the test itself otherwise)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        return _operands(test.left) + _operands(test.right)
    return [test]


def _parts(operand) -> Optional[List[str]]:
    """An operand's lines of text as ruff format splits it in a chain that does not fit: a
    comparison over several lines puts each operator first on a line of its own (``x`` /
    ``in {`` ... ``}``); None where it holds a comment."""
    code = _EMPTY.code_for_node(operand)
    if "#" in code:
        return None
    if "\n" not in code or not isinstance(operand, cst.Comparison) or operand.lpar:
        return [code]
    left = _EMPTY.code_for_node(operand.left)
    if "\n" in left:
        return None
    out = [left]
    for target in operand.comparisons:
        op = _EMPTY.code_for_node(target.operator).strip()
        out.append(op + " " + _EMPTY.code_for_node(target.comparator).strip(" "))
    return out


def _split_test(test, gate_test, indent: int, limit: int, config) -> Optional[cst.BaseExpression]:
    """A test over several lines joined with the gate's test as ruff format lays out a boolean
    chain that does not fit on one line: in parentheses, one operand a line, each ``and`` first,
    the operands' own brackets as they were (moved one level in); None where an operand holds a
    comment or a line would run past ``limit``."""
    lines = ["if ("]
    for n, operand in enumerate(_operands(test) + [gate_test]):
        if isinstance(operand, _LOOSE + (cst.BooleanOperation,)) and not operand.lpar:
            operand = operand.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        parts = _parts(operand)
        if parts is None:
            return None
        for k, part in enumerate(parts):
            first, *rest = part.split("\n")
            lines.append("    " + ("and " if n and not k else "") + first.strip())
            lines.extend("    " + line for line in rest)
    lines.append("):")
    if any(indent + len(line) > limit for line in lines):
        return None
    try:
        parsed = (
            cst.parse_statement("\n".join(lines) + "\n    pass\n", config=config)
            if config
            else cst.parse_statement("\n".join(lines) + "\n    pass\n")
        )
    except cst.ParserSyntaxError:
        return None
    return parsed.test if isinstance(parsed, cst.If) else None


def collapse_gate(
    node: cst.If,
    parent,
    created: Dict[int, tuple],
    shallow: Dict[int, List[cst.BaseStatement]],
    indent: int,
    limit: int,
    config=None,
) -> Optional[cst.If]:
    """``node`` with the gate that is its whole body joined into its test, or None."""
    if node.orelse is not None or isinstance(parent, cst.If) or not isinstance(node.body, cst.IndentedBlock):
        return None
    if len(node.body.body) != 1 or node.body.footer:
        return None
    gate = node.body.body[0]
    if created.get(id(gate), (None,))[0] is not gate or id(gate) not in shallow:
        return None
    if not isinstance(gate, cst.If) or gate.orelse is not None or gate.body.header.comment is not None:
        return None
    comment = node.body.header.comment
    if "\n" in _EMPTY.code_for_node(node.test):
        test = _split_test(node.test, gate.test, indent, limit, config)
        if test is None:
            return None
        node = node.with_changes(
            whitespace_before_test=cst.SimpleWhitespace(" "), whitespace_after_test=cst.SimpleWhitespace("")
        )
    else:
        test = _joined_test(node.test, gate.test)
        header = "if " + _EMPTY.code_for_node(test) + ":"
        if indent + len(header) + (2 + len(comment.value) if comment else 0) > limit:
            return None
    body = list(shallow[id(gate)])
    body[0] = body[0].with_changes(leading_lines=gate.leading_lines)
    return node.with_changes(test=test, body=node.body.with_changes(body=body))
