"""A build script evaluated per platform: what ``setup.py`` (or a module that builds C++ at run
time) compiles and defines on an NVIDIA, a ROCm and a CPU-only machine.

An abstract interpreter over the script's ``ast`` (nothing is imported or run), once per
scenario:

=========  ===================  ===================  ==================  =========  =========
scenario   ``torch.version.hip`` ``torch.version.cuda`` ``IS_HIP_EXTENSION`` ``ROCM_HOME`` ``CUDA_HOME``
=========  ===================  ===================  ==================  =========  =========
NVIDIA     None                 set                  False               None       set
ROCm       set                  None                 True                set        None
CPU-only   None                 None                 False               None       None
=========  ===================  ===================  ==================  =========  =========

(``torch.cuda.is_available()`` is True on both GPU machines, False on the CPU-only one.)  Values
are Python constants, lists/tuples/dicts whose items are *definitely* or *maybe* present (and
which may hold unknown others: "open"), paths (``os.path.join``, ``pathlib.Path``), globs
evaluated against the tree, the script's own functions (inlined at their calls, depth-bounded;
one nobody in the module calls runs once as "maybe", with unknown arguments), and extension
objects (``CUDAExtension``/``CppExtension``/``Extension`` ...).  A condition the scenario does not
decide runs both branches and joins them: what only one branch does is "maybe".  Anything else
is unknown.

What comes out, per scenario: each source compiled definitely / maybe / never (the sources of the
extensions that reach ``setup(ext_modules=...)``, or of every extension built where no ``setup``
call says which, and those ``cpp_extension.load()`` compiles), and each macro defined
(``define_macros``, ``-DX`` in ``extra_compile_args`` (list, or dict keys ``cxx``/``nvcc``),
``extra_cflags``, ``extra_cuda_cflags``).  Across the three scenarios that is a ``Worlds``
(``rocm_lint.build.logic``) per source and per macro.  Where the script builds nothing we can
follow (no extension, or one whose sources are unknown), the paths and ``-D`` flags the script
*writes* in each scenario stand in (a path written only where ROCm goes is ROCm's), as maybe
where an extension is unknown.  A script the interpreter gives up on (too many steps) gives no
fact at all.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from rocm_lint.build.cmake import source_pattern
from rocm_lint.build.logic import Worlds

__all__ = ["Evaluation", "evaluate", "SCENARIOS"]

Tri = Optional[bool]
SCENARIOS = ("nvidia", "rocm", "cpu")  # the order of a Worlds triple
MAX_STEPS = 200_000  # expressions and statements evaluated per scenario
MAX_CALL_DEPTH = 8
MAX_ITEMS = 4096  # items of one list, files of one glob
MAX_ALTERNATIVES = 16
MAX_GLOB_VISITS = 20_000  # directory entries one glob may look at


class _Special:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNK = _Special("UNK")  # any value
TRUTHY = _Special("TRUTHY")  # some true value (a version string, an install directory)
FALSY = _Special("FALSY")  # some false value (``x and y`` where one of them is false)
_ABSENT = _Special("ABSENT")
_UNHANDLED = _Special("UNHANDLED")  # a library call ``library`` does not model


@dataclass(frozen=True)
class Seq:
    """A list, tuple or set: items with "definitely present" flags; ``open``: may hold others."""

    kind: str
    items: Tuple[Tuple[object, bool], ...] = ()
    open: bool = False


@dataclass(frozen=True)
class DictV:
    items: Tuple[Tuple[object, object, bool], ...] = ()  # (key, value, definitely present)
    open: bool = False


@dataclass(frozen=True)
class Mod:
    """An imported name: ``torch.utils.cpp_extension.CUDAExtension``."""

    name: str


@dataclass(frozen=True)
class Func:
    node: Union[ast.FunctionDef, ast.AsyncFunctionDef]
    defaults: Tuple[object, ...]
    kw_defaults: Tuple[object, ...]
    closure: Optional[Dict[str, object]] = field(default=None, compare=False)  # the definer's names


@dataclass(frozen=True)
class Method:
    """A method of a value read from an expression (``flags.append``): (receiver, its lvalue, name)."""

    receiver: object
    target: Optional[ast.AST]
    name: str


@dataclass(frozen=True)
class Build:
    ident: int
    sources: object
    flags: Tuple[object, ...]  # define_macros / extra_compile_args / extra_*cflags values


@dataclass(frozen=True)
class Alt:
    options: FrozenSet[object]


@dataclass(frozen=True)
class PathV:
    path: str


_ATOMS: Dict[str, Tuple[object, object, object]] = {
    "torch.version.hip": (None, TRUTHY, None),
    "torch.version.cuda": (TRUTHY, None, None),
    "torch.utils.cpp_extension.IS_HIP_EXTENSION": (False, True, False),
    "torch.utils.cpp_extension.ROCM_HOME": (None, TRUTHY, None),
    "torch.utils.cpp_extension.CUDA_HOME": (TRUTHY, None, None),
}
_ATOM_CALLS: Dict[str, Tuple[object, object, object]] = {"torch.cuda.is_available": (True, True, False)}
# names a script may use without importing them (a star import of cpp_extension)
_BARE_ATOMS = {name.rsplit(".", 1)[1]: value for name, value in _ATOMS.items() if "cpp_extension" in name}
_ROCM_NAME = re.compile(r"(?:^|_)(?:rocm|hip)(?:_|$)", re.I)
_NEGATIVE_NAME = re.compile(r"(?:^|_)(?:skip|disable|disabled|no|not|without)(?:_|$)", re.I)
_DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)(?:=(\S*))?")
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_CMAKE_BOOLEANS = frozenset({"ON", "OFF", "TRUE", "FALSE", "YES", "NO"})
_FLAG_KEYWORDS = frozenset({"define_macros", "extra_compile_args", "extra_cflags", "extra_cuda_cflags"})
_BUILTINS = frozenset(
    "len list tuple set sorted str bool int print any all isinstance dict reversed enumerate zip "
    "range filter map open min max sum exit quit getattr hasattr".split()
)
_EXITS = frozenset({"sys.exit", "builtins.exit", "builtins.quit", "os._exit"})


@dataclass
class Evaluation:
    """Per source (relative glob components) and per macro ``(name, value)``: where it is
    compiled / defined; ``evidence``: the script reads a ROCm test."""

    sources: Dict[Tuple[str, ...], Worlds]
    macros: Dict[Tuple[str, str], Worlds]
    evidence: bool


# -- values ------------------------------------------------------------------------------------------
def truth(v: object) -> Tri:
    if v is UNK:
        return None
    if v is TRUTHY:
        return True
    if v is FALSY:
        return False
    if isinstance(v, Alt):
        ts = {truth(o) for o in v.options}
        return ts.pop() if len(ts) == 1 else None
    if isinstance(v, Seq):
        if any(d for _, d in v.items):
            return True
        return False if not v.items and not v.open else None
    if isinstance(v, DictV):
        if any(d for _, _, d in v.items):
            return True
        return False if not v.items and not v.open else None
    if isinstance(v, (Mod, Func, Method, Build, PathV)):
        return True
    try:
        return bool(v)
    except Exception:  # noqa: BLE001 - a constant that refuses bool()
        return None


def alternatives(v: object) -> Tuple[object, ...]:
    return tuple(v.options) if isinstance(v, Alt) else (v,)


def join(a: object, b: object) -> object:
    """The value that is ``a`` on one path and ``b`` on another."""
    if a is _ABSENT:
        return b
    if b is _ABSENT:
        return a
    if _same(a, b):
        return a
    if a is UNK or b is UNK:
        return UNK
    if isinstance(a, Seq) and isinstance(b, Seq) and a.kind == b.kind:
        return _join_seq(a, b)
    if isinstance(a, DictV) and isinstance(b, DictV):
        keys = [k for k, _, _ in a.items] + [k for k, _, _ in b.items if not _has_key(a, k)]
        items = []
        for k in keys:
            va, da = _dict_get(a, k)
            vb, db = _dict_get(b, k)
            items.append((k, join(va, vb), da and db))
        return DictV(tuple(items), a.open or b.open)
    options = set(alternatives(a)) | set(alternatives(b))
    if len(options) > MAX_ALTERNATIVES:
        return UNK
    return Alt(frozenset(options))


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _join_seq(a: Seq, b: Seq) -> Seq:
    out: List[Tuple[object, bool]] = []
    rest = list(b.items)
    for v, d in a.items:
        for k, (w, e) in enumerate(rest):
            if _same(v, w):
                out.append((v, d and e))
                del rest[k]
                break
        else:
            out.append((v, False))
    out.extend((w, False) for w, _ in rest)
    return Seq(a.kind, tuple(out), a.open or b.open)


def _has_key(d: DictV, key: object) -> bool:
    return any(_same(k, key) for k, _, _ in d.items)


def _dict_get(d: DictV, key: object) -> Tuple[object, bool]:
    for k, v, present in d.items:
        if _same(k, key):
            return v, present
    return _ABSENT, False


def _seq_of(v: object) -> Optional[Seq]:
    """``v`` as a sequence of its items, or None when it is not iterable as one we know."""
    if isinstance(v, Seq):
        return v
    if isinstance(v, DictV):
        return Seq("list", tuple((k, d) for k, _, d in v.items), v.open)
    if isinstance(v, Alt):
        seqs = [_seq_of(o) for o in v.options]
        if any(s is None for s in seqs):
            return None
        out = seqs[0]
        for s in seqs[1:]:
            out = _join_seq(Seq("list", out.items, out.open), Seq("list", s.items, s.open))  # type: ignore[union-attr]
        return Seq("list", out.items, out.open)  # type: ignore[union-attr]
    if isinstance(v, str):
        return Seq("list", tuple((c, True) for c in v[:MAX_ITEMS]))
    return None


def _extend(a: Seq, b: object, definite: bool = True) -> Seq:
    items = _seq_of(b)
    if items is None:
        return Seq(a.kind, a.items, True)
    extra = tuple((v, d and definite) for v, d in items.items)
    if len(a.items) + len(extra) > MAX_ITEMS:
        return Seq(a.kind, a.items, True)
    return Seq(a.kind, a.items + extra, a.open or items.open)


def _text(v: object) -> Optional[str]:
    if isinstance(v, str):
        return v
    if isinstance(v, PathV):
        return v.path
    return None


# -- one scenario ------------------------------------------------------------------------------------
class _GiveUp(Exception):
    pass


class _Frame:
    def __init__(
        self, local: Dict[str, object], func: Optional[ast.AST], closure: Optional[Dict[str, object]] = None
    ) -> None:
        self.local = local
        self.func = func
        self.closure = closure
        self.globals_declared: Set[str] = set()
        self.returns: List[object] = []
        self.returned = False  # some path returned
        self.raised = False  # some path raised


class _Run:
    def __init__(
        self, tree: ast.Module, path: Optional[str], scenario: int, script: bool, shared: "_Shared"
    ) -> None:
        self.shared = shared
        self.tree = tree
        self.scenario = scenario
        self.base = os.path.dirname(os.path.abspath(path)) if path else None
        self.file = os.path.abspath(path) if path else "setup.py"
        self.script = script
        self.globals: Dict[str, object] = {"__file__": self.file, "__name__": "__main__" if script else UNK}
        self.frames: List[_Frame] = [_Frame(self.globals, None)]
        self.alive: Tri = True
        self.maybe = 0
        self.steps = 0
        self.builds: Dict[int, Tuple[Build, Tri]] = {}
        self.compiled: List[Tuple[Build, Tri]] = []  # by load(), or reaching setup(ext_modules=)
        self.setup_calls: List[Tri] = []
        self.setup_open = False
        self.open = False  # something the builds depend on was not followed
        self.mentions: Dict[Tuple[str, ...], Tri] = {}
        self.macro_mentions: Dict[Tuple[str, str], Tri] = {}
        self.evidence = False
        self.evaluated: Set[int] = set()  # ids of function bodies run
        self.bailed: Set[int] = set()
        self.stack: List[int] = []
        self.loops: List[Tuple[List[Tuple[Dict[str, object], Dict[str, object]]], List]] = []
        self.statement: Optional[ast.stmt] = None  # the simple statement being run
        self.macro_target = False
        self.names_defined = shared.stored

    # -- bookkeeping -------------------------------------------------------------------------------
    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _GiveUp()

    def certainty(self) -> Tri:
        if self.alive is False:
            return False
        return None if self.maybe or self.alive is None else True

    def _note(self, table: Dict, key: object, cert: Tri) -> None:
        if cert is False:
            return
        old = table.get(key, False)
        table[key] = True if (old is True or cert is True) else None

    def relative(self, text: str) -> Optional[Tuple[str, ...]]:
        if "\n" in text or len(text) > 4096:
            return None
        if os.path.isabs(text):
            if self.base is None:
                return None
            norm = os.path.normpath(text)
            if not norm.startswith(self.base + os.sep):
                return None
            text = norm[len(self.base) + 1 :]
        else:
            text = os.path.normpath(text) if text else text
        return source_pattern(text.replace(os.sep, "/"))

    def mention(self, v: object) -> None:
        """A value the script writes: a source path among its strings, ``-DX`` flags."""
        cert = self.certainty()
        if cert is False:
            return
        for option in alternatives(v):
            text = _text(option)
            if text is None:
                continue
            pattern = self.relative(text)
            if pattern is not None:
                self._note(self.mentions, pattern, cert if not isinstance(v, Alt) else None)
            if text.lstrip().startswith("-D") and not self.in_cmake_statement():
                for m in _DEFINE_FLAG.finditer(text):
                    if (m.group(2) or "").upper() not in _CMAKE_BOOLEANS:  # -DUSE_ROCM=ON: CMake's
                        self._note(self.macro_mentions, (m.group(1), m.group(2) or "1"), cert)

    def in_cmake_statement(self) -> bool:
        """Does the statement being run build a CMake command line (its ``-D`` are CMake's)?"""
        s = self.statement
        if s is None:
            return False
        found = self.shared.cmake.get(id(s))
        if found is None:
            found = self.shared.cmake[id(s)] = _mentions_cmake(s)
        return found

    # -- environment -------------------------------------------------------------------------------
    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def snapshot(self):
        return dict(self.frame.local), dict(self.globals), self.alive

    def restore(self, snap) -> None:
        local, glob, alive = snap
        self.frame.local.clear()
        self.frame.local.update(local)
        if self.frame.local is not self.globals:
            self.globals.clear()
            self.globals.update(glob)
        self.alive = alive

    def join_snapshots(self, snaps) -> None:
        """Continue from whichever of ``snaps`` happened (an undecided choice)."""
        live = [s for s in snaps if s[2] is not False]
        if not live:
            self.restore(snaps[0])
            self.alive = False
            return
        local, glob = dict(live[0][0]), dict(live[0][1])
        for other in live[1:]:
            for d, od in ((local, other[0]), (glob, other[1])):
                for key in set(d) | set(od):
                    d[key] = join(d.get(key, _ABSENT), od.get(key, _ABSENT))
        alives = {s[2] for s in snaps}
        self.restore((local, glob, alives.pop() if len(alives) == 1 else None))

    def lookup(self, name: str) -> object:
        frame = self.frame
        if name in frame.local and name not in frame.globals_declared:
            return frame.local[name]
        if frame.closure is not None and name in frame.closure:
            return frame.closure[name]
        if name in self.globals:
            return self.globals[name]
        if name in _BARE_ATOMS and name not in self.names_defined:
            return self.atom("torch.utils.cpp_extension." + name)
        if name in _BUILTINS:
            return Mod("builtins." + name)
        if name not in self.names_defined and _ROCM_NAME.search(name) and not _NEGATIVE_NAME.search(name):
            self.evidence = True  # an imported ROCm flag (``from .env import IS_ROCM``)
            return (False, True, False)[self.scenario]
        return UNK

    def assign_name(self, name: str, value: object) -> None:
        frame = self.frame
        if name in frame.globals_declared:
            self.globals[name] = value
        else:
            frame.local[name] = value

    def atom(self, name: str) -> object:
        if name in _ATOMS:
            if "hip" in name.lower() or "ROCM" in name:
                self.evidence = True
            return _ATOMS[name][self.scenario]
        return Mod(name)

    # -- statements --------------------------------------------------------------------------------
    def block(self, stmts: Sequence[ast.stmt]) -> None:
        for stmt in stmts:
            if self.alive is False:
                return
            self.stmt(stmt)

    def stmt(self, s: ast.stmt) -> None:
        self.tick()
        if not isinstance(s, (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.FunctionDef, ast.ClassDef)):
            self.statement = s
        if isinstance(s, ast.Expr):
            self.expr(s.value)
        elif isinstance(s, ast.Assign):
            self.macro_target = any(_holds_macro(t) for t in s.targets)
            value = self.expr(s.value)
            self.macro_target = False
            for target in s.targets:
                self.assign(target, value)
        elif isinstance(s, ast.AugAssign):
            self.macro_target = _holds_macro(s.target)
            right = self.expr(s.value)
            self.macro_target = False
            left = self.expr(_load(s.target))
            self.assign(s.target, self.binop(s.op, left, right, inplace=True))
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.expr(s.value))
        elif isinstance(s, ast.If):
            self.branch(s.test, lambda: self.block(s.body), lambda: self.block(s.orelse))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.for_loop(s)
        elif isinstance(s, ast.While):
            self.loop_unknown(lambda: self.block(s.body), s.orelse, test=s.test)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, UNK)
            self.block(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.try_stmt(s)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = tuple(self.expr(d) for d in s.args.defaults)
            kw = tuple(self.expr(d) if d is not None else _ABSENT for d in s.args.kw_defaults)
            closure = self.frame.local if self.frame.func is not None else None
            self.assign_name(s.name, Func(s, defaults, kw, closure))
        elif isinstance(s, ast.ClassDef):
            self.assign_name(s.name, UNK)  # its methods run at the end, as "maybe"
        elif isinstance(s, ast.Return):
            value = self.expr(s.value) if s.value is not None else None
            if self.certainty() is not False:
                self.frame.returns.append(value)
                self.frame.returned = True
            self.alive = False
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                self.expr(s.exc)
            self.frame.raised = True
            self.alive = False
        elif isinstance(s, ast.Assert):
            holds = truth(self.expr(s.test))
            if holds is False:
                self.frame.raised = True
                self.alive = False
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            self.import_stmt(s)
        elif isinstance(s, ast.Global):
            self.frame.globals_declared.update(s.names)
        elif isinstance(s, (ast.Break, ast.Continue)):
            if self.loops:
                (self.loops[-1][0] if isinstance(s, ast.Continue) else self.loops[-1][1]).append(
                    self.snapshot()
                )
            self.alive = False
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    self.frame.local.pop(t.id, None)
        elif isinstance(s, ast.Pass):
            pass
        else:  # match, nonlocal, ...: what it does is unknown
            self.scan(s)

    def branch(self, test: ast.AST, yes: Callable[[], None], no: Callable[[], None]) -> None:
        t = truth(self.expr(test))
        if t is True:
            yes()
        elif t is False:
            no()
        else:
            pre = self.snapshot()
            self.maybe += 1
            yes()
            first = self.snapshot()
            self.restore(pre)
            no()
            second = self.snapshot()
            self.maybe -= 1
            self.join_snapshots([first, second])

    def for_loop(self, s: Union[ast.For, ast.AsyncFor]) -> None:
        items = _seq_of(self.expr(s.iter))
        if items is None or items.open or len(items.items) > 256 or not all(d for _, d in items.items):
            element: object = UNK
            if items is not None and not items.open and items.items:
                element = items.items[0][0]
                for v, _ in items.items[1:]:
                    element = join(element, v)

            def body() -> None:
                self.assign(s.target, element)
                self.block(s.body)

            self.loop_unknown(body, s.orelse)
            return
        breaks: List = []
        for value, _ in items.items:
            if self.alive is False:
                break
            continues: List = []
            self.loops.append((continues, breaks))
            self.assign(s.target, value)
            self.block(s.body)
            self.loops.pop()
            if continues:
                self.join_snapshots([self.snapshot()] + continues)
        if breaks:
            self.join_snapshots([self.snapshot()] + breaks)
        else:
            self.block(s.orelse)

    def loop_unknown(self, body: Callable[[], None], orelse: Sequence[ast.stmt], test=None) -> None:
        """A loop run an unknown number of times: its body once, as "maybe", joined with not
        running it (what a second round adds is joined in by a second pass)."""
        if test is not None:
            self.expr(test)
        pre = self.snapshot()
        self.maybe += 1
        snaps = [pre]
        for _ in range(2):
            self.loops.append(([], []))
            body()
            continues, breaks = self.loops.pop()
            snaps.extend([self.snapshot()] + continues + breaks)
            self.join_snapshots(snaps)
            if self.alive is False:
                break
        self.maybe -= 1
        self.block(orelse)

    def try_stmt(self, s) -> None:
        pre = self.snapshot()
        self.block(s.body)
        if s.handlers:
            after = self.snapshot()
            snaps = [after]
            for handler in s.handlers:
                self.restore(pre)
                self.join_snapshots([pre, after])
                self.alive = pre[2]
                self.maybe += 1
                if handler.name:
                    self.assign_name(handler.name, UNK)
                self.block(handler.body)
                self.maybe -= 1
                snaps.append(self.snapshot())
            self.join_snapshots(snaps)
            if self.alive is not False:
                self.block(s.orelse)
        else:
            self.block(s.orelse)
        if s.finalbody:
            alive = self.alive
            self.alive = pre[2] if alive is False else alive
            self.block(s.finalbody)
            if alive is False:
                self.alive = False

    def import_stmt(self, s) -> None:
        if isinstance(s, ast.Import):
            for alias in s.names:
                if alias.asname:
                    self.assign_name(alias.asname, Mod(alias.name))
                else:
                    head = alias.name.split(".")[0]
                    self.assign_name(head, Mod(head))
            return
        if s.level:  # the project's own module: not followed
            for alias in s.names:
                if alias.name != "*":
                    self.assign_name(alias.asname or alias.name, UNK)
            self.open = True
            return
        module = s.module or ""
        for alias in s.names:
            if alias.name == "*":
                continue  # the atoms of a star import are read by their bare names
            self.assign_name(alias.asname or alias.name, self.atom(f"{module}.{alias.name}"))

    def assign(self, target: ast.AST, value: object) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            seq = _seq_of(value)
            elts = target.elts
            known = (
                seq is not None
                and not seq.open
                and all(d for _, d in seq.items)
                and len(seq.items) == len(elts)
                and not any(isinstance(e, ast.Starred) for e in elts)
            )
            for k, elt in enumerate(elts):
                inner = elt.value if isinstance(elt, ast.Starred) else elt
                self.assign(inner, seq.items[k][0] if known else UNK)  # type: ignore[union-attr]
        elif isinstance(target, ast.Subscript):
            container = self.expr(target.value)
            key = self.expr(target.slice)
            self.update(target.value, self.set_item(container, key, value))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNK)
        # attributes (``self.x = ...``): not followed

    def update(self, target: Optional[ast.AST], value: object) -> None:
        """Write back a value changed in place (``flags.append(x)``, ``extra["nvcc"] += [...]``)."""
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value)
        elif isinstance(target, ast.Subscript):
            container = self.expr(target.value)
            key = self.expr(target.slice)
            self.update(target.value, self.set_item(container, key, value))

    def set_item(self, container: object, key: object, value: object) -> object:
        if isinstance(container, DictV):
            if key is UNK or isinstance(key, Alt):
                return DictV(container.items, True)
            items = [(k, v, d) for k, v, d in container.items if not _same(k, key)]
            return DictV(tuple(items) + ((key, value, self.certainty() is not False),), container.open)
        if isinstance(container, Seq) and isinstance(key, int) and not isinstance(key, bool):
            if container.open or not -len(container.items) <= key < len(container.items):
                return Seq(container.kind, container.items, True)
            elems = list(container.items)
            elems[key] = (value, elems[key][1])
            return Seq(container.kind, tuple(elems), container.open)
        return UNK

    # -- expressions -------------------------------------------------------------------------------
    def expr(self, e: Optional[ast.AST]) -> object:
        if e is None:
            return None
        self.tick()
        if isinstance(e, ast.Constant):
            if isinstance(e.value, str):
                self.mention(e.value)
            return e.value
        if isinstance(e, ast.Name):
            return self.lookup(e.id)
        if isinstance(e, ast.Attribute):
            base = self.expr(e.value)
            if isinstance(base, Mod):
                return self.atom(f"{base.name}.{e.attr}")
            if isinstance(base, PathV):
                if e.attr == "parent":
                    return PathV(os.path.dirname(base.path))
                if e.attr in ("name", "stem", "suffix"):
                    p = base.path
                    return {
                        "name": os.path.basename(p),
                        "stem": os.path.splitext(os.path.basename(p))[0],
                        "suffix": os.path.splitext(p)[1],
                    }[e.attr]
            if isinstance(base, (Seq, DictV, str, PathV)):
                return Method(base, e.value, e.attr)
            if isinstance(base, Alt) and all(isinstance(o, (str, PathV)) for o in base.options):
                return Method(base, None, e.attr)  # ``kind.startswith("cuda")``: each alternative's
            return UNK
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            kind = "list" if isinstance(e, ast.List) else "tuple" if isinstance(e, ast.Tuple) else "set"
            seq = Seq(kind)
            for elt in e.elts:
                if isinstance(elt, ast.Starred):
                    seq = _extend(seq, self.expr(elt.value))
                else:
                    v = self.expr(elt)
                    if isinstance(v, Alt):
                        seq = Seq(kind, seq.items + tuple((o, False) for o in v.options), seq.open)
                    else:
                        seq = Seq(kind, seq.items + ((v, True),), seq.open)
            if self.macro_target and kind in ("list", "tuple"):
                self.macro_pairs(seq)
            return seq
        if isinstance(e, ast.Dict):
            items: List[Tuple[object, object, bool]] = []
            opened = False
            for k, v in zip(e.keys, e.values):
                if k is None:
                    inner = self.expr(v)
                    if isinstance(inner, DictV):
                        items.extend(inner.items)
                        opened = opened or inner.open
                    else:
                        opened = True
                    continue
                key, value = self.expr(k), self.expr(v)
                if key is UNK or isinstance(key, Alt):
                    opened = True
                else:
                    items = [i for i in items if not _same(i[0], key)] + [(key, value, True)]
            return DictV(tuple(items), opened)
        if isinstance(e, ast.BoolOp):
            return self.boolop(e)
        if isinstance(e, ast.UnaryOp):
            v = self.expr(e.operand)
            if isinstance(e.op, ast.Not):
                t = truth(v)
                return UNK if t is None else not t
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v if isinstance(e.op, ast.USub) else v
            return UNK
        if isinstance(e, ast.Compare):
            return self.compare(e)
        if isinstance(e, ast.IfExp):
            out: List[object] = []
            self.branch(
                e.test, lambda: out.append(self.expr(e.body)), lambda: out.append(self.expr(e.orelse))
            )
            result = out[0] if out else UNK
            for v in out[1:]:
                result = join(result, v)
            return result
        if isinstance(e, ast.BinOp):
            return self.binop(e.op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, ast.JoinedStr):
            parts = [""]
            for value in e.values:
                if isinstance(value, ast.Constant):
                    piece = [str(value.value)]
                elif (
                    isinstance(value, ast.FormattedValue)
                    and value.format_spec is None
                    and value.conversion == -1
                ):
                    v = self.expr(value.value)
                    piece = [t for t in (_text(o) for o in alternatives(v)) if t is not None]
                    if len(piece) != len(alternatives(v)):
                        return UNK
                else:
                    return UNK
                parts = [p + q for p in parts for q in piece][:MAX_ALTERNATIVES]
            result = parts[0] if len(parts) == 1 else Alt(frozenset(parts))
            self.mention(result)
            return result
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.comprehension(e)
        if isinstance(e, ast.Subscript):
            container = self.expr(e.value)
            if isinstance(e.slice, ast.Slice):
                whole = e.slice.lower is None and e.slice.upper is None and e.slice.step is None
                return container if whole and isinstance(container, Seq) else UNK  # ``xs[:]``
            key = self.expr(e.slice)
            if isinstance(container, DictV):
                v, present = _dict_get(container, key)
                return UNK if v is _ABSENT or not present else v
            if isinstance(container, Seq) and isinstance(key, int) and not container.open:
                if -len(container.items) <= key < len(container.items) and all(d for _, d in container.items):
                    return container.items[key][0]
            return UNK
        if isinstance(e, ast.Starred):
            return self.expr(e.value)
        if isinstance(e, ast.NamedExpr):
            v = self.expr(e.value)
            self.assign(e.target, v)
            return v
        if isinstance(e, ast.Lambda):
            return UNK  # a function value: it builds nothing until called
        self.scan(e)
        return UNK

    def scan(self, node: ast.AST) -> None:
        """Something not followed: what it writes counts as maybe written."""
        self.open = True
        self.maybe += 1
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                self.mention(sub.value)
        self.maybe -= 1

    def macro_pairs(self, seq: Seq) -> None:
        for item, definite in seq.items:
            if isinstance(item, Seq) and item.kind == "tuple":
                pair = _macro_pair(item)
                if pair is not None:
                    self._note(self.macro_mentions, pair, self.certainty() if definite else None)

    def boolop(self, e: ast.BoolOp) -> object:
        is_and = isinstance(e.op, ast.And)
        result: object = _ABSENT
        pending: List[object] = []  # values that may be the result
        pre_maybe = self.maybe
        for k, node in enumerate(e.values):
            v = self.expr(node)
            t = truth(v)
            last = k == len(e.values) - 1
            if last:
                pending.append(v)
                break
            if t is (not is_and):  # short-circuits here
                pending.append(v)
                break
            if t is None:
                pending.append(v)
                self.maybe += 1  # the rest is evaluated only sometimes
        self.maybe = pre_maybe
        decided: Tri = True if is_and else False  # Kleene's truth of the whole
        for v in pending:
            result = join(result, v) if result is not _ABSENT else v
        truths = [truth(v) for v in pending]
        if is_and:
            decided = (
                False if False in truths[:-1] or truths[-1] is False else (None if None in truths else True)
            )
        else:
            decided = True if True in truths else (None if None in truths else False)
        if decided is not None and truth(result) is None:
            return TRUTHY if decided else FALSY  # ``unknown and False``: false whatever the unknown
        return result

    def compare(self, e: ast.Compare) -> object:
        left = self.expr(e.left)
        result: object = True
        for op, node in zip(e.ops, e.comparators):
            right = self.expr(node)
            t = _compare(op, left, right)
            if t is False:
                return False
            if t is None:
                result = UNK
            left = right
        return result

    def binop(self, op: ast.operator, a: object, b: object, inplace: bool = False) -> object:
        if isinstance(op, ast.Add):
            if isinstance(a, Seq):
                return _extend(a, b)
            if isinstance(b, Seq) and a is UNK:
                return Seq(b.kind, b.items, True)
            if isinstance(a, Alt) and all(isinstance(o, Seq) for o in a.options) and isinstance(b, Seq):
                return _extend(_seq_of(a) or Seq("list", (), True), b)
            texts = [(x, y) for x in alternatives(a) for y in alternatives(b)]
            if (
                all(isinstance(x, str) and isinstance(y, str) for x, y in texts)
                and len(texts) <= MAX_ALTERNATIVES
            ):
                out = {x + y for x, y in texts}  # type: ignore[operator]
                result = out.pop() if len(out) == 1 else Alt(frozenset(out))
                self.mention(result)
                return result
            if all(isinstance(x, (int, float)) and isinstance(y, (int, float)) for x, y in texts):
                out2 = {x + y for x, y in texts}  # type: ignore[operator]
                return out2.pop() if len(out2) == 1 else UNK
            return UNK
        if isinstance(op, ast.Div) and isinstance(a, PathV):
            t = _text(b)
            return PathV(os.path.join(a.path, t)) if t is not None else UNK
        if isinstance(op, ast.BitOr) and isinstance(a, DictV) and isinstance(b, DictV):
            return DictV(tuple(i for i in a.items if not _has_key(b, i[0])) + b.items, a.open or b.open)
        return UNK

    def comprehension(self, e) -> object:
        if len(e.generators) != 1 or e.generators[0].is_async:
            self.scan(e)
            return Seq("list", (), True)
        gen = e.generators[0]
        items = _seq_of(self.expr(gen.iter))
        if items is None:
            self.scan(e)
            return Seq("list", (), True)
        saved = dict(self.frame.local)
        out: List[Tuple[object, bool]] = []
        for value, definite in items.items[:MAX_ITEMS]:
            self.assign(gen.target, value)
            keep: Tri = True
            for cond in gen.ifs:
                t = truth(self.expr(cond))
                keep = (
                    False if (t is False or keep is False) else (None if t is None or keep is None else True)
                )
            if keep is False:
                continue
            self.maybe += 0 if (keep and definite) else 1
            v = self.expr(e.elt)
            self.maybe -= 0 if (keep and definite) else 1
            out.append((v, bool(keep) and definite))
        self.frame.local.clear()
        self.frame.local.update(saved)
        return Seq("set" if isinstance(e, ast.SetComp) else "list", tuple(out), items.open)

    # -- calls -------------------------------------------------------------------------------------
    def arguments(self, e: ast.Call) -> Tuple[List[object], Dict[str, object], bool]:
        args: List[object] = []
        opened = False
        for a in e.args:
            if isinstance(a, ast.Starred):
                seq = _seq_of(self.expr(a.value))
                if seq is None or seq.open or not all(d for _, d in seq.items):
                    opened = True
                else:
                    args.extend(v for v, _ in seq.items)
            else:
                args.append(self.expr(a))
        kwargs: Dict[str, object] = {}
        for kw in e.keywords:
            if kw.arg in ("define_macros",):
                self.macro_target = True
            value = self.expr(kw.value)
            self.macro_target = False
            if kw.arg is None:
                if isinstance(value, DictV) and not value.open:
                    for k, v, _ in value.items:
                        if isinstance(k, str):
                            kwargs[k] = v
                else:
                    opened = True
            else:
                kwargs[kw.arg] = value
        return args, kwargs, opened

    def call(self, e: ast.Call) -> object:
        callee = self.expr(e.func)
        args, kwargs, opened = self.arguments(e)
        if isinstance(callee, Func):
            return self.inline(callee, args, kwargs, opened, e)
        if isinstance(callee, Method):
            return self.method(callee, args, kwargs)
        if isinstance(callee, Mod):
            result = self.library(callee.name, args, kwargs, opened)
            if result is not _UNHANDLED:
                return result
        if isinstance(callee, Alt) and any(isinstance(o, Func) for o in callee.options):
            self.open = True
        # a function we do not follow may change a list or dict it is given (``add_sources(srcs)``)
        for node in list(e.args) + [k.value for k in e.keywords]:
            if isinstance(node, ast.Name):
                v = self.lookup(node.id)
                if isinstance(v, Seq) and not v.open:
                    self.assign_name(node.id, Seq(v.kind, v.items, True))
                elif isinstance(v, DictV) and not v.open:
                    self.assign_name(node.id, DictV(v.items, True))
        return UNK

    def inline(self, f: Func, args, kwargs, opened: bool, e: ast.Call) -> object:
        node = f.node
        if id(node) in self.stack or len(self.stack) >= MAX_CALL_DEPTH or opened:
            self.bailed.add(id(node))
            self.open = True
            return UNK
        params = node.args
        positional = params.posonlyargs + params.args
        local: Dict[str, object] = {}
        for k, p in enumerate(positional):
            if k < len(args):
                local[p.arg] = args[k]
            elif p.arg in kwargs:
                local[p.arg] = kwargs.pop(p.arg)
            else:
                d = k - (len(positional) - len(f.defaults))
                local[p.arg] = f.defaults[d] if d >= 0 else UNK
        for p, default in zip(params.kwonlyargs, f.kw_defaults):
            local[p.arg] = kwargs.pop(p.arg, UNK if default is _ABSENT else default)
        if params.vararg:
            local[params.vararg.arg] = Seq("tuple", tuple((a, True) for a in args[len(positional) :]))
        if params.kwarg:
            local[params.kwarg.arg] = DictV(tuple((k, v, True) for k, v in kwargs.items()))
        passed = {
            p.arg: a.id
            for p, a in zip(positional, e.args)
            if isinstance(a, ast.Name) and not isinstance(a, ast.Starred)
        }
        frame = _Frame(local, node, f.closure)
        self.frames.append(frame)
        self.stack.append(id(node))
        self.evaluated.add(id(node))
        alive = self.alive
        try:
            self.block(node.body)
        finally:
            self.stack.pop()
            self.frames.pop()
        fell_through = self.alive is not False
        self.alive = alive
        # a list the callee only changed in place is the caller's list changed
        rebound = _rebound(node)
        for param, name in passed.items():
            if param not in rebound and param in frame.local:
                before = self.lookup(name)
                if not _same(before, frame.local[param]) and isinstance(frame.local[param], (Seq, DictV)):
                    self.assign_name(name, frame.local[param])
        if frame.raised and not frame.returned and not fell_through:
            self.alive = False  # raises on every path
        elif frame.raised and self.alive is True:
            self.alive = None
        results = list(frame.returns) + ([None] if fell_through else [])
        result: object = _ABSENT
        for v in results:
            result = join(result, v)
        return UNK if result is _ABSENT else result

    def method(self, m: Method, args, kwargs) -> object:
        recv, name = m.receiver, m.name
        if isinstance(recv, Alt):
            result: object = _ABSENT
            for option in recv.options:
                result = join(result, self.method(Method(option, None, name), args, kwargs))
            return result
        if isinstance(recv, Seq):
            if name in ("append", "add") and len(args) == 1:
                v = args[0]
                if isinstance(v, Alt):
                    new = Seq(recv.kind, recv.items + tuple((o, False) for o in v.options), recv.open)
                else:
                    new = Seq(recv.kind, recv.items + ((v, True),), recv.open)
                if self.macro_target or _holds_macro(m.target):
                    self.macro_pairs(Seq("list", ((v, True),)))
                self.update(m.target, new)
                return None
            if name in ("extend", "update") and len(args) == 1:
                if _holds_macro(m.target) and isinstance(args[0], Seq):
                    self.macro_pairs(args[0])
                self.update(m.target, _extend(recv, args[0]))
                return None
            if name == "insert" and len(args) == 2:
                self.update(m.target, Seq(recv.kind, ((args[1], True),) + recv.items, recv.open))
                return None
            if name in ("remove", "discard") and len(args) == 1:
                items = list(recv.items)
                for k, (v, d) in enumerate(items):
                    if _same(v, args[0]):
                        del items[k]
                        break
                else:
                    items = [
                        (v, False) if _compare(ast.Eq(), v, args[0]) is not False else (v, d)
                        for v, d in items
                    ]
                self.update(m.target, Seq(recv.kind, tuple(items), recv.open))
                return None
            if name == "copy":
                return recv
            if name in ("pop", "clear", "sort", "reverse", "index", "count"):
                if name == "clear":
                    self.update(m.target, Seq(recv.kind))
                elif name == "pop":
                    self.update(m.target, Seq(recv.kind, tuple((v, False) for v, _ in recv.items), True))
                return None if name in ("clear", "sort", "reverse") else UNK
        if isinstance(recv, DictV):
            if name == "get" and args:
                v, present = _dict_get(recv, args[0])
                default = args[1] if len(args) > 1 else None
                if v is _ABSENT:
                    return UNK if recv.open else default
                return v if present else join(v, default)
            if name == "setdefault" and args:
                v, present = _dict_get(recv, args[0])
                if v is _ABSENT:
                    default = args[1] if len(args) > 1 else None
                    self.update(m.target, self.set_item(recv, args[0], default))
                    return default
                return v
            if name == "update" and len(args) == 1 and isinstance(args[0], DictV):
                updated: object = recv
                for key, value, _ in args[0].items:
                    updated = self.set_item(updated, key, value)
                self.update(m.target, updated)
                return None
            if name in ("keys", "values", "items"):
                pick = {"keys": lambda k, v: k, "values": lambda k, v: v}.get(
                    name, lambda k, v: Seq("tuple", ((k, True), (v, True)))
                )
                return Seq("list", tuple((pick(k, v), d) for k, v, d in recv.items), recv.open)
            if name == "copy":
                return recv
        if isinstance(recv, str):
            if name in ("endswith", "startswith") and args:
                tests = args[0].items if isinstance(args[0], Seq) else ((args[0], True),)
                if not all(isinstance(t, str) for t, _ in tests):
                    return UNK
                fn = recv.endswith if name == "endswith" else recv.startswith
                return any(fn(t) for t, _ in tests)  # type: ignore[arg-type]
            if name == "replace" and len(args) == 2 and all(isinstance(a, str) for a in args):
                out = recv.replace(args[0], args[1])  # type: ignore[arg-type]
                self.mention(out)
                return out
            if name == "join" and len(args) == 1:
                seq = _seq_of(args[0])
                if seq is not None and not seq.open and all(d and isinstance(v, str) for v, d in seq.items):
                    return recv.join(v for v, _ in seq.items)  # type: ignore[misc]
                return UNK
            if name in ("strip", "lower", "upper", "lstrip", "rstrip") and not args:
                return getattr(recv, name)()
            if name == "split":
                if all(isinstance(a, str) for a in args) and len(args) <= 1:
                    return Seq("list", tuple((p, True) for p in recv.split(*args)))  # type: ignore[arg-type]
                return UNK
        if isinstance(recv, PathV):
            if name in ("resolve", "absolute", "expanduser"):
                return recv if os.path.isabs(recv.path) else PathV(os.path.join(self.base or "", recv.path))
            if name in ("glob", "rglob") and len(args) == 1 and isinstance(args[0], str):
                pattern = args[0] if name == "glob" else "**/" + args[0]
                found = self.glob(os.path.join(recv.path, pattern), True)
                if isinstance(found, Seq):
                    return Seq("list", tuple((PathV(str(p)), d) for p, d in found.items), found.open)  # paths
                return found
            if name == "joinpath" and all(_text(a) is not None for a in args):
                return PathV(os.path.join(recv.path, *[_text(a) or "" for a in args]))  # all text (above)
            if name in ("exists", "is_dir", "is_file") and not args:
                return self.exists(recv.path, name)
        return UNK

    def library(self, name: str, args, kwargs, opened: bool) -> object:
        """A call of an imported function (``os.path.join``, ``glob.glob``, ``CUDAExtension``)."""
        short = name.rsplit(".", 1)[-1]
        if name in _ATOM_CALLS:
            return _ATOM_CALLS[name][self.scenario]
        if name in _EXITS:
            self.frame.raised = True
            self.alive = False
            return None
        if (
            short.endswith("Extension")
            and short != "BuildExtension"
            and "cpp_extension" in name
            or short
            in (
                "Extension",
                "Pybind11Extension",
            )
        ):
            sources = args[1] if len(args) > 1 else kwargs.get("sources", UNK)
            return self.build(sources, kwargs, record=False)
        if name.startswith("torch.utils.cpp_extension.") and short in ("load", "load_inline"):
            if short == "load":
                sources = args[1] if len(args) > 1 else kwargs.get("sources", UNK)
            else:
                sources = Seq("list")  # inline code, not files
            self.build(sources, kwargs, record=True)
            return UNK
        if short == "setup" and (name.startswith(("setuptools", "distutils")) or name == "setup"):
            self.setup(kwargs, opened)
            return None
        if name in ("os.path.join", "posixpath.join"):
            texts = [alternatives(a) for a in args]
            combos: List[List[str]] = [[]]
            for options in texts:
                if not all(_text(o) is not None for o in options):
                    return UNK
                combos = [c + [_text(o) or ""] for c in combos for o in options][
                    :MAX_ALTERNATIVES
                ]  # all text
            if not combos[0]:
                return UNK
            out = {os.path.join(*c) for c in combos}
            result = out.pop() if len(out) == 1 else Alt(frozenset(out))
            self.mention(result)
            return result
        if name in (
            "os.path.dirname",
            "os.path.abspath",
            "os.path.realpath",
            "os.path.normpath",
            "os.path.basename",
        ):
            t = _text(args[0]) if len(args) == 1 else None
            if t is None:
                return UNK
            if short in ("abspath", "realpath") and not os.path.isabs(t):
                t = os.path.join(self.base, t) if self.base else t
            return getattr(os.path, "normpath" if short in ("abspath", "realpath") else short)(t)
        if name in ("os.path.exists", "os.path.isdir", "os.path.isfile"):
            t = _text(args[0]) if len(args) == 1 else None
            return self.exists(t, short) if t is not None else UNK
        if name == "os.getcwd":
            return self.base if self.base else UNK
        if name in ("glob.glob", "glob.iglob", "glob.glob.glob"):
            t = _text(args[0]) if args else _text(kwargs.get("pathname"))
            recursive = truth(kwargs.get("recursive", False))
            if t is None or recursive is None:
                return Seq("list", (), True)
            return self.glob(t, bool(recursive))
        if name == "os.listdir" and len(args) == 1 and _text(args[0]) is not None:
            return self.listdir(_text(args[0]))  # type: ignore[arg-type]
        if name in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath") and args:
            parts = [_text(a) for a in args]
            known = [p for p in parts if p is not None]
            if len(known) == len(parts):
                return PathV(os.path.join(*known))
            return UNK
        if name.startswith("builtins."):
            return self.builtin(short, args, kwargs)
        return _UNHANDLED

    def builtin(self, short: str, args, kwargs) -> object:
        if short in ("list", "tuple", "set", "sorted") and len(args) <= 1:
            if not args:
                return Seq("list" if short == "sorted" else short)
            seq = _seq_of(args[0])
            if seq is None:
                return Seq("list", (), True)
            return Seq("list" if short == "sorted" else short, seq.items, seq.open)
        if short == "str" and len(args) == 1:
            t = _text(args[0])
            return t if t is not None else (str(args[0]) if isinstance(args[0], (int, float)) else UNK)
        if short == "bool" and len(args) == 1:
            b = truth(args[0])
            return UNK if b is None else b
        if short == "len" and len(args) == 1:
            seq = _seq_of(args[0])
            if seq is not None and not seq.open and all(d for _, d in seq.items):
                return len(seq.items)
            return UNK
        if short == "print":
            return None
        if short == "dict" and not args:
            return DictV(tuple((k, v, True) for k, v in kwargs.items()))
        if (
            short == "getattr"
            and len(args) in (2, 3)
            and isinstance(args[0], Mod)
            and isinstance(args[1], str)
        ):
            return self.atom(f"{args[0].name}.{args[1]}")  # ``getattr(torch.version, "hip", None)``
        if short == "isinstance":
            return UNK
        if short in ("exit", "quit"):
            self.frame.raised = True
            self.alive = False
            return None
        return UNK

    def exists(self, path: str, how: str) -> object:
        if self.base is None:
            return UNK
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.base, path))
        if not (full + os.sep).startswith(self.base + os.sep):
            return UNK
        check = (
            os.path.isdir
            if how in ("isdir", "is_dir")
            else os.path.isfile
            if "file" in how
            else os.path.exists
        )
        return check(full)

    def listdir(self, path: str) -> object:
        if self.base is None:
            return Seq("list", (), True)
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.base, path))
        if not (full + os.sep).startswith(self.base + os.sep):
            return Seq("list", (), True)
        try:
            names = sorted(os.listdir(full))[: MAX_ITEMS + 1]
        except OSError:
            return Seq("list", (), True)
        return Seq("list", tuple((n, True) for n in names[:MAX_ITEMS]), len(names) > MAX_ITEMS)

    def glob(self, pattern: str, recursive: bool) -> object:
        """``glob.glob`` against the tree, inside the script's directory only: paths in the
        pattern's own form (relative or absolute)."""
        if self.base is None:
            return Seq("list", (), True)
        absolute = os.path.isabs(pattern)
        full = os.path.normpath(pattern if absolute else os.path.join(self.base, pattern))
        if not (full + os.sep).startswith(self.base + os.sep):
            return Seq("list", (), True)
        found = _glob(self.base, full[len(self.base) + 1 :].split(os.sep), recursive)
        if found is None:
            return Seq("list", (), True)
        out = []
        for rel in found:
            text = os.path.join(self.base, rel) if absolute else _relative_like(pattern, rel)
            out.append((text, True))
            self.mention(text)
        return Seq("list", tuple(out))

    # -- builds ------------------------------------------------------------------------------------
    def build(self, sources: object, kwargs: Dict[str, object], record: bool) -> Build:
        flags = tuple(kwargs[k] for k in sorted(_FLAG_KEYWORDS) if k in kwargs)
        b = Build(len(self.builds) + 1 + 1000 * self.scenario, sources, flags)
        cert = self.certainty()
        self.builds[b.ident] = (b, cert)
        if record:
            self.compiled.append((b, cert))
        return b

    def setup(self, kwargs: Dict[str, object], opened: bool) -> None:
        cert = self.certainty()
        own = Build(
            -1 - len(self.setup_calls),
            Seq("list"),
            tuple(kwargs[k] for k in sorted(_FLAG_KEYWORDS) if k in kwargs),
        )
        self.compiled.append((own, cert))
        if "ext_modules" not in kwargs and not opened:
            return
        self.setup_calls.append(cert)
        mods = _seq_of(kwargs.get("ext_modules", UNK))
        if mods is None or mods.open or opened:
            self.setup_open = True
            if mods is None:
                return
        for v, d in mods.items:
            for option in alternatives(v):
                if isinstance(option, Build):
                    sure = cert if (d and not isinstance(v, Alt)) else (None if cert is not False else False)
                    self.compiled.append((option, sure))
                elif option is UNK:
                    self.setup_open = True

    def entry_points(self) -> None:
        """Functions nothing in the module calls (an importer's entry point, a method setuptools
        calls) and those the interpreter gave up inlining: run once as "maybe", arguments unknown."""
        called = self.shared.loaded
        todo: List[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = list(self.shared.methods)
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if id(stmt) in self.bailed or (stmt.name not in called and id(stmt) not in self.evaluated):
                    todo.append(stmt)
        for node in todo:
            if id(node) in self.evaluated and id(node) not in self.bailed:
                continue
            self.alive = True
            self.maybe = 1
            defaults = tuple(UNK for _ in node.args.defaults)
            kw = tuple(UNK for _ in node.args.kw_defaults)
            call = ast.Call(func=ast.Name(id="_", ctx=ast.Load()), args=[], keywords=[])
            self.stack.clear()
            self.inline(Func(node, defaults, kw), [], {}, False, call)
            self.maybe = 0

    def run(self) -> None:
        self.block(self.tree.body)
        self.alive = True
        self.entry_points()


def _relative_like(pattern: str, rel: str) -> str:
    """A path found for a relative ``pattern`` written as glob writes it (``./a/*.cu`` -> ``./a/k.cu``)."""
    return "./" + rel if pattern.startswith("./") else rel


def _glob(base: str, parts: List[str], recursive: bool) -> Optional[List[str]]:
    """The files under ``base`` matching glob components ``parts`` (relative paths), or None when
    the walk would look at too many entries."""
    out: List[str] = []
    visits = [0]

    def walk(directory: str, rel: str, rest: List[str]) -> bool:
        if not rest:
            out.append(rel)
            return True
        head, tail = rest[0], rest[1:]
        if head == "**" and recursive:
            if not walk(directory, rel, tail):
                return False
            for name, is_dir in _entries(directory, visits):
                if is_dir and not name.startswith("."):
                    if not walk(
                        os.path.join(directory, name), os.path.join(rel, name) if rel else name, rest
                    ):
                        return False
            return visits[0] <= MAX_GLOB_VISITS
        if not any(c in head for c in "*?["):
            path = os.path.join(directory, head)
            if os.path.lexists(path) and (not tail or os.path.isdir(path)):
                return walk(path, os.path.join(rel, head) if rel else head, tail)
            return True
        for name, is_dir in _entries(directory, visits):
            if name.startswith(".") and not head.startswith("."):
                continue
            if fnmatch.fnmatchcase(name, head) and (is_dir or not tail):
                if not walk(os.path.join(directory, name), os.path.join(rel, name) if rel else name, tail):
                    return False
        return visits[0] <= MAX_GLOB_VISITS and len(out) <= MAX_ITEMS

    if visits[0] > MAX_GLOB_VISITS or not walk(base, "", [p for p in parts if p not in ("", ".")]):
        return None
    if len(out) > MAX_ITEMS or visits[0] > MAX_GLOB_VISITS:
        return None
    return out


def _entries(directory: str, visits: List[int]) -> Iterable[Tuple[str, bool]]:
    try:
        with os.scandir(directory) as it:
            entries = []
            for entry in it:
                visits[0] += 1
                if visits[0] > MAX_GLOB_VISITS:
                    break
                try:
                    entries.append((entry.name, entry.is_dir(follow_symlinks=False)))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(entries)


def _compare(op: ast.cmpop, a: object, b: object) -> Tri:
    if isinstance(a, Alt) or isinstance(b, Alt):
        results = {_compare(op, x, y) for x in alternatives(a) for y in alternatives(b)}
        return results.pop() if len(results) == 1 else None
    if isinstance(op, (ast.Is, ast.IsNot)):
        if a is UNK or b is UNK:
            return None
        if b is None or a is None:
            same = (a is None) and (b is None)
            if a is TRUTHY or b is TRUTHY:
                same = False
            return same if isinstance(op, ast.Is) else not same
        if isinstance(b, bool) and isinstance(a, bool):
            return (a is b) if isinstance(op, ast.Is) else (a is not b)
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if a is UNK or b is UNK or a is TRUTHY or b is TRUTHY:
            if (a is TRUTHY and b is None) or (b is TRUTHY and a is None):
                return isinstance(op, ast.NotEq)
            return None
        if isinstance(a, (str, int, float, type(None))) and isinstance(b, (str, int, float, type(None))):
            return (a == b) if isinstance(op, ast.Eq) else (a != b)
        return None
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(a, str) and isinstance(b, str):
            return (a in b) if isinstance(op, ast.In) else (a not in b)
        seq = _seq_of(b)
        if seq is None or a is UNK:
            return None
        found: Tri = False
        for v, d in seq.items:
            t = _compare(ast.Eq(), a, v) if not isinstance(v, (Seq, DictV)) else None
            if t is True and d:
                found = True
                break
            if t is not False:
                found = None
        if found is False and seq.open:
            found = None
        if found is None:
            return None
        return found if isinstance(op, ast.In) else not found
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}[type(op)]
    return None


