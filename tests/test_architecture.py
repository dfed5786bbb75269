"""The structure docs/architecture.md describes, kept true: one-way layers, no import cycle,
no private names across modules, no reference to files outside the repository.

Imports are read from the source (module level and inside functions alike: a lazy import that
runs back up is still an arrow back up); ``importlib`` loading of the rule families by the
registry is the one deliberate plug-in point and is not an import statement.
"""

import ast
import re
from fnmatch import fnmatch
from pathlib import Path
from typing import Dict, List, Set

import pytest

from conftest import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "rocm_lint"

# From the bottom up; a module may import its own layer and the layers below it, never above.
LAYERS = [
    (
        "data",
        [
            "rocm_lint",
            "rocm_lint.lines",
            "rocm_lint.finding",
            "rocm_lint.domain",
            "rocm_lint.lazy",
            "rocm_lint.words",
            "rocm_lint.requirements",
        ],
    ),
    (
        "settings and the rule unit",
        [
            "rocm_lint.config",
            "rocm_lint.rule",
            "rocm_lint.noqa",
            "rocm_lint.discovery",
            "rocm_lint.workspace",
            "rocm_lint.workers",
        ],
    ),
    (
        "readers",
        [
            "rocm_lint.python",
            "rocm_lint.python.*",
            "rocm_lint.cpp",
            "rocm_lint.cpp.*",
            "rocm_lint.build",
            "rocm_lint.build.*",
            "rocm_lint.configfiles",
            "rocm_lint.configfiles.*",
            "rocm_lint.notebook",
        ],
    ),
    ("rules", ["rocm_lint.rules", "rocm_lint.rules.*"]),
    ("registry", ["rocm_lint.registry", "rocm_lint.rule_index", "rocm_lint.docgen"]),
    (
        "engine",
        [
            "rocm_lint.engine",
            "rocm_lint.engine_paths",
            "rocm_lint.cache",
            "rocm_lint.cache_entries",
            "rocm_lint.unused_noqa",
        ],
    ),
    ("fix", ["rocm_lint.fix", "rocm_lint.fix.*"]),
    (
        "front ends",
        [
            "rocm_lint.output",
            "rocm_lint.output.*",
            "rocm_lint.baseline",
            "rocm_lint.diffbase",
            "rocm_lint.cli",
            "rocm_lint.cli_args",
            "rocm_lint.cli_report",
            "rocm_lint.cli_stdin",
            "rocm_lint.cli_commands",
            "rocm_lint.server",
            "rocm_lint.server_features",
            "rocm_lint.flake8_plugin",
            "rocm_lint.server_config",
            "rocm_lint.server_fixes",
            "rocm_lint.server_positions",
            "rocm_lint.server_stream",
            "rocm_lint.semgrep",
            "rocm_lint.runtime",
            "rocm_lint.__main__",
        ],
    ),
]


def _modules() -> Dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> Dict[str, List[str]]:
    """{imported rocm_lint module: [names taken from it]} for one module."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: Dict[str, List[str]] = {}
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rocm_lint"):
                    out.setdefault(alias.name, [])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith("rocm_lint"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:  # `from rocm_lint.fix import api`: a module
                    out.setdefault(full, [])
                else:
                    out.setdefault(base, []).append(alias.name)
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    for i, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch(name, p) for p in patterns):
            return i
    raise AssertionError(f"{name} is in no layer: add it to LAYERS and to docs/architecture.md")


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    mine = _layer(name)
    up = [
        f"{target} ({LAYERS[_layer(target)][0]})"
        for target in IMPORTS[name]
        if target in MODULES and _layer(target) > mine
    ]
    assert not up, f"{name} ({LAYERS[mine][0]}) imports a higher layer: {up}"


def test_no_import_cycle():
    graph = {name: {t for t in targets if t in MODULES and t != name} for name, targets in IMPORTS.items()}
    # A package imports its submodules only through the registry's plug-in loading.
    state: Dict[str, int] = {}
    path: List[str] = []
    cycles: List[List[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_function_level_imports_are_imports():
    """A rule family imports a reader inside the function that calls it (so a Python check does not
    load the C++ reader); for these tests that is an import like a module-level one (a layer break
    inside a function is still one)."""
    assert "rocm_lint.cpp.scanner" in IMPORTS["rocm_lint.rules.lane_masks"]
    assert "calls" in IMPORTS["rocm_lint.rules.lane_masks"]["rocm_lint.cpp.scanner"]


def test_no_name_is_injected_at_run_time():
    """No module reaches its own namespace (``globals()``, or ``vars()``/``locals()`` with no
    argument) to bind names at run time: every name a module uses is visible to ruff, mypy and
    editors."""
    offenders = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and (node.func.id == "globals" or node.func.id in ("locals", "vars") and not node.args)
            ):
                offenders.append(f"{name}:{node.lineno}")
    assert not offenders, offenders


def test_no_private_names_across_modules():
    leaks = [
        f"{name} takes {target}.{n}"
        for name, targets in IMPORTS.items()
        for target, names in targets.items()
        for n in names
        if n.startswith("_") and not n.startswith("__") and target != name
    ]
    assert not leaks, leaks


def test_rule_modules_only_define_rules_through_the_rule_unit():
    """A rule family never imports the registry (the registry collects the families)."""
    for name, targets in IMPORTS.items():
        if name.startswith("rocm_lint.rules"):
            assert "rocm_lint.registry" not in targets, name


_OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE)\.md\b|\.\./shared\b")


def test_no_reference_to_files_outside_the_repository():
    texts = (
        list(PACKAGE.rglob("*.py"))
        + list((ROOT / "tests").rglob("*.py"))
        + list((ROOT / "docs").rglob("*.md"))
    )
    texts += [ROOT / "README.md", ROOT / "Makefile", ROOT / "mkdocs.yml"]
    texts += list((ROOT / "scripts").rglob("*.py")) + list((ROOT / "benchmarks").rglob("*.py"))
    here = Path(__file__).resolve()
    hits: Set[str] = set()
    for path in texts:
        if path.resolve() == here:
            continue
        for lineno, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if _OUTSIDE.search(line):
                hits.add(f"{path.relative_to(ROOT)}:{lineno}")
    assert not hits, sorted(hits)
