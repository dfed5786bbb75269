"""Hover and pull diagnostics for ``rocm-lint server`` (``server.py`` registers them).

* **Hover** (``textDocument/hover``) at a position inside a diagnostic's range shows the rule's
  page: the finding's message, then the page ``rocm-lint rule CODE`` prints (the rule's markdown,
  ``src/rocm_lint/docs/ROCxxx.md`` through the registry) and a link to it; a client that reads
  only plain text gets the message, the rule's summary and the link.
* **Pull diagnostics** (``textDocument/diagnostic``, LSP 3.17) for clients that declare them:
  the same diagnostics the push path publishes (same check, same ``to_diagnostic``, the last good
  ones while the text does not parse), with a ``resultId`` that is a hash of them, so a request
  whose ``previousResultId`` still holds gets ``unchanged``.  A client that pulls gets no
  ``publishDiagnostics`` (an editor would show both); a change on disk that may change an open
  document's diagnostics (a saved header, a config file) asks it to pull again with
  ``workspace/diagnostic/refresh`` when it accepts that.  Clients without pull support keep the
  push path unchanged.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from lsprotocol import converters, types

from rocm_lint.finding import Finding
from rocm_lint.registry import get_rule

# The server (``server.RocmLintServer``) and how it turns a finding into a diagnostic
# (``server.to_diagnostic``) come as arguments: this module is imported by ``server`` alone.
Server = Any
ToDiagnostic = Callable[..., types.Diagnostic]
IDENTIFIER = "rocm-lint"
DIAGNOSTIC_OPTIONS = types.DiagnosticOptions(
    identifier=IDENTIFIER, inter_file_dependencies=True, workspace_diagnostics=False
)
_CONVERTER = converters.get_converter()


class PullState:
    """What the server knows of a client that pulls diagnostics."""

    def __init__(self) -> None:
        self.enabled = False  # the client declared textDocument.diagnostic: nothing is pushed
        self.refresh = False  # it accepts workspace/diagnostic/refresh
        self.refresh_asked = False  # a refresh request is on its way
        self.answered: Dict[str, Optional[int]] = {}  # uri -> the document version last answered
        self.stale: Set[str] = set()  # documents to check again: something they read may have changed

    def configure(self, capabilities: Optional[types.ClientCapabilities]) -> None:
        text = capabilities.text_document if capabilities else None
        self.enabled = bool(text is not None and text.diagnostic is not None)
        workspace = capabilities.workspace if capabilities else None
        self.refresh = bool(
            self.enabled
            and workspace is not None
            and workspace.diagnostics is not None
            and workspace.diagnostics.refresh_support
        )

    def changed(self, ls: Server, uri: str) -> None:
        """Where the push path would publish ``uri``'s diagnostics.  An edit (a new version) is
        pulled by the client on its own; the same version again means something on disk changed
        (a save, a watched file, the settings): ask the client to pull again."""
        self.stale.add(uri)
        doc = ls.workspace.get_text_document(uri)
        if (
            uri in self.answered
            and self.answered[uri] == doc.version
            and self.refresh
            and not self.refresh_asked
        ):
            self.refresh_asked = True  # one request for every document an event re-checks
            ls.workspace_diagnostic_refresh(None, callback=self._answered)

    def _answered(self, _result: object) -> None:
        self.refresh_asked = False

    def forget(self, uri: str) -> None:
        self.answered.pop(uri, None)
        self.stale.discard(uri)


# -- the diagnostics the client sees ----------------------------------------------------------------
def current_findings(ls: Server, uri: str) -> Optional[Tuple[str, str, List[Finding]]]:
    """(engine path, text, findings) of the document's current text: the last check's when it
    checked this version, nothing it read has changed on disk and no event asked for a new check;
    else a new check (None: not a kind of file rocm-lint reads)."""
    doc = ls.workspace.get_text_document(uri)
    cached = ls.results.get(uri)
    if (
        cached is not None
        and cached[0] == doc.version
        and cached[1] == doc.source
        and uri not in ls.pull.stale
        and not ls.dependencies_changed(uri)
    ):
        return ls.document_path(doc)[1], cached[1], cached[2]
    ls.pull.stale.discard(uri)
    return ls.check(uri)


def document_diagnostics(ls: Server, uri: str, to_diagnostic: ToDiagnostic) -> List[types.Diagnostic]:
    """What the push path publishes for ``uri`` (the last good diagnostics while it does not parse)."""
    checked = current_findings(ls, uri)
    if checked is None:
        return []
    if uri in ls.unparsable:
        return ls.last_good.get(uri, [])
    path, text, findings = checked
    where = ls.positions(path, text)
    diagnostics = [to_diagnostic(f, where) for f in findings]
    ls.last_good[uri] = diagnostics
    return diagnostics


def result_id(diagnostics: List[types.Diagnostic]) -> str:
    """The same diagnostics, the same id (across edits that leave them as they were)."""
    data = json.dumps(_CONVERTER.unstructure(diagnostics), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def pull(
    ls: Server, params: types.DocumentDiagnosticParams, to_diagnostic: ToDiagnostic
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    ls.pull.refresh_asked = False
    diagnostics = document_diagnostics(ls, uri, to_diagnostic)
    ls.pull.answered[uri] = ls.workspace.get_text_document(uri).version
    rid = result_id(diagnostics)
    if params.previous_result_id == rid:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    return types.RelatedFullDocumentDiagnosticReport(items=diagnostics, result_id=rid)


# -- hover --------------------------------------------------------------------------------------------
def _inside(rng: types.Range, pos: types.Position) -> bool:
    start, end, at = (
        (rng.start.line, rng.start.character),
        (rng.end.line, rng.end.character),
        (pos.line, pos.character),
    )
    return start <= at < end or start == end == at


def wants_markdown(capabilities: Optional[types.ClientCapabilities]) -> bool:
    hover = capabilities.text_document.hover if capabilities and capabilities.text_document else None
    formats = hover.content_format if hover is not None else None
    return not formats or types.MarkupKind.Markdown in formats


def rule_page(code: str, message: str, markdown: bool) -> str:
    """One diagnostic's hover: its message, then the rule's page (markdown) or its summary and
    link (plain text)."""
    from rocm_lint.docgen import render_rule

    rule = get_rule(code)
    if rule is None:
        return f"{code}: {message}"
    if not markdown:
        return f"{code} ({rule.name}): {message}\n\n{rule.summary}.\n{rule.url}"
    return (
        f"**{code}** `{rule.name}`: {message}\n\n---\n\n{render_rule(rule).rstrip()}\n\n"
        f"[{code} on the web]({rule.url})"
    )


def hover(ls: Server, params: types.HoverParams, to_diagnostic: ToDiagnostic) -> Optional[types.Hover]:
    """The rule pages of the diagnostics at ``params.position`` (None where there is none)."""
    uri = params.text_document.uri
    here = [d for d in document_diagnostics(ls, uri, to_diagnostic) if _inside(d.range, params.position)]
    if not here:
        return None
    markdown = wants_markdown(ls.client_capabilities)
    pages, seen = [], set()
    for d in here:
        code = str(d.code)
        if code in seen:  # one page per rule; each message still shown
            pages.append(f"**{code}**: {d.message}" if markdown else f"{code}: {d.message}")
            continue
        seen.add(code)
        pages.append(rule_page(code, d.message, markdown))
    separator = "\n\n---\n\n" if markdown else "\n\n"
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value=separator.join(pages)), range=here[0].range
    )
