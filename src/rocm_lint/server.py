"""``rocm-lint server``: a language server (LSP over stdio) built on pygls.

It checks the editor's in-memory text (never the file on disk) with the same engine the CLI
runs, on open, change and save, and publishes one diagnostic per finding, its code linked to
the rule's page.  Findings with a fix get quick fixes (Python: the LibCST fix engine; C++:
the edits the finding carries, verified to leave the NVIDIA translation unit unchanged), and
``source.fixAll.rocm-lint`` applies every safe fix of a document at once.  Edits are checked
after a quiet spell (``debounce``, 50 ms by default): a burst of changes costs one check, of the
last text; opening and saving check at once.  Settings come from
the closest config file above each document (``.rocm-lint.toml``, ``rocm-lint.toml``,
``[tool.rocm-lint]`` of a ``pyproject.toml``), re-read when it changes, or from the file the client
names (``initializationOptions`` or ``workspace/didChangeConfiguration`` settings: ``{"config":
PATH}``, also under ``"settings"`` or ``"rocm-lint"``).  While a buffer does not parse (half-typed
code), its last good diagnostics stay, as pyright and ruff keep them.  Hover on a diagnostic
shows the rule's page, and clients that pull diagnostics (``textDocument/diagnostic``) get them
that way instead of pushed (``server_features``).

pygls is an optional dependency (``pip install 'rocm-lint[lsp]'``): only this module and
``server_features`` import it, and only ``rocm-lint server`` imports them.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from rocm_lint import __version__
from rocm_lint.config import (CONFIG_NAMES, Config, ConfigError, check_codes, find_config, flake8_options, load_file,
                               with_flake8_options)
from rocm_lint.discovery import language_of
from rocm_lint.finding import Applicability, Edit, FileError, Finding
from rocm_lint.lines import NEWLINE
from rocm_lint.registry import all_rules, get_rule
from rocm_lint import server_features
from rocm_lint.server_features import PullState
from rocm_lint.workspace import Workspace

log = logging.getLogger(__name__)

SOURCE = "rocm-lint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.rocm-lint"
# Documents with no file name (unsaved buffers): the language the editor says they are in.
_SUFFIX_BY_LANGUAGE_ID = {
    "python": ".py", "cuda-cpp": ".cu", "cuda": ".cu", "hip": ".hip", "cpp": ".cpp", "c": ".c",
    "shellscript": ".sh", "sh": ".sh", "bash": ".sh", "dockerfile": ".dockerfile", "yaml": ".yaml",
    "dotenv": ".env", "cmake": ".cmake",
}
# A change is checked once no other change of the document came for this long (milliseconds;
# the client's "debounce" setting).  Editors send bursts: auto-closed brackets, format-on-type,
# multi-cursor edits, undo groups and fast typing arrive a few milliseconds apart; changes that
# come while a check runs are queued and count as one burst too.  50 ms adds little to the
# answer a keystroke waits for and keeps a burst to one check of its last text.
DEFAULT_DEBOUNCE_MS = 50.0
MAX_DEBOUNCE_MS = 10_000.0


# -- configuration --------------------------------------------------------------------------------
class ConfigCache:
    """The Config for each document: the closest config file (or the one the client names),
    loaded once per modification time.  A broken config is reported once and the defaults used."""

    def __init__(self) -> None:
        self._loaded: Dict[Path, Tuple[int, object]] = {}
        # The same settings, the same Config object from one check to the next: the project
        # model (facts of the modules a document imports) is kept per Config, and a new object
        # per keystroke rebuilt it every time (a workspace without a config file, or with
        # flake8 options).  Keyed by what the object is made of.
        self._made: Dict[tuple, Any] = {}
        self.reported: set = set()
        self.explicit: Optional[Path] = None  # the client's "config" setting

    def clear(self) -> None:
        self._loaded.clear()
        self._made.clear()

    def _stable(self, key: tuple, make: Callable[[], Any]) -> Any:
        config = self._made.get(key)
        if config is None:
            if len(self._made) > 64:
                self._made.clear()
            config = self._made[key] = make()
        return config

    def for_path(self, path: Optional[str], fallback_root: Optional[str]) -> Tuple[Config, Optional[str]]:
        """(config, error message or None) for a document at ``path``. The closest config file
        is looked up on every check (a few small reads), so one created or edited outside the
        editor counts from the next check on; its parsed settings are kept by modification time."""
        directory = Path(path).parent if path else Path(fallback_root or os.getcwd())
        config, problem = self._from_file(directory, fallback_root)
        # the rocm-lint options of flake8's config file, as `rocm-lint check` and flake8 add them
        values, source = flake8_options(directory)
        if not values:
            return config, problem
        key = ("flake8", id(config), source, tuple(sorted(values.items())))
        made = self._stable(key, lambda: (config, with_flake8_options(config, values, source)))
        if made[0] is not config:  # the base was loaded again since: make it anew
            self._made.pop(key, None)
            made = self._stable(key, lambda: (config, with_flake8_options(config, values, source)))
        return made[1], problem

    def _default(self, root: Optional[Path]) -> Config:
        return self._stable(("default", root), lambda: Config(root=root))

    def _from_file(self, directory: Path, fallback_root: Optional[str]) -> Tuple[Config, Optional[str]]:
        if self.explicit is not None:
            source: Optional[Path] = self.explicit
        else:
            try:
                source = find_config(directory)
            except ConfigError as exc:  # a config file that cannot be read (a FIFO, too large)
                return self._default(Path(fallback_root) if fallback_root else None), str(exc)
        if source is None:
            return self._default(Path(fallback_root) if fallback_root else None), None
        try:
            mtime = source.stat().st_mtime_ns
        except OSError as exc:
            return self._default(None), f"{source}: cannot read config: {(exc.strerror or str(exc)).lower()}"
        cached = self._loaded.get(source)
        if cached is None or cached[0] != mtime:
            try:
                value: object = load_file(source)
                check_codes(value, [r.code for r in all_rules()])  # type: ignore[arg-type]
            except ConfigError as exc:
                value = exc
            self._loaded[source] = cached = (mtime, value)
        value = cached[1]
        if isinstance(value, ConfigError):
            return self._default(source.parent), str(value)
        return value, None  # type: ignore[return-value]


def config_setting(options: object) -> Optional[str]:
    """The config path in the client's options: ``{"config": PATH}``, or the same under
    ``"settings"`` or ``"rocm-lint"`` (how VS Code-style clients nest a server's settings)."""
    if not isinstance(options, dict):
        return None
    for key in ("rocm-lint", "rocm_lint", "rocmLint", "settings"):
        nested = config_setting(options.get(key))
        if nested:
            return nested
    value = options.get("config") or options.get("configuration")
    return value if isinstance(value, str) and value else None


def debounce_setting(options: object) -> Optional[float]:
    """The client's ``{"debounce": MS}`` (nested as ``config_setting`` reads it), in milliseconds,
    clamped to 0..10,000; None when absent or not a number."""
    if not isinstance(options, dict):
        return None
    for key in ("rocm-lint", "rocm_lint", "rocmLint", "settings"):
        nested = debounce_setting(options.get(key))
        if nested is not None:
            return nested
    value = options.get("debounce")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return min(max(float(value), 0.0), MAX_DEBOUNCE_MS)


def is_config_file(uri: str, explicit: Optional[Path]) -> bool:
    name = os.path.basename(uri)
    return name in CONFIG_NAMES or (explicit is not None and name == explicit.name)


# -- positions -------------------------------------------------------------------------------------
class Positions:
    """Finding positions to LSP positions for one text.

    Python findings carry ``ast`` columns (UTF-8 byte offsets); the C++ and config scanners
    carry character offsets.  LSP wants the client's code units (UTF-16 unless negotiated).
    """

    def __init__(self, text: str, codec: PositionCodec, byte_columns: bool) -> None:
        self.lines = NEWLINE.split(text)  # a final empty line too: the end of the document
        self.codec = codec
        self.byte_columns = byte_columns

    def _chars(self, line: int, col: int) -> int:
        if not self.byte_columns or line >= len(self.lines):
            return col
        return len(self.lines[line].encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def position(self, line: int, col: int, *, byte_columns: Optional[bool] = None) -> types.Position:
        """``line`` 1-based, ``col`` 0-based (bytes or characters as the finding's kind has it)."""
        line0 = max(line - 1, 0)
        if line0 >= len(self.lines):
            return types.Position(line=len(self.lines), character=0)
        use_bytes = self.byte_columns if byte_columns is None else byte_columns
        chars = self._chars(line0, col) if use_bytes else col
        chars = min(chars, len(self.lines[line0]))
        return self.codec.position_to_client_units(self.lines, ServerTextPosition(line0, chars))

    def finding_range(self, f: Finding) -> types.Range:
        start = self.position(f.line, f.col)
        if f.end_line and (f.end_line, f.end_col) > (f.line, f.col):
            end = self.position(f.end_line, f.end_col)
        else:  # no end: to the end of the line
            line0 = max(f.line - 1, 0)
            end = self.position(f.line, len(self.lines[line0]) if line0 < len(self.lines) else 0,
                                byte_columns=False)
        return types.Range(start=start, end=end)

    def edit_range(self, edit: Edit) -> types.Range:
        # Fix edits are character-based for every language (fix.engine.edits_for: column 0).
        return types.Range(start=self.position(*edit.start, byte_columns=False),
                           end=self.position(*edit.end, byte_columns=False))

    def whole(self) -> types.Range:
        last = len(self.lines) - 1
        end = self.codec.position_to_client_units(self.lines, ServerTextPosition(last, len(self.lines[last])))
        return types.Range(start=types.Position(line=0, character=0), end=end)


# -- the server ------------------------------------------------------------------------------------
class RocmLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("rocm-lint", __version__)
        self.configs = ConfigCache()
        # uri -> (document version, text, findings) of the last check: code actions reuse it.
        self.results: Dict[str, Tuple[Optional[int], str, List[Finding]]] = {}
        # every cache of the analysis (project headers, build files, imported modules ...): the
        # files it read are stamped (mtime, size); a change drops it all (``Workspace.revalidate``)
        self.lint_workspace = Workspace()
        self.fixes: FixStore = {}  # the verified fixes of each document's last check (code actions)
        # uri -> the diagnostics of its last check that parsed: kept while the buffer does not parse
        self.last_good: Dict[str, List[types.Diagnostic]] = {}
        self.unparsable: set = set()
        self.pull = PullState()  # a client that pulls diagnostics (server_features)
        self.debounce_ms = DEFAULT_DEBOUNCE_MS
        self.pending: Dict[str, asyncio.TimerHandle] = {}  # uri -> its debounced check
        self.freeze_pending = False  # main(): gc.freeze() after the first check

    # -- debounced checks
    def schedule(self, uri: str) -> None:
        """Publish ``uri``'s diagnostics once no other change came for ``debounce_ms``: each
        change restarts the document's timer, so a burst is checked once, on its last text."""
        self.cancel(uri)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - called outside the server's loop
            loop = None
        if self.debounce_ms <= 0 or loop is None or self.pull.enabled:  # a pulling client asks itself
            self.publish(uri)
            return
        self.pending[uri] = loop.call_later(self.debounce_ms / 1000.0, self._due, uri)

    def cancel(self, uri: str) -> None:
        timer = self.pending.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def _due(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if self.workspace.text_documents.get(uri) is None:
            return  # closed meanwhile
        try:
            self.publish(uri, reuse=True)
        except Exception:  # noqa: BLE001 - a timer's error has no request to answer
            log.exception("rocm-lint: checking %s", uri)

    def set_config_path(self, value: Optional[str]) -> None:
        """The client's "config" setting (relative to the workspace root); None: look it up."""
        if value:
            path = Path(os.path.expanduser(value))
            if not path.is_absolute() and self.root():
                path = Path(self.root()) / path
            self.configs.explicit = path
        else:
            self.configs.explicit = None
        self.configs.clear()
        self.configs.reported.clear()

    def set_debounce(self, value: Optional[float]) -> None:
        """The client's "debounce" setting (milliseconds); None: the default."""
        self.debounce_ms = DEFAULT_DEBOUNCE_MS if value is None else value

    # -- documents
    def document_path(self, doc) -> Tuple[Optional[str], str]:
        """(real file path or None, the path the engine sees: picks the analyser)."""
        if doc.uri.startswith("file:") and doc.path:
            return doc.path, doc.path
        suffix = _SUFFIX_BY_LANGUAGE_ID.get((doc.language_id or "").lower(), "")
        return None, f"untitled{suffix}"

    def root(self) -> Optional[str]:
        try:
            return self.workspace.root_path
        except Exception:  # pragma: no cover - no workspace
            return None

    def check(self, uri: str) -> Optional[Tuple[str, str, List[Finding]]]:
        """Check the open document's text; (engine path, text, findings) or None if not ours."""
        from rocm_lint.engine import check_source
        from rocm_lint.python.project import project_for

        doc = self.workspace.get_text_document(uri)
        real, path = self.document_path(doc)
        language = language_of(path)
        if language is None or language == "notebook":
            return None  # a notebook's findings count rows in cells, not in the document's JSON
        config, problem = self.configs.for_path(real, self.root())
        if problem and problem not in self.configs.reported:
            self.configs.reported.add(problem)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"rocm-lint: {problem}; using the defaults"))
        if real is not None and self.excluded(real, config):
            return path, doc.source, []
        text = doc.source
        # a header, build file or imported module changed on disk (no save, no watcher event):
        # read them all again, so the answer equals a fresh run's
        self.lint_workspace.revalidate()
        result = check_source(path, text, config, language, project=project_for(self.lint_workspace, config))
        if isinstance(result, FileError):
            # Half-typed code does not parse: say why in the log, not as a diagnostic (the
            # editor's own language support reports syntax errors); publish keeps the last good
            # diagnostics meanwhile, and no code action is offered on this text.
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Log, message=f"rocm-lint: {result}"))
            result = []
            self.unparsable.add(uri)
        else:
            self.unparsable.discard(uri)
        self.results[uri] = (doc.version, text, result)
        if self.freeze_pending:  # the rules and readers are loaded now: out of the collector's way
            self.freeze_pending = False
            gc.collect()
            gc.freeze()
        return path, text, result

    def dependencies_changed(self, uri: str) -> bool:
        """Has a file the checks read (a header, a build file, an imported module) changed on
        disk since? (The workspace stamps every read; any change means a new check.)"""
        return self.lint_workspace.changed()

    def forget_and_recheck(self) -> None:
        """A file changed on disk (saved, or reported by the client's watcher): every open
        document may read it (a header, a build file), so each is checked again from disk."""
        self.lint_workspace.forget()
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    def excluded(self, path: str, config: Config) -> bool:
        from rocm_lint.discovery import path_excluded

        base = config.root or (Path(self.root()) if self.root() else None)
        if base is None:
            return False
        try:
            rel = Path(path).resolve().relative_to(Path(base).resolve())
        except ValueError:
            return False
        patterns = tuple(config.exclude) + tuple(config.extend_exclude)
        return path_excluded(rel.parts, patterns)

    def positions(self, path: str, text: str) -> Positions:
        return Positions(text, self.workspace.position_codec, language_of(path) == "python")

    def publish(self, uri: str, reuse: bool = False) -> None:
        """Check ``uri`` and push its diagnostics; ``reuse``: a check of this very version made
        meanwhile (a code action or hover asked for it), nothing it read changed since, answers."""
        self.cancel(uri)  # a check now answers for the pending one too
        if self.pull.enabled:  # the client asks (textDocument/diagnostic): nothing is pushed
            self.pull.changed(self, uri)
            return
        checked = self.current(uri) if reuse and not self.dependencies_changed(uri) else self.check(uri)
        doc = self.workspace.get_text_document(uri)
        diagnostics: List[types.Diagnostic] = []
        if checked is not None and uri in self.unparsable:
            diagnostics = self.last_good.get(uri, [])
        elif checked is not None:
            path, text, findings = checked
            where = self.positions(path, text)
            diagnostics = [to_diagnostic(f, where) for f in findings]
            self.last_good[uri] = diagnostics
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=doc.version, diagnostics=diagnostics))

    def current(self, uri: str) -> Optional[Tuple[str, str, List[Finding]]]:
        doc = self.workspace.get_text_document(uri)
        cached = self.results.get(uri)
        if cached is not None and cached[0] == doc.version and cached[1] == doc.source:
            return self.document_path(doc)[1], cached[1], cached[2]
        return self.check(uri)

    # -- code actions
    def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        checked = self.current(uri)
        if not checked:
            return []
        path, text, findings = checked
        config, _ = self.configs.for_path(self.document_path(self.workspace.get_text_document(uri))[0], self.root())
        only = params.context.only
        want_quick = not only or any(types.CodeActionKind.QuickFix.value.startswith(k) for k in only)
        want_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
        where = self.positions(path, text)
        actions: List[types.CodeAction] = []
        fixable = [f for f in findings if f.fix is not None
                   and f.fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)]
        if want_quick:
            wanted = params.range
            for f in fixable:
                rng = where.finding_range(f)
                if not _overlaps(rng, wanted):
                    continue
                edits = fix_edits(path, text, f, config, findings, self.fixes)
                if not edits:
                    continue
                unsafe = f.fix.applicability == Applicability.UNSAFE
                actions.append(types.CodeAction(
                    title=f"{f.code}: {f.fix.message}" + (" (unsafe fix)" if unsafe else ""),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[to_diagnostic(f, where)],
                    is_preferred=not unsafe,
                    edit=_workspace_edit(uri, [
                        types.TextEdit(range=where.edit_range(e), new_text=e.content) for e in edits]),
                ))
        if want_all and any(f.fix.applicability == Applicability.SAFE for f in fixable):
            new_text = fix_all(path, text, findings, config, self.lint_workspace, self.fixes)
            if new_text is not None and new_text != text:
                actions.append(types.CodeAction(
                    title="rocm-lint: apply every safe fix",
                    kind=FIX_ALL_KIND,
                    edit=_workspace_edit(uri, [types.TextEdit(range=where.whole(), new_text=new_text)]),
                ))
        return actions


