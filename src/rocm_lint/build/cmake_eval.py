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
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from rocm_lint.configfiles.cmake import Arg, iter_commands

MAX_VALUES = 16  # possible strings of one variable; more: unknown
MAX_ALTERNATIVES = 16  # argument lists one command may get
MAX_STEPS = 100_000  # commands executed per run
MAX_ITERATIONS = 512  # iterations of one loop
MAX_CALL_DEPTH = 24  # function/macro/include/add_subdirectory nesting
MAX_FILES = 400  # build files read per run
MAX_VALUE_CHARS = 1 << 16
MAX_GLOB_ENTRIES = 20_000

Value = Optional[FrozenSet[Optional[str]]]  # None: unknown; None inside: not defined
UNDEF_VALUE: FrozenSet[Optional[str]] = frozenset({None})
OPEN = "\0?"  # a props item: some contribution is unknown (an unlisted macro may be defined)
ENDED = "\0end"  # a props item: the directory's flags were read at its end
ROCM, CUDA = "rocm", "cuda"


class Unknown(Exception):
    """The value asked for is not known."""


class Abort(Exception):
    """A bound was reached: the run gives no answer."""


class _Choose(Exception):
    def __init__(self, name: str, values: FrozenSet[Optional[str]]) -> None:
        self.name, self.values = name, values


class _UnknownArg:
    """An argument whose value is unknown.  ``tainted``: it reads a variable the program itself
    writes (a source list may hide in it); an untainted one only reads what comes from outside
    (a compiler id, a found package's path), which names no source of the tree."""

    __slots__ = ("many", "tainted")

    def __init__(self, many: bool, tainted: bool = True) -> None:
        self.many = many
        self.tainted = tainted

    def __repr__(self) -> str:
        return ("<?*>" if self.many else "<?>") + ("t" if self.tainted else "")


UNKNOWN_ONE = _UnknownArg(False)  # exactly one argument, value unknown
UNKNOWN_MANY = _UnknownArg(True)  # any number of arguments
_UNKNOWN = {(m, t): _UnknownArg(m, t) for m in (False, True) for t in (False, True)}
_PLAIN = re.compile(r"[^\\$]*")
_REF_OPEN = re.compile(r"\$(ENV|CACHE)?\{")
_NAMES_READ = re.compile(r"\$(?:ENV|CACHE)?\{([^${}]*)\}")


def _tainted(items: Sequence[Item]) -> bool:
    return any(isinstance(a, _UnknownArg) and a.tainted for a in items)


Item = Union[str, _UnknownArg]


def _known(items: Sequence[Item]) -> bool:
    return not any(isinstance(a, _UnknownArg) for a in items)


# -- truth -------------------------------------------------------------------------------------------
_ON = frozenset({"1", "ON", "YES", "TRUE", "Y"})
_OFF = frozenset({"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"})
_DECIMAL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_STRTOD = re.compile(r"\s*" + _DECIMAL + r"\Z")
_SPECIAL = re.compile(r"\s*[+-]?(?:inf(?:inity)?|nan(?:\(\w*\))?)\Z", re.I)
_HEXISH = re.compile(r"\s*[+-]?0[xX]")
_PREFIX = re.compile(r"\s*" + _DECIMAL)


def is_off(value: Optional[str]) -> bool:
    return value is None or value.upper() in _OFF or value.upper().endswith("-NOTFOUND")


def _constant(value: str) -> Optional[bool]:
    """True/False for CMake's constants (and numbers), None for anything else (a name)."""
    up = value.upper()
    if up in _ON:
        return True
    if up in _OFF or up.endswith("-NOTFOUND"):
        return False
    if _STRTOD.match(value) or _SPECIAL.match(value):
        return float(value) != 0  # strtod reads the whole string: C's conversion to bool
    if _HEXISH.match(value):
        raise Unknown  # a hexadecimal float: not modelled
    return None


def _number(value: str) -> Optional[float]:
    """sscanf("%lg"): the number a prefix reads, None when none; Unknown where unsure."""
    if _STRTOD.match(value):
        return float(value)
    m = _PREFIX.match(value)
    if m:
        if value[m.end() :][:1] in ("e", "E", ".", "x", "X"):
            raise Unknown
        return float(m.group(0))
    if _HEXISH.match(value) or re.match(r"\s*[+-]?(?:inf|nan)", value, re.I):
        raise Unknown
    return None


def _version(value: str) -> Tuple[int, ...]:
    if not re.fullmatch(r"\d+(?:\.\d+)*", value):
        raise Unknown
    parts = [int(p) for p in value.split(".")]
    return tuple(parts + [0] * (8 - len(parts)))


def to_regex(pattern: str) -> "re.Pattern[str]":
    """A CMake regular expression as Python's; Unknown for syntax the two may read differently."""
    if re.search(r"\\[A-Za-z0-9]|\{|\(\?|\[\[:|\\$", pattern):
        raise Unknown
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise Unknown from exc


def split_list(value: str) -> List[str]:
    """A CMake list's elements (empty ones kept; ``""`` is the empty list)."""
    if value == "":
        return []
    if "\\" in value or "[" in value:
        raise Unknown  # escaped or bracketed semicolons: not modelled
    return value.split(";")


# -- syntax tree -------------------------------------------------------------------------------------
@dataclass
class Cmd:
    name: str
    args: List[Arg]
    text: str
    path: str
    offset: int


@dataclass
class IfNode:
    branches: List[Tuple[Optional[Cmd], list]]  # (condition, body); None: else


@dataclass
class LoopNode:
    head: Cmd  # foreach or while
    body: list


@dataclass
class DefNode:
    head: Cmd  # function or macro
    body: list


@dataclass
class BlockNode:
    head: Cmd
    body: list


_OPENERS = {"if": "endif", "foreach": "endforeach", "while": "endwhile", "function": "endfunction"}
_OPENERS.update({"macro": "endmacro", "block": "endblock"})
_CLOSERS = frozenset(_OPENERS.values()) | {"elseif", "else"}


def parse(text: str, path: str) -> list:
    """The file's commands as a tree; ValueError where the blocks do not close."""
    commands = [Cmd(n, a, text, path, s) for n, s, _, a in iter_commands(text, parens=True)]
    pos = 0

    def block(ends: FrozenSet[str]) -> Tuple[list, Optional[Cmd]]:
        nonlocal pos
        out: list = []
        while pos < len(commands):
            cmd = commands[pos]
            pos += 1
            if cmd.name in ends:
                return out, cmd
            if cmd.name in _CLOSERS:
                raise ValueError(f"unexpected {cmd.name}()")
            if cmd.name == "if":
                branches = []
                head: Optional[Cmd] = cmd
                while True:
                    body, end = block(frozenset({"elseif", "else", "endif"}))
                    branches.append((head, body))
                    if end is None:
                        raise ValueError("if() without endif()")
                    if end.name == "endif":
                        break
                    if end.name == "else":
                        body, end = block(frozenset({"endif"}))
                        branches.append((None, body))
                        if end is None:
                            raise ValueError("if() without endif()")
                        break
                    head = end
                out.append(IfNode(branches))
            elif cmd.name in _OPENERS:
                body, end = block(frozenset({_OPENERS[cmd.name]}))
                if end is None:
                    raise ValueError(f"{cmd.name}() without end")
                kind = LoopNode if cmd.name in ("foreach", "while") else DefNode
                out.append(BlockNode(cmd, body) if cmd.name == "block" else kind(cmd, body))
            else:
                out.append(cmd)
        return out, None

    tree, end = block(frozenset())
    return tree


def _raw(cmd: Cmd, a: Arg) -> Tuple[str, str]:
    """(kind, text): "bracket" (literal), "quoted" or "unquoted" with escapes and references."""
    first = cmd.text[a.start] if a.start < len(cmd.text) else ""
    if a.quoted and first == "[":
        return "bracket", a.value
    if a.quoted:
        end = a.end - 1 if a.end - 1 > a.start and cmd.text[a.end - 1] == '"' else a.end
        return "quoted", cmd.text[a.start + 1 : end]
    return "unquoted", cmd.text[a.start : a.end]


# -- state -------------------------------------------------------------------------------------------
_AMBIGUOUS = object()  # a command defined differently on two joined paths


def _join_value(a: Value, b: Value) -> Value:
    if a is None or b is None:
        return None
    if a is b:
        return a
    out = a | b
    return out if len(out) <= MAX_VALUES else None


def _join_items(a: Dict[str, bool], b: Dict[str, bool]) -> Dict[str, bool]:
    if a is b:
        return a
    out = {k: v and b.get(k, False) for k, v in a.items()}
    for k in b:
        if k not in out:
            out[k] = False
    return out


