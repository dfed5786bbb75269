"""An abstract interpreter for the CMake language: what a project's build computes, per platform.

The program is run, never its processes: commands are executed over an abstract state whose
variables hold a *set of possible strings* (``UNDEF`` among them for "not defined") or are
unknown (``None``).  A condition is evaluated with CMake's own rules (``if()``: parentheses, unary
tests, binary tests, ``NOT``, ``AND``, ``OR``; constants, auto-dereferenced names, CMP0054's
quoted arguments); when the state does not decide it, both branches run and their states are
joined (a definition made in one only is *maybe*).  Modelled:

* variables in directory and function scopes (``PARENT_SCOPE``), the cache (``option()``,
  ``set(... CACHE ...)``, ``cmake_dependent_option``), ``unset``;
* ``function()``/``macro()`` and their calls (``ARGC``/``ARGV``/``ARGN``/``ARGV<n>``, named
  parameters, ``cmake_parse_arguments``), recursion bounded; ``return``/``break``/``continue``;
* ``if``/``elseif``/``else``, ``foreach`` (items, ``RANGE``, ``IN LISTS``/``ITEMS``), ``while``,
  ``block()``, loops bounded (past the bound, what the body writes becomes unknown);
* ``list()`` and ``string()`` where simple, ``math(EXPR)``, ``get_filename_component``;
* ``include()`` of in-tree files (``CMAKE_MODULE_PATH`` searched in the tree), ``include_guard``,
  ``add_subdirectory`` (a child directory scope), ``file(GLOB|GLOB_RECURSE)`` against the tree;
* targets and their sources (``add_library``, ``add_executable``, ``cuda_add_*``, ``hip_add_*``,
  ``target_sources``), links (interface definitions flow through ``target_link_libraries``),
  compile definitions (``add_definitions``, ``add_compile_definitions``,
  ``target_compile_definitions``, ``-D`` in ``add_compile_options``/``target_compile_options``, in
  ``CMAKE_<LANG>_FLAGS`` at the end of the directory, ``COMPILE_DEFINITIONS`` source, target and
  directory properties), generator expressions decided where they can be (``$<BOOL:>``,
  ``$<NOT:>``, ``$<AND:>``, ``$<OR:>``, ``$<IF:>``, ``$<STREQUAL:>``, ``$<0:>``/``$<1:>``,
  ``$<COMPILE_LANGUAGE:>`` per source language ...; the rest are unknown).

Never run: ``execute_process``, ``try_compile``, ``find_*`` (their results are unknown), anything
outside the tree (an out-of-tree include is skipped, a command nobody defines makes the variables
its arguments name unknown and the sources it names *maybe* compiled).  Bounded: steps, loop
iterations, call depth, files, value-set sizes and string lengths.

:func:`evaluate_project` finds the project's platform switches and runs the program once per
platform scenario (``"rocm"``: a machine with ROCm and no CUDA, the project's ROCm switches on
and its CUDA switches off; ``"cuda"``: the mirror image), giving per source: compiled
definitely / maybe / never, and the macros defined definitely / maybe.  Only "definitely" is a
fact (``rocm_lint.build.context`` reads them).

The values, syntax tree and state are ``cmake_values``; conditions ``cmake_condition``; the
commands ``cmake_commands`` (mixed into :class:`Interpreter`).
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, cast

from rocm_lint.build.cmake_commands import CommandSemantics
from rocm_lint.build.cmake_condition import Condition
from rocm_lint.build.cmake_values import (
    CUDA,
    Abort,
    BlockNode,
    CONDITION_KEYWORDS,
    Choose,
    Cmd,
    CommandDef,
    DefNode,
    ENDED,
    FALSE_CONSTANTS,
    IfNode,
    Item,
    LANGUAGE_OF,
    LoopNode,
    MAX_ALTERNATIVES,
    MAX_CALL_DEPTH,
    MAX_FILES,
    MAX_ITERATIONS,
    MAX_STEPS,
    NAMES_READ,
    NO_EFFECT,
    OPEN,
    PLAIN_TEXT,
    REFERENCE_OPEN,
    ROCM,
    SCOPE_WORDS,
    SOURCE_FILE,
    State,
    TRUE_CONSTANTS,
    UNDEF_VALUE,
    UNKNOWN_ARGS,
    UNKNOWN_MANY,
    Unknown,
    UnknownArg,
    VARIABLE_NAME,
    Value,
    all_known,
    any_tainted,
    arg_text,
    flag_definitions,
    genex,
    join_all,
    parse,
    split_list,
    write_positions,
)


@dataclass
class _Frame:
    kind: str  # "function", "file", "loop"
    returned: List[State] = field(default_factory=list)
    breaks: List[State] = field(default_factory=list)
    continues: List[State] = field(default_factory=list)


class Interpreter(CommandSemantics):
    """One run of a CMake program over the abstract state.

    ``root``: the tree (nothing outside it is read); ``read(path)``: a file's text or None;
    ``project``: True for a configure run (the cache may hold anything a user passes: unknown),
    False for ``cmake -P`` semantics (every variable starts undefined); ``scenario``: ``"rocm"``,
    ``"cuda"`` or None (the platform ``find_package(hip)``/``check_language`` find)."""

    def __init__(
        self,
        root: str,
        read: Callable[[str], Optional[str]],
        project: bool = True,
        scenario: Optional[str] = None,
        cache: Optional[Dict[str, Value]] = None,
        trees: Optional[Dict[str, Optional[list]]] = None,
    ) -> None:
        self.root = os.path.abspath(root)
        self.read = read
        self.project = project
        self.scenario = scenario
        self.steps = 0
        self.depth = 0
        self.frames: List[_Frame] = []
        self.macro_args: List[Dict[str, Optional[str]]] = [{}]
        self.files_read: List[str] = []
        self.discovery: Optional[Discovery] = None  # set it to learn the platform switches
        self.program: Optional[FrozenSet[str]] = None  # the names the program writes (for taint)
        self.tests: List[Optional[Tuple[str, bool]]] = []  # the switch tests around the command run
        self.current_dir = self.root
        self.list_file = ""
        self.initial_cache = cache or {}
        self.trees = trees if trees is not None else {}
        # set it to collect the names the program writes (a discovery run: options are unknown,
        # so that every branch an option decides is explored)
        self.written: Optional[Set[str]] = None

    # ---- entry points
    def new_state(self) -> State:
        st = State(None if self.project else UNDEF_VALUE)
        for name, value in self.initial_cache.items():
            st.cache[name] = value
        if self.project:
            binary = "/nonexistent-build-dir"  # any build directory: outside the tree
            for name in ("CMAKE_BINARY_DIR", "CMAKE_CURRENT_BINARY_DIR", "PROJECT_BINARY_DIR"):
                st.set(name, frozenset({binary}))
            for name in ("CMAKE_SOURCE_DIR", "CMAKE_CURRENT_SOURCE_DIR", "PROJECT_SOURCE_DIR"):
                st.set(name, frozenset({self.root}))
            st.set("UNIX", frozenset({"1"}))
            st.set("CMAKE_SYSTEM_NAME", frozenset({"Linux"}))
            st.set("CMAKE_HOST_SYSTEM_NAME", frozenset({"Linux"}))
            for name in ("WIN32", "APPLE", "MSVC", "MINGW", "CYGWIN", "IOS", "ANDROID"):
                st.cache.setdefault(name, UNDEF_VALUE)
            for lang in ("C", "CXX", "CUDA", "HIP"):
                st.cache.setdefault(f"CMAKE_{lang}_FLAGS", frozenset({""}))
            st.cache.setdefault("CMAKE_MODULE_PATH", UNDEF_VALUE)
        return st

    def run_file(self, path: str, st: Optional[State] = None) -> Optional[State]:
        """Run ``path`` as a directory's CMakeLists.txt (project) or as a script."""
        st = st or self.new_state()
        st.written = self.written
        path = os.path.abspath(path)
        self.current_dir = os.path.dirname(path)
        out = self._run_listfile(path, st, directory=True)
        if out is not None and self.project:
            self._end_directory(out, self.current_dir)
        return out

    # ---- helpers
    def _step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Abort("steps")

    def _in_tree(self, path: str) -> bool:
        path = os.path.normpath(path)
        return path == self.root or path.startswith(self.root + os.sep)

    def _tree(self, path: str) -> Optional[list]:
        if path not in self.files_read:
            self.files_read.append(path)
        if path in self.trees:
            return self.trees[path]
        if len(self.trees) >= MAX_FILES:
            raise Abort("files")
        text = self.read(path) if self._in_tree(path) else None
        tree = None
        if text is not None:
            try:
                tree = parse(text, path)
            except ValueError:
                tree = None
        self.trees[path] = tree
        return tree

    def _run_listfile(self, path: str, st: State, directory: bool) -> Optional[State]:
        tree = self._tree(path)
        if tree is None:
            raise Unknown
        if self.depth >= MAX_CALL_DEPTH:
            raise Unknown
        saved = (self.list_file, self.macro_args)
        self.list_file = path
        self.macro_args = [{}]
        self.depth += 1
        list_dir = os.path.dirname(path)
        before = st.normal("CMAKE_CURRENT_LIST_DIR"), st.normal("CMAKE_CURRENT_LIST_FILE")
        st.set("CMAKE_CURRENT_LIST_DIR", frozenset({list_dir}))
        st.set("CMAKE_CURRENT_LIST_FILE", frozenset({path}))
        frame = _Frame("file")
        self.frames.append(frame)
        try:
            out = self._block(tree, st)
        finally:
            self.frames.pop()
            self.depth -= 1
            self.list_file, self.macro_args = saved
        out = join_all([out, *frame.returned])
        if out is not None and not directory:
            out.set("CMAKE_CURRENT_LIST_DIR", before[0])
            out.set("CMAKE_CURRENT_LIST_FILE", before[1])
        return out

    # ---- blocks
    def _block(self, nodes: list, st: Optional[State]) -> Optional[State]:
        for node in nodes:
            if st is None:
                return None
            self._step()
            if isinstance(node, Cmd):
                st = self._command(node, st)
            elif isinstance(node, IfNode):
                st = self._if(node, st)
            elif isinstance(node, LoopNode):
                st = self._foreach(node, st) if node.head.name == "foreach" else self._while(node, st)
            elif isinstance(node, DefNode):
                st = self._define(node, st)
            elif isinstance(node, BlockNode):
                st = self._scoped_block(node, st)
        return st

    def _if(self, node: IfNode, st: State) -> Optional[State]:
        outs: List[Optional[State]] = []
        remaining: Optional[State] = st
        first: Optional[Tuple[str, bool]] = None
        for k, (cond, body) in enumerate(node.branches):
            if remaining is None:
                break
            test: Optional[Tuple[str, bool]] = None
            if self.discovery is not None:
                if cond is not None:
                    self.discovery.condition(cond)
                    test = self._switch_test(cond, remaining)
                    first = test if k == 0 else None
                elif k == 1 and first is not None:
                    test = (first[0], not first[1])  # the else() of if(V)
            truth = True if cond is None else self.condition(cond, remaining)
            if truth is False:
                continue
            self.tests.append(test)
            try:
                if truth is True:
                    outs.append(self._block(body, remaining))
                    remaining = None
                    break
                outs.append(self._block(body, remaining.copy()))
            finally:
                self.tests.pop()
        outs.append(remaining)
        return join_all(outs)

    def _switch_test(self, cond: Cmd, st: State) -> Optional[Tuple[str, bool]]:
        """(V, True) for ``if(V)``/``if(${NAME})`` naming V, (V, False) for ``if(NOT V)``."""
        alternatives = list(self._condition_tokens(cond, st))
        if len(alternatives) != 1 or alternatives[0] is None:
            return None
        tokens = alternatives[0]
        positive = True
        if len(tokens) == 2 and tokens[0] == ("NOT", False):
            positive, tokens = False, tokens[1:]
        if len(tokens) != 1 or tokens[0][1] or not re.fullmatch(r"[A-Za-z_]\w*", tokens[0][0]):
            return None
        if tokens[0][0] in CONDITION_KEYWORDS or tokens[0][0].upper() in TRUE_CONSTANTS | FALSE_CONSTANTS:
            return None
        return tokens[0][0], positive

    def _turn_on(self, lang: str) -> None:
        """The build turns HIP or CUDA on here: the switch tests around it are the project's."""
        if self.discovery is not None:
            self.discovery.turned_on(lang, self.tests)

    def _define(self, node: DefNode, st: State) -> State:
        try:
            words = self._words(node.head, st)
        except Unknown:
            words = []
        if not words or not all_known(words):
            return st
        name = str(words[0]).lower()
        st.funcs[name] = CommandDef(
            node.head.name, name, tuple(str(w) for w in words[1:]), node.body, self.list_file
        )
        return st

    def _scoped_block(self, node: BlockNode, st: State) -> Optional[State]:
        st.scopes.append(dict(st.scopes[-1]))
        out = self._block(node.body, st)
        if out is not None:
            out.scopes.pop()
        return out

    def _havoc_body(self, body: list, st: State) -> State:
        """What a loop's body may write, unknown (the loop is not run to its end)."""
        for name in self._written(body, st):
            st.set(name, None)
        return st

    def _written(self, body: list, st: State) -> Set[str]:
        out: Set[str] = set()
        for node in body:
            if isinstance(node, Cmd):
                positions = write_positions(node)
                for k, a in enumerate(node.args):
                    kind, raw = arg_text(node, a)
                    if kind == "unquoted" and VARIABLE_NAME.fullmatch(raw):
                        out.add(raw)
                    elif "$" in raw and k in positions:
                        out.add("\0any")  # the variable written is computed
            elif isinstance(node, IfNode):
                for cond, b in node.branches:
                    out |= self._written(b, st)
            elif isinstance(node, (LoopNode, BlockNode)):
                out |= self._written(node.body, st)
                out |= self._written([node.head], st)
        if "\0any" in out:
            if not any(f.kind == "function" for f in self.frames):
                st.flags["lost"] = True  # a name computed in the loop: any variable may change
            out.discard("\0any")
        return out

    def _loop_body(self, node: LoopNode, st: State, var: Optional[str], item: Optional[str]) -> Tuple:
        frame = _Frame("loop")
        self.frames.append(frame)
        try:
            if var is not None:
                st.set(var, None if item is None else frozenset({item}))
            out = self._block(node.body, st)
        finally:
            self.frames.pop()
        return join_all([out, *frame.continues]), join_all(frame.breaks)

    def _widen(self, node: LoopNode, st: State, var: Optional[str]) -> Optional[State]:
        """An unknown number of iterations: the body's writes unknown, run once more on top."""
        st = self._havoc_body(node.body, st)
        if var is not None:
            st.set(var, None)
        again, broke = self._loop_body(node, st.copy(), var, None)
        out = join_all([st, again, broke])
        if out is not None:
            self._havoc_body(node.body, out)
        return out

    def _foreach(self, node: LoopNode, st: State) -> Optional[State]:
        try:
            words = self._words(node.head, st)
        except Unknown:
            words = [UNKNOWN_MANY]
        if not words or not isinstance(words[0], str):
            return self._widen(node, st, None)
        var = words[0]
        rest = words[1:]
        items: Optional[List[str]] = None
        if all_known(rest):
            items = self._foreach_items(cast(List[str], rest), st)  # all known: all text
        if items is None or len(items) > MAX_ITERATIONS:
            return self._widen(node, st, var)
        before = st.normal(var)
        cur: Optional[State] = st
        exits: List[Optional[State]] = []
        for item in items:
            if cur is None:
                break
            cur, broke = self._loop_body(node, cur, var, item)
            exits.append(broke)
        out = join_all([cur, *exits])
        if out is not None:
            out.set(var, before)  # the loop variable is restored after the loop
        return out

    def _foreach_items(self, rest: List[str], st: State) -> Optional[List[str]]:
        try:
            if rest and rest[0] == "RANGE":
                nums = [int(x) for x in rest[1:]]
                if len(nums) == 1:
                    return [str(k) for k in range(0, nums[0] + 1)] if nums[0] >= 0 else None
                if len(nums) in (2, 3):
                    step = nums[2] if len(nums) == 3 else 1
                    if step <= 0 or nums[1] < nums[0]:
                        return None
                    return [str(k) for k in range(nums[0], nums[1] + 1, step)]
                return None
            if rest and rest[0] == "IN":
                out: List[str] = []
                mode = None
                for w in rest[1:]:
                    if w in ("LISTS", "ITEMS"):
                        mode = w
                    elif w == "ZIP_LISTS":
                        return None
                    elif mode == "ITEMS":
                        out.append(w)
                    elif mode == "LISTS":
                        value = st.get(w)
                        if value is None or len(value) != 1:
                            return None
                        v = next(iter(value))
                        out.extend(split_list(v) if v is not None else [])
                    else:
                        return None
                return out
        except (Unknown, ValueError):
            return None
        return list(rest)

    def _while(self, node: LoopNode, st: State) -> Optional[State]:
        cur: Optional[State] = st
        exits: List[Optional[State]] = []
        for _ in range(MAX_ITERATIONS):
            if cur is None:
                break
            truth = self.condition(node.head, cur)
            if truth is False:
                exits.append(cur)
                cur = None
                break
            if truth is None:
                exits.append(self._widen(node, cur, None))
                cur = None
                break
            cur, broke = self._loop_body(node, cur, None, None)
            exits.append(broke)
        if cur is not None:
            exits.append(self._widen(node, cur, None))
        return join_all(exits)

    # ---- arguments
    def _expand(self, raw: str, kind: str, st: State) -> FrozenSet[str]:
        """The strings an argument may evaluate to; Unknown where a part is unknown."""
        if kind == "bracket" or ("$" not in raw and "\\" not in raw):
            return frozenset({raw})
        results: Set[str] = {""}
        pieces = self._pieces(raw, kind, st, 0)
        for piece in pieces:
            results = {r + p for r in results for p in piece}
            if len(results) > MAX_ALTERNATIVES:
                raise Unknown
        return frozenset(results)

    def _pieces(self, raw: str, kind: str, st: State, level: int) -> List[FrozenSet[str]]:
        if level > 8:
            raise Unknown
        pieces: List[FrozenSet[str]] = []
        lit: List[str] = []
        i, n = 0, len(raw)
        while i < n:
            m = PLAIN_TEXT.match(raw, i)
            assert m is not None  # the pattern matches the empty text too
            if m.end() > i:  # a run of characters with no escape and no reference
                lit.append(m.group(0))
                i = m.end()
                continue
            c = raw[i]
            if c == "\\" and i + 1 < n:
                d = raw[i + 1]
                i += 2
                if d == "\n" and kind == "quoted":
                    continue
                if d == ";":
                    raise Unknown  # an escaped semicolon: not modelled
                if d in "ntr0":
                    lit.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}[d])
                elif d.isalnum():
                    raise Unknown  # an invalid escape: CMake stops
                else:
                    lit.append(d)
                continue
            if c == "$":
                m = REFERENCE_OPEN.match(raw, i)
                if m:
                    start = m.end()
                    depth, j = 1, start
                    while j < n and depth:
                        if raw[j] == "}":
                            depth -= 1
                        elif raw[j] == "$" and REFERENCE_OPEN.match(raw, j):
                            depth += 1
                            j = raw.index("{", j)
                        j += 1
                    if depth:
                        raise Unknown
                    inner = raw[start : j - 1]
                    names: Set[str] = {""}
                    for piece in self._pieces(inner, "quoted", st, level + 1):
                        names = {x + y for x in names for y in piece}
                    values: Set[str] = set()
                    for name in names:
                        values |= self._lookup(name, m.group(1), st)
                    if lit:
                        pieces.append(frozenset({"".join(lit)}))
                        lit = []
                    pieces.append(frozenset(values))
                    i = j
                    continue
            lit.append(c)
            i += 1
        if lit:
            pieces.append(frozenset({"".join(lit)}))
        return pieces

    def _lookup(self, name: str, kind: Optional[str], st: State) -> Set[str]:
        if kind == "ENV":
            raise Unknown
        if kind is None:
            for mapping in self.macro_args[-1:]:
                if name in mapping:
                    value = mapping[name]
                    if value is None:
                        raise Unknown
                    return {value}
        found = st.cached(name) if kind == "CACHE" else st.get(name)
        if found is None:
            raise Unknown
        return {"" if v is None else v for v in found}

    def _alternatives(self, cmd: Cmd, st: State) -> List[List[Item]]:
        """The argument lists the command may get: unquoted arguments split into list elements;
        an argument that cannot be evaluated is UNKNOWN_ONE (quoted) or UNKNOWN_MANY."""
        per_arg: List[List[Tuple[Item, ...]]] = []
        for a in cmd.args:
            kind, raw = arg_text(cmd, a)
            try:
                values = self._expand(raw, kind, st)
                if kind == "unquoted":
                    if any("\\" in v for v in values):
                        raise Unknown
                    per_arg.append(sorted({tuple(x for x in v.split(";") if x) for v in values}))
                else:
                    per_arg.append([(v,) for v in sorted(values)])
            except Unknown:
                per_arg.append([(UNKNOWN_ARGS[(kind == "unquoted", self._taints(raw))],)])
        total = 1
        for options in per_arg:
            total *= len(options)
        if total > MAX_ALTERNATIVES:
            per_arg = [o if len(o) == 1 else [(UNKNOWN_MANY,)] for o in per_arg]
        return [[x for part in combo for x in part] for combo in itertools.product(*per_arg)]

    def _taints(self, raw: str) -> bool:
        """Does an argument read a variable the program writes (or one named by a reference)?"""
        if self.program is None:
            return True
        names = NAMES_READ.findall(raw)
        if raw.count("${") > len(names):
            return True  # a computed name
        return any(name in self.program for name in names) or bool(self.macro_args[-1])

    def _words(self, cmd: Cmd, st: State) -> List[Item]:
        alts = self._alternatives(cmd, st)
        if len(alts) != 1:
            raise Unknown
        return alts[0]

    # ---- conditions
    def condition(self, cmd: Cmd, st: State) -> Optional[bool]:
        """True/False where every possibility agrees, None otherwise."""
        tokens_alts: List[List[Tuple[str, bool]]] = []
        for a_list in self._condition_tokens(cmd, st):
            if a_list is None:
                return None
            tokens_alts.append(a_list)
        results: Set[bool] = set()
        for tokens in tokens_alts:
            outcome = self._enumerate(tokens, st)
            if outcome is None:
                return None
            results |= outcome
            if len(results) > 1:
                return None
        if "MATCHES" in {t for t, q in (tokens_alts[0] if tokens_alts else []) if not q}:
            for k in range(10):
                st.set(f"CMAKE_MATCH_{k}", None)
            st.set("CMAKE_MATCH_COUNT", None)
        return results.pop() if len(results) == 1 else None

    def _condition_tokens(self, cmd: Cmd, st: State):
        per_arg: List[Sequence[Sequence[Tuple[str, bool]]]] = []
        for a in cmd.args:
            kind, raw = arg_text(cmd, a)
            try:
                values = self._expand(raw, kind, st)
            except Unknown:
                yield None
                return
            if kind == "unquoted":
                per_arg.append(sorted({tuple((x, False) for x in v.split(";") if x) for v in values}))
            else:
                per_arg.append([((v, True),) for v in sorted(values)])
        total = 1
        for options in per_arg:
            total *= len(options)
        if total > MAX_ALTERNATIVES:
            yield None
            return
        for combo in itertools.product(*per_arg):
            yield [t for part in combo for t in part]

    def _enumerate(self, tokens: List[Tuple[str, bool]], st: State) -> Optional[Set[bool]]:
        """Evaluate for every possible value of the variables the condition reads."""
        out: Set[bool] = set()
        todo: List[Dict[str, Optional[str]]] = [{}]
        runs = 0
        while todo:
            runs += 1
            if runs > 64:
                return None
            fixed = todo.pop()
            try:
                result = Condition(self, st, fixed).evaluate(tokens)
                if result is None:
                    return None
                out.add(result)
            except Choose as choice:
                for v in choice.values:
                    todo.append({**fixed, choice.name: v})
            except Unknown:
                return None
        return out

    # ---- commands
    def _command(self, cmd: Cmd, st: State) -> Optional[State]:
        name = cmd.name
        if self.discovery is not None:
            self.discovery.command(cmd)
            if name.startswith("hip_add_") or name.startswith("cuda_add_"):
                self._turn_on(name[:3].replace("cud", "cuda"))

        func = st.funcs.get(name)
        if isinstance(func, CommandDef):
            return self._call(func, cmd, st)
        alts = self._alternatives(cmd, st)
        if len(alts) == 1:
            return self._builtin(name, alts[0], cmd, st)
        return join_all(self._builtin(name, args, cmd, st.copy()) for args in alts)

    def _call(self, func: CommandDef, cmd: Cmd, st: State) -> Optional[State]:
        if self.depth >= MAX_CALL_DEPTH:
            return self._unknown_command(cmd.name, self._alternatives(cmd, st)[0], st)
        alts = self._alternatives(cmd, st)
        outs = []
        for k, args in enumerate(alts):
            outs.append(self._call_one(func, args, st if k == len(alts) - 1 else st.copy()))
        return join_all(outs)

    def _call_one(self, func: CommandDef, args: List[Item], st: State) -> Optional[State]:
        values: Dict[str, Optional[str]] = {}
        if all_known(args):
            strs = [str(a) for a in args]
            if len(strs) < len(func.params):
                return self._havoc_body(func.body, st)  # CMake stops with an error
            values = {
                "ARGC": str(len(strs)),
                "ARGV": ";".join(strs),
                "ARGN": ";".join(strs[len(func.params) :]),
            }
            for k, v in enumerate(strs):
                values[f"ARGV{k}"] = v
            for p, v in zip(func.params, strs):
                values[p] = v
        else:
            # the arguments up to the first of unknown count are known by position; the rest,
            # ARGC, ARGV and ARGN are unknown (None)
            values = {"ARGC": None, "ARGV": None, "ARGN": None}
            fixed = True
            for k in range(max(len(args), len(func.params))):
                a = args[k] if k < len(args) and fixed else None
                if isinstance(a, UnknownArg) and a.many:
                    fixed, a = False, None
                value = a if isinstance(a, str) else None
                values[f"ARGV{k}"] = value
                if k < len(func.params):
                    values[func.params[k]] = value
        self.depth += 1
        try:
            if func.kind == "macro":
                self.macro_args.append(values)
                try:
                    return self._block(func.body, st)
                finally:
                    self.macro_args.pop()
            st.scopes.append(dict(st.scopes[-1]))
            for var, arg in values.items():
                st.set(var, None if arg is None else frozenset({arg}))
            st.set("CMAKE_CURRENT_FUNCTION_LIST_DIR", frozenset({os.path.dirname(func.path)}))
            frame = _Frame("function")
            self.frames.append(frame)
            saved = self.macro_args
            self.macro_args = [{}]
            try:
                out = self._block(func.body, st)
            finally:
                self.frames.pop()
                self.macro_args = saved
            out = join_all([out, *frame.returned])
            if out is not None:
                out.scopes.pop()
            return out
        finally:
            self.depth -= 1

    def _havoc(self, args: Sequence[Item], st: State) -> None:
        for a in args:
            if isinstance(a, str) and VARIABLE_NAME.fullmatch(a) and a not in SCOPE_WORDS:
                st.set(a, None)

    def _unknown_command(self, name: str, args: List[Item], st: State) -> State:
        """A command nobody in the tree defines: what its arguments name may be written, the
        sources it names may be compiled."""
        self._havoc(args, st)
        self._mark_sources([a for a in args if isinstance(a, str)], st)
        if any_tainted(args) and not hasattr(self, "_c_" + name) and name not in NO_EFFECT:
            st.flags["lost"] = True  # a command from outside gets a list the program built
        return st

    def _mark_sources(self, words: List[str], st: State) -> None:
        for w in words:
            for part in w.split(";"):
                if SOURCE_FILE.search(part):
                    st.add(("maybe_src",), self._path(part), False)

    def _path(self, p: str) -> str:
        return os.path.normpath(p if os.path.isabs(p) else os.path.join(self.current_dir, p))

    def _builtin(self, name: str, args: List[Item], cmd: Cmd, st: State) -> Optional[State]:
        handler = getattr(self, "_c_" + name, None)
        if handler is not None:
            try:
                return handler(args, st)
            except (Unknown, ValueError, IndexError, KeyError, TypeError, re.error):
                # arguments the handler cannot read (CMake would report an error, or we cannot
                # tell): the command counts as one from outside the tree
                return self._unknown_command(name, args, st)
        if name in NO_EFFECT:
            return st
        return self._unknown_command(name, args, st)

    # -- variables


