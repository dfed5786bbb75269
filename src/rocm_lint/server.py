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

pygls is an optional dependency (``pip install 'rocm-lint[lsp]'``): only this module,
``server_positions`` and ``server_features`` import it, and only ``rocm-lint server`` imports
them.  The settings are ``server_config``'s, the quick fixes and fix-all ``server_fixes``'.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from pathlib import Path
from typing import BinaryIO, Dict, List, Optional, Sequence, Tuple, cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from rocm_lint import __version__
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.finding import Applicability, FileError, Finding
from rocm_lint import server_features
from rocm_lint.server_config import (
    DEFAULT_DEBOUNCE_MS,
    ConfigCache,
    config_setting,
    debounce_setting,
    is_config_file,
)
from rocm_lint.server_features import PullState
from rocm_lint.server_fixes import FixStore, fix_all, fix_edits
from rocm_lint.server_positions import Positions, to_diagnostic
from rocm_lint.server_stream import BoundedStdin, Protocol
from rocm_lint.workspace import Workspace

log = logging.getLogger(__name__)

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.rocm-lint"
# Documents with no file name (unsaved buffers): the language the editor says they are in.
_SUFFIX_BY_LANGUAGE_ID = {
    "python": ".py",
    "cuda-cpp": ".cu",
    "cuda": ".cu",
    "hip": ".hip",
    "cpp": ".cpp",
    "c": ".c",
    "shellscript": ".sh",
    "sh": ".sh",
    "bash": ".sh",
    "dockerfile": ".dockerfile",
    "yaml": ".yaml",
    "dotenv": ".env",
    "cmake": ".cmake",
}


# -- the server ------------------------------------------------------------------------------------
class RocmLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("rocm-lint", __version__, protocol_cls=Protocol)
        self.exit_code = 0  # ``exit`` after ``shutdown``: 0; without: 1 (the LSP specification)
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

        if uri not in self.workspace.text_documents:
            return None  # never opened: its file is never read (it may be a FIFO, or huge)
        doc = self.workspace.get_text_document(uri)
        real, path = self.document_path(doc)
        language = language_of(path)
        if language is None or language == "notebook":
            return None  # a notebook's findings count rows in cells, not in the document's JSON
        config, problem = self.configs.for_path(real, self.root())
        if problem and problem not in self.configs.reported:
            self.configs.reported.add(problem)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"rocm-lint: {problem}; using the defaults"
                )
            )
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
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Log, message=f"rocm-lint: {result}")
            )
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
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics)
        )

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
        config, _ = self.configs.for_path(
            self.document_path(self.workspace.get_text_document(uri))[0], self.root()
        )
        only = params.context.only
        want_quick = not only or any(types.CodeActionKind.QuickFix.value.startswith(k) for k in only)
        want_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
        where = self.positions(path, text)
        actions: List[types.CodeAction] = []
        fixable = [
            f
            for f in findings
            if f.fix is not None and f.fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)
        ]
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
                actions.append(
                    types.CodeAction(
                        title=f"{f.code}: {f.fix.message}" + (" (unsafe fix)" if unsafe else ""),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[to_diagnostic(f, where)],
                        is_preferred=not unsafe,
                        edit=_workspace_edit(
                            uri,
                            [types.TextEdit(range=where.edit_range(e), new_text=e.content) for e in edits],
                        ),
                    )
                )
        if want_all and any(f.fix.applicability == Applicability.SAFE for f in fixable):
            new_text = fix_all(path, text, findings, config, self.lint_workspace, self.fixes)
            if new_text is not None and new_text != text:
                actions.append(
                    types.CodeAction(
                        title="rocm-lint: apply every safe fix",
                        kind=FIX_ALL_KIND,
                        edit=_workspace_edit(uri, [types.TextEdit(range=where.whole(), new_text=new_text)]),
                    )
                )
        return actions


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> Tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _workspace_edit(uri: str, edits: Sequence[types.TextEdit]) -> types.WorkspaceEdit:
    # `changes` is the form every client understands.
    return types.WorkspaceEdit(changes={uri: list(edits)})


def create_server() -> RocmLintServer:
    server = RocmLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: RocmLintServer, params: types.InitializeParams) -> None:
        ls.set_config_path(config_setting(params.initialization_options))
        ls.set_debounce(debounce_setting(params.initialization_options))
        ls.pull.configure(params.capabilities)

    @server.feature(types.EXIT)
    def on_exit(ls: RocmLintServer, *args) -> None:
        ls.exit_code = 0 if ls.protocol._shutdown else 1

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
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: RocmLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config_file(c.uri, ls.configs.explicit) for c in params.changes):
            ls.configs.clear()
            ls.configs.reported.clear()
            for uri in list(ls.workspace.text_documents):
                ls.publish(uri)
        elif params.changes:
            ls.forget_and_recheck()  # a header, a build file or an imported module changed

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: RocmLintServer, params: types.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: RocmLintServer, params: types.HoverParams) -> Optional[types.Hover]:
        return server_features.hover(ls, params, to_diagnostic)

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, server_features.DIAGNOSTIC_OPTIONS)
    def diagnostic(
        ls: RocmLintServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
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
    server.start_io(stdin=cast(BinaryIO, BoundedStdin(sys.stdin.buffer)))  # reads as pygls does
    return server.exit_code
