"""The project model: what a module exports to the modules that import it (phase 0).

A rule's finding often depends on a fact that lives in another module of the project: a
ROCm predicate defined in ``utils.py`` (``ON_AMD = torch.version.hip is not None``) and
imported elsewhere, a capability wrapper (``def get_cc(): return
torch.cuda.get_device_capability()``) compared with ``(9, 0)`` in another file, a helper
returning nvcc flags.  This module answers those questions without importing or running
project code.

**Exported facts.**  A fact a module exports is declared once, as an :class:`ExportedFacts`
(next to the rules that read it, ``Rule(..., exports=(...,))``, or here for the gate
predicates every rule relies on): ``compute(ctx)`` reads a module's :class:`ModuleContext` and
returns ``{exported name: value}``; ``words`` are substrings a module must contain to export
anything (most modules are answered from their text, unparsed); ``triggers=True`` makes the
exported names trigger words of the files being checked (a file that only calls ``get_cc()``
holds no trigger word of ROC106 itself).

**The project.**  :class:`Project` resolves an imported qualified name (``pkg.utils.get_cc``,
relative ``..utils.get_cc``) to a module file (the importing file's directory, the root above
its top package, the configuration's root and its ``src/``), reads it bounded, parses it
guarded, computes the asked fact once per module and follows re-exports (``from .cc import
get_cc`` in a package ``__init__``) at most :data:`MAX_DEPTH` modules deep.  Nothing outside
those roots is read: third-party packages and torch never are.

**Phases.**  ``engine.check_paths`` runs :meth:`Project.prepass` over the files it checks,
before any rule runs: only files whose text holds a ``words`` entry of a trigger fact are
parsed, and the exported names become trigger words (:attr:`Project.trigger_words`).  The
seed it returns is handed to worker processes (:meth:`Project.from_seed`).  Everything else is
lazy: a module is summarised the first time a rule asks about a name imported from it, then
cached in the project (which the front end's ``Workspace`` holds).  Front ends with no pre-pass (flake8, the language server) use
:func:`project_for` and get the same answers for the names a parsed file imports.

Rules read the model through ``ModuleContext.exported(fact, node)`` (a name defined in the
module itself, or imported from a project module); the gate analysis asks it about imported
predicates.  :func:`module_dependencies` lists the project modules a file's findings read,
for a cache key.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Dict, FrozenSet, Generic, Iterable, List, Optional, Sequence, Set, \
    Tuple, TypeVar

from rocm_lint.workspace import Workspace

if TYPE_CHECKING:  # pragma: no cover
    from rocm_lint.config import Config

# A module's context (rocm_lint.python.context.ModuleContext, which reads this module: named
# here without importing it).
ModuleContext = Any

T = TypeVar("T")

MAX_DEPTH = 3  # re-exports followed (``__init__`` -> module -> module)
MAX_MODULE_BYTES = 2 * 1024 * 1024  # a project module larger than this exports nothing
MAX_MODULES = 512  # summarised modules kept per process (least recently used go first)
# Top-level names that never resolve to a project module (saves file-system probes).
_NEVER_PROJECT = frozenset({
    "torch", "os", "sys", "re", "typing", "math", "numpy", "np", "subprocess", "functools", "itertools",
    "collections", "dataclasses", "pathlib", "json", "logging", "warnings", "contextlib", "abc", "enum",
    "time", "shutil", "argparse", "unittest", "pytest", "triton", "setuptools", "packaging", "importlib",
    "copy", "inspect", "glob", "io", "random", "string", "tempfile", "threading", "multiprocessing",
})


class ExportedFacts(Generic[T]):
    """A fact modules export by name to their importers (see the module docstring)."""

    def __init__(self, name: str, words: Sequence[str], compute: Callable[[ModuleContext], Dict[str, T]],
                 *, triggers: bool = False, evidence: Optional[Callable[[str], List[int]]] = None) -> None:
        self.name = name
        self.words = tuple(words)
        self.compute = compute
        self.triggers = triggers
        # Where in a text the fact's evidence is (offsets); by default where ``words`` occur.
        self.evidence = evidence or self._word_offsets

    def _word_offsets(self, text: str) -> List[int]:
        offsets = []
        for word in self.words:
            pos = text.find(word)
            while pos != -1:
                offsets.append(pos)
                pos = text.find(word, pos + len(word))
        return offsets

    def could_export(self, text: str) -> bool:
        return bool(self.evidence(text))

    def candidates(self, text: str) -> List[str]:
        """Names the module might export, by text alone (the pre-pass parses nothing): every
        top-level ``def`` whose body holds one of ``words``, and every top-level assignment
        whose statement does.  A superset: the fact itself is computed, parsed, only when a
        file that mentions one of these names is checked."""
        offsets = sorted(self.evidence(text))
        if not offsets:
            return []
        blocks = [b for b in _top_level_blocks(text) if not b[0].startswith("__")]  # never __all__
        found: List[str] = []
        for name, start, end in blocks:
            i = bisect.bisect_left(offsets, start)
            if i < len(offsets) and offsets[i] < end:
                found.append(name)
        # A definition that calls one of them may wrap it (get_cc() -> _get_cc(device)): two
        # rounds.  A call, not a mention: a list of names or a docstring wraps nothing.
        for _ in range(2):
            fresh = [name for name, start, end in blocks if name not in found
                     and _called(text[start:end], found)]
            if not fresh:
                break
            found.extend(fresh)
        return found

    def __repr__(self) -> str:
        return f"ExportedFacts({self.name!r})"


# -- the gate predicates every rule relies on ----------------------------------------------------
def _exported_predicates(ctx: ModuleContext):
    """Module-level names (``("value", facts)``) and zero-argument functions (``("call",
    facts)``) that test the platform; facts as :mod:`rocm_lint.python.gates` gives them."""
    gates = ctx.gates
    found = {name: ("value", facts) for name, facts in gates.bound_names.items()}
    for name, facts in gates.bound_functions.items():
        found.setdefault(name, ("call", facts))
    for name in gates.device_names:  # DEVICE_TYPE = get_device_type(): "hip" on ROCm
        found.setdefault(name, ("device", None))
    return found


PREDICATES: ExportedFacts = ExportedFacts(
    "predicates", ("torch.version", "is_rocm", "is_hip", "IS_ROCM", "IS_HIP", "HIP_EXTENSION", "ROCM_HOME",
                   "CUDA_HOME", "current_platform", "rocm", "hip\"", "hip'"),
    _exported_predicates)


# -- modules and files ----------------------------------------------------------------------------
def _package_root(path: str) -> str:
    """The directory above the topmost package holding ``path`` (its ``sys.path`` entry)."""
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(32):
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return directory
        directory = parent
    return directory


class _Module:
    __slots__ = ("path", "text", "ctx", "facts", "failed")

    def __init__(self, path: str, text: Optional[str]) -> None:
        self.path = path
        self.text = text
        self.ctx = None
        self.facts: Dict[str, Dict[str, object]] = {}
        self.failed = text is None


class Project:
    """The project's modules as rules see them (see the module docstring)."""

    def __init__(self, config: "Config", roots: Iterable[str] = (), seed: Optional[dict] = None,
                 workspace: Optional[Workspace] = None) -> None:
        self.config = config
        # the front end's caches (``rocm_lint.workspace``): the readers of every language use it
        self.workspace = workspace if workspace is not None else Workspace()
        extra: List[str] = []
        if config.root is not None:
            extra += [str(config.root), os.path.join(str(config.root), "src")]
        self.roots: Tuple[str, ...] = tuple(dict.fromkeys(os.path.abspath(r) for r in [*roots, *extra]))
        self._modules: Dict[str, _Module] = {}
        self._files: Dict[Tuple[str, str], Optional[str]] = {}
        self._lookups: Dict[Tuple[str, str, str], object] = {}
        self.trigger_words: FrozenSet[str] = frozenset()
        self.prepassed = seed is not None  # a pre-pass filled trigger_words (else: words_for)
        self.file_candidates: Dict[str, List[str]] = {}  # what the pre-pass computed, by path
        if seed:
            self.trigger_words = frozenset(seed.get("trigger_words", ()))

    # -- the pre-pass ----------------------------------------------------------------------
    @classmethod
    def from_seed(cls, config: "Config", seed: dict, workspace: Optional[Workspace] = None) -> "Project":
        return cls(config, seed.get("roots", ()), seed, workspace)

    def trigger_key(self) -> str:
        """A digest of the trigger names (the cache's key for "the same project facts")."""
        import hashlib

        return hashlib.blake2b("\n".join(sorted(self.trigger_words)).encode(), digest_size=8).hexdigest()

    def seed(self) -> dict:
        """What worker processes need to answer as this process would (picklable)."""
        return {"roots": list(self.roots), "trigger_words": sorted(self.trigger_words)}

    def prepass(self, sources: Iterable[Tuple[str, Callable[[], Optional[str]]]],
                facts: Sequence[ExportedFacts], follow_imports: bool = False,
                known: Optional[Callable[[str], Optional[List[str]]]] = None) -> None:
        """Collect the names the checked files export through trigger facts (``facts`` with
        ``triggers=True``): ``sources`` yields (path, read) pairs for the Python files.

        With ``follow_imports`` (small runs: pre-commit hands over the changed files only) the
        project modules the files import are read too, one level deep, so that a file calling
        a wrapper defined in an unchanged module gets the same findings as in a whole-tree run.
        ``known(path)`` may answer a file's candidate names from the cache (None: compute them);
        what was computed is left in :attr:`file_candidates` for the cache to keep."""
        self.prepassed = True
        trigger_facts = [f for f in facts if f.triggers]
        if not trigger_facts:
            return
        words: Set[str] = set(self.trigger_words)
        imported: Dict[str, None] = {}
        for path, read in sources:
            cached = known(path) if known is not None and not follow_imports else None
            if cached is not None:
                words.update(cached)
                continue
            text = read()
            if not text:
                continue
            if follow_imports:
                for name in _imported_modules(text):
                    found = self.find_module(path, name)
                    if found is not None:
                        imported[found] = None
            names: List[str] = []
            if _importable(path):
                for fact in trigger_facts:
                    names.extend(fact.candidates(text))
            self.file_candidates[path] = names
            words.update(names)
        for path in imported:
            module = self._load(path)
            if module is None or module.failed:
                continue
            for fact in trigger_facts:
                words.update(fact.candidates(module.text or ""))
        self.trigger_words = frozenset(w for w in words if _usable_trigger(w))

    def words_for(self, path: str, text: str, facts: Sequence[ExportedFacts]) -> List[str]:
        """Without a pre-pass (flake8, the language server): the trigger names of the project
        modules ``path`` imports (one level, cached per module) that ``text`` mentions."""
        trigger_facts = [f for f in facts if f.triggers]
        if self.prepassed or not trigger_facts:
            return self.mentioned_triggers(text)
        words: Set[str] = set()
        for name in _imported_modules(text):
            found = self.find_module(path, name)
            if found is None:
                continue
            module = self._load(found)
            if module is None or module.failed:
                continue
            key = "candidates:" + ",".join(f.name for f in trigger_facts)
            cached = module.facts.get(key)
            if cached is None:
                cached = module.facts[key] = {w: True for f in trigger_facts
                                              for w in f.candidates(module.text or "")}
            words.update(cached)
        if _importable(path):
            words.update(w for f in trigger_facts for w in f.candidates(text))  # its own wrappers
        # the names a pre-pass would keep: the same findings as `rocm-lint check`, and a short or
        # test name does not send every file that mentions it to the analyser (flake8 analysed
        # 2.3x the files of a CLI run on torch/_inductor)
        return _reachable(text, {w for w in words if _usable_trigger(w)})

    def mentioned_triggers(self, text: str) -> List[str]:
        """The exported trigger names ``text`` can reach (imported by name from a project
        module, read through an imported project module, or defined in the file itself).
        A name that is only mentioned (a local variable, a method of another object, a
        string) can never resolve to an export, so it parses nothing."""
        return _reachable(text, self.trigger_words)


    # -- lookups -----------------------------------------------------------------------------
    def lookup(self, importer: str, qualname: str, fact: ExportedFacts[T]) -> Optional[T]:
        """What ``fact`` says about ``qualname`` (a dotted name as the importing module's imports
        resolve it, relative ones with their leading dots), or None if unknown."""
        key = (os.path.dirname(os.path.abspath(importer)), qualname, fact.name)
        if key in self._lookups:
            return self._lookups[key]  # type: ignore[return-value]
        result = self._lookup(importer, qualname, fact, MAX_DEPTH)
        self._lookups[key] = result
        return result

    def _lookup(self, importer: str, qualname: str, fact: ExportedFacts, depth: int):
        if depth < 0 or "." not in qualname:
            return None
        rest = qualname.lstrip(".")
        dots = qualname[:len(qualname) - len(rest)]
        if not dots and rest.split(".", 1)[0] in _NEVER_PROJECT:
            return None
        inner, _, attr = rest.rpartition(".")
        module_name = dots + inner
        path = self.find_module(importer, module_name)
        if path is None:
            return None
        module = self._load(path)
        if module is None or module.failed:
            return None
        text = module.text or ""
        if attr in fact.candidates(text):  # parsed only when the text says it may export attr
            exports = self._compute(module, fact)
            if attr in exports:
                return exports[attr]
            return None
        if not self._may_reexport(module, attr):
            return None
        ctx = self._context(module)
        if ctx is None:
            return None
        origin = ctx.imports.names.get(attr)  # ``from .cc import get_cc``: follow it
        if origin is not None and origin != attr:
            return self._lookup(path, origin, fact, depth - 1)
        return None

    @staticmethod
    def _may_reexport(module: _Module, attr: str) -> bool:
        """``from .cc import get_cc`` (or ``import ... as attr``) in the module's text."""
        text = module.text or ""
        return any(attr in line and "import" in line for line in _lines_with(text, attr))

    def find_module(self, importer: str, module_name: str) -> Optional[str]:
        """The file of a project module (``pkg.utils``, ``..utils``) imported from ``importer``."""
        directory = os.path.dirname(os.path.abspath(importer))
        key = (directory, module_name)
        if key in self._files:
            return self._files[key]
        found = None
        if module_name.startswith("."):
            level = len(module_name) - len(module_name.lstrip("."))
            base = directory
            for _ in range(level - 1):
                base = os.path.dirname(base)
            rest = module_name[level:]
            found = _module_file(base, rest.split(".") if rest else [])
        elif module_name:
            parts = module_name.split(".")
            for root in dict.fromkeys([directory, _package_root(importer), *self.roots]):
                found = _module_file(root, parts)
                if found is not None:
                    break
        self._files[key] = found
        return found

    # -- summaries -----------------------------------------------------------------------------
    def _remember(self, path: str, text: str) -> _Module:
        path = os.path.abspath(path)
        module = self._modules.get(path)
        if module is None or module.text != text:
            module = _Module(path, text)
            self._store(path, module)
        return module

    def _store(self, path: str, module: _Module) -> None:
        if len(self._modules) >= MAX_MODULES:
            self._modules.pop(next(iter(self._modules)))
        self._modules[path] = module

    def _load(self, path: str) -> Optional[_Module]:
        module = self._modules.get(path)
        if module is not None:
            self.workspace.note_read(path)  # read earlier for another file: this file's check depends on it too
        if module is None:
            module = _Module(path, _read_module(self.workspace, path))
            self._store(path, module)
        return module

    def _context(self, module: _Module) -> Optional[ModuleContext]:
        if module.ctx is None and not module.failed:
            try:
                tree = ast.parse(module.text or "", filename=module.path)
                module.ctx = _CONTEXT[0](module.path, tree, self.config, module.text or "", project=self)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                module.failed = True
        return module.ctx

    def _compute(self, module: _Module, fact: ExportedFacts) -> Dict[str, object]:
        found = module.facts.get(fact.name)
        if found is None:
            found = module.facts[fact.name] = {}  # an import cycle reads nothing while computing
            if fact.could_export(module.text or ""):
                ctx = self._context(module)
                if ctx is not None:
                    try:
                        found = dict(fact.compute(ctx))
                    except RecursionError:
                        found = {}
            module.facts[fact.name] = found
        return found