class State:
    """Variables (scopes, the cache), commands defined, and the build's props (sources, targets,
    definitions: dicts of item -> definitely?), copied on write."""

    __slots__ = ("scopes", "cache", "cache_default", "funcs", "props", "owned", "flags", "guards", "written")

    def __init__(self, cache_default: Value) -> None:
        self.scopes: List[Dict[str, Value]] = [{}]
        self.cache: Dict[str, Value] = {}
        self.cache_default = cache_default
        self.funcs: Dict[str, object] = {}
        self.props: Dict[tuple, Dict[str, bool]] = {}
        self.owned: Set[tuple] = set()
        self.flags: Dict[str, object] = {}  # "lost", "policy"...
        self.guards: FrozenSet[str] = frozenset()
        self.written: Optional[Set[str]] = None  # where set: the names every write names (shared)

    def copy(self) -> "State":
        new = State.__new__(State)
        new.scopes = [dict(s) for s in self.scopes]
        new.cache = dict(self.cache)
        new.cache_default = self.cache_default
        new.funcs = dict(self.funcs)
        new.props = dict(self.props)
        new.owned = set()
        self.owned = set()
        new.flags = dict(self.flags)
        new.guards = self.guards
        new.written = self.written
        return new

    # variables
    def normal(self, name: str) -> Value:
        return self.scopes[-1].get(name, UNDEF_VALUE)

    def cached(self, name: str) -> Value:
        return self.cache.get(name, self.cache_default)

    def get(self, name: str) -> Value:
        normal = self.normal(name)
        if normal is None:
            return None
        if None not in normal:
            return normal
        cached = self.cached(name)
        if cached is None:
            return None
        out = (normal - UNDEF_VALUE) | cached
        return out if len(out) <= MAX_VALUES else None

    def set(self, name: str, value: Value, parent: bool = False) -> None:
        if value is not None and any(v is not None and len(v) > MAX_VALUE_CHARS for v in value):
            value = None
        if self.written is not None:
            self.written.add(name)
        if parent:
            if len(self.scopes) > 1:
                self.scopes[-2][name] = value
        else:
            self.scopes[-1][name] = value

    # props
    def items(self, key: tuple) -> Dict[str, bool]:
        return self.props.get(key, {})

    def add(self, key: tuple, item: str, definite: bool = True) -> None:
        if key not in self.owned:
            self.props[key] = dict(self.props.get(key, {}))
            self.owned.add(key)
        entry = self.props[key]
        entry[item] = entry.get(item, False) or definite

    def remove(self, key: tuple, item: str) -> None:
        if item in self.props.get(key, {}):
            if key not in self.owned:
                self.props[key] = dict(self.props[key])
                self.owned.add(key)
            del self.props[key][item]