# -- facts -------------------------------------------------------------------------------------------
DEFINITE, MAYBE, NEVER = "definite", "maybe", "never"
MacroMap = Dict[str, Tuple[bool, Optional[str]]]  # name -> (definitely defined?, value or None)


@dataclass(frozen=True)
class SourceFacts:
    """What one platform's build does with a source: compiled definitely or maybe, the macros
    defined definitely/maybe (value None where it is not one known string), and ``open``: some
    contribution is unknown, so a macro not listed may still be defined."""

    compiled: str
    macros: Tuple[Tuple[str, bool, Optional[str]], ...]
    open: bool

    def macro(self, name: str) -> Tuple[Optional[bool], Optional[str]]:
        """Wherever this build compiles the source: (True, value): defined; (None, None): maybe;
        (False, None): not defined."""
        for n, definite, value in self.macros:
            if n == name:
                return (True, value) if definite else (None, None)
        return (None, None) if self.open else (False, None)


@dataclass(frozen=True)
class ScenarioFacts:
    sources: Dict[str, SourceFacts]
    lost: bool  # a source list could not be followed: no source is "never" compiled
    fatal: bool  # the configure stops (message(FATAL_ERROR)) on every path
    files: FrozenSet[str] = frozenset()  # the build files the run read

    def compiled(self, path: str) -> str:
        facts = self.sources.get(path)
        if facts is not None:
            return facts.compiled
        return MAYBE if self.lost else NEVER