# The class of a module's context: ``rocm_lint.python.context`` registers ModuleContext when it
# is imported (the context reads the project, so the project may not import the context).
_CONTEXT: List[Callable[..., ModuleContext]] = []


def register_context(factory: Callable[..., ModuleContext]) -> None:
    _CONTEXT[:] = [factory]


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


# ``from .utils import x`` / ``import pkg.utils``: the modules a file imports, by text (linear:
# each alternative consumes a distinct character class).
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.+[\w.]*|\w[\w.]*)[ \t]+import\b|import[ \t]+(\w[\w.]*))", re.M)




# Other top-level statements: they end the block of the def/assignment before them (a
# ``log = logging.getLogger()`` line is not the class that follows it).
_TOP_OTHER = re.compile(r"\n(?:class[ \t]|@|if[ \t(]|elif[ \t(]|else[ \t]*:|try[ \t]*:|except\b|finally\b"
                        r"|for[ \t]|while[ \t]|with[ \t]|async[ \t]+(?:with|for)[ \t]|import[ \t]|from[ \t])")


def _top_level_blocks(text: str) -> List[Tuple[str, int, int]]:
    """(name, start, end): each top-level def/assignment up to the next top-level statement."""
    led = "\n" + text  # newline-led patterns: a match at k starts the line at text offset k
    heads = sorted([(m.start(), m.group(1) or m.group(2)) for m in _TOP_NAME.finditer(led)]
                   + [(m.start(), "") for m in _TOP_OTHER.finditer(led)])
    return [(name, start, heads[i + 1][0] if i + 1 < len(heads) else len(text))
            for i, (start, name) in enumerate(heads) if name]