def join(a: Optional[State], b: Optional[State]) -> Optional[State]:
    """The state either path may leave (None: the path does not continue)."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a.scopes) != len(b.scopes):
        raise Abort("scopes differ")
    out = a.copy()
    for k, (sa, sb) in enumerate(zip(a.scopes, b.scopes)):
        if sa is sb:
            continue
        # the names whose values differ (values are hashable, their hashes cached): C speed
        differ = {name for name, _ in sa.items() ^ sb.items()}
        if differ:
            merged = out.scopes[k]
            for name in differ:
                merged[name] = _join_value(sa.get(name, UNDEF_VALUE), sb.get(name, UNDEF_VALUE))
    for name in {name for name, _ in a.cache.items() ^ b.cache.items()}:
        # an entry one path never declares is not defined there (the default configure)
        out.cache[name] = _join_value(a.cache.get(name, UNDEF_VALUE), b.cache.get(name, UNDEF_VALUE))
    if a.funcs is not b.funcs:
        for name in a.funcs.keys() | b.funcs.keys():
            fa, fb = a.funcs.get(name), b.funcs.get(name)
            if fa is not fb:
                out.funcs[name] = _AMBIGUOUS
    empty: Dict[str, bool] = {}
    for key in a.props.keys() | b.props.keys():
        pa, pb = a.props.get(key, empty), b.props.get(key, empty)
        if pa is not pb:
            out.props[key] = _join_items(pa, pb)
    out.owned = set()
    for key in a.flags.keys() | b.flags.keys():
        va, vb = a.flags.get(key), b.flags.get(key)
        out.flags[key] = va if va == vb else (True if key == "lost" else None)
    out.guards = a.guards | b.guards
    return out


def join_all(states: Iterable[Optional[State]]) -> Optional[State]:
    out: Optional[State] = None
    for s in states:
        out = join(out, s)
    return out


# -- generator expressions ---------------------------------------------------------------------------
def _split_genex(text: str) -> List[Union[str, Tuple[str, List[str]]]]:
    """Literal text and ``$<name:arg,arg>`` pieces (arguments left unevaluated)."""
    out: List[Union[str, Tuple[str, List[str]]]] = []
    i, n, lit = 0, len(text), []
    while i < n:
        if text.startswith("$<", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("$<", j):
                    depth, j = depth + 1, j + 2
                    continue
                if text[j] == ">":
                    depth -= 1
                j += 1
            if depth:
                raise Unknown
            body = text[i + 2 : j - 1]
            # split at the first ':' and the ',' of the top level
            parts, cur, d, k = [], [], 0, 0
            head = None
            while k < len(body):
                if body.startswith("$<", k):
                    d += 1
                    cur.append("$<")
                    k += 2
                    continue
                ch = body[k]
                if ch == ">" and d:
                    d -= 1
                elif d == 0 and head is None and ch == ":":
                    head = "".join(cur)
                    cur = []
                    k += 1
                    continue
                elif d == 0 and head is not None and ch == ",":
                    parts.append("".join(cur))
                    cur = []
                    k += 1
                    continue
                cur.append(ch)
                k += 1
            if head is None:
                head, parts = "".join(cur), []
            else:
                parts.append("".join(cur))
            if lit:
                out.append("".join(lit))
                lit = []
            out.append((head, parts))
            i = j
            continue
        lit.append(text[i])
        i += 1
    if lit:
        out.append("".join(lit))
    return out


def genex(text: str, language: Optional[str]) -> FrozenSet[str]:
    """The strings a generator expression may give for a source of ``language`` (None: any);
    Unknown where it cannot tell."""
    if "$<" not in text:
        return frozenset({text})
    result = _genex_cached(text, language)
    if result is None:
        raise Unknown
    return result


@lru_cache(maxsize=8192)  # pure
def _genex_cached(text: str, language: Optional[str]) -> Optional[FrozenSet[str]]:
    try:
        return _genex(text, language)
    except Unknown:
        return None


def _genex(text: str, language: Optional[str]) -> FrozenSet[str]:
    results: Set[str] = {""}
    for piece in _split_genex(text):
        if isinstance(piece, str):
            options: FrozenSet[str] = frozenset({piece})
        else:
            options = _genex_one(piece[0], piece[1], language)
        results = {r + o for r in results for o in options}
        if len(results) > MAX_VALUES:
            raise Unknown
    return frozenset(results)


def _bool01(values: FrozenSet[str]) -> Set[bool]:
    out = set()
    for v in values:
        if v not in ("0", "1"):
            raise Unknown  # CMake reports an error
        out.add(v == "1")
    return out


def _genex_one(head: str, parts: List[str], language: Optional[str]) -> FrozenSet[str]:
    name = genex(head, language)
    if len(name) != 1:
        raise Unknown
    head = next(iter(name))
    args = [genex(p, language) for p in parts]
    if head in ("0", "1"):
        if head == "0":
            return frozenset({""})
        return args[0] if args else frozenset({""})
    if head in ("BOOL", "NOT", "AND", "OR", "IF", "STREQUAL", "EQUAL", "IN_LIST") or ":" in head:
        pass
    if head == "BOOL" and len(args) == 1:
        return frozenset("0" if is_off(v) else "1" for v in args[0])
    if head == "NOT" and len(args) == 1:
        return frozenset("0" if b else "1" for b in _bool01(args[0]))
    if head in ("AND", "OR") and args:
        outs = set()
        for combo in itertools.product(*[sorted(_bool01(a)) for a in args]):
            outs.add("1" if (all(combo) if head == "AND" else any(combo)) else "0")
        return frozenset(outs)
    if head == "IF" and len(args) == 3:
        out: Set[str] = set()
        for b in _bool01(args[0]):
            out |= args[1] if b else args[2]
        return frozenset(out)
    if head == "STREQUAL" and len(args) == 2:
        return frozenset("1" if x == y else "0" for x in args[0] for y in args[1])
    if head == "IN_LIST" and len(args) == 2:
        return frozenset("1" if x in split_list(y) else "0" for x in args[0] for y in args[1])
    if head in ("BUILD_INTERFACE", "BUILD_LOCAL_INTERFACE") and len(args) == 1:
        return args[0]
    if head == "INSTALL_INTERFACE":
        return frozenset({""})
    if head == "SEMICOLON" and not args:
        return frozenset({";"})
    if head == "COMMA" and not args:
        return frozenset({","})
    if head == "ANGLE-R" and not args:
        return frozenset({">"})
    if head == "COMPILE_LANGUAGE" and len(args) == 1:
        if language is None:
            raise Unknown
        langs = set()
        for v in args[0]:
            langs.update(x.strip() for x in v.split(","))
        return frozenset({"1" if language in langs else "0"})
    raise Unknown


# -- the interpreter ---------------------------------------------------------------------------------
_DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*\Z")
_SOURCE_EXT = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c\+\+|c|hip|mm|m|f90|f)$", re.I)
_LANG_OF = {".c": "C", ".cu": "CUDA", ".hip": "HIP", ".m": "OBJC", ".mm": "OBJCXX"}
_UNARY = frozenset(
    {"EXISTS", "COMMAND", "DEFINED", "POLICY", "TARGET", "TEST", "IS_DIRECTORY", "IS_SYMLINK", "IS_ABSOLUTE"}
)
_UNARY |= {"IS_READABLE", "IS_WRITABLE", "IS_EXECUTABLE"}
_BINARY = frozenset(
    {
        "MATCHES",
        "LESS",
        "GREATER",
        "EQUAL",
        "LESS_EQUAL",
        "GREATER_EQUAL",
        "STRLESS",
        "STRGREATER",
        "STREQUAL",
        "STRLESS_EQUAL",
        "STRGREATER_EQUAL",
        "VERSION_LESS",
        "VERSION_GREATER",
        "VERSION_EQUAL",
        "VERSION_LESS_EQUAL",
        "VERSION_GREATER_EQUAL",
        "IN_LIST",
        "IS_NEWER_THAN",
        "PATH_EQUAL",
    }
)
_KEYWORDS = _UNARY | _BINARY | {"NOT", "AND", "OR", "(", ")"}
# commands that change nothing the facts read (their variables aside: see _havoc)
_NO_EFFECT = frozenset(
    {
        "cmake_policy",
        "include_directories",
        "link_directories",
        "link_libraries",
        "target_include_directories",
        "target_link_directories",
        "target_link_options",
        "target_compile_features",
        "target_precompile_headers",
        "install",
        "mark_as_advanced",
        "add_dependencies",
        "add_custom_target",
        "add_custom_command",
        "enable_testing",
        "add_test",
        "set_tests_properties",
        "configure_file",
        "export",
        "source_group",
        "set_directory_properties",
        "add_link_options",
        "remove_definitions",
        "define_property",
        "cmake_language",
        "cmake_host_system_information",
        "variable_watch",
        "fltk_wrap_ui",
        "include_regular_expression",
        "create_test_sourcelist",
    }
)
_OUTPUT_KEYWORDS = frozenset(
    {"OUTPUT_VARIABLE", "RESULT_VARIABLE", "ERROR_VARIABLE", "RESULTS_VARIABLE", "COMPILE_OUTPUT_VARIABLE"}
)
_HIP_PACKAGES = frozenset({"hip", "rocm", "hipcub", "rocprim", "hipblas", "rocblas", "hiprand", "rocthrust"})
_SCOPE_WORDS = frozenset({"PUBLIC", "PRIVATE", "INTERFACE", "BEFORE", "AFTER", "SYSTEM"})
_TARGET_WORDS = frozenset(
    {"STATIC", "SHARED", "MODULE", "OBJECT", "EXCLUDE_FROM_ALL", "WIN32", "MACOSX_BUNDLE", "GLOBAL"}
)


@dataclass
class _Frame:
    kind: str  # "function", "file", "loop"
    returned: List[State] = field(default_factory=list)
    breaks: List[State] = field(default_factory=list)
    continues: List[State] = field(default_factory=list)


@dataclass
class _Def:
    kind: str
    name: str
    params: Tuple[str, ...]
    body: list
    path: str


class Interpreter:
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
        if tokens[0][0] in _KEYWORDS or tokens[0][0].upper() in _ON | _OFF:
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
        if not words or not _known(words):
            return st
        name = str(words[0]).lower()
        st.funcs[name] = _Def(
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
                positions = _write_positions(node)
                for k, a in enumerate(node.args):
                    kind, raw = _raw(node, a)
                    if kind == "unquoted" and _IDENT.match(raw):
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
        if _known(rest):
            items = self._foreach_items(rest, st)
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
            m = _PLAIN.match(raw, i)
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
                m = _REF_OPEN.match(raw, i)
                if m:
                    start = m.end()
                    depth, j = 1, start
                    while j < n and depth:
                        if raw[j] == "}":
                            depth -= 1
                        elif raw[j] == "$" and _REF_OPEN.match(raw, j):
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
        value = st.cached(name) if kind == "CACHE" else st.get(name)
        if value is None:
            raise Unknown
        return {"" if v is None else v for v in value}

    def _alternatives(self, cmd: Cmd, st: State) -> List[List[Item]]:
        """The argument lists the command may get: unquoted arguments split into list elements;
        an argument that cannot be evaluated is UNKNOWN_ONE (quoted) or UNKNOWN_MANY."""
        per_arg: List[List[Tuple[Item, ...]]] = []
        for a in cmd.args:
            kind, raw = _raw(cmd, a)
            try:
                values = self._expand(raw, kind, st)
                if kind == "unquoted":
                    options = [tuple(x for x in v.split(";") if x) if "\\" not in v else None for v in values]
                    if any(o is None for o in options):
                        raise Unknown
                    per_arg.append(sorted(set(options)))  # type: ignore[arg-type]
                else:
                    per_arg.append([(v,) for v in sorted(values)])
            except Unknown:
                per_arg.append([(_UNKNOWN[(kind == "unquoted", self._taints(raw))],)])
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
        names = _NAMES_READ.findall(raw)
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
        per_arg: List[List[List[Tuple[str, bool]]]] = []
        for a in cmd.args:
            kind, raw = _raw(cmd, a)
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
                result = _Condition(self, st, fixed).evaluate(tokens)
                if result is None:
                    return None
                out.add(result)
            except _Choose as choice:
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
        if isinstance(func, _Def):
            return self._call(func, cmd, st)
        alts = self._alternatives(cmd, st)
        if len(alts) == 1:
            return self._builtin(name, alts[0], cmd, st)
        return join_all(self._builtin(name, args, cmd, st.copy()) for args in alts)

    def _call(self, func: _Def, cmd: Cmd, st: State) -> Optional[State]:
        if self.depth >= MAX_CALL_DEPTH:
            return self._unknown_command(cmd.name, self._alternatives(cmd, st)[0], st)
        alts = self._alternatives(cmd, st)
        outs = []
        for k, args in enumerate(alts):
            outs.append(self._call_one(func, args, st if k == len(alts) - 1 else st.copy()))
        return join_all(outs)

    def _call_one(self, func: _Def, args: List[Item], st: State) -> Optional[State]:
        values: Dict[str, Optional[str]] = {}
        if _known(args):
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
                if isinstance(a, _UnknownArg) and a.many:
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
            for k, v in values.items():
                st.set(k, None if v is None else frozenset({v}))
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
            if isinstance(a, str) and _IDENT.match(a) and a not in _SCOPE_WORDS:
                st.set(a, None)

    def _unknown_command(self, name: str, args: List[Item], st: State) -> State:
        """A command nobody in the tree defines: what its arguments name may be written, the
        sources it names may be compiled."""
        self._havoc(args, st)
        self._mark_sources([a for a in args if isinstance(a, str)], st)
        if _tainted(args) and not hasattr(self, "_c_" + name) and name not in _NO_EFFECT:
            st.flags["lost"] = True  # a command from outside gets a list the program built
        return st

    def _mark_sources(self, words: List[str], st: State) -> None:
        for w in words:
            for part in w.split(";"):
                if _SOURCE_EXT.search(part):
                    st.add(("maybe_src",), self._path(part), False)

    def _path(self, p: str) -> str:
        return os.path.normpath(p if os.path.isabs(p) else os.path.join(self.current_dir, p))

    def _builtin(self, name: str, args: List[Item], cmd: Cmd, st: State) -> Optional[State]:
        handler = getattr(self, "_c_" + name, None)
        if handler is not None:
            try:
                return handler(args, st)
            except Unknown:
                return self._unknown_command(name, args, st)
        if name in _NO_EFFECT:
            return st
        return self._unknown_command(name, args, st)

    # -- variables
    def _c_set(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        if name.startswith("ENV{"):
            return st
        rest = list(args[1:])
        if "CACHE" in rest:
            k = rest.index("CACHE")
            values, tail = rest[:k], rest[k + 1 :]
            if not _known(values) or not tail:
                st.cache[name] = None
                st.set(name, None)
                return st
            force = "FORCE" in tail[2:]
            value = frozenset({";".join(str(v) for v in values)})
            existing = st.cache.get(name, UNDEF_VALUE)
            if force or existing == UNDEF_VALUE:
                st.cache[name] = value
            elif existing is not None and None in existing:
                st.cache[name] = _join_value(existing - UNDEF_VALUE, value)
            if not self._policy(st, (3, 21)):  # CMP0126 OLD: a new entry removes the normal binding
                if existing == UNDEF_VALUE:
                    st.set(name, UNDEF_VALUE)
                elif existing is None or None in existing:
                    normal = st.normal(name)
                    st.set(name, None if normal is None else normal | UNDEF_VALUE)
            return st
        parent = bool(rest) and rest[-1] == "PARENT_SCOPE"
        if parent:
            rest = rest[:-1]
        if not _known(rest):
            st.set(name, None, parent)
            return st
        st.set(name, frozenset({";".join(str(v) for v in rest)}) if rest else UNDEF_VALUE, parent)
        return st

    def _policy(self, st: State, version: Tuple[int, int]) -> bool:
        declared = st.flags.get("policy")
        return isinstance(declared, tuple) and declared >= version

    def _c_cmake_minimum_required(self, args: List[Item], st: State) -> State:
        if len(args) >= 2 and args[0] == "VERSION" and isinstance(args[1], str):
            low = args[1].split("...")[-1] if "..." in args[1] else args[1]
            try:
                st.flags["policy"] = tuple(int(x) for x in low.split(".")[:2])
            except ValueError:
                st.flags["policy"] = None
        return st

    def _c_unset(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        if len(args) > 1 and args[1] == "CACHE":
            st.cache[args[0]] = UNDEF_VALUE
        else:
            st.set(args[0], UNDEF_VALUE, len(args) > 1 and args[1] == "PARENT_SCOPE")
        return st

    def _c_option(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        init = args[2] if len(args) > 2 else "OFF"
        value: Value = frozenset({init}) if isinstance(init, str) and not self.written else None
        normal = st.normal(name)
        new = self._policy(st, (3, 13))
        if new and normal is not None and None not in normal:
            return st  # CMP0077: a normal variable wins
        cached = st.cache.get(name, UNDEF_VALUE)
        if cached == UNDEF_VALUE:
            st.cache[name] = value
        elif cached is not None and None in cached:
            st.cache[name] = _join_value(cached - UNDEF_VALUE, value)
        if not new:
            st.set(name, UNDEF_VALUE)  # CMP0077 OLD: the normal variable goes
        return st

    def _c_cmake_dependent_option(self, args: List[Item], st: State) -> State:
        if len(args) < 5 or not _known(args):
            raise Unknown
        name, _, default, depends, force = (str(a) for a in args[:5])
        words = [w for d in depends.split(";") for w in re.split(r" +", d) if w]
        tokens = [(w, False) for w in words]
        truth = self._enumerate(tokens, st)
        if truth is None or len(truth) != 1:
            st.set(name, None)
            st.cache[name] = None
            return st
        if truth.pop():
            cached = st.cache.get(name, UNDEF_VALUE)
            if cached == UNDEF_VALUE:
                st.cache[name] = cached = frozenset({default})
            st.set(name, cached)
        else:
            st.set(name, frozenset({force}))
        return st

    def _c_list(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
            raise Unknown
        op, var = args[0], args[1]
        rest = args[2:]
        out_var = var
        if op in ("LENGTH", "GET", "JOIN", "FIND", "SUBLIST"):
            out_var = rest[-1] if rest and isinstance(rest[-1], str) else None
            if out_var is None:
                raise Unknown
        if op == "TRANSFORM" and "OUTPUT_VARIABLE" in rest:
            k = rest.index("OUTPUT_VARIABLE")
            if k + 1 >= len(rest) or not isinstance(rest[k + 1], str):
                raise Unknown
            out_var = str(rest[k + 1])
            rest = rest[:k] + rest[k + 2 :]
        if op in ("POP_BACK", "POP_FRONT"):
            raise Unknown
        if not _known(rest):
            st.set(out_var, None)
            return st
        value = st.get(var)
        if value is None:
            st.set(out_var, None)
            return st
        results: Set[Optional[str]] = set()
        for v in value:
            try:
                results.add(self._list_op(op, v, [str(r) for r in rest]))
            except (Unknown, ValueError, IndexError, re.error):
                st.set(out_var, None)
                return st
        st.set(out_var, frozenset(results) if len(results) <= MAX_VALUES else None)
        return st

    def _list_op(self, op: str, value: Optional[str], rest: List[str]) -> Optional[str]:
        items = split_list(value) if value is not None else []
        if op == "APPEND":
            if not rest:
                return value
            return ";".join(items + rest) if items else ";".join(rest)
        if op == "PREPEND":
            if not rest:
                return value
            return ";".join(rest + items) if items else ";".join(rest)
        if op == "INSERT":
            k = int(rest[0])
            if k < 0:
                k += len(items)
            if not 0 <= k <= len(items):
                raise Unknown
            return ";".join(items[:k] + rest[1:] + items[k:])
        if op == "LENGTH":
            return str(len(items))
        if op == "GET":
            out = []
            for r in rest[:-1]:
                k = int(r)
                if not -len(items) <= k < len(items):
                    raise Unknown
                out.append(items[k])
            return ";".join(out)
        if op == "JOIN":
            return rest[0].join(items) if len(rest) == 2 else _raise()
        if op == "FIND":
            return str(items.index(rest[0])) if rest[0] in items else "-1"
        if op == "SUBLIST":
            begin, length = int(rest[0]), int(rest[1])
            if not 0 <= begin <= len(items) or length < -1:
                raise Unknown
            return ";".join(items[begin:] if length == -1 else items[begin : begin + length])
        if value is None and op in ("REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES", "FILTER", "REVERSE"):
            return None if op != "REMOVE_AT" else _raise()
        if op == "REMOVE_ITEM":
            return ";".join(x for x in items if x not in rest)
        if op == "REMOVE_AT":
            drop = set()
            for r in rest:
                k = int(r)
                if not -len(items) <= k < len(items):
                    raise Unknown
                drop.add(k % len(items))
            return ";".join(x for k, x in enumerate(items) if k not in drop)
        if op == "REMOVE_DUPLICATES":
            return ";".join(dict.fromkeys(items))
        if op == "REVERSE":
            return ";".join(reversed(items))
        if op == "FILTER":
            if len(rest) != 3 or rest[0] not in ("INCLUDE", "EXCLUDE") or rest[1] != "REGEX":
                raise Unknown
            rx = to_regex(rest[2])
            keep = rest[0] == "INCLUDE"
            return ";".join(x for x in items if bool(rx.search(x)) == keep)
        if op == "TRANSFORM":
            return self._transform(items, rest)
        if op == "SORT" and not rest:
            return ";".join(sorted(items))
        raise Unknown

    def _transform(self, items: List[str], rest: List[str]) -> str:
        if not rest:
            raise Unknown
        action, rest = rest[0], rest[1:]
        nargs = {"APPEND": 1, "PREPEND": 1, "TOLOWER": 0, "TOUPPER": 0, "STRIP": 0, "REPLACE": 2}
        if action not in nargs:
            raise Unknown
        params, selector = rest[: nargs[action]], rest[nargs[action] :]
        if len(params) != nargs[action]:
            raise Unknown
        chosen = set(range(len(items)))
        if selector:
            if selector[0] == "REGEX" and len(selector) == 2:
                rx = to_regex(selector[1])
                chosen = {k for k, x in enumerate(items) if rx.search(x)}
            elif selector[0] == "AT" and len(selector) > 1:
                chosen = {int(x) % len(items) for x in selector[1:]} if items else _raise()
            else:
                raise Unknown

        def apply(x: str) -> str:
            if action == "APPEND":
                return x + params[0]
            if action == "PREPEND":
                return params[0] + x
            if action == "TOLOWER":
                return x.lower()
            if action == "TOUPPER":
                return x.upper()
            if action == "STRIP":
                return x.strip(" \t\r\n")
            rx = to_regex(params[0])
            if "\\" in params[1]:
                raise Unknown
            return rx.sub(lambda m: params[1], x)

        return ";".join(apply(x) if k in chosen else x for k, x in enumerate(items))

    def _c_string(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str):
            raise Unknown
        op = args[0]
        strs = [a if isinstance(a, str) else None for a in args[1:]]
        out_index = {
            "APPEND": 0,
            "PREPEND": 0,
            "CONCAT": 0,
            "JOIN": 1,
            "TOLOWER": 1,  # CMake reads the positions it needs and ignores what follows
            "TOUPPER": 1,
            "LENGTH": 1,
            "SUBSTRING": 3,
            "STRIP": 1,
            "REPLACE": 2,
            "FIND": 2,
            "COMPARE": 3,
        }.get(op)
        if op == "REGEX" and len(strs) >= 3 and strs[0] in ("MATCH", "MATCHALL", "REPLACE"):
            out_index = 2 if strs[0] == "REPLACE" else 2
            out_index = {"MATCH": 2, "MATCHALL": 2, "REPLACE": 3}[strs[0]]  # type: ignore[index]
        if out_index is None or out_index >= len(strs) or strs[out_index] is None:
            raise Unknown
        out = str(strs[out_index])
        if not all(s is not None for s in strs):
            st.set(out, None)
            return st
        try:
            value = self._string_op(op, [str(s) for s in strs], st)
        except (Unknown, ValueError, IndexError, re.error):
            value = None
        st.set(out, value)
        return st

    def _string_op(self, op: str, s: List[str], st: State) -> Value:
        def current(name: str) -> FrozenSet[Optional[str]]:
            value = st.get(name)
            if value is None:
                raise Unknown
            return value

        if op in ("APPEND", "PREPEND"):
            tail = "".join(s[1:])
            return frozenset(
                ((v or "") + tail if op == "APPEND" else tail + (v or "")) if s[1:] else v
                for v in current(s[0])
            )
        if op == "CONCAT":
            return frozenset({"".join(s[1:])})
        if op == "JOIN":
            return frozenset({s[0].join(s[2:])})
        if op in ("TOLOWER", "TOUPPER"):
            if not s[0].isascii():
                raise Unknown
            return frozenset({s[0].lower() if op == "TOLOWER" else s[0].upper()})
        if op == "LENGTH":
            return frozenset({str(len(s[0].encode()))})
        if op == "STRIP":
            return frozenset({s[0].strip(" \t\r\n\v\f")})
        if op == "SUBSTRING":
            text, begin, length = s[0], int(s[1]), int(s[2])
            if not text.isascii() or not 0 <= begin <= len(text) or length < -1:
                raise Unknown
            return frozenset({text[begin:] if length == -1 else text[begin : begin + length]})
        if op == "REPLACE":
            return frozenset({"".join(s[3:]).replace(s[0], s[1]) if s[0] else _raise()})
        if op == "FIND":
            if len(s) != 3:
                raise Unknown
            return frozenset({str(s[0].find(s[1]))})
        if op == "COMPARE":
            mode, a, b = s[0], s[1], s[2]
            ops = {"EQUAL": a == b, "NOTEQUAL": a != b, "LESS": a < b, "GREATER": a > b}
            ops.update({"LESS_EQUAL": a <= b, "GREATER_EQUAL": a >= b})
            if mode not in ops:
                raise Unknown
            return frozenset({"1" if ops[mode] else "0"})
        if op == "REGEX":
            mode, rx = s[0], to_regex(s[1])
            text = "".join(s[3:] if mode != "REPLACE" else s[4:])
            if mode == "MATCH":
                m = rx.search(text)
                return frozenset({m.group(0) if m else ""})
            if mode == "MATCHALL":
                return frozenset({";".join(m.group(0) for m in rx.finditer(text) if m.group(0))})
            if "\\" in s[2] or any(m.group(0) == "" for m in rx.finditer(text)):
                raise Unknown
            return frozenset({rx.sub(lambda m: s[2], text)})
        raise Unknown

    def _c_math(self, args: List[Item], st: State) -> State:
        if len(args) < 3 or args[0] != "EXPR" or not isinstance(args[1], str):
            raise Unknown
        if not isinstance(args[2], str) or len(args) > 3:
            st.set(args[1], None)
            return st
        try:
            st.set(args[1], frozenset({str(_math(args[2]))}))
        except (Unknown, ValueError, ZeroDivisionError, SyntaxError, RecursionError):
            st.set(args[1], None)
        return st

    def _c_get_filename_component(self, args: List[Item], st: State) -> State:
        if len(args) < 3 or not _known(args[:3]):
            raise Unknown
        var, path, mode = str(args[0]), str(args[1]), str(args[2])
        base = os.path.basename(path)
        if mode in ("DIRECTORY", "PATH"):
            value = os.path.dirname(path)
        elif mode == "NAME":
            value = base
        elif mode == "EXT":
            value = base[base.index(".") :] if "." in base else ""
        elif mode == "NAME_WE":
            value = base.split(".")[0]
        elif mode == "ABSOLUTE" and len(args) == 3:
            value = os.path.normpath(os.path.join(self.current_dir, path))
        else:
            raise Unknown
        st.set(var, frozenset({value}))
        return st

    def _c_cmake_parse_arguments(self, args: List[Item], st: State) -> State:
        if not args or args[0] == "PARSE_ARGV":
            if len(args) < 5 or not _known(args):
                raise Unknown
            first = int(str(args[1]))
            count = st.get("ARGC")
            if count is None or len(count) != 1:
                raise Unknown
            argv = []
            for k in range(first, int(next(iter(count)) or 0)):
                v = st.get(f"ARGV{k}")
                if v is None or len(v) != 1:
                    raise Unknown
                argv.extend([x for x in [next(iter(v))] if x is not None])
            prefix, opts, one, multi = (str(a) for a in args[2:6]) if len(args) > 5 else _raise()
        else:
            if len(args) < 4 or not _known(args[:4]):
                raise Unknown
            prefix, opts, one, multi = (str(a) for a in args[:4])
            argv = args[4:]
            if not _known(argv):
                for group in (opts, one, multi):
                    for key in split_list(group):
                        st.set(f"{prefix}_{key}", None)
                st.set(f"{prefix}_UNPARSED_ARGUMENTS", None)
                return st
        options, singles, multis = split_list(opts), split_list(one), split_list(multi)
        found: Dict[str, List[str]] = {}
        unparsed: List[str] = []
        current = None
        for w in (str(a) for a in argv):
            if w in options:
                found[w] = []
                current = None
            elif w in singles or w in multis:
                if w in found:
                    raise Unknown
                found[w] = []
                current = w
            elif current is not None and (current in multis or not found[current]):
                found[current].append(w)
            else:
                unparsed.append(w)
                current = None
        for key in options:
            st.set(f"{prefix}_{key}", frozenset({"TRUE" if key in found else "FALSE"}))
        for key in singles + multis:
            if key in found and not found[key]:
                raise Unknown
            st.set(f"{prefix}_{key}", frozenset({";".join(found[key])}) if key in found else UNDEF_VALUE)
        st.set(f"{prefix}_UNPARSED_ARGUMENTS", frozenset({";".join(unparsed)}) if unparsed else UNDEF_VALUE)
        st.set(f"{prefix}_KEYWORDS_MISSING_VALUES", UNDEF_VALUE)
        return st

    def _c_message(self, args: List[Item], st: State) -> Optional[State]:
        if args and args[0] == "FATAL_ERROR":
            return None  # CMake stops here
        return st

    def _c_return(self, args: List[Item], st: State) -> Optional[State]:
        if args:
            raise Unknown  # return(PROPAGATE ...)
        for frame in reversed(self.frames):
            if frame.kind in ("function", "file"):
                frame.returned.append(st)
                return None
        return st

    def _c_break(self, args: List[Item], st: State) -> Optional[State]:
        for frame in reversed(self.frames):
            if frame.kind == "loop":
                frame.breaks.append(st)
                return None
            if frame.kind == "function":
                break
        raise Abort("break outside a loop")

    def _c_continue(self, args: List[Item], st: State) -> Optional[State]:
        for frame in reversed(self.frames):
            if frame.kind == "loop":
                frame.continues.append(st)
                return None
            if frame.kind == "function":
                break
        raise Abort("continue outside a loop")

    def _c_include_guard(self, args: List[Item], st: State) -> Optional[State]:
        if self.list_file in st.guards:
            for frame in reversed(self.frames):
                if frame.kind == "file":
                    frame.returned.append(st)
                    return None
        st.guards = st.guards | {self.list_file}
        return st

    def _c_execute_process(self, args: List[Item], st: State) -> State:
        for k, a in enumerate(args[:-1]):
            if a in _OUTPUT_KEYWORDS:
                nxt = args[k + 1]
                if isinstance(nxt, str):
                    st.set(nxt, None)
        return st

    _c_try_compile = _c_try_run = _c_execute_process

    def _c_find_package(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        package = args[0]
        found: Optional[bool] = None
        if self.scenario is not None:
            low = package.lower()
            if low in _HIP_PACKAGES:
                found = self.scenario == ROCM
            elif low in ("cuda", "cudatoolkit", "cudnn", "nccl", "cutlass"):
                found = self.scenario == CUDA
        for name in (f"{package}_FOUND", f"{package.upper()}_FOUND"):
            st.set(name, None if found is None else frozenset({"1" if found else "0"}))
        low = package.lower()
        if low in _HIP_PACKAGES:
            self._turn_on("hip")
        elif low in ("cuda", "cudatoolkit"):
            self._turn_on("cuda")
        return st

    def _c_check_language(self, args: List[Item], st: State) -> State:
        if len(args) != 1 or not isinstance(args[0], str):
            raise Unknown
        lang = args[0]
        var = f"CMAKE_{lang}_COMPILER"
        if self.scenario is not None and lang in ("HIP", "CUDA"):
            have = (lang == "HIP") == (self.scenario == ROCM)
            st.cache[var] = frozenset({f"/usr/bin/{lang.lower()}-compiler" if have else f"{var}-NOTFOUND"})
        else:
            st.cache[var] = None
        return st

    def _c_project(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        for var in ("PROJECT_NAME", "CMAKE_PROJECT_NAME"):
            st.set(var, frozenset({name}))
        for var in ("PROJECT_SOURCE_DIR", f"{name}_SOURCE_DIR"):
            st.set(var, frozenset({self.current_dir}))
        for var in ("PROJECT_BINARY_DIR", f"{name}_BINARY_DIR"):
            st.set(var, frozenset({"/nonexistent-build-dir"}))
        for var in ("PROJECT_VERSION", f"{name}_VERSION"):
            st.set(var, None)
        return self._languages([a for a in args[1:]], st)

    def _c_enable_language(self, args: List[Item], st: State) -> State:
        return self._languages(args, st)

    def _languages(self, args: Sequence[Item], st: State) -> State:
        for lang in ("HIP", "CUDA"):
            if lang in args:
                self._turn_on(lang.lower())
                var = f"CMAKE_{lang}_COMPILER"
                if self.scenario is not None:
                    st.cache[var] = frozenset({f"/usr/bin/{lang.lower()}-compiler"})
                    st.cache.setdefault(f"CMAKE_{lang}_COMPILER_LOADED", frozenset({"1"}))
        return st

    # -- files
    def _c_include(self, args: List[Item], st: State) -> Optional[State]:
        if not args or not isinstance(args[0], str):
            if _tainted(args[:1]):
                st.flags["lost"] = True
            return self._unknown_command("include", args, st)
        target = args[0]
        optional = "OPTIONAL" in args[1:]
        result_var = None
        if "RESULT_VARIABLE" in args[1:]:
            k = args.index("RESULT_VARIABLE")
            result_var = args[k + 1] if k + 1 < len(args) and isinstance(args[k + 1], str) else None
        candidates: List[str] = []
        if "/" in target or target.endswith(".cmake"):
            candidates.append(self._path(target))
        else:
            paths = st.get("CMAKE_MODULE_PATH")
            if paths is None:
                candidates = []
            else:
                for p in paths:
                    for d in split_list(p or ""):
                        candidates.append(
                            os.path.normpath(os.path.join(self.current_dir, d, target + ".cmake"))
                        )
        for path in candidates:
            if self._in_tree(path) and os.path.isfile(path):
                try:
                    out = self._run_listfile(path, st, directory=False)
                except Unknown:
                    break
                if out is not None and isinstance(result_var, str):
                    out.set(result_var, frozenset({path}))
                return out
        if isinstance(result_var, str):
            st.set(result_var, None)
        if not optional and ("/" in target or target.endswith(".cmake")) and self._in_tree(candidates[0]):
            st.flags["lost"] = True  # an in-tree file we could not read
        return st  # a module outside the tree: skipped

    def _c_add_subdirectory(self, args: List[Item], st: State) -> Optional[State]:
        if not args or not isinstance(args[0], str):
            if _tainted(args[:1]):
                st.flags["lost"] = True
            return st
        directory = self._path(args[0])
        listfile = os.path.join(directory, "CMakeLists.txt")
        if not self._in_tree(directory) or not os.path.isfile(listfile):
            st.flags["lost"] = True
            return st
        saved_dir, saved_file = self.current_dir, self.list_file
        parent_dir = self.current_dir
        st.scopes.append(dict(st.scopes[-1]))
        st.set("CMAKE_CURRENT_SOURCE_DIR", frozenset({directory}))
        st.set("CMAKE_CURRENT_BINARY_DIR", frozenset({"/nonexistent-build-dir"}))
        for key in ("ddef", "dopt"):
            for item, definite in st.items((key, parent_dir)).items():
                st.add((key, directory), item, definite)
        self.current_dir = directory
        try:
            out = self._run_listfile(listfile, st, directory=True)
        except Unknown:
            out = st
            out.flags["lost"] = True
        finally:
            self.current_dir, self.list_file = saved_dir, saved_file
        if out is not None:
            self._end_directory(out, directory)
            out.scopes.pop()
        return out

    def _end_directory(self, st: State, directory: str) -> None:
        """The flags variables as they stand at the end of the directory are its flags."""
        for lang in ("C", "CXX", "CUDA", "HIP"):
            value = st.get(f"CMAKE_{lang}_FLAGS")
            key = ("dflags", directory, lang)
            st.add(key, ENDED)  # the directory's end was reached
            if value is None:
                st.add(key, OPEN, True)
                continue
            per = [set(_flag_defs(v or "")) for v in value]
            for item in set().union(*per) if per else set():
                st.add(key, item, all(item in p for p in per))

    def _c_file(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        op = args[0]
        if op in ("GLOB", "GLOB_RECURSE"):
            if len(args) < 2 or not isinstance(args[1], str):
                raise Unknown
            var = args[1]
            rest = list(args[2:])
            if not _known(rest):
                st.set(var, None)
                return st
            st.set(var, self._glob(op == "GLOB_RECURSE", [str(r) for r in rest]))
            return st
        if op in ("READ", "STRINGS", "SHA256", "MD5", "TIMESTAMP", "SIZE", "REAL_PATH", "RELATIVE_PATH"):
            if op == "RELATIVE_PATH" and len(args) == 4 and _known(args):
                st.set(str(args[1]), frozenset({os.path.relpath(str(args[3]), str(args[2]))}))
                return st
            if len(args) > 2 and isinstance(args[2], str) and op not in ("RELATIVE_PATH",):
                st.set(args[2], None)
            elif len(args) > 1 and isinstance(args[1], str):
                st.set(args[1], None)
            return st
        if op in ("TO_CMAKE_PATH", "TO_NATIVE_PATH"):
            if len(args) == 3 and isinstance(args[2], str):
                st.set(args[2], None if not isinstance(args[1], str) else frozenset({args[1]}))
            return st
        if op in (
            "WRITE",
            "APPEND",
            "MAKE_DIRECTORY",
            "REMOVE",
            "REMOVE_RECURSE",
            "COPY",
            "INSTALL",
            "TOUCH",
        ):
            return st
        if op in ("GENERATE", "CONFIGURE", "LOCK", "CHMOD", "COPY_FILE", "CREATE_LINK", "RENAME"):
            return st
        raise Unknown

    def _glob(self, recurse: bool, words: List[str]) -> Value:
        relative = None
        list_dirs = not recurse
        patterns: List[str] = []
        k = 0
        while k < len(words):
            w = words[k]
            if w in ("LIST_DIRECTORIES", "RELATIVE"):
                if k + 1 >= len(words):
                    return None
                if w == "RELATIVE":
                    relative = words[k + 1]
                else:
                    list_dirs = not is_off(words[k + 1])
                    if recurse and list_dirs:
                        return None  # directories listed at every level: not modelled
                k += 2
                continue
            if w in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                k += 1
                continue
            patterns.append(w)
            k += 1
        found: Set[str] = set()
        seen = 0
        for pattern in patterns:
            full = self._path(pattern)
            if not self._in_tree(full):
                return None
            parts = full[len(self.root) :].strip(os.sep).split(os.sep)
            fixed = [p for p in itertools.takewhile(lambda p: not any(c in p for c in "*?["), parts)]
            wild = parts[len(fixed) :]
            base = os.path.join(self.root, *fixed)
            if not wild:
                if os.path.isfile(base):
                    found.add(base)
                continue
            if recurse and len(wild) != 1:
                return None
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames[:] = sorted(dirnames)
                rel = os.path.relpath(dirpath, base)
                depth = 0 if rel == "." else rel.count(os.sep) + 1
                seen += len(filenames) + len(dirnames)
                if seen > MAX_GLOB_ENTRIES:
                    return None
                if not recurse:
                    if depth < len(wild) - 1:
                        dirnames[:] = [d for d in dirnames if fnmatchcase(d, wild[depth])]
                        continue
                    dirnames_all = list(dirnames)
                    dirnames[:] = []
                    for f in filenames:
                        if fnmatchcase(f, wild[-1]):
                            found.add(os.path.join(dirpath, f))
                    if list_dirs:
                        for d in dirnames_all:
                            if fnmatchcase(d, wild[-1]):
                                found.add(os.path.join(dirpath, d))
                else:
                    for f in filenames:
                        if fnmatchcase(f, wild[0]):
                            found.add(os.path.join(dirpath, f))
        results = sorted(found)
        if relative is not None:
            results = [os.path.relpath(r, relative) for r in results]
        return frozenset({";".join(results)})

    # -- targets and definitions
    def _target_sources(self, target: str, items: Sequence[Item], st: State) -> None:
        for a in items:
            if isinstance(a, _UnknownArg):
                if a.tainted:
                    st.flags["lost"] = True
                continue
            if a in _SCOPE_WORDS or a in _TARGET_WORDS:
                continue
            st.add(("tsrc", target), a if "$<" in a else self._path(a))

    def _c_add_library(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        name = args[0]
        if any(w in ("IMPORTED", "ALIAS") for w in args[1:2]) or "IMPORTED" in args or "ALIAS" in args:
            return st
        st.add(("targets",), name)
        st.add(("tdir", name), self.current_dir)
        if "INTERFACE" in args[1:2]:
            return st
        sources: List[Item] = []
        options = False
        for a in args[1:]:
            if a in ("OPTIONS", "HIPCC_OPTIONS", "HCC_OPTIONS", "CLANG_OPTIONS", "NVCC_OPTIONS"):
                options = True  # FindCUDA's and FindHIP's compiler options up to the end
            elif options:
                st.add(("topt", name), a if isinstance(a, str) else OPEN)
            else:
                sources.append(a)
        self._target_sources(name, sources, st)
        return st

    _c_add_executable = _c_cuda_add_library = _c_cuda_add_executable = _c_add_library
    _c_hip_add_library = _c_hip_add_executable = _c_add_library

    def _c_target_sources(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        items: List[Item] = []
        mode = "PRIVATE"
        for a in args[1:]:
            if a in ("PRIVATE", "PUBLIC", "INTERFACE"):
                mode = str(a)
            elif a == "FILE_SET":
                mode = "FILE_SET"
            elif mode in ("PRIVATE", "PUBLIC"):
                items.append(a)
            elif mode == "INTERFACE" and isinstance(a, str) and _SOURCE_EXT.search(a):
                st.add(("maybe_src",), self._path(a), False)
        self._target_sources(args[0], items, st)
        return st

    def _definition_items(self, items: Sequence[Item], strip_d: bool) -> Tuple[List[str], bool]:
        out: List[str] = []
        open_ = False
        for a in items:
            if isinstance(a, _UnknownArg):
                open_ = True
                continue
            if a in _SCOPE_WORDS:
                continue
            out.append(a[2:] if strip_d and a.startswith("-D") else a)
        return out, open_

    def _c_add_definitions(self, args: List[Item], st: State) -> State:
        for a in args:
            if isinstance(a, _UnknownArg):
                st.add(("ddef", self.current_dir), OPEN)
            elif _DEFINE_FLAG.fullmatch(a):
                st.add(("ddef", self.current_dir), a[2:])
            elif "$" in a:
                st.add(("ddef", self.current_dir), OPEN)
        return st

    def _c_add_compile_definitions(self, args: List[Item], st: State) -> State:
        items, open_ = self._definition_items(args, True)
        for item in items:
            st.add(("ddef", self.current_dir), item)
        if open_:
            st.add(("ddef", self.current_dir), OPEN)
        return st

    def _c_add_compile_options(self, args: List[Item], st: State) -> State:
        for a in args:
            st.add(("dopt", self.current_dir), a if isinstance(a, str) else OPEN)
        return st

    def _target_items(self, args: List[Item], st: State, kind: str) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        target = args[0]
        scope = "PRIVATE"
        for a in args[1:]:
            if a in ("PRIVATE", "PUBLIC", "INTERFACE"):
                scope = str(a)
                continue
            if a in ("BEFORE", "AFTER", "SYSTEM"):
                continue
            item = a if isinstance(a, str) else OPEN
            if kind == "def" and item.startswith("-D"):
                item = item[2:]
            if scope in ("PRIVATE", "PUBLIC"):
                st.add(("t" + kind, target), item)
            if scope in ("PUBLIC", "INTERFACE"):
                st.add(("ti" + kind, target), item)
        return st

    def _c_target_compile_definitions(self, args: List[Item], st: State) -> State:
        return self._target_items(args, st, "def")

    def _c_target_compile_options(self, args: List[Item], st: State) -> State:
        return self._target_items(args, st, "opt")

    def _c_target_link_libraries(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            return st
        target = args[0]
        scope = "PUBLIC"
        for a in args[1:]:
            if a in (
                "PRIVATE",
                "PUBLIC",
                "INTERFACE",
                "LINK_PRIVATE",
                "LINK_PUBLIC",
                "LINK_INTERFACE_LIBRARIES",
            ):
                scope = {"LINK_PRIVATE": "PRIVATE", "LINK_PUBLIC": "PUBLIC"}.get(str(a), str(a))
                continue
            if not isinstance(a, str):
                continue
            if scope in ("PRIVATE", "PUBLIC"):
                st.add(("tlink", target), a)
            if scope in ("PUBLIC", "INTERFACE"):
                st.add(("tilink", target), a)
        return st

    def _c_set_source_files_properties(self, args: List[Item], st: State) -> State:
        if "PROPERTIES" not in args:
            raise Unknown
        k = args.index("PROPERTIES")
        files = []
        for a in args[:k]:
            if a in ("DIRECTORY", "TARGET_DIRECTORY"):
                break
            files.append(a)
        props = args[k + 1 :]
        for f in files:
            if not isinstance(f, str):
                continue
            path = self._path(f)
            for j in range(0, len(props) - 1, 2):
                self._source_property(path, props[j], props[j + 1], st, False)
        return st

    def _source_property(self, path: str, prop: Item, value: Item, st: State, append: bool) -> None:
        if prop in ("COMPILE_DEFINITIONS", "COMPILE_FLAGS", "COMPILE_OPTIONS", "LANGUAGE"):
            key = {"COMPILE_DEFINITIONS": "sdef", "LANGUAGE": "slang"}.get(str(prop), "sopt")
            if not isinstance(value, str):
                st.add((key, path), OPEN)
                return
            for item in split_list(value) if key != "sopt" else [value]:
                st.add((key, path), item[2:] if key == "sdef" and item.startswith("-D") else item)

    def _c_set_property(self, args: List[Item], st: State) -> State:
        if "PROPERTY" not in args or not args:
            raise Unknown
        k = args.index("PROPERTY")
        kind, names = args[0], args[1:k]
        append = "APPEND" in names or "APPEND_STRING" in names
        names = [n for n in names if n not in ("APPEND", "APPEND_STRING")]
        if k + 1 >= len(args):
            raise Unknown
        prop, values = args[k + 1], args[k + 2 :]
        value: Item = ";".join(str(v) for v in values) if _known(values) else UNKNOWN_ONE
        if kind == "SOURCE":
            for n in names:
                if n in ("DIRECTORY", "TARGET_DIRECTORY"):
                    break
                if isinstance(n, str):
                    self._source_property(self._path(n), prop, value, st, append)
        elif kind == "TARGET" and prop in ("COMPILE_DEFINITIONS", "INTERFACE_COMPILE_DEFINITIONS"):
            for n in names:
                if isinstance(n, str) and isinstance(value, str):
                    key = ("tdef" if prop == "COMPILE_DEFINITIONS" else "tidef", n)
                    for item in split_list(value):
                        st.add(key, item)
        elif kind == "DIRECTORY" and prop == "COMPILE_DEFINITIONS" and not names:
            for item in split_list(value) if isinstance(value, str) else [OPEN]:
                st.add(("ddef", self.current_dir), item)
        return st

    def _c_set_target_properties(self, args: List[Item], st: State) -> State:
        if "PROPERTIES" not in args:
            raise Unknown
        k = args.index("PROPERTIES")
        props = args[k + 1 :]
        for target in args[:k]:
            for j in range(0, len(props) - 1, 2):
                if props[j] in ("COMPILE_DEFINITIONS", "INTERFACE_COMPILE_DEFINITIONS") and isinstance(
                    target, str
                ):
                    key = ("tdef" if props[j] == "COMPILE_DEFINITIONS" else "tidef", target)
                    value = props[j + 1]
                    for item in split_list(value) if isinstance(value, str) else [OPEN]:
                        st.add(key, item)
        return st

    def _c_get_property(self, args: List[Item], st: State) -> State:
        if args and isinstance(args[0], str):
            st.set(args[0], None)
        return st

    _c_get_target_property = _c_get_source_file_property = _c_get_directory_property = _c_get_property
    _c_find_program = _c_find_library = _c_find_path = _c_find_file = _c_get_property
    _c_separate_arguments = _c_get_cmake_property = _c_get_property


_STRING_OUT = {"APPEND": 1, "PREPEND": 1, "CONCAT": 1, "JOIN": 2, "TOLOWER": 2, "TOUPPER": 2, "LENGTH": 2}
_STRING_OUT.update({"STRIP": 2, "REPLACE": 3, "FIND": 3, "SUBSTRING": 4, "COMPARE": 4, "REGEX": 4})
_FIRST_WRITES = frozenset(
    {"set", "unset", "option", "separate_arguments", "foreach", "get_filename_component", "get_property"}
) | {"get_target_property", "get_cmake_property", "get_directory_property", "get_source_file_property"}
_FIRST_WRITES |= {"find_program", "find_library", "find_path", "find_file", "cmake_parse_arguments"}


def _write_positions(cmd: Cmd) -> Tuple[int, ...]:
    """The argument positions that name the variable a command writes (a computed one there
    may write any variable); a call of the project's own commands writes through its names."""
    name = cmd.name
    if name in _FIRST_WRITES:
        return (0,)
    if name in ("list", "math", "file"):
        return (1, len(cmd.args) - 1) if name == "list" else (1,)
    if name == "string" and cmd.args:
        out = _STRING_OUT.get(cmd.args[0].value)
        return (out, 3) if out is not None else tuple(range(len(cmd.args)))
    return ()