def _language(path: str, st: State, scenario: Optional[str]) -> Tuple[str, ...]:
    langs = [x for x in st.items(("slang", path)) if x != OPEN]
    if len(langs) == 1 and OPEN not in st.items(("slang", path)):
        return (langs[0],)
    ext = os.path.splitext(path)[1].lower()
    lang = LANGUAGE_OF.get(ext, "CXX")
    if lang == "CUDA" and scenario == ROCM:
        return ("CUDA", "HIP")  # a .cu file a HIP build compiles as HIP (hip_add_*, LANGUAGE HIP)
    if langs or OPEN in st.items(("slang", path)):
        return tuple(sorted({lang, *langs}))
    return (lang,)


def _linked(st: State, target: str) -> Dict[str, bool]:
    """The in-tree targets whose interface ``target`` gets: its links and, through them, their
    PUBLIC/INTERFACE links (definitely where every link on the way is)."""
    out: Dict[str, bool] = {}
    todo = [(name, definite) for name, definite in st.items(("tlink", target)).items()]
    while todo and len(out) < 256:
        name, definite = todo.pop()
        if out.get(name, False) >= definite and name in out:
            continue
        out[name] = out.get(name, False) or definite
        todo.extend((n, definite and d) for n, d in st.items(("tilink", name)).items())
    return out