def _overlaps(a: types.Range, b: types.Range) -> bool:
    key = lambda p: (p.line, p.character)
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _workspace_edit(uri: str, edits: Sequence[types.TextEdit]) -> types.WorkspaceEdit:
    # `changes` is the form every client understands.
    return types.WorkspaceEdit(changes={uri: list(edits)})


def to_diagnostic(f: Finding, where: Positions) -> types.Diagnostic:
    rule = get_rule(f.code)
    return types.Diagnostic(
        range=where.finding_range(f),
        message=f.message,
        severity=types.DiagnosticSeverity.Warning,
        code=f.code,
        code_description=types.CodeDescription(href=rule.url) if rule else None,
        source=SOURCE,
        data={"fix": f.fix.applicability.value if f.fix else None},
    )


# The verified fixes of the last check's findings: an editor asks for code actions again on every
# move of the cursor, and a fix is worked out once per check of a text (a new text, a new
# configuration or a re-check after an imported module changed start afresh).
# The server owns the store (``RocmLintServer.fixes``): path -> (text, config, check, memo).
FixStore = Dict[str, Tuple[str, Config, object, Dict[object, Tuple[Edit, ...]]]]
_FIXES_KEPT = 8


def _fixes_of(store: FixStore, path: str, text: str, config: Config, checked: object) -> Dict[object, Tuple[Edit, ...]]:
    known = store.get(path)
    if known is not None and known[0] == text and known[1] is config and known[2] is checked:
        return known[3]
    if len(store) >= _FIXES_KEPT and path not in store:
        store.pop(next(iter(store)))
    memo: Dict[object, Tuple[Edit, ...]] = {}
    store[path] = (text, config, checked, memo)
    return memo