def _raise():
    raise Unknown


def _math(expr: str) -> int:
    """``math(EXPR)``: 64-bit integers, C's division."""
    if not re.fullmatch(r"[0-9xXa-fA-F+\-*/%()<>&|^~ \t]*", expr) or re.search(r"0[xX]", expr):
        raise Unknown
    tree = ast.parse(expr.strip(), mode="eval")

    def ev(node) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else (~v if isinstance(node.op, ast.Invert) else v)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            op = node.op
            if isinstance(op, ast.Add):
                r = a + b
            elif isinstance(op, ast.Sub):
                r = a - b
            elif isinstance(op, ast.Mult):
                r = a * b
            elif isinstance(op, (ast.Div, ast.Mod)):
                if b == 0:
                    raise Unknown
                q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
                r = q if isinstance(op, ast.Div) else a - q * b
            elif isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                r = a & b if isinstance(op, ast.BitAnd) else (a | b if isinstance(op, ast.BitOr) else a ^ b)
            else:
                raise Unknown
            if not -(1 << 63) <= r < (1 << 63):
                raise Unknown
            return r
        raise Unknown

    return ev(tree)


def _flag_defs(flags: str) -> List[str]:
    return [m.group(1) + ("=" + m.group(2) if m.group(2) else "") for m in _DEFINE_FLAG.finditer(flags)]