@lru_cache(maxsize=8192)  # pure: the same items recur for every source of a target
def _definitions_of(item: str, lang: str, flags: bool) -> Optional[Tuple[FrozenSet[Tuple[str, str]], ...]]:
    """The (name, value) definitions one item gives, per possibility; None: unknown."""
    try:
        options = genex(item, lang)
    except Unknown:
        return None
    out: List[FrozenSet[Tuple[str, str]]] = []
    for option in options:
        defs: Set[Tuple[str, str]] = set()
        for word in option.split(";") if not flags else [option]:
            if flags:
                defs.update(tuple((d.split("=", 1) + ["1"])[:2]) for d in flag_definitions(word))  # type: ignore[misc]
                continue
            word = word[2:] if word.startswith("-D") else word
            m = re.fullmatch(r"([A-Za-z_]\w*)(?:=(.*))?", word, re.S)
            if m:
                defs.add((m.group(1), m.group(2) if m.group(2) is not None else "1"))
            elif word:
                return None
        out.append(frozenset(defs))
    return tuple(out)


def _macros_for(
    st: State, target: str, path: str, lang: str
) -> Tuple[Dict[str, Tuple[bool, Set[str]]], bool]:
    directory = next(iter(st.items(("tdir", target))), None)
    contributions: List[Tuple[str, bool, bool]] = []  # (item, definite, is-flags)
    open_ = len(st.items(("tdir", target))) != 1
    if directory is not None:
        contributions += [(i, d, False) for i, d in st.items(("ddef", directory)).items()]
        contributions += [(i, d, True) for i, d in st.items(("dopt", directory)).items()]
        flag_defs = st.items(("dflags", directory, lang))
        contributions += [(i, d, False) for i, d in flag_defs.items() if i != ENDED]
        if not flag_defs.get(ENDED):
            open_ = True  # the directory's end was not reached on every path: its flags unknown
    contributions += [(i, d, False) for i, d in st.items(("tdef", target)).items()]
    contributions += [(i, d, True) for i, d in st.items(("topt", target)).items()]
    for name, link in _linked(st, target).items():
        contributions += [(i, d and link, False) for i, d in st.items(("tidef", name)).items()]
        contributions += [(i, d and link, True) for i, d in st.items(("tiopt", name)).items()]
    contributions += [(i, d, False) for i, d in st.items(("sdef", path)).items()]
    contributions += [(i, d, True) for i, d in st.items(("sopt", path)).items()]
    macros: Dict[str, Tuple[bool, Set[str]]] = {}
    for item, definite, flags in contributions:
        if item == OPEN:
            open_ = True
            continue
        per = _definitions_of(item, lang, flags)
        if per is None:
            open_ = True
            continue
        names = {n for defs in per for n, _ in defs}
        for name in names:
            always = definite and all(any(n == name for n, _ in defs) for defs in per)
            values = {v for defs in per for n, v in defs if n == name}
            had = macros.get(name, (False, set()))
            macros[name] = (had[0] or always, had[1] | values)
    return macros, open_


