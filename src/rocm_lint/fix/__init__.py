"""Autofix: rules describe a repair, this package builds, verifies and writes it.

A checker attaches a *recipe* to a finding (gate the statement, give ROCm another value,
guard an import).  Only files that have such findings are parsed with LibCST; every fixed
file must re-parse, and every safe fix must leave the NVIDIA program unchanged: with the
ROCm flag folded to False the fixed module's AST equals the original's
(:mod:`rocm_lint.fix.nvidia_path`).  A fix that fails either check is dropped, never written.
"""

from rocm_lint.fix.recipes import GateStatement, GuardImport, RocmValue, WrapExpression  # noqa: F401
