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

**Phases.**  ``engine_paths.check_paths`` runs :meth:`Project.prepass` over the files it checks,
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
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    Generic,
    Iterable,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

from rocm_lint.python.project_text import (
    NEVER_PROJECT,
    called,
    importable,
    imported_modules,
    lines_with,
    reachable,
    top_level_blocks,
    usable_trigger,
)
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


class ExportedFacts(Generic[T]):
    """A fact modules export by name to their importers (see the module docstring)."""

    def __init__(
        self,
        name: str,
        words: Sequence[str],
        compute: Callable[[ModuleContext], Dict[str, T]],
        *,
        triggers: bool = False,
        evidence: Optional[Callable[[str], List[int]]] = None,
    ) -> None:
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
        blocks = [b for b in top_level_blocks(text) if not b[0].startswith("__")]  # never __all__
        found: List[str] = []
        for name, start, end in blocks:
            i = bisect.bisect_left(offsets, start)
            if i < len(offsets) and offsets[i] < end:
                found.append(name)
        # A definition that calls one of them may wrap it (get_cc() -> _get_cc(device)): two
        # rounds.  A call, not a mention: a list of names or a docstring wraps nothing.
        for _ in range(2):
            fresh = [
                name for name, start, end in blocks if name not in found and called(text[start:end], found)
            ]
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
    "predicates",
    (
        "torch.version",
        "is_rocm",
        "is_hip",
        "IS_ROCM",
        "IS_HIP",
        "HIP_EXTENSION",
        "ROCM_HOME",
        "CUDA_HOME",
        "current_platform",
        "rocm",
        'hip"',
        "hip'",
    ),
    _exported_predicates,
)


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

    def __init__(
        self,
        config: "Config",
        roots: Iterable[str] = (),
        seed: Optional[dict] = None,
        workspace: Optional[Workspace] = None,
    ) -> None:
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

    def prepass(
        self,
        sources: Iterable[Tuple[str, Callable[[], Optional[str]]]],
        facts: Sequence[ExportedFacts],
        follow_imports: bool = False,
        known: Optional[Callable[[str], Optional[List[str]]]] = None,
    ) -> None:
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
                for name in imported_modules(text):
                    found = self.find_module(path, name)
                    if found is not None:
                        imported[found] = None
            names: List[str] = []
            if importable(path):
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
        self.trigger_words = frozenset(w for w in words if usable_trigger(w))

    def words_for(self, path: str, text: str, facts: Sequence[ExportedFacts]) -> List[str]:
        """Without a pre-pass (flake8, the language server): the trigger names of the project
        modules ``path`` imports (one level, cached per module) that ``text`` mentions."""
        trigger_facts = [f for f in facts if f.triggers]
        if self.prepassed or not trigger_facts:
            return self.mentioned_triggers(text)
        words: Set[str] = set()
        for name in imported_modules(text):
            found = self.find_module(path, name)
            if found is None:
                continue
            module = self._load(found)
            if module is None or module.failed:
                continue
            key = "candidates:" + ",".join(f.name for f in trigger_facts)
            cached = module.facts.get(key)
            if cached is None:
                cached = module.facts[key] = {
                    w: True for f in trigger_facts for w in f.candidates(module.text or "")
                }
            words.update(cached)
        if importable(path):
            words.update(w for f in trigger_facts for w in f.candidates(text))  # its own wrappers
        # the names a pre-pass would keep: the same findings as `rocm-lint check`, and a short or
        # test name does not send every file that mentions it to the analyser (flake8 analysed
        # 2.3x the files of a CLI run on torch/_inductor)
        return reachable(text, {w for w in words if usable_trigger(w)})

    def mentioned_triggers(self, text: str) -> List[str]:
        """The exported trigger names ``text`` can reach (imported by name from a project
        module, read through an imported project module, or defined in the file itself).
        A name that is only mentioned (a local variable, a method of another object, a
        string) can never resolve to an export, so it parses nothing."""
        return reachable(text, self.trigger_words)

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
        dots = qualname[: len(qualname) - len(rest)]
        if not dots and rest.split(".", 1)[0] in NEVER_PROJECT:
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
        return any(attr in line and "import" in line for line in lines_with(text, attr))

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
            self.workspace.note_read(
                path
            )  # read earlier for another file: this file's check depends on it too
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


def project_for(ws: Workspace, config: "Config") -> Project:
    """The lazily-filled project of front ends that run no pre-pass: one per configuration in
    the workspace (``Workspace.per_config``)."""
    return ws.per_config("project", config, lambda: Project(config, workspace=ws))


def use_project(ws: Workspace, config: "Config", project: Project) -> None:
    """Make ``project`` (filled by a pre-pass) the one :func:`project_for` answers for ``config``
    in ``ws``: ``--fix`` after a check then reads the same facts the check read."""
    ws.set_per_config("project", config, project)