class _Condition:
    """One evaluation of an ``if()`` argument list (CMake's reduction passes), with the
    possibly-multi-valued variables fixed in ``fixed`` (_Choose asks for the next one).  A test
    whose operand is unknown is None and ``NOT``/``AND``/``OR`` are Kleene's (the passes' shape
    depends on the keywords only, never on values); a shape CMake rejects raises Unknown."""

    def __init__(self, interp: Interpreter, st: State, fixed: Dict[str, Optional[str]]) -> None:
        self.interp, self.st, self.fixed = interp, st, fixed

    def var(self, name: str) -> Optional[str]:
        if name in self.fixed:
            return self.fixed[name]
        value = self.st.get(name)
        if value is None:
            raise Unknown
        if len(value) == 1:
            return next(iter(value))
        raise _Choose(name, value)

    def defined(self, name: str) -> bool:
        key = "\0defined:" + name
        if key in self.fixed:
            return self.fixed[key] == "1"
        if name.startswith("ENV{"):
            raise Unknown
        if name.startswith("CACHE{") and name.endswith("}"):
            value = self.st.cached(name[6:-1])
        else:
            value = self.st.get(name)
        if value is None:
            raise Unknown
        outcomes = {v is not None for v in value}
        if len(outcomes) == 1:
            return outcomes.pop()
        raise _Choose(key, frozenset({"1", "0"}))

    def evaluate(self, tokens: List[Tuple[str, bool]]) -> Optional[bool]:
        return self._reduce(self._parens(list(tokens)))

    def _kw(self, item: object, *words: str) -> bool:
        return isinstance(item, tuple) and not item[1] and item[0] in words

    def _parens(self, items: List[object]) -> List[object]:
        out: List[object] = []
        stack: List[List[object]] = []
        for it in items:
            if self._kw(it, "("):
                stack.append(out)
                out = []
            elif self._kw(it, ")"):
                if not stack:
                    raise Unknown
                inner = _Truth(self._reduce(out))
                out = stack.pop()
                out.append(inner)
            else:
                out.append(it)
        if stack:
            raise Unknown
        return out

    def _is_keyword(self, item: object) -> bool:
        return isinstance(item, tuple) and not item[1] and item[0] in _KEYWORDS

    def _reduce(self, items: List[object]) -> Optional[bool]:
        items = self._unary(items)
        items = self._binary(items)
        items = self._not(items)
        items = self._andor(items)
        if len(items) != 1:
            raise Unknown
        return self._bool(items[0])

    def _operand(self, item: object) -> Tuple[str, bool]:
        if isinstance(item, _Truth) or self._is_keyword(item):
            raise Unknown
        return item  # type: ignore[return-value]

    def _leaf(self, compute: Callable[[], bool]) -> "_Truth":
        try:
            return _Truth(compute())
        except Unknown:
            return _Truth(None)

    def _unary(self, items: List[object]) -> List[object]:
        out: List[object] = []
        k = 0
        while k < len(items):
            it = items[k]
            if self._kw(it, *_UNARY) and k + 1 < len(items):
                text, _ = self._operand(items[k + 1])
                out.append(self._leaf(lambda: self._test(it[0], text)))  # type: ignore[index]
                k += 2
                continue
            out.append(it)
            k += 1
        return out

    def _test(self, op: str, arg: str) -> bool:
        if op == "DEFINED":
            return self.defined(arg)
        if op == "IS_ABSOLUTE":
            return arg.startswith("/") or arg.startswith("~")
        if op in ("EXISTS", "IS_DIRECTORY"):
            if not arg.startswith("/") or not self.interp._in_tree(arg):
                raise Unknown
            return os.path.isdir(arg) if op == "IS_DIRECTORY" else os.path.exists(arg)
        if op == "COMMAND":
            if isinstance(self.st.funcs.get(arg.lower()), _Def) or hasattr(self.interp, "_c_" + arg.lower()):
                return True
            raise Unknown
        if op == "TARGET":
            if self.st.items(("targets",)).get(arg):
                return True
            raise Unknown
        raise Unknown

    def _value(self, item: object) -> str:
        text, quoted = self._operand(item)
        if quoted:
            return text
        value = self.var(text)
        return text if value is None else value

    def _binary(self, items: List[object]) -> List[object]:
        out: List[object] = []
        k = 0
        while k < len(items):
            if k + 2 < len(items) and self._kw(items[k + 1], *_BINARY):
                op = items[k + 1][0]  # type: ignore[index]
                left, right = items[k], items[k + 2]
                self._operand(left)
                self._operand(right)
                out.append(self._leaf(lambda: self._compare(op, left, right)))
                k += 3
                continue
            out.append(items[k])
            k += 1
        return out

    def _compare(self, op: str, left: object, right: object) -> bool:
        if op == "MATCHES":
            lhs = self._value(left)
            rx = to_regex(self._operand(right)[0])
            return rx.search(lhs) is not None
        if op == "IN_LIST":
            lhs = self._value(left)
            name, quoted = self._operand(right)
            value = self.var(name)
            if value is None:
                return False
            return lhs in split_list(value)
        if op in ("IS_NEWER_THAN", "PATH_EQUAL"):
            raise Unknown
        a, b = self._value(left), self._value(right)
        if op in ("LESS", "GREATER", "EQUAL", "LESS_EQUAL", "GREATER_EQUAL"):
            x, y = _number(a), _number(b)
            if x is None or y is None:
                return False
            return {
                "LESS": x < y,
                "GREATER": x > y,
                "EQUAL": x == y,
                "LESS_EQUAL": x <= y,
                "GREATER_EQUAL": x >= y,
            }[op]
        if op.startswith("VERSION_"):
            va, vb = _version(a), _version(b)
            return {
                "VERSION_LESS": va < vb,
                "VERSION_GREATER": va > vb,
                "VERSION_EQUAL": va == vb,
                "VERSION_LESS_EQUAL": va <= vb,
                "VERSION_GREATER_EQUAL": va >= vb,
            }[op]
        ea, eb = a.encode(), b.encode()
        return {
            "STREQUAL": ea == eb,
            "STRLESS": ea < eb,
            "STRGREATER": ea > eb,
            "STRLESS_EQUAL": ea <= eb,
            "STRGREATER_EQUAL": ea >= eb,
        }[op]

    def _not(self, items: List[object]) -> List[object]:
        # right to left; ``NOT NOT`` and ``NOT <keyword>`` (which CMake rejects): Unknown
        out: List[object] = []
        k = len(items) - 1
        while k >= 0:
            it = items[k]
            if self._kw(it, "NOT") and out and (k == 0 or not self._kw(items[k - 1], "NOT")):
                nxt = out.pop()
                if self._is_keyword(nxt):
                    raise Unknown
                value = self._bool(nxt)
                out.append(_Truth(None if value is None else not value))
            elif self._kw(it, "NOT"):
                raise Unknown
            else:
                out.append(it)
            k -= 1
        out.reverse()
        return out

    def _andor(self, items: List[object]) -> List[object]:
        """``AND`` and ``OR`` have one precedence in CMake's implementation: passes from the left,
        each reducing ``x OP y`` and going on after the result, until none reduces."""
        items = list(items)
        changed = True
        while changed:
            changed = False
            k = 0
            while k + 2 < len(items):
                op = items[k + 1]
                if self._kw(op, "AND", "OR"):
                    left, right = items[k], items[k + 2]
                    if self._is_keyword(left) or self._is_keyword(right):
                        raise Unknown
                    a, b = self._bool(left), self._bool(right)
                    if op[0] == "AND":  # type: ignore[index]
                        r = False if a is False or b is False else (None if a is None or b is None else True)
                    else:
                        r = True if a is True or b is True else (None if a is None or b is None else False)
                    items[k : k + 3] = [_Truth(r)]
                    changed = True
                k += 1
        return items

    def _bool(self, item: object) -> Optional[bool]:
        if isinstance(item, _Truth):
            return item.value
        text, quoted = self._operand(item)
        try:
            constant = _constant(text)
            if constant is not None:
                return constant
            if quoted:
                return False
            return not is_off(self.var(text))
        except Unknown:
            return None