def _called(text: str, words: Iterable[str]) -> bool:
    """Does ``text`` call one of ``words`` (``word(`` or ``word (``, as a whole word)?"""
    for word in words:
        pos = text.find(word)
        while pos != -1:
            end = pos + len(word)
            if pos == 0 or not _is_word_char(text[pos - 1]):
                rest = text[end:end + 8].lstrip(" \t")
                if rest.startswith("("):
                    return True
            pos = text.find(word, end)
    return False


def _importable(path: str) -> bool:
    """Could another module import names from this file?  Not a ``setup.py`` script nor a
    test module (their names would only make other files look interesting)."""
    name = os.path.basename(path)
    return name not in ("setup.py", "conftest.py", "__main__.py") and not name.startswith("test_") \
        and not name.endswith("_test.py")


def _lines_with(text: str, word: str, limit: int = 64) -> List[str]:
    """The lines of ``text`` that hold ``word`` (at most ``limit``)."""
    lines = []
    pos = text.find(word)
    while pos != -1 and len(lines) < limit:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        lines.append(text[start:end])
        pos = text.find(word, end)
    return lines


def _imported_modules(text: str) -> List[str]:
    names: Dict[str, None] = {}
    for m in _IMPORT.finditer(text):
        name = m.group(1) or m.group(2)
        if name and name.strip(".") not in _NEVER_PROJECT and name.split(".", 1)[0] not in _NEVER_PROJECT:
            names[name] = None
    return list(names)