def fix_edits(path: str, text: str, f: Finding, config: Config, checked: object = None,
              store: Optional[FixStore] = None) -> Tuple[Edit, ...]:
    """The edits of one finding's fix, verified the way ``--fix`` verifies them (``fix.api.edits_for``
    fixes the finding alone, so LibCST reads its statement).  ``checked``: the findings list of
    the check ``f`` comes from; the edits are kept while it is the current one."""
    from rocm_lint.fix.api import edits_for

    if checked is None or store is None:
        return edits_for(path, text, f, config)
    memo = _fixes_of(store, path, text, config, checked)
    if f not in memo:
        memo[f] = edits_for(path, text, f, config)
    return memo[f]


def fix_all(path: str, text: str, findings: Sequence[Finding], config: Config,
            workspace: Optional[Workspace] = None, store: Optional[FixStore] = None) -> Optional[str]:
    """The text with every safe fix applied: what ``rocm-lint check --fix`` would write (the same
    passes: fixes that overlap land in a later pass); worked out once per text."""
    from rocm_lint.fix.api import fix_text

    memo = _fixes_of(store if store is not None else {}, path, text, config, findings)
    key = "fix-all"
    if key not in memo:
        try:
            result = fix_text(path, text, config, findings=findings, workspace=workspace)
        except SyntaxError:
            result = None
        memo[key] = None if result is None or isinstance(result, FileError) else result.text  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]