class _Truth:
    """A reduced test: True, False or None (unknown)."""

    __slots__ = ("value",)

    def __init__(self, value: Optional[bool]) -> None:
        self.value = value


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
    lang = _LANG_OF.get(ext, "CXX")
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
    out = []
    for option in options:
        defs: Set[Tuple[str, str]] = set()
        for word in option.split(";") if not flags else [option]:
            if flags:
                defs.update(tuple((d.split("=", 1) + ["1"])[:2]) for d in _flag_defs(word))  # type: ignore[misc]
                continue
            word = word[2:] if word.startswith("-D") else word
            m = re.fullmatch(r"([A-Za-z_]\w*)(?:=(.*))?", word, re.S)
            if m:
                defs.add((m.group(1), m.group(2) if m.group(2) is not None else "1"))
            elif word:
                return None
        out.append(frozenset(tuple(d) for d in defs))  # type: ignore[misc]
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
            values = {table[n][1] for _, table, _ in rows if n in table}
            out.append((n, definite, values.pop() if len(values) == 1 else None))
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
        from rocm_lint.build.cmake import _CMAKE_CUDA_VAR, _CMAKE_ROCM_VAR

        m = _REF.match(word)
        name = m.group(1) if m else word
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return
        if _CMAKE_ROCM_VAR.fullmatch(name):
            self.named_rocm.add(name)
        elif _CMAKE_CUDA_VAR.fullmatch(name):
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
    return ProjectFacts(os.path.abspath(root), switches, scenarios, tuple(sorted(files)))