# ``from M import a, b as c`` (parenthesised lists, bounded) and ``import a.b as c, d``; led by
# a newline (the text is searched as "\n" + text): sre then skips to line starts itself.
_FROM_NAMES = re.compile(r"\n[ \t]*from[ \t]+(\.+[\w.]*|\w[\w.]*)[ \t]+import[ \t]*(\([^)]{0,20000}\)?|[^\n]*)")
_IMPORT_NAMES = re.compile(r"\n[ \t]*import[ \t]+([^\n;#]*)")
# A top-level ``def name`` / ``async def name`` / ``NAME =`` / ``NAME: T =`` line, newline-led.
_TOP_NAME = re.compile(r"\n(?:(?:async[ \t]+)?def[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?\+?=(?!=))")
_CHAIN = re.compile(r"(?:[ \t]*\.[ \t]*\w+)+")


def _is_project_module(name: str) -> bool:
    return name.startswith(".") or name.split(".", 1)[0] not in _NEVER_PROJECT


def _import_bindings(text: str) -> Tuple[Set[str], Set[str]]:
    """(names imported by name from project modules, names bound to project modules), by text."""
    by_name: Set[str] = set()
    modules: Set[str] = set()
    if "import" not in text:
        return by_name, modules
    led = "\n" + text
    for m in _FROM_NAMES.finditer(led):
        if not _is_project_module(m.group(1)):
            continue
        names = m.group(2)
        for part in names.strip("()\\ \t").replace("\n", ",").split(","):
            words = part.split("#", 1)[0].split()
            if not words or words[0] == "#":
                continue
            if not words[0].isidentifier():
                break  # a comment: the rest of the line says nothing
            by_name.add(words[0])
            modules.add(words[-1])  # ``from pkg import utils``: utils.get_cc() reaches utils
    for m in _IMPORT_NAMES.finditer(led):
        for part in m.group(1).split(","):
            words = part.split()
            if words and _is_project_module(words[0]):
                modules.add(words[-1] if len(words) == 3 and words[1] == "as" else words[0].split(".", 1)[0])
    return by_name, modules


