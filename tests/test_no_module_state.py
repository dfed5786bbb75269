"""No module-level mutable state in ``src/``: every cache of facts lives on the front end's
``Workspace`` (``rocm_lint.workspace``; docs/architecture.md, "Long-lived front ends").

Read from the source (``ast``): a module-level name bound to a mutable container (a dict, list
or set display or comprehension, ``dict()``/``defaultdict()``/...) that the module mutates
(item assignment or deletion, ``.append``/``.add``/``.update``/``.setdefault``/``.pop``/...,
slice assignment), a ``global`` statement, and a function decorated with ``functools.lru_cache``
or ``functools.cache``.  Constant tables (bound once, never mutated) are not state.

The allow-lists below are explicit, one line per entry with the reason.  A memo may stay only
where it is a pure function of its arguments: the same arguments give the same answer whatever
is on disk and whenever it is asked (a regex compiled from a string, a parse of a text, the
rule catalogue of the installed package).
"""

import ast
from typing import Dict, List, Set

from test_architecture import MODULES

# -- memoization of pure functions of their arguments: not state ----------------------------------
PURE_MEMOS = {
    # a compiled regex (or automaton) of the argument
    "rocm_lint.discovery._exclusion_regex": "one regex for the exclude globs given",
    "rocm_lint.words._automaton": "the Aho-Corasick automaton of the words given",
    "rocm_lint.python.project_text._ordered": "a word set's sorted tuple (the key of its automaton)",
    "rocm_lint.build.context._pattern_regex": "a glob pattern's regex",
    "rocm_lint.build.cmake_values._genex_cached": "a generator expression's values for a language",
    "rocm_lint.build.cmake_eval._definitions_of": "the (name, value) definitions one item gives",
    "rocm_lint.cpp.narrowing._device_automaton": "the Aho-Corasick automaton of the device words (a constant)",
    "rocm_lint.cpp.narrowing._bound_words": "the checkers of the codes given, with the trigger words of the narrowed rules",
    "rocm_lint.rules.lane_masks._type32_patterns": "the 32-bit type regexes for the aliases given",
    "rocm_lint.rules.warp.names_pattern": "an alternation of the names given",
    "rocm_lint.cpp.logical_warp._names_pattern": "an alternation of the names given",
    # the rule catalogue: a function of the installed package, fixed once imported
    "rocm_lint.registry._catalogue": "the rules of rocm_lint.rules",
    "rocm_lint.registry._index": "the rules' index (rocm_lint.rule_index while its checksum holds)",
    "rocm_lint.registry.all_codes": "every code of the index",
    "rocm_lint.registry._family": "the rules a family module defines",
    "rocm_lint.registry.python_checkers": "the checkers of the codes given",
    "rocm_lint.registry.python_observers": "the observers of the codes given",
    "rocm_lint.registry.source_checkers": "the checkers of the language and codes given",
    "rocm_lint.registry.superseding_rules": "the superseding rules of a language",
    "rocm_lint.registry.exported_facts": "the exported facts of the codes given",
    "rocm_lint.engine._triggers": "the trigger words of the codes given",
    "rocm_lint.engine._prefilters": "the triggers and prechecks of the codes given",
    "rocm_lint.engine._rule_filters": "likewise, per rule",
    "rocm_lint.engine._exporting_rules": "the rules of the codes that read exports",
    "rocm_lint.engine.selected_codes": "the codes a (frozen, hashable) configuration enables",
    "rocm_lint.engine.python_codes": "every Python code",
    # a parse of the text given (the trees are only read)
    "rocm_lint.fix.engine._module_ast": "ast.parse of the text",
    "rocm_lint.fix.engine._parsed": "the LibCST tree of the text (immutable)",
    # keyed by the stat of every file it reads: ((name, mtime, size), ...) of the config files
    "rocm_lint.fix.format_config._from_directory": "the formatter settings from files keyed by their stat",
    # the namespace uses of the last tree object asked about (a function of that object alone)
    "rocm_lint.fix.namespace._LAST": "namespace_uses of the last tree",
}

# -- module-level state that is not a cache of facts ----------------------------------------------
ALLOWED_STATE = {
    # a worker process of the CLI's pool is a front end of its own: it keeps its project model
    # (its own Workspace) for the chunks it is handed, keyed by the run's settings and seed
    "rocm_lint.engine_paths._WORKER_PROJECT": "the worker process's project model",
    # wiring set once at import (python.context registers ModuleContext: the project model may
    # not import the context); never a fact
    "rocm_lint.python.project._CONTEXT": "the ModuleContext class, registered at import",
}

