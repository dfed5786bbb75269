"""ROC4: NVIDIA-only packages and tools."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from rocm_lint.finding import Applicability
from rocm_lint.fix.recipes import GuardImport
from rocm_lint.registry import python_checker, register

register(
    "ROC401", "unguarded-pynvml-import",
    "module-level `import pynvml` without try/except ImportError or a ROCm gate: no NVML on AMD hosts",
    triggers=("pynvml",),
    fix=Applicability.UNSAFE,
)


def _imports_pynvml(node) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == "pynvml" or a.name.startswith("pynvml.") for a in node.names)
    return node.level == 0 and node.module is not None and (
        node.module == "pynvml" or node.module.startswith("pynvml."))


@python_checker(ast.Import, ast.ImportFrom, codes=("ROC401",))
def find_unguarded_pynvml_import(node, ctx) -> Iterator[Tuple[ast.AST, str, str]]:
    state = ctx.state
    if state.in_function or state.import_guarded or not _imports_pynvml(node):
        return
    yield node, "ROC401", ("module-level `import pynvml` with no fallback: AMD hosts have no NVML "
                           "(nvmlInit fails, or the package is missing); wrap it in try/except "
                           "ImportError and use amdsmi when `is_rocm`"), GuardImport(
        "Guard the import with try/except ImportError (the name is None where pynvml is missing)")
