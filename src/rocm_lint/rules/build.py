"""ROC5: build configuration in Python build code (setup.py, torch extension builds).

ROC501 (nvcc-only flags that clang++ rejects), and what reaches nvcc (``BUILD_FACTS``); ROC502/ROC503
(hard-coded NVIDIA and AMD GPU archs) are :mod:`rocm_lint.rules.gpu_arch`, and the same arch rules in
shell, Dockerfile, YAML, .env and CMake files are checked by :mod:`rocm_lint.rules.build_config`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from rocm_lint.domain import NVIDIA, ROCM
from rocm_lint.lazy import LazyPattern
from rocm_lint.python.analyzer import walk_gated
from rocm_lint.python.context import ModuleContext, ModuleFacts, State
from rocm_lint.python.project import ExportedFacts
from rocm_lint.rule import PyHit, Rule
from rocm_lint.words import line_numbers, whole_word_positions

# -- what reaches nvcc ---------------------------------------------------------------------


@dataclass(frozen=True)
class BuildFacts:
    """What one module feeds to the nvcc step of a torch extension build (ids of string constants)."""

    nvcc_constants: FrozenSet[int]  # strings reaching nvcc in ungated code
    sink_constants: FrozenSet[int]  # strings reaching the device compiler on ROCm
    nvcc_imports: FrozenSet[int] = frozenset()  # imported names (flag helpers) reaching nvcc ungated


_LIST_METHODS = {"append", "extend", "insert", "__iadd__"}
# A function whose name says it returns the nvcc step's flags: ``nvcc_flags``, ``get_nvcc_args``,
# ``extra_cuda_cflags`` (never ``cxx_flags``; ``nvcc_threads`` helpers are followed by name).
_NVCC_PROVIDER = re.compile(r"(?:^|_)(?:nvcc_(?:flags|args|options|cflags)|cuda_cflags)$", re.I)


def _nvcc_key(node: Optional[ast.AST], ctx: ModuleContext) -> bool:
    return node is not None and ctx.constant(node) == "nvcc"


class _Sinks:
    """The sinks of one module and the lists bound to names, collected by a gated walk.

    A *sink* is an expression whose strings reach nvcc (hipcc/clang++ on ROCm): the
    ``"nvcc"`` entry of a dict (``extra_compile_args={"nvcc": [...]}``, ``dict(nvcc=...)``,
    ``args["nvcc"] = ...``, ``args["nvcc"].append(...)``) and the ``extra_cuda_cflags=``
    argument of ``load``/``load_inline``.  The analyser's gate walk sorts the sinks:
    NVIDIA-only ones are dropped, ROCm-only ones only count for ROC503 (``sink_constants``),
    the rest for both (``nvcc_constants``).  Names read by the live sinks are followed to
    every list the module binds to them (``flags = [...]``, ``flags += [...]``,
    ``flags.append(...)``/``.extend([...])``), except where the name is a parameter of the
    enclosing function (the caller decides, maybe behind a gate).
    """

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.live_values: List[ast.AST] = []  # sink expressions reached on ROCm (not gated)
        self.rocm_values: List[ast.AST] = []  # sink expressions only reached on ROCm
        self.bindings: Dict[str, List[ast.AST]] = {}  # name -> values appended/assigned/returned
        # per function: name -> values (a method named for nvcc reads only its own locals)
        self.local: Dict[int, Dict[str, List[ast.AST]]] = {}
        self.method_values: List[Tuple[int, ast.AST]] = []  # (function id, returned value) reached on ROCm
        self.imported: Set[int] = set()  # imported names read by the sinks reached so far

    def see(self, node: ast.AST, state: State) -> None:
        if state.nvidia_only:
            return
        sinks = self.rocm_values if state.rocm_only else self.live_values
        ctx = self.ctx
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if _nvcc_key(k, ctx):
                    sinks.append(v)
        elif isinstance(node, ast.Call):
            func = node.func
            for kw in node.keywords:
                if kw.arg == "extra_cuda_cflags" or (kw.arg == "nvcc" and ctx.qualname(func) == "dict"):
                    sinks.append(kw.value)
            if isinstance(func, ast.Attribute) and func.attr in _LIST_METHODS:
                owner = func.value
                values = node.args[-1:] if func.attr == "insert" else node.args
                if isinstance(owner, ast.Subscript) and _nvcc_key(owner.slice, ctx):
                    sinks.extend(values)
                elif isinstance(owner, ast.Name) and not self._is_parameter(owner.id):
                    self.bindings.setdefault(owner.id, []).extend(values)
                    self._bind_locally(owner.id, values)
        elif isinstance(node, ast.Return) and node.value is not None and self.ctx.function is not None:
            module_level = self.ctx.function in self.ctx.tree.body
            if not module_level and not state.rocm_only and _NVCC_PROVIDER.search(self.ctx.function.name):
                # ``def nvcc_flags(self): return [...]``: a method named for the nvcc step hands
                # its list to it (ColossalAI's extension builders; a module-level helper is
                # reported where it is called, with the caller's gates).  Only the method's own
                # strings and locals count: another method's ``args`` is not this one's.
                self.method_values.append((id(self.ctx.function), node.value))
            if module_level:
                # ``def extra_nvcc_flags(): return [...]`` (module level): ``extra_nvcc_flags()``
                # reads what it returns (key ``name()``: a variable may share the name)
                self.bindings.setdefault(self.ctx.function.name + "()", []).append(node.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and _nvcc_key(target.slice, ctx):
                    sinks.append(node.value)
                elif isinstance(target, ast.Name) and not self._is_parameter(target.id):
                    self.bindings.setdefault(target.id, []).append(node.value)
                    self._bind_locally(target.id, [node.value])

    def _bind_locally(self, name: str, values: List[ast.AST]) -> None:
        if self.ctx.function is not None:
            self.local.setdefault(id(self.ctx.function), {}).setdefault(name, []).extend(values)

    def reach_methods(self) -> Set[int]:
        """The strings the methods named for nvcc return, through their own locals only."""
        found: Set[int] = set()
        for function, value in self.method_values:
            saved, self.bindings = self.bindings, self.local.get(function, {})
            try:
                found |= self.reach([value])
            finally:
                self.bindings = saved
        return found

    def _is_parameter(self, name: str) -> bool:
        fn = self.ctx.function
        if fn is None:
            return False
        args = fn.args
        every = list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        return any(a.arg == name for a in every)

    def reach(self, values: List[ast.AST], names: Optional[Set[str]] = None) -> Set[int]:
        """The strings in ``values``, following the names they read to what is bound to them
        (``names``, when given, receives every name followed)."""
        names = set() if names is None else names
        found: Set[int] = set()
        for value in values:
            self._collect(value, names, found)
        seen: Set[str] = set()
        while names - seen:  # ``all_flags = base_flags + arch_flags`` chains
            name = (names - seen).pop()
            seen.add(name)
            for value in self.bindings.get(name, ()):
                self._collect(value, names, found)
        return found

    def _collect(self, node: ast.AST, names: Set[str], found: Set[int]) -> None:
        """Mark the strings in a value that reaches nvcc, and the names it reads."""
        if isinstance(node, ast.IfExp):
            # ``nvcc_flags if not IS_HIP_EXTENSION else hip_flags``: only ROCm's arm counts.
            t, f = self.ctx.gates.facts(node.test)
            if not (t == NVIDIA or f == ROCM):
                self._collect(node.body, names, found)
            if not (f == NVIDIA or t == ROCM):
                self._collect(node.orelse, names, found)
            return
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                found.add(id(node))
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id + "()")
        if isinstance(node, ast.Name):
            names.add(node.id)
            if (
                node.id in self.ctx.imports.names
                and node.id + "()" not in self.bindings
                and node.id not in self.bindings
            ):
                self.imported.add(id(node))  # ``from .flags import extra_nvcc_flags``
            return
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.ctx.imports.names
        ):
            self.imported.add(id(node))  # ``flags.extra_nvcc_flags()``
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            return
        for child in ast.iter_child_nodes(node):
            self._collect(child, names, found)


def _learn_build_facts(ctx: ModuleContext) -> BuildFacts:
    sinks = _Sinks(ctx)
    if ctx.text:
        _walk_relevant(ctx, sinks)
    else:  # no text to search (a tree checked on its own): every statement
        walk_gated(ctx, sinks.see)
    return _facts_of(sinks)


def _learn_build_facts_whole(ctx: ModuleContext) -> BuildFacts:
    """The same facts from a gated walk of every statement (the tests compare both)."""
    sinks = _Sinks(ctx)
    walk_gated(ctx, sinks.see)
    return _facts_of(sinks)


def _facts_of(sinks: _Sinks) -> BuildFacts:
    sinks.imported = set()
    nvcc = sinks.reach(sinks.live_values) | sinks.reach_methods()
    imported = frozenset(sinks.imported)
    return BuildFacts(frozenset(nvcc), frozenset(nvcc | sinks.reach(sinks.rocm_values)), imported)


# -- walking only the statements the facts can come from ---------------------------------------
# The facts are a function of the nodes ``_Sinks.see`` records: the sinks, and the bindings of
# the names the sinks' values read (followed transitively).  A gated walk pruned to some lines
# (``walk_gated(ctx, see, lines)``, the analyser's own pruning) visits a subset of the nodes of
# the whole walk, each with the same state and enclosing function (early exits, ``if`` arms and
# inherited gates are applied whether or not a statement is entered).  So it is enough to
# visit every node that can matter; extra nodes only add duplicates (harmless: the values are
# reached as sets) or bindings of names no sink reads (never looked up).  What can matter:
#
# * a sink: an ``"nvcc"`` key or subscript (``ctx.constant`` == "nvcc": a literal, or a name
#   bound once whose value resolves to it), ``nvcc=``/``extra_cuda_cflags=`` keywords, and the
#   ``return`` of a method whose name says nvcc flags (``_NVCC_PROVIDER``, any case).  Their
#   lines hold ``nvcc``/``cuda_cflags`` in any case (the whole method is walked), or such an
#   alias name, unless the literal is spelled another way: with escapes or a continued line
#   (the line holds a backslash), split over adjacent literals (one of them is ``"n"``,
#   ``"nv"`` or ``"nvc"``), or an identifier in non-ASCII letters that NFKC folds (the line
#   holds a non-ASCII character).  Those lines are all walked;
# * the bindings of a name a reached value reads (``flags = [...]``, ``flags += ...``,
#   ``flags.append(...)``): on a line that holds the name as a whole word (or a non-ASCII
#   line); and ``name()``: the ``return`` statements of the module-level function ``name``,
#   whose lines are all walked.  Names are followed until no new one is reached.
# Line numbers count ``\n`` after ``\r\n`` and ``\r`` became ``\n`` (what the parser counts).
_SPELLED_OTHERWISE = LazyPattern(r"""[^\x00-\x7f]|\\|["'](?:n|nv|nvc)["']""")
_PROVIDER_WORDS = LazyPattern(r"nvcc|cuda_cflags")  # over the lowered text


def _nvcc_aliases(ctx: ModuleContext) -> List[str]:
    """Names bound once whose value ``ctx.resolve`` follows to the string ``"nvcc"``."""
    found = []
    for name, value in ctx.single_bindings.items():
        if isinstance(value, (ast.Constant, ast.Name, ast.IfExp)):
            final = ctx.resolve(ast.Name(id=name, ctx=ast.Load()))
            if isinstance(final, ast.Constant) and final.value == "nvcc":
                found.append(name)
    return found


def _walk_relevant(ctx: ModuleContext, sinks: _Sinks) -> None:
    """Feed ``sinks`` every node that can change the module's build facts (see above)."""
    text = ctx.text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lowered = text.lower()  # no character lowers to or from a newline: the lines stay
    offsets = [m.start() for m in _SPELLED_OTHERWISE.finditer(text)]
    for alias in _nvcc_aliases(ctx):
        offsets.extend(whole_word_positions(text, alias))
    low_offsets = [m.start() for m in _PROVIDER_WORDS.finditer(lowered)]
    module_functions: Dict[str, List[ast.stmt]] = {}
    for stmt in ctx.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module_functions.setdefault(stmt.name, []).append(stmt)
    walked: Set[int] = set()
    followed: Set[str] = set()
    pending = set(line_numbers(text, sorted(offsets))) | set(line_numbers(lowered, sorted(low_offsets)))
    providers: List[ast.AST] = []

    def see(node: ast.AST, state: State) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _NVCC_PROVIDER.search(node.name):
            providers.append(node)
        sinks.see(node, state)

    while pending:
        walk_gated(ctx, see, sorted(pending))
        walked |= pending
        extra: Set[int] = set()
        for fn in providers:  # a method named for nvcc: its returns, its locals
            extra.update(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1))
        providers.clear()
        names: Set[str] = set()
        sinks.reach(sinks.live_values, names)
        sinks.reach(sinks.rocm_values, names)
        for name in {n[:-2] if n.endswith("()") else n for n in names} - followed:
            followed.add(name)
            extra |= set(line_numbers(text, whole_word_positions(text, name)))
            for fn in module_functions.get(name, ()):  # ``name()`` reads what it returns
                extra.update(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1))
        pending = extra - walked