def scenario_facts(st: Optional[State], scenario: Optional[str], root: str) -> ScenarioFacts:
    """Per source of the tree: compiled definitely/maybe, and its macros (see SourceFacts)."""
    if st is None:
        return ScenarioFacts({}, False, True)
    lost = bool(st.flags.get("lost"))
    entries: Dict[str, List[Tuple[bool, MacroMap, bool]]] = {}
    for target, t_definite in st.items(("targets",)).items():
        dirs = st.items(("tdir", target))
        base = next(iter(dirs)) if len(dirs) == 1 else root
        for raw, s_definite in st.items(("tsrc", target)).items():
            possibilities: List[List[str]]
            if "$<" in raw:
                try:
                    options = genex(raw, None)
                except Unknown:
                    lost = True
                    continue
                possibilities = [[p for p in o.split(";") if p] for o in options]
            else:
                possibilities = [[raw]]
            every = set.intersection(*[set(p) for p in possibilities]) if possibilities else set()
            for path in {p for ps in possibilities for p in ps}:
                full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
                definite = t_definite and s_definite and path in every
                merged: Optional[Dict[str, Tuple[bool, Set[str]]]] = None
                open_any = False
                for lang in _language(full, st, scenario):
                    macros, open_ = _macros_for(st, target, full, lang)
                    open_any = open_any or open_
                    if merged is None:
                        merged = macros
                    else:
                        merged = {
                            n: (
                                merged.get(n, (False, set()))[0] and macros.get(n, (False, set()))[0],
                                merged.get(n, (False, set()))[1] | macros.get(n, (False, set()))[1],
                            )
                            for n in merged.keys() | macros.keys()
                        }
                table: MacroMap = {}
                for n, (d, values) in (merged or {}).items():
                    table[n] = (d, next(iter(values)) if len(values) == 1 else None)
                entries.setdefault(full, []).append((definite, table, open_any))
    for path in st.items(("maybe_src",)):
        entries.setdefault(path, []).append((False, {}, True))
    sources: Dict[str, SourceFacts] = {}
    for path, rows in entries.items():
        compiled = DEFINITE if any(r[0] for r in rows) else MAYBE
        names = {n for _, table, _ in rows for n in table}
        out = []
        for n in sorted(names):
            definite = all(n in table and table[n][0] for _, table, _ in rows)
            seen = {table[n][1] for _, table, _ in rows if n in table}
            out.append((n, definite, seen.pop() if len(seen) == 1 else None))
        sources[path] = SourceFacts(compiled, tuple(out), any(r[2] for r in rows))
    return ScenarioFacts(sources, lost, False)