def _macro_pair(item: Seq) -> Optional[Tuple[str, str]]:
    """``("X", None)`` -> ("X", "1"); ``("X", "2")`` -> ("X", "2"); anything else None."""
    if len(item.items) != 2 or item.open:
        return None
    (name, _), (value, _) = item.items
    if not (isinstance(name, str) and _MACRO_NAME.match(name)):
        return None
    if not isinstance(value, (str, int, type(None))) or isinstance(value, bool):
        return None
    return name, "1" if value is None else str(value)


def _holds_macro(node: Optional[ast.AST]) -> bool:
    """Is ``node`` a name (or attribute, or item) for a list of macros: ``define_macros``?"""
    while isinstance(node, ast.Subscript):
        node = node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "macro" in name.lower()


def _mentions_cmake(stmt: ast.AST) -> bool:
    """Does a statement name CMake (``cmake_args.append("-DUSE_ROCM=ON")``, ``["cmake", ...]``)?"""
    for node in ast.walk(stmt):
        word = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else node.value
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 64
            else ""
        )
        if "cmake" in word.lower():
            return True
    return False


def _load(target: ast.AST) -> ast.AST:
    """``target`` read (an AugAssign target is a Store node)."""
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return target


def _rebound(fn: ast.AST) -> FrozenSet[str]:
    """Names a function assigns (so a parameter of the name is not the caller's list any more)."""
    out: Set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return frozenset(out)