def _top_level_names(text: str) -> Set[str]:
    return {m.group(1) or m.group(2) for m in _TOP_NAME.finditer("\n" + text)}


def _attribute_names(text: str, modules: Set[str]) -> Set[str]:
    """The attribute names read through ``module.a.b`` chains rooted at one of ``modules``."""
    names: Set[str] = set()
    for module in modules:
        if module + "." not in text and module + " ." not in text and module + "\t." not in text:
            continue  # (most imported names are functions: never read through a dot)
        pos = text.find(module)
        while pos != -1:
            end = pos + len(module)
            if pos == 0 or not (_is_word_char(text[pos - 1]) or text[pos - 1] == "."):
                m = _CHAIN.match(text, end)
                if m:
                    names.update(part.strip() for part in m.group().split(".")[1:])
            pos = text.find(module, end)
    return names


def _reachable(text: str, words: AbstractSet[str]) -> List[str]:
    """The ``words`` that name an export this file can reach, as ``ModuleContext.exported``
    resolves names: imported by name from a project module, read as an attribute of an
    imported project module (``utils.get_cc``), or defined at the top of the file itself."""
    if not words:
        return []
    by_name, modules = _import_bindings(text)
    found = (by_name | _top_level_names(text)) & words
    if modules:
        found |= _attribute_names(text, modules) & words
    return sorted(found)