# -- platform scenarios ------------------------------------------------------------------------------
_ROCM_WORDS = frozenset({"HIP", "ROCM", "AMD"})
_CUDA_WORDS = frozenset({"CUDA", "NVIDIA"})
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}\Z")
_BOOL_REF = re.compile(r"\$<BOOL:\$\{([A-Za-z_]\w*)\}>")


@dataclass(frozen=True)
class Switches:
    """The project's platform switches: variables a ROCm build turns on (``rocm``) or off
    (``cuda``), and variables compared with a platform name (``GPU_LANG STREQUAL "HIP"``)."""

    rocm: FrozenSet[str]
    cuda: FrozenSet[str]
    named: Tuple[Tuple[str, str, str], ...]  # (variable, its ROCm value, its NVIDIA value or "")

    def __bool__(self) -> bool:
        return bool(self.rocm or self.cuda or self.named)

    def cache(self, scenario: str) -> Dict[str, Value]:
        on, off = frozenset({"ON"}), frozenset({"OFF"})
        out: Dict[str, Value] = {}
        for name in self.rocm:
            out[name] = on if scenario == ROCM else off
        for name in self.cuda:
            out[name] = on if scenario == CUDA else off
        for name, rocm_value, cuda_value in self.named:
            value = rocm_value if scenario == ROCM else cuda_value
            out[name] = frozenset({value}) if value else None
        return out