# -- not moved yet (see docs/architecture.md, "Long-lived front ends"): the fix layer's scans of a
# project's Python files for star imports, reused for a few seconds (time-bounded, keyed by the
# project root), and the directories a process has swept of stale temporary files.  They belong on
# the Workspace, passed through fix_source and check_nvidia_path; until then they are named here.
NOT_YET_MOVED = {
    "rocm_lint.fix.namespace._SCANS": "star imports under a root, reused for SCAN_TTL seconds",
    "rocm_lint.fix.nvidia_namespace._PROJECTS": "star imports of a project, reused for REUSE_SECONDS",
    "rocm_lint.fix.files._swept": "directories already swept of stale temporary files",
    # like _SCANS and _PROJECTS: time-bounded, at most 32 entries; to move with them
    "rocm_lint.fix.namespace._ASKED": "which project modules ask for a name, reused for a few seconds",
    "rocm_lint.fix.nvidia_namespace._ASKED": "which project modules ask for a name (the checker's own copy)",
}

_MUTABLE_CALLS = {
    "dict",
    "list",
    "set",
    "defaultdict",
    "OrderedDict",
    "deque",
    "Counter",
    "WeakKeyDictionary",
    "WeakValueDictionary",
    "WeakSet",
    "bytearray",
}
_MUTATORS = {
    "append",
    "add",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "extend",
    "insert",
    "remove",
    "discard",
    "appendleft",
    "sort",
    "reverse",
    "__setitem__",
}
_CACHES = {"lru_cache", "cache"}


def _mutable(value: ast.AST) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in _MUTABLE_CALLS
    return False


def _top_level(body: List[ast.stmt]):
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Try)):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
            for handler in getattr(stmt, "handlers", []):
                yield from _top_level(handler.body)
            yield from _top_level(getattr(stmt, "finalbody", []))
        else:
            yield stmt


def _containers(tree: ast.Module) -> Set[str]:
    out = set()
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.Assign) and _mutable(stmt.value):
            out.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif (
            isinstance(stmt, ast.AnnAssign)
            and stmt.value is not None
            and _mutable(stmt.value)
            and isinstance(stmt.target, ast.Name)
        ):
            out.add(stmt.target.id)
    return out


def _mutated(tree: ast.Module, names: Set[str]) -> Set[str]:
    out = set()
    for node in ast.walk(tree):
        targets: List[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                out.add(t.value.id)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
        ):
            out.add(node.func.value.id)
    return out


def _cached_functions(tree: ast.Module) -> List[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                name = (
                    target.id
                    if isinstance(target, ast.Name)
                    else target.attr
                    if isinstance(target, ast.Attribute)
                    else ""
                )
                if name in _CACHES:
                    out.append(node.name)
    return out


def _state() -> Dict[str, List[str]]:
    """{"module.name": [what]} for every piece of module-level state in src/."""
    found: Dict[str, List[str]] = {}
    for module, path in sorted(MODULES.items()):
        tree = ast.parse(path.read_text("utf-8"))
        for name in sorted(_mutated(tree, _containers(tree))):
            found.setdefault(f"{module}.{name}", []).append("a mutable module-level container")
        for name in _cached_functions(tree):
            found.setdefault(f"{module}.{name}", []).append("an lru_cache/cache memo")
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    found.setdefault(f"{module}.{name}", []).append("rebound through `global`")
    return found


def test_no_module_level_mutable_caches():
    state = _state()
    unexpected = {
        k: v
        for k, v in state.items()
        if k not in PURE_MEMOS and k not in ALLOWED_STATE and k not in NOT_YET_MOVED
    }
    assert not unexpected, (
        "module-level state: keep it on the front end's Workspace "
        f"(rocm_lint.workspace), or say here why it is pure: {unexpected}"
    )


def test_the_allow_lists_name_only_what_exists():
    state = _state()
    stale = sorted(k for k in {**PURE_MEMOS, **ALLOWED_STATE, **NOT_YET_MOVED} if k not in state)
    assert not stale, stale


def test_the_detector_sees_each_kind():
    tree = ast.parse(
        "import functools\nA = {}\nB: list = []\nC = set()\nT = {'x': 1}\n"
        "def f():\n    A['k'] = 1\n    B.append(1)\n    C.add(2)\n    global D\n    D = 3\n"
        "@functools.lru_cache(maxsize=2)\ndef g(x):\n    return x\n"
    )
    assert _mutated(tree, _containers(tree)) == {"A", "B", "C"}  # T is a constant table
    assert _cached_functions(tree) == ["g"]