BUILD_FACTS: ModuleFacts[BuildFacts] = ModuleFacts("ROC5.build_facts", _learn_build_facts)


def _exported_nvcc_flags(ctx: ModuleContext) -> Dict[str, Tuple[str, ...]]:
    """Module-level functions and names whose value holds nvcc-only options on ROCm
    (``def extra_nvcc_flags(): return ["--generate-line-info"]``, ``NVCC_FLAGS = [...]``)."""
    sinks = _Sinks(ctx)
    walk_gated(ctx, sinks.see)
    strings = {
        id(n): n.value for n in ast.walk(ctx.tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    public = {s.name for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    public |= {
        t.id
        for s in ctx.tree.body
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        if isinstance(t, ast.Name)
    }
    found: Dict[str, Tuple[str, ...]] = {}
    functions = {s.name for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for name in public:
        if name in functions:  # what a call returns
            reached = sinks.reach([ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[], keywords=[])])
        elif name in sinks.bindings:
            reached = sinks.reach([ast.Name(id=name, ctx=ast.Load())])
        else:
            continue
        options = [nvcc_only_option(strings[i]) for i in reached if i in strings]
        options = sorted({o for o in options if o is not None})
        if options:
            found[name] = tuple(options)
    return found


# A quoted option (``"-gencode=..."``, ``'--threads'``): one linear pass over a module's text.
_QUOTED_OPTION = LazyPattern(r"""["'](-{1,2}[A-Za-z][\w-]*)""")


def _nvcc_option_offsets(text: str) -> List[int]:
    if "'-" not in text and '"-' not in text:
        return []
    return [m.start() for m in _QUOTED_OPTION.finditer(text) if m.group(1) in NVCC_ONLY_OPTIONS]


NVCC_FLAG_EXPORTS = ExportedFacts(
    "ROC501.nvcc_flags",
    (),
    lambda ctx: _exported_nvcc_flags(ctx),
    triggers=True,
    evidence=lambda text: _nvcc_option_offsets(text),
)

# -- ROC501 -----------------------------------------------------------------------------
# nvcc options that clang++ (what hipcc runs, and what torch's BuildExtension calls
# directly on ROCm >= 6) rejects with "unknown argument"/"unsupported option".  Each was
# checked against a clang++ driver; `-X<tool>` is listed from ROCm build logs (older
# clang only warned).  Deliberately absent, because clang accepts or merely ignores
# them: `-use_fast_math` (single dash: hipcc translated it; clang reads `-u se_fast_math`),
# `-lineinfo` (`-l ineinfo`, unused at -c), `-arch=sm_80` (Darwin `-arch`, ignored:
# ROC502's business), `-O3`, `-std=`, `-D`/`-U` macros, `--offload-arch`.
NVCC_ONLY_OPTIONS = frozenset(
    {
        "-gencode",
        "--generate-code",
        "--gpu-architecture",
        "--gpu-code",
        "-code",
        "--use_fast_math",
        "--extended-lambda",
        "--expt-extended-lambda",
        "--expt-relaxed-constexpr",
        "--ptxas-options",
        "-Xptxas",
        "-Xcompiler",
        "-Xcudafe",
        "-Xnvlink",
        "-Xfatbin",
        "--compiler-options",
        "--nvlink-options",
        "--generate-line-info",
        "--threads",
        "-maxrregcount",
        "--maxrregcount",
        "-ftz",
        "--ftz",
        "-prec-div",
        "--prec-div",
        "-prec-sqrt",
        "--prec-sqrt",
        "-fmad",
        "--fmad",
        "-res-usage",
        "--resource-usage",
        "--extra-device-vectorization",
        "--diag-suppress",
        "-ccbin",
        "--compiler-bindir",
        "--default-stream",
        "--split-compile",
        "-rdc",
        "--relocatable-device-code",
        "--allow-unsupported-compiler",
        "--disable-warnings",
        "--source-in-ptx",
        "--forward-unknown-opts",
        "-forward-unknown-opts",
        "-diag-suppress",
        # checked against clang++ 14's driver (`unsupported option`/`unknown argument`, an error):
        "--diag_suppress",
        "--keep",
        "-keep",
        "--keep-dir",
        "--keep-device-functions",
        "--device-debug",
        "--restrict",
        "-restrict",
        "--display-error-number",
        "--static-global-template-stub",
        "--extensible-whole-program",
        "--dlink-time-opt",
        "--device-link",
        "--fatbin-options",
        "--dopt",
        "--optix-ir",
        "--err-no",
    }
)

ROC501 = Rule(
    "ROC501",
    "nvcc-only-build-flag",
    "nvcc-only flag in a torch extension's nvcc compile args without a ROCm gate: "
    "clang++ under hipcc stops with `unknown argument`",
    triggers=(
        "use_fast_math",
        "gencode",
        "generate-code",
        "gpu-architecture",
        "gpu-code",
        "-code=",
        "extended-lambda",
        "relaxed-constexpr",
        "ptxas",
        "-Xcompiler",
        "-Xcudafe",
        "-Xnvlink",
        "-Xfatbin",
        "compiler-options",
        "nvlink-options",
        "generate-line-info",
        "--threads",
        "maxrregcount",
        "ftz",
        "prec-div",
        "prec-sqrt",
        "fmad",
        "res-usage",
        "resource-usage",
        "extra-device-vectorization",
        "diag-suppress",
        "ccbin",
        "compiler-bindir",
        "default-stream",
        "split-compile",
        "-rdc",
        "relocatable-device-code",
        "allow-unsupported-compiler",
        "disable-warnings",
        "source-in-ptx",
        "forward-unknown-opts",
        "diag_suppress",
        "-keep",
        "device-debug",
        "-restrict",
        "display-error-number",
        "static-global-template-stub",
        "whole-program",
        "dlink-time-opt",
        "device-link",
        "fatbin-options",
        "--dopt",
        "optix-ir",
        "--err-no",
    ),
    # every finding reaches an nvcc sink: a "nvcc" key, dict(nvcc=...) or extra_cuda_cflags=
    precheck=r"nvcc|extra_cuda_cflags",
    # no fix: a flag inside a list cannot be gated by a statement-level fix; the message says how
    facts=(BUILD_FACTS,),
    exports=(NVCC_FLAG_EXPORTS,),
    messages={
        "default": "nvcc-only flag `{option}` in a torch extension's nvcc args: ROCm builds hand them "
        "to hipcc/clang++, which stops with `unknown argument`; add it only when not "
        "IS_HIP_EXTENSION",
        "imported": "`{name}` (from `{module}`) puts nvcc-only {options} in a torch extension's nvcc "
        "args: ROCm builds hand them to hipcc/clang++, which stops with `unknown argument`; "
        "pass it only when not IS_HIP_EXTENSION",
    },
)


def nvcc_only_option(text: str) -> Optional[str]:
    """The first nvcc-only option in a flag string (``"-gencode=arch=..."``, ``"--threads 4"``)."""
    for token in text.split():
        name = token.split("=", 1)[0]
        if name in NVCC_ONLY_OPTIONS:
            return name
    return None


def is_bare_string(node: ast.AST, ctx: ModuleContext) -> bool:
    """A docstring or a string statement on its own: never a flag."""
    stmt = ctx.statement
    return isinstance(stmt, ast.Expr) and stmt.value is node


@ROC501.checker(ast.Constant)
def nvcc_only_flag(node: ast.Constant, ctx: ModuleContext) -> Iterator[PyHit]:
    if not isinstance(node.value, str) or is_bare_string(node, ctx):
        return
    option = nvcc_only_option(node.value)
    if option is None or id(node) not in ctx.facts(BUILD_FACTS).nvcc_constants:
        return
    yield PyHit(node, ROC501.message(option=option))


_SINK_WORDS = LazyPattern(ROC501.precheck)


def _names_a_sink(ctx: ModuleContext) -> bool:
    """Does the module name an nvcc sink at all (ROC501's precheck, once per module)?"""
    return ctx.memo("ROC501.sink-words", lambda: _SINK_WORDS.search(ctx.text) is not None)


@ROC501.checker(ast.Name, ast.Attribute)
def imported_nvcc_flags(node: ast.AST, ctx: ModuleContext) -> Iterator[PyHit]:
    """A flag helper or list imported from another module reaches nvcc here."""
    if not _names_a_sink(ctx) or not isinstance(node, (ast.Name, ast.Attribute)):
        return
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in ctx.imports.names:
        return
    if id(node) not in ctx.facts(BUILD_FACTS).nvcc_imports:
        return
    options = ctx.exported(NVCC_FLAG_EXPORTS, node)
    if not options:
        return
    qual = ctx.qualname(node) or ""
    shown = ", ".join(f"`{o}`" for o in options[:3]) + (" ..." if len(options) > 3 else "")
    yield PyHit(
        node,
        ROC501.message(
            "imported",
            name=ctx.snippet(node),
            module=qual.rpartition(".")[0],
            options=("flag " if len(options) == 1 else "flags ") + shown,
        ),
    )