class Discovery:
    """What a discovery run learns of the project's platform switches: the single-variable
    tests (``if(V)``, ``if(NOT V)``, their ``else()``, ``if(${NAME})`` in a function) around each
    place the build turns HIP or CUDA on (``enable_language``, ``project(... HIP)``,
    ``find_package(hip)``, ``hip_add_*``, ``set(CMAKE_HIP_...)``), through includes,
    subdirectories and function calls; the names of the usual spelling (``USE_ROCM``,
    ``MYLIB_ENABLE_HIP``, ``WITH_CUDA`` ...) in conditions, options and ``$<BOOL:${V}>``; and
    variables compared with a platform name (``GPU_LANG STREQUAL "HIP"``)."""

    def __init__(self) -> None:
        self.events: Dict[Tuple[str, bool], Set[str]] = {}
        self.named_rocm: Set[str] = set()
        self.named_cuda: Set[str] = set()
        self.compared: Dict[str, Tuple[Set[str], Set[str]]] = {}
        self.hip = False
        self.seen: Set[int] = set()

    def turned_on(self, lang: str, tests: Sequence[Optional[Tuple[str, bool]]]) -> None:
        self.hip = self.hip or lang == "hip"
        for test in tests:
            if test is not None:
                self.events.setdefault(test, set()).add(lang)

    def _classify(self, word: str) -> None:
        from rocm_lint.build.cmake import cuda_switch_name, rocm_switch_name

        m = _REF.match(word)
        name = m.group(1) if m else word
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return
        if rocm_switch_name(name):
            self.named_rocm.add(name)
        elif cuda_switch_name(name):
            self.named_cuda.add(name)

    def condition(self, cmd: Cmd) -> None:
        if id(cmd) in self.seen:
            return
        self.seen.add(id(cmd))
        args = cmd.args
        for k, a in enumerate(args):
            if not a.quoted or _REF.match(a.value):
                self._classify(a.value)
            if a.value == "STREQUAL" and not a.quoted and 0 < k < len(args) - 1:
                for var_arg, lit_arg in ((args[k - 1], args[k + 1]), (args[k + 1], args[k - 1])):
                    ref = _REF.match(var_arg.value)
                    var = ref.group(1) if ref else (None if var_arg.quoted else var_arg.value)
                    if var is None or "$" in lit_arg.value or not re.fullmatch(r"[A-Za-z_]\w*", var):
                        continue
                    upper = lit_arg.value.upper()
                    if upper in _ROCM_WORDS:
                        self.compared.setdefault(var, (set(), set()))[0].add(lit_arg.value)
                    elif upper in _CUDA_WORDS:
                        self.compared.setdefault(var, (set(), set()))[1].add(lit_arg.value)

    def command(self, cmd: Cmd) -> None:
        if id(cmd) in self.seen:
            return
        self.seen.add(id(cmd))
        if cmd.name == "option" and cmd.args:
            self._classify(cmd.args[0].value)
        for a in cmd.args:
            if "$<" in a.value:
                for ref in _BOOL_REF.findall(a.value):
                    self._classify(ref)

    def switches(self) -> Switches:
        rocm, cuda = set(self.named_rocm), set(self.named_cuda)
        for (var, positive), langs in self.events.items():
            other = self.events.get((var, not positive), set())
            if positive and "hip" in langs and "cuda" not in langs and "hip" not in other:
                rocm.add(var)  # if(V) turns HIP on
            elif positive and "cuda" in langs and "hip" not in langs and "cuda" not in other:
                cuda.add(var)  # if(V) turns CUDA on (the project turns HIP on elsewhere)
            elif not positive and "hip" in langs and "cuda" not in langs and "cuda" in other:
                cuda.add(var)  # if(NOT V) turns HIP on, if(V) CUDA
        for name in ("CMAKE_HIP_COMPILER", "CMAKE_CUDA_COMPILER"):
            rocm.discard(name)  # decided by check_language/enable_language, not by a switch
            cuda.discard(name)
        both = rocm & cuda
        pairs = []
        for var, (rocm_values, cuda_values) in sorted(self.compared.items()):
            if len(rocm_values) == 1 and len(cuda_values) <= 1 and var not in rocm | cuda:
                pairs.append((var, next(iter(rocm_values)), next(iter(cuda_values), "")))
        return Switches(frozenset(rocm - both), frozenset(cuda - both), tuple(pairs))