# -- the facts ---------------------------------------------------------------------------------------
def _macros_of(value: object, cert: Tri, table: Dict[Tuple[str, str], Tri], note) -> bool:
    """Macros a build's flag value defines (``-DX`` strings, ``("X", None)`` pairs, dict values);
    False when the value is not known whole."""
    complete = True
    for option in alternatives(value):
        sure = cert if not isinstance(value, Alt) else (None if cert is not False else False)
        if isinstance(option, str):
            for m in _DEFINE_FLAG.finditer(option):
                note(table, (m.group(1), m.group(2) or "1"), sure)
        elif isinstance(option, Seq):
            if option.kind == "tuple" and _macro_pair(option) is not None:
                note(table, _macro_pair(option), sure)
                continue
            complete = complete and not option.open
            for v, d in option.items:
                complete = (
                    _macros_of(v, sure if d else (None if sure is not False else False), table, note)
                    and complete
                )
        elif isinstance(option, DictV):
            complete = complete and not option.open
            for _, v, d in option.items:
                complete = (
                    _macros_of(v, sure if d else (None if sure is not False else False), table, note)
                    and complete
                )
        elif option is not None:
            complete = False
    return complete


class _Shared:
    """What every scenario reads of the tree, computed once: the names it binds and reads, which
    statements name CMake."""

    def __init__(self, tree: ast.Module) -> None:
        self.stored: Set[str] = set()
        self.loaded: Set[str] = set()
        self.methods: List[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = []  # functions of a class body
        for n in ast.walk(tree):
            if isinstance(n, ast.Name):
                (self.stored if isinstance(n.ctx, ast.Store) else self.loaded).add(n.id)
            elif isinstance(n, ast.ClassDef):
                self.methods.extend(
                    f for f in n.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                )
        self.cmake: Dict[int, bool] = {}


def _scenario(tree: ast.Module, path: Optional[str], scenario: int, script: bool, shared: _Shared):
    run = _Run(tree, path, scenario, script, shared)
    run.run()
    compiled: Dict[Tuple[str, ...], Tri] = {}
    macros: Dict[Tuple[str, str], Tri] = {}
    closed = not run.open
    built = [(b, c) for b, c in run.compiled if b.ident > 0]
    if not run.setup_calls or run.setup_open:  # no setup() says which: every extension built counts
        taken = {b.ident for b, _ in built}
        for b, cert in run.builds.values():
            if b.ident not in taken:
                built.append((b, cert if not run.setup_calls else (None if cert is not False else False)))
    own = [(b, c) for b, c in run.compiled if b.ident < 0]  # setup()'s own flags
    for b, cert in built + own:
        if b.ident > 0:
            seq = _seq_of(b.sources)
            if seq is None or seq.open:
                closed = False
            for v, d in seq.items if seq is not None else ():
                for option in alternatives(v):
                    text = _text(option)
                    pattern = run.relative(text) if text is not None else None
                    if pattern is not None:
                        sure = (
                            cert if (d and not isinstance(v, Alt)) else (None if cert is not False else False)
                        )
                        run._note(compiled, pattern, sure)
        for flags in b.flags:
            if not _macros_of(flags, cert, macros, run._note):
                closed = False
    if not closed:  # something unknown may build or hold what the script writes here: maybe
        for key, cert in run.mentions.items():
            run._note(compiled, key, None if cert is not False else False)
        for key, cert in run.macro_mentions.items():
            run._note(macros, key, None if cert is not False else False)
    builds = bool(run.builds or run.setup_calls)
    return _Scenario(compiled, macros, run.mentions, run.macro_mentions, builds, run.evidence)


@dataclass
class _Scenario:
    compiled: Dict[Tuple[str, ...], Tri]
    defined: Dict[Tuple[str, str], Tri]
    written: Dict[Tuple[str, ...], Tri]  # source paths the script writes
    written_macros: Dict[Tuple[str, str], Tri]
    builds: bool
    evidence: bool


def evaluate(
    tree: ast.Module, path: Optional[str] = None, script: Optional[bool] = None
) -> Optional[Evaluation]:
    """The script's sources and macros per scenario (see the module docstring); None when the
    interpreter gave up.  ``path``: the script's file (globs and ``__file__`` are read against its
    directory); ``script``: does it run as ``__main__`` (default: named ``setup.py``)."""
    if script is None:
        script = path is None or os.path.basename(path) == "setup.py"
    results = []
    shared = _Shared(tree)
    try:
        for k in range(len(SCENARIOS)):
            results.append(_scenario(tree, path, k, script, shared))
    except (_GiveUp, RecursionError):
        return None
    sources: Dict[Tuple[str, ...], Worlds] = {}
    macros: Dict[Tuple[str, str], Worlds] = {}
    # A script that builds somewhere is read by what it builds (a scenario that builds nothing
    # compiles nothing); one that builds nothing anywhere by what it writes in each scenario.
    built = any(r.builds for r in results)
    for k, r in enumerate(results):
        pairs = (
            ((r.compiled, sources), (r.defined, macros))
            if built
            else ((r.written, sources), (r.written_macros, macros))
        )
        for table, out in pairs:
            for key, cert in table.items():
                where = list(out.get(key, (False, False, False)))
                where[k] = cert
                out[key] = tuple(where)  # type: ignore[assignment]
    if built:
        # a scenario that builds nothing (it stops first: ``raise`` where nvcc is missing)
        # defines nothing for a compiler that never runs: its macros are unknown there
        for key, certs in list(macros.items()):
            macros[key] = tuple(w if results[k].builds else None for k, w in enumerate(certs))  # type: ignore[assignment]
    return Evaluation(sources, macros, any(r.evidence for r in results))
