"""The values of the CMake interpreter (``rocm_lint.build.cmake_eval``): what an argument, a
variable and a state are, and the pure semantics the commands share — CMake's constants and
numbers (``strtod``/``sscanf`` as ``if()`` reads them), its regular expressions and lists, the
syntax tree of a file, the abstract state with its join, generator expressions, ``math(EXPR)``.

A variable's value is a set of possible strings (``None`` in it: not defined) or unknown
(``None``); a state is copied on write and two states join into one that holds whatever either
may hold (a definition made on one path only is *maybe*)."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

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


class Choose(Exception):
    def __init__(self, name: str, values: FrozenSet[Optional[str]]) -> None:
        self.name, self.values = name, values


class UnknownArg:
    """An argument whose value is unknown.  ``tainted``: it reads a variable the program itself
    writes (a source list may hide in it); an untainted one only reads what comes from outside
    (a compiler id, a found package's path), which names no source of the tree."""

    __slots__ = ("many", "tainted")

    def __init__(self, many: bool, tainted: bool = True) -> None:
        self.many = many
        self.tainted = tainted

    def __repr__(self) -> str:
        return ("<?*>" if self.many else "<?>") + ("t" if self.tainted else "")


UNKNOWN_ONE = UnknownArg(False)  # exactly one argument, value unknown
UNKNOWN_MANY = UnknownArg(True)  # any number of arguments
UNKNOWN_ARGS = {(m, t): UnknownArg(m, t) for m in (False, True) for t in (False, True)}
PLAIN_TEXT = re.compile(r"[^\\$]*")
REFERENCE_OPEN = re.compile(r"\$(ENV|CACHE)?\{")
NAMES_READ = re.compile(r"\$(?:ENV|CACHE)?\{([^${}]*)\}")


def any_tainted(items: Sequence[Item]) -> bool:
    return any(isinstance(a, UnknownArg) and a.tainted for a in items)


Item = Union[str, UnknownArg]


def all_known(items: Sequence[Item]) -> bool:
    return not any(isinstance(a, UnknownArg) for a in items)


# -- truth -------------------------------------------------------------------------------------------
TRUE_CONSTANTS = frozenset({"1", "ON", "YES", "TRUE", "Y"})
FALSE_CONSTANTS = frozenset({"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"})
_DECIMAL = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_STRTOD = re.compile(r"\s*" + _DECIMAL)  # fullmatch
_SPECIAL = re.compile(r"\s*[+-]?(?:inf(?:inity)?|nan(?:\(\w*\))?)\Z", re.I)
_HEXISH = re.compile(r"\s*[+-]?0[xX]")
_PREFIX = re.compile(r"\s*" + _DECIMAL)


def is_off(value: Optional[str]) -> bool:
    return value is None or value.upper() in FALSE_CONSTANTS or value.upper().endswith("-NOTFOUND")


def truth_constant(value: str) -> Optional[bool]:
    """True/False for CMake's constants (and numbers), None for anything else (a name)."""
    up = value.upper()
    if up in TRUE_CONSTANTS:
        return True
    if up in FALSE_CONSTANTS or up.endswith("-NOTFOUND"):
        return False
    if _STRTOD.fullmatch(value) or _SPECIAL.match(value):
        return float(value) != 0  # strtod reads the whole string: C's conversion to bool
    if _HEXISH.match(value):
        raise Unknown  # a hexadecimal float: not modelled
    return None


def scanf_number(value: str) -> Optional[float]:
    """sscanf("%lg"): the number a prefix reads, None when none; Unknown where unsure."""
    if _STRTOD.fullmatch(value):
        return float(value)
    m = _PREFIX.match(value)
    if m:
        if value[m.end() :][:1] in ("e", "E", ".", "x", "X"):
            raise Unknown
        return float(m.group(0))
    if _HEXISH.match(value) or re.match(r"\s*[+-]?(?:inf|nan)", value, re.I):
        raise Unknown
    return None


def version_key(value: str) -> Tuple[int, ...]:
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


_OPENERS = {
    "if": "endif",
    "foreach": "endforeach",
    "while": "endwhile",
    "function": "endfunction",
    "macro": "endmacro",
    "block": "endblock",
}
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


def arg_text(cmd: Cmd, a: Arg) -> Tuple[str, str]:
    """(kind, text): "bracket" (literal), "quoted" or "unquoted" with escapes and references."""
    first = cmd.text[a.start] if a.start < len(cmd.text) else ""
    if a.quoted and first == "[":
        return "bracket", a.value
    if a.quoted:
        end = a.end - 1 if a.end - 1 > a.start and cmd.text[a.end - 1] == '"' else a.end
        return "quoted", cmd.text[a.start + 1 : end]
    return "unquoted", cmd.text[a.start : a.end]


# -- state -------------------------------------------------------------------------------------------
AMBIGUOUS = object()  # a command defined differently on two joined paths


def join_value(a: Value, b: Value) -> Value:
    if a is None or b is None:
        return None
    if a is b:
        return a
    out = a | b
    return out if len(out) <= MAX_VALUES else None


def join_items(a: Dict[str, bool], b: Dict[str, bool]) -> Dict[str, bool]:
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
                merged[name] = join_value(sa.get(name, UNDEF_VALUE), sb.get(name, UNDEF_VALUE))
    for name in {name for name, _ in a.cache.items() ^ b.cache.items()}:
        # an entry one path never declares is not defined there (the default configure)
        out.cache[name] = join_value(a.cache.get(name, UNDEF_VALUE), b.cache.get(name, UNDEF_VALUE))
    if a.funcs is not b.funcs:
        for name in a.funcs.keys() | b.funcs.keys():
            fa, fb = a.funcs.get(name), b.funcs.get(name)
            if fa is not fb:
                out.funcs[name] = AMBIGUOUS
    empty: Dict[str, bool] = {}
    for key in a.props.keys() | b.props.keys():
        pa, pb = a.props.get(key, empty), b.props.get(key, empty)
        if pa is not pb:
            out.props[key] = join_items(pa, pb)
    out.owned = set()
    for flag in a.flags.keys() | b.flags.keys():
        va, vb = a.flags.get(flag), b.flags.get(flag)
        out.flags[flag] = va if va == vb else (True if flag == "lost" else None)
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
    i, n = 0, len(text)
    lit: List[str] = []
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
        langs: Set[str] = set()
        for v in args[0]:
            langs.update(x.strip() for x in v.split(","))
        return frozenset({"1" if language in langs else "0"})
    raise Unknown


# -- the interpreter ---------------------------------------------------------------------------------
DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*")  # fullmatch
SOURCE_FILE = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c\+\+|c|hip|mm|m|f90|f)$", re.I)
LANGUAGE_OF = {".c": "C", ".cu": "CUDA", ".hip": "HIP", ".m": "OBJC", ".mm": "OBJCXX"}
UNARY_TESTS = frozenset(
    {"EXISTS", "COMMAND", "DEFINED", "POLICY", "TARGET", "TEST", "IS_DIRECTORY", "IS_SYMLINK", "IS_ABSOLUTE"}
)
UNARY_TESTS |= {"IS_READABLE", "IS_WRITABLE", "IS_EXECUTABLE"}
BINARY_TESTS = frozenset(
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
CONDITION_KEYWORDS = UNARY_TESTS | BINARY_TESTS | {"NOT", "AND", "OR", "(", ")"}
# commands that change nothing the facts read (their variables aside: see _havoc)
NO_EFFECT = frozenset(
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
OUTPUT_KEYWORDS = frozenset(
    {"OUTPUT_VARIABLE", "RESULT_VARIABLE", "ERROR_VARIABLE", "RESULTS_VARIABLE", "COMPILE_OUTPUT_VARIABLE"}
)
HIP_PACKAGES = frozenset({"hip", "rocm", "hipcub", "rocprim", "hipblas", "rocblas", "hiprand", "rocthrust"})
SCOPE_WORDS = frozenset({"PUBLIC", "PRIVATE", "INTERFACE", "BEFORE", "AFTER", "SYSTEM"})
TARGET_WORDS = frozenset(
    {"STATIC", "SHARED", "MODULE", "OBJECT", "EXCLUDE_FROM_ALL", "WIN32", "MACOSX_BUNDLE", "GLOBAL"}
)


@dataclass
class CommandDef:
    kind: str
    name: str
    params: Tuple[str, ...]
    body: list
    path: str


STRING_OUTPUT = {
    "APPEND": 1,
    "PREPEND": 1,
    "CONCAT": 1,
    "JOIN": 2,
    "TOLOWER": 2,
    "TOUPPER": 2,
    "LENGTH": 2,
    "STRIP": 2,
    "REPLACE": 3,
    "FIND": 3,
    "SUBSTRING": 4,
    "COMPARE": 4,
    "REGEX": 4,
}
FIRST_WRITES = frozenset(
    {"set", "unset", "option", "separate_arguments", "foreach", "get_filename_component", "get_property"}
) | {"get_target_property", "get_cmake_property", "get_directory_property", "get_source_file_property"}
FIRST_WRITES |= {"find_program", "find_library", "find_path", "find_file", "cmake_parse_arguments"}


def write_positions(cmd: Cmd) -> Tuple[int, ...]:
    """The argument positions that name the variable a command writes (a computed one there
    may write any variable); a call of the project's own commands writes through its names."""
    name = cmd.name
    if name in FIRST_WRITES:
        return (0,)
    if name in ("list", "math", "file"):
        return (1, len(cmd.args) - 1) if name == "list" else (1,)
    if name == "string" and cmd.args:
        out = STRING_OUTPUT.get(cmd.args[0].value)
        return (out, 3) if out is not None else tuple(range(len(cmd.args)))
    return ()


def give_up():
    raise Unknown


def math_expr(expr: str) -> int:
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


def flag_definitions(flags: str) -> List[str]:
    return [m.group(1) + ("=" + m.group(2) if m.group(2) else "") for m in DEFINE_FLAG.finditer(flags)]