def _mentioned(text: str, words: Iterable[str]) -> List[str]:
    """The ``words`` that ``text`` holds as whole words."""
    found = []
    for word in words:
        pos = text.find(word)
        while pos != -1:  # a whole-word occurrence?
            end = pos + len(word)
            if (pos == 0 or not _is_word_char(text[pos - 1])) and (end == len(text) or not _is_word_char(text[end])):
                found.append(word)
                break
            pos = text.find(word, end)
    return sorted(found)


def _module_file(root: str, parts: List[str]) -> Optional[str]:
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    base = os.path.join(root, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    return None


def _read_module(ws: Workspace, path: str) -> Optional[str]:
    try:
        data = ws.read_bounded(path, MAX_MODULE_BYTES)
    except OSError:
        return None
    if isinstance(data, str) or b"\0" in data:
        return None  # too large, not a regular file, or binary: exports nothing
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _usable_trigger(word: str) -> bool:
    """A candidate name worth a trigger: not short, not a test or ``main`` (every project has them)."""
    return word.isidentifier() and len(word) > 2 and not word.startswith(("test", "Test")) and word != "main"


def project_for(ws: Workspace, config: "Config") -> Project:
    """The lazily-filled project of front ends that run no pre-pass: one per configuration in
    the workspace (``Workspace.per_config``)."""
    return ws.per_config("project", config, lambda: Project(config, workspace=ws))


def use_project(ws: Workspace, config: "Config", project: Project) -> None:
    """Make ``project`` (filled by a pre-pass) the one :func:`project_for` answers for ``config``
    in ``ws``: ``--fix`` after a check then reads the same facts the check read."""
    ws.set_per_config("project", config, project)