def create_server() -> RocmLintServer:
    server = RocmLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: RocmLintServer, params: types.InitializeParams) -> None:
        ls.set_config_path(config_setting(params.initialization_options))
        ls.set_debounce(debounce_setting(params.initialization_options))
        ls.pull.configure(params.capabilities)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RocmLintServer, params: types.DidChangeConfigurationParams) -> None:
        if not isinstance(params.settings, dict):
            return
        ls.set_config_path(config_setting(params.settings))
        ls.set_debounce(debounce_setting(params.settings))
        for uri in list(ls.workspace.text_documents):
            ls.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RocmLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RocmLintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: RocmLintServer, params: types.DidSaveTextDocumentParams) -> None:
        if is_config_file(params.text_document.uri, ls.configs.explicit):
            ls.configs.clear()  # settings may have changed: re-check every open document
            ls.configs.reported.clear()
            for uri in list(ls.workspace.text_documents):
                ls.publish(uri)
        else:
            ls.forget_and_recheck()  # a saved header or build file changes what the others read

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RocmLintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.cancel(params.text_document.uri)
        ls.results.pop(params.text_document.uri, None)
        ls.last_good.pop(params.text_document.uri, None)
        ls.unparsable.discard(params.text_document.uri)
        ls.pull.forget(params.text_document.uri)
        if ls.pull.enabled:
            return
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: RocmLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config_file(c.uri, ls.configs.explicit) for c in params.changes):
            ls.configs.clear()
            ls.configs.reported.clear()
            for uri in list(ls.workspace.text_documents):
                ls.publish(uri)
        elif params.changes:
            ls.forget_and_recheck()  # a header, a build file or an imported module changed

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    def code_action(ls: RocmLintServer, params: types.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: RocmLintServer, params: types.HoverParams) -> Optional[types.Hover]:
        return server_features.hover(ls, params, to_diagnostic)

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, server_features.DIAGNOSTIC_OPTIONS)
    def diagnostic(ls: RocmLintServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        return server_features.pull(ls, params, to_diagnostic)

    return server


def main() -> int:
    """Serve LSP over stdin/stdout until the client says exit."""
    logging.basicConfig(level=logging.WARNING)
    # A check allocates a whole module's tree: with the default thresholds the cyclic collector
    # ran several times per keystroke and walked the long-lived objects (the rules, the project
    # model) each time (p90 of a keystroke's check on a 3,000-line module 53 -> 42 ms in-process).
    # Cycles are still collected; what lives for the whole session is frozen after the first check.
    gc.set_threshold(20_000, 20, 100)
    server = create_server()
    server.freeze_pending = True
    server.start_io()
    return 0