@dataclass(frozen=True)
class ProjectFacts:
    """The facts of one CMake project (its top ``CMakeLists.txt``) in both platform scenarios."""

    root: str
    switches: Switches
    scenarios: Dict[str, ScenarioFacts]
    files: Tuple[str, ...]  # every build file read (the answers' dependencies)

    def compiled(self, platform: str, path: str) -> str:
        return self.scenarios[platform].compiled(os.path.normpath(path))

    def source(self, platform: str, path: str) -> Optional[SourceFacts]:
        return self.scenarios[platform].sources.get(os.path.normpath(path))

    def reaches(self, path: str) -> bool:
        path = os.path.normpath(path)
        return any(path in s.sources or path in s.files for s in self.scenarios.values())


def evaluate_project(
    root: str, listfile: str, read: Callable[[str], Optional[str]]
) -> Optional[ProjectFacts]:
    """Run ``listfile`` (the project's top CMakeLists.txt; nothing outside ``root`` is read) once
    to find its platform switches, then once per platform scenario.  None: no switch (the
    project never builds for HIP), or a bound was reached."""
    trees: Dict[str, Optional[list]] = {}
    try:
        discovery = Interpreter(root, read, project=True, scenario=None, trees=trees)
        discovery.written = set()
        learned = discovery.discovery = Discovery()
        discovery.run_file(listfile)
        # a variable the program itself writes is not defined until it does (the default
        # configure); one it never writes may come from outside (a toolchain, a module): unknown
        program = {name: UNDEF_VALUE for name in discovery.written}
        switches = learned.switches()
        if not (learned.hip or switches.rocm or switches.named):
            return None  # a project that never builds for HIP
        scenarios: Dict[str, ScenarioFacts] = {}
        files: Set[str] = set(discovery.files_read)
        for scenario in (CUDA, ROCM):
            cache = {**program, **switches.cache(scenario)}
            interp = Interpreter(root, read, True, scenario, cache=cache, trees=trees)
            interp.program = frozenset(program)
            st = interp.run_file(listfile)
            facts = scenario_facts(st, scenario, os.path.dirname(os.path.abspath(listfile)))
            scenarios[scenario] = ScenarioFacts(
                facts.sources, facts.lost, facts.fatal, frozenset(interp.files_read)
            )
            files.update(interp.files_read)
    except (Abort, Unknown, RecursionError, MemoryError):
        return None
    except Exception:  # noqa: BLE001 - a hostile or odd build file costs its facts, never the check
        return None
    return ProjectFacts(os.path.abspath(root), switches, scenarios, tuple(sorted(files)))
