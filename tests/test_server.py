"""`rocm-lint server` through a real LSP client (pytest-lsp): diagnostics on open, change and
save, code actions applied and re-checked, settings from the workspace's pyproject.toml."""

import asyncio
import sys

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402 - after the importorskip that skips without pytest-lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402 - likewise

pytestmark = pytest.mark.asyncio(loop_scope="function")

PYPROJECT = '[tool.rocm-lint]\nignore = ["ROC603"]\n'
# ``nvtx`` (ROC402) imports on ROCm too: an import that only succeeds on NVIDIA (TensorRT) would make
# the rest of the module NVIDIA-only code, and its findings silent (python/values.py)
TRAIN_PY = """\
import torch
import nvtx

torch.backends.cuda.matmul.allow_tf32 = True
model = torch.compile(torch.nn.Linear(4, 4), mode="reduce-overhead")
s = "\u20ac\U0001d11e"; torch.backends.cudnn.allow_tf32 = True
"""
KERNEL_CU = """\
#include <cuda_fp16.h>

#define WARP_SIZE 32

__global__ void reduce(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_xor_sync(0xffffffff, v, 1);
  x[threadIdx.x] = v;
}
"""
TIMEOUT = 30


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    # On disk the files are clean: the server must lint the editor's text, not the file.
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "kernel.cu").write_text("// nothing yet\n")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")],
        )
    )
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


# -- a tiny editor ------------------------------------------------------------------------------------
class Doc:
    def __init__(self, client, name, language_id, text):
        self.client, self.text, self.version = client, text, 1
        self.uri = (client.root / name).as_uri()
        self.id = types.TextDocumentIdentifier(uri=self.uri)
        client.diagnostics.pop(self.uri, None)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri, language_id=language_id, version=1, text=text
                )
            )
        )

    async def diagnostics(self):
        async def wait():
            while self.uri not in self.client.diagnostics:
                await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            return list(self.client.diagnostics[self.uri])

        return await asyncio.wait_for(wait(), TIMEOUT)

    async def found(self):
        return sorted((d.code, d.range.start.line) for d in await self.diagnostics())

    def replace(self, text):
        self.text, self.version = text, self.version + 1
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def actions(self, rng, diagnostics=(), only=None):
        params = types.CodeActionParams(
            text_document=self.id,
            range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
        return await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT) or []

    def apply(self, action):
        edits = action.edit.changes[self.uri]
        self.replace(apply_edits(self.text, edits))


def apply_edits(text, edits):
    """Apply LSP TextEdits (UTF-16 positions, ranges in the original text), last first."""
    lines = text.splitlines(keepends=True)

    def offset(pos):
        if pos.line >= len(lines):
            return len(text)
        line = lines[pos.line]
        units, chars = 0, 0
        while units < pos.character and chars < len(line):
            units += 2 if ord(line[chars]) > 0xFFFF else 1
            chars += 1
        return sum(map(len, lines[: pos.line])) + chars

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def by_code(diagnostics, code):
    return next(d for d in diagnostics if d.code == code)


# -- tests --------------------------------------------------------------------------------------------
async def test_python_diagnostics_quick_fix_and_fix_all(client: LanguageClient):
    doc = Doc(client, "train.py", "python", TRAIN_PY)
    assert await doc.found() == [("ROC101", 3), ("ROC101", 5), ("ROC201", 4), ("ROC402", 1)]
    diagnostics = await doc.diagnostics()
    tf32 = next(d for d in diagnostics if d.code == "ROC101" and d.range.start.line == 3)
    assert tf32.source == "rocm-lint"
    assert tf32.severity == types.DiagnosticSeverity.Warning
    assert tf32.code_description.href.endswith("/docs/rules/ROC101.md")
    assert (tf32.range.start.character, tf32.range.end.character) == (0, 37)
    # Columns are UTF-16 code units: the euro sign is one unit, the G clef two (UTF-8: 3 and 4 bytes).
    clef = next(d for d in diagnostics if d.code == "ROC101" and d.range.start.line == 5)
    assert clef.range.start.character == len('s = "\u20ac\U0001d11e"; '.encode("utf-16-le")) // 2 == 11

    # Display-only findings get no action; a one-line compound statement has no safe place to fix.
    assert await doc.actions(by_code(diagnostics, "ROC402").range, only=[types.CodeActionKind.QuickFix]) == []
    assert await doc.actions(clef.range, [clef], only=[types.CodeActionKind.QuickFix]) == []

    actions = await doc.actions(tf32.range, [tf32], only=[types.CodeActionKind.QuickFix])
    assert len(actions) == 1 and actions[0].kind == types.CodeActionKind.QuickFix
    assert actions[0].title.startswith("ROC101: ") and actions[0].is_preferred
    assert [d.code for d in actions[0].diagnostics] == ["ROC101"]
    doc.apply(actions[0])
    assert "is_rocm = torch.version.hip is not None\n" in doc.text
    assert "if not is_rocm:\n    torch.backends.cuda.matmul.allow_tf32 = True\n" in doc.text
    assert await doc.found() == [
        ("ROC101", 8),
        ("ROC201", 7),
        ("ROC402", 1),
    ]  # two lines inserted (flag, blank)

    # source.fixAll applies every remaining safe fix, like `rocm-lint check --fix`.
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=0))
    fix_all = await doc.actions(whole, only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in fix_all] == ["source.fixAll.rocm-lint"]
    doc.apply(fix_all[0])
    assert 'mode="default" if is_rocm else "reduce-overhead"' in doc.text
    assert [c for c, _ in await doc.found()] == ["ROC101", "ROC402"]  # display / no safe place
    compile(doc.text, "train.py", "exec")

    client.diagnostics.pop(doc.uri, None)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc.id))
    assert await doc.diagnostics() == []


async def test_cuda_diagnostics_safe_and_unsafe_fixes(client: LanguageClient):
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    # ROC603 (`#define WARP_SIZE 32`) is ignored by the workspace's pyproject.toml.
    assert await doc.found() == [("ROC602", 6), ("ROC702", 0)]
    diagnostics = await doc.diagnostics()
    header = by_code(diagnostics, "ROC702")
    assert header.code_description.href.endswith("/docs/rules/ROC702.md")
    assert (header.range.start.character, header.range.end.character) == (10, 21)

    actions = await doc.actions(header.range, [header])
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert len(quick) == 1 and quick[0].is_preferred and "(unsafe fix)" not in quick[0].title
    doc.apply(quick[0])
    assert doc.text.startswith(
        "#ifdef USE_ROCM\n#include <hip/hip_fp16.h>\n#else\n#line 1\n#include <cuda_fp16.h>\n#endif\n#line 2\n"
    )
    assert await doc.found() == [("ROC602", 12)]  # two #line directives keep NVIDIA line numbers

    mask = by_code(await doc.diagnostics(), "ROC602")
    actions = await doc.actions(mask.range, [mask], only=[types.CodeActionKind.QuickFix])
    assert len(actions) == 1 and "(unsafe fix)" in actions[0].title and not actions[0].is_preferred
    doc.apply(actions[0])
    assert await doc.found() == []
    assert "0xffffffff" in doc.text  # the NVIDIA side keeps its mask


async def test_saved_pyproject_changes_the_settings(client: LanguageClient):
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert ("ROC603", 2) not in await doc.found()
    pyproject = client.root / "pyproject.toml"
    pyproject.write_text('[tool.rocm-lint]\nignore = ["ROC7"]\n')
    client.diagnostics.pop(doc.uri, None)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri()))
    )
    assert await doc.found() == [("ROC602", 6), ("ROC603", 2)]

    # Edits are linted as typed, on didChange, and a save re-checks too.
    doc.replace(KERNEL_CU.replace("0xffffffff", "__activemask()"))
    assert await doc.found() == [("ROC603", 2)]
    client.diagnostics.pop(doc.uri, None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc.id))
    assert await doc.found() == [("ROC603", 2)]


async def test_pyproject_created_outside_the_editor_counts_from_the_next_check(client: LanguageClient):
    """No save event reaches the server (the file is written by another program): the next
    check of the document reads the new settings all the same."""
    sub = client.root / "sub"
    sub.mkdir()
    doc = Doc(client, "sub/kernel.cu", "cuda-cpp", KERNEL_CU)
    assert await doc.found() == [("ROC602", 6), ("ROC702", 0)]  # the root's settings: ROC603 ignored
    (sub / "pyproject.toml").write_text('[tool.rocm-lint]\nignore = ["ROC6"]\n')
    doc.replace(KERNEL_CU + "// edited\n")
    assert await doc.found() == [("ROC702", 0)]


async def test_config_files_and_unknown_kinds(client: LanguageClient):
    env = Doc(client, ".env", "dotenv", "TORCHINDUCTOR_MAX_AUTOTUNE=1\n")
    assert await env.found() == [("ROC302", 0)]
    notes = Doc(client, "notes.txt", "plaintext", "torch.backends.cuda.matmul.allow_tf32 = True\n")
    assert await notes.diagnostics() == []


async def test_broken_config_warns_once_and_half_typed_code_stays_quiet(client: LanguageClient):
    (client.root / "pyproject.toml").write_text('[tool.rocm-lint]\nignroe = ["ROC603"]\n')
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert await doc.found() == [("ROC602", 6), ("ROC603", 2), ("ROC702", 0)]  # the defaults
    warnings = [m for m in client.messages if m.type == types.MessageType.Warning]
    assert len(warnings) == 1 and "ignroe" in warnings[0].message
    doc.replace(KERNEL_CU + "// more\n")
    await doc.found()
    assert len([m for m in client.messages if m.type == types.MessageType.Warning]) == 1

    broken = Doc(client, "train.py", "python", "import torch\ntorch.backends.cuda.matmul.allow_tf32 = (\n")
    assert await broken.diagnostics() == []
    assert any("syntax error" in m.message for m in client.log_messages)


# -- issue #17: last good diagnostics, config path from the client, rocm-lint.toml ------------------
async def test_half_typed_code_keeps_the_last_good_diagnostics(client: LanguageClient):
    doc = Doc(client, "train.py", "python", TRAIN_PY)
    good = await doc.found()
    assert good == [("ROC101", 3), ("ROC101", 5), ("ROC201", 4), ("ROC402", 1)]
    doc.replace(TRAIN_PY + "def half(:\n")  # does not parse while typing
    assert await doc.found() == good
    assert (
        await doc.actions(
            types.Range(start=types.Position(line=0, character=0), end=types.Position(line=9, character=0))
        )
        == []
    )
    doc.replace(TRAIN_PY.replace("torch.backends.cuda.matmul.allow_tf32 = True\n", ""))  # parses again
    assert await doc.found() == [("ROC101", 4), ("ROC201", 3), ("ROC402", 1)]


async def test_rocm_lint_toml_is_read_and_saving_it_rechecks(client: LanguageClient):
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert ("ROC603", 2) not in await doc.found()  # pyproject.toml: ROC603 ignored
    toml = client.root / "rocm-lint.toml"
    toml.write_text('ignore = ["ROC6"]\n')  # beats pyproject.toml in the same directory
    client.diagnostics.pop(doc.uri, None)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=toml.as_uri()))
    )
    assert await doc.found() == [("ROC702", 0)]


async def test_config_path_from_did_change_configuration(client: LanguageClient):
    (client.root / "cfg").mkdir()
    (client.root / "cfg" / "strict.toml").write_text('ignore = ["ROC7"]\n')
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert await doc.found() == [("ROC602", 6), ("ROC702", 0)]
    client.diagnostics.pop(doc.uri, None)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"rocm-lint": {"config": "cfg/strict.toml"}})
    )
    assert await doc.found() == [("ROC602", 6), ("ROC603", 2)]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def configured_client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "rocm-lint.toml").write_text('ignore = ["ROC6"]\n')
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")],
            initialization_options={"settings": {"config": "ci/rocm-lint.toml"}},
        )
    )
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def test_config_path_from_initialization_options(configured_client: LanguageClient):
    doc = Doc(configured_client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert await doc.found() == [("ROC702", 0)]  # ci/rocm-lint.toml, not the nearest pyproject.toml


# -- issue #29: flake8's [flake8] options, codes that select no rule ------------------------------
async def test_predicates_from_flake8s_setup_cfg(client: LanguageClient):
    """The language server adds what flake8's config file sets, as `rocm-lint check` and flake8 do."""
    gated = "import torch\nfrom plat import on_amd\nif not on_amd():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    doc = Doc(client, "m.py", "python", gated)
    assert await doc.found() == [("ROC101", 3)]
    (client.root / "setup.cfg").write_text("[flake8]\nrocm-predicates = on_amd\n")
    doc.replace(gated + "# edited\n")
    assert await doc.found() == []


async def test_a_config_code_that_selects_no_rule_is_reported(client: LanguageClient):
    (client.root / "pyproject.toml").write_text('[tool.rocm-lint]\nselect = ["ROC999"]\n')
    doc = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    assert await doc.found() == [("ROC602", 6), ("ROC603", 2), ("ROC702", 0)]  # the defaults
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert len(warnings) == 1 and "'select': ROC999 selects no rule" in warnings[0]


REDUCE_CU = """\
#include "lanes.cuh"
__global__ void reduce(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_xor_sync(ALL_LANES, v, 1);
  x[threadIdx.x] = v;
}
"""


async def test_a_header_changed_on_disk_is_read_again(client: LanguageClient):
    """The language server's answer after a header edit equals a fresh run: `reduce.cu` includes
    `lanes.cuh`; the header changes on disk from a 64-bit to a 32-bit mask; the next edit of
    `reduce.cu` (no save, no watcher event) reports ROC602, and so does a build file changed and
    announced by the client's watcher."""
    header = client.root / "lanes.cuh"
    header.write_text("#define ALL_LANES 0xffffffffffffffffull\n")
    doc = Doc(client, "reduce.cu", "cuda-cpp", REDUCE_CU)
    assert ("ROC602", 3) not in await doc.found()
    header.write_text("#define ALL_LANES 0xffffffff\n")
    doc.replace(REDUCE_CU + "\n")
    assert ("ROC602", 3) in await doc.found()
    # the header back to 64 bits, announced by the watcher: every open document re-checked
    header.write_text("#define ALL_LANES 0xffffffffffffffffull\n")
    client.diagnostics.pop(doc.uri, None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=header.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert ("ROC602", 3) not in await doc.found()


# -- issue #29 item 9: hover shows the rule page; pull diagnostics (LSP 3.17) ------------------------
def _pull_capabilities(refresh=True, hover_formats=None):
    """VS Code's recorded capabilities with what a client that pulls declares (vscode-languageclient
    sends both): textDocument.diagnostic and, optionally, workspace.diagnostics.refreshSupport."""
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(dynamic_registration=False)
    if refresh:
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    if hover_formats is not None:
        caps.text_document.hover = types.HoverClientCapabilities(content_format=hover_formats)
    return caps


async def _session(lsp_client, tmp_path, caps):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")],
        )
    )
    lsp_client.root = tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def pull_client(lsp_client: LanguageClient, tmp_path):
    await _session(lsp_client, tmp_path, _pull_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def neovim_client(lsp_client: LanguageClient, tmp_path):
    """Neovim 0.11's recorded capabilities: pulls diagnostics, no refresh support, markdown hovers."""
    await _session(lsp_client, tmp_path, client_capabilities("neovim"))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def plain_text_client(lsp_client: LanguageClient, tmp_path):
    await _session(lsp_client, tmp_path, _pull_capabilities(hover_formats=[types.MarkupKind.PlainText]))
    yield
    await lsp_client.shutdown_session()


async def pull(doc, previous=None):
    return await asyncio.wait_for(
        doc.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=doc.id, previous_result_id=previous)
        ),
        TIMEOUT,
    )


async def hover(doc, line, character):
    return await asyncio.wait_for(
        doc.client.text_document_hover_async(
            types.HoverParams(text_document=doc.id, position=types.Position(line=line, character=character))
        ),
        TIMEOUT,
    )


def plain(diagnostics):
    """Diagnostics as comparable data."""
    from lsprotocol.converters import get_converter

    return sorted(
        get_converter().unstructure(list(diagnostics)), key=lambda d: (d["range"]["start"]["line"], d["code"])
    )


async def test_hover_on_a_diagnostic_shows_the_rule_page(client: LanguageClient):
    from rocm_lint.docgen import render_rule
    from rocm_lint.registry import get_rule

    doc = Doc(client, "train.py", "python", TRAIN_PY)
    tf32 = next(d for d in await doc.diagnostics() if d.code == "ROC101" and d.range.start.line == 3)
    shown = await hover(doc, 3, tf32.range.start.character + 5)
    assert shown.contents.kind == types.MarkupKind.Markdown
    page = shown.contents.value
    assert page.startswith(f"**ROC101** `{get_rule('ROC101').name}`: {tf32.message}")
    assert render_rule(get_rule("ROC101")).rstrip() in page  # the whole rule page, from the registry
    assert page.rstrip().endswith(f"({get_rule('ROC101').url})")
    assert shown.range == tf32.range
    # outside every diagnostic's range: no hover; the end of a range is outside it (LSP ranges end before it)
    assert await hover(doc, 0, 3) is None
    assert await hover(doc, 3, tf32.range.end.character) is None
    # a C++ diagnostic, and the page follows the text as it is edited
    cu = Doc(client, "kernel.cu", "cuda-cpp", KERNEL_CU)
    header = by_code(await cu.diagnostics(), "ROC702")
    assert "# ROC702:" in (await hover(cu, 0, header.range.start.character)).contents.value
    cu.replace("\n\n" + KERNEL_CU)
    await cu.found()
    assert await hover(cu, 0, header.range.start.character) is None
    assert "# ROC702:" in (await hover(cu, 2, header.range.start.character)).contents.value


async def test_hover_keeps_the_last_good_diagnostics_and_reads_plain_text(plain_text_client: LanguageClient):
    from rocm_lint.registry import get_rule

    doc = Doc(plain_text_client, "train.py", "python", TRAIN_PY)
    await pull(doc)
    shown = await hover(doc, 1, 8)  # `import nvtx`: ROC402
    assert shown.contents.kind == types.MarkupKind.PlainText
    rule = get_rule("ROC402")
    assert shown.contents.value.startswith(f"ROC402 ({rule.name}): ")
    assert (
        f"{rule.summary}.\n{rule.url}" in shown.contents.value
        and "#" not in shown.contents.value.split("\n")[0]
    )
    doc.replace(TRAIN_PY + "def half(:\n")  # does not parse: the last good diagnostics, and their pages, stay
    assert (await hover(doc, 1, 8)).contents.value == shown.contents.value


async def test_pull_diagnostics_equal_the_push_path(client: LanguageClient, pull_client: LanguageClient):
    """The same documents through a client that is pushed to (VS Code 1.65) and one that pulls:
    the same diagnostics; the one that pulls gets no publishDiagnostics."""
    for name, language, text in (
        ("train.py", "python", TRAIN_PY),
        ("kernel.cu", "cuda-cpp", KERNEL_CU),
        (".env", "dotenv", "TORCHINDUCTOR_MAX_AUTOTUNE=1\n"),
    ):
        pushed = await Doc(client, name, language, text).diagnostics()
        doc = Doc(pull_client, name, language, text)
        report = await pull(doc)
        assert report.kind == "full" and report.result_id
        assert plain(report.items) == plain(pushed) and pushed
        assert doc.uri not in pull_client.diagnostics
    notes = Doc(pull_client, "notes.txt", "plaintext", "torch.backends.cuda.matmul.allow_tf32 = True\n")
    assert list((await pull(notes)).items) == []
    pull_client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=notes.id))
    await pull(doc)
    assert pull_client.diagnostics == {}


async def test_neovim_pulls_with_its_own_position_encoding(neovim_client: LanguageClient):
    """Neovim 0.11's recorded capabilities: it pulls, and negotiates UTF-8 positions."""
    doc = Doc(neovim_client, "train.py", "python", TRAIN_PY)
    report = await pull(doc)
    assert sorted((d.code, d.range.start.line) for d in report.items) == [
        ("ROC101", 3),
        ("ROC101", 5),
        ("ROC201", 4),
        ("ROC402", 1),
    ]
    clef = next(d for d in report.items if d.range.start.line == 5)
    assert clef.range.start.character == len('s = "\u20ac\U0001d11e"; '.encode("utf-8")) == 15
    assert "# ROC101:" in (await hover(doc, 5, 16)).contents.value
    assert neovim_client.diagnostics == {}


async def test_pull_answers_unchanged_and_follows_edits(pull_client: LanguageClient):
    doc = Doc(pull_client, "train.py", "python", TRAIN_PY)
    first = await pull(doc)
    assert [d.code for d in first.items].count("ROC101") == 2
    again = await pull(doc, first.result_id)
    assert again.kind == "unchanged" and again.result_id == first.result_id
    doc.replace(TRAIN_PY + "# a comment\n")  # a new version, the same diagnostics
    assert (await pull(doc, first.result_id)).kind == "unchanged"
    doc.replace(TRAIN_PY.replace("torch.backends.cuda.matmul.allow_tf32 = True\n", ""))
    changed = await pull(doc, first.result_id)
    assert changed.kind == "full" and changed.result_id != first.result_id
    assert sorted((d.code, d.range.start.line) for d in changed.items) == [
        ("ROC101", 4),
        ("ROC201", 3),
        ("ROC402", 1),
    ]
    doc.replace(doc.text + "def half(:\n")  # half-typed: the last good diagnostics stay
    assert (await pull(doc, changed.result_id)).kind == "unchanged"
    assert list((await pull(doc)).items) == list(changed.items)
    # a stale id from before: the full report
    assert (await pull(doc, "not-an-id")).kind == "full"
    assert doc.uri not in pull_client.diagnostics


async def test_pull_client_is_asked_to_refresh_when_a_header_changes(pull_client: LanguageClient):
    """A header changed on disk and announced by the watcher: the client that pulls is asked to
    pull again (workspace/diagnostic/refresh), and the next pull reads the header anew."""
    header = pull_client.root / "lanes.cuh"
    header.write_text("#define ALL_LANES 0xffffffffffffffffull\n")
    doc = Doc(pull_client, "reduce.cu", "cuda-cpp", REDUCE_CU)
    first = await pull(doc)
    assert ("ROC602", 3) not in [(d.code, d.range.start.line) for d in first.items]
    header.write_text("#define ALL_LANES 0xffffffff\n")
    pull_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=header.as_uri(), type=types.FileChangeType.Changed)]
        )
    )

    async def refreshed(count):
        while pull_client.diagnostic_refresh_count < count:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refreshed(1), TIMEOUT)
    second = await pull(doc, first.result_id)
    assert second.kind == "full" and ("ROC602", 3) in [(d.code, d.range.start.line) for d in second.items]
    assert pull_client.diagnostic_refresh_count == 1 and doc.uri not in pull_client.diagnostics
    # a saved config file: one more refresh, and the next pull uses the new settings
    (pull_client.root / "pyproject.toml").write_text('[tool.rocm-lint]\nignore = ["ROC6"]\n')
    pull_client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=(pull_client.root / "pyproject.toml").as_uri())
        )
    )
    await asyncio.wait_for(refreshed(2), TIMEOUT)
    assert not [d for d in (await pull(doc, second.result_id)).items if d.code.startswith("ROC6")]
    # an edit is pulled by the client on its own: no refresh for it
    doc.replace(REDUCE_CU + "// edited\n")
    await pull(doc)
    assert pull_client.diagnostic_refresh_count == 2


GATED_KERNEL = """\
#include <cstdint>
__global__ void k(unsigned* out) {
#ifndef FASTOPS_ON_AMD
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(out[0]));
#endif
}
"""
PLAIN_CMAKE = (
    "cmake_minimum_required(VERSION 3.21)\nproject(fastops LANGUAGES CXX)\nadd_subdirectory(kernels)\n"
)
ROCM_MACRO_CMAKE = PLAIN_CMAKE.replace(
    "add_subdirectory",
    """option(FASTOPS_ENABLE_ROCM "AMD" OFF)
if(FASTOPS_ENABLE_ROCM)
  enable_language(HIP)
  add_compile_definitions(FASTOPS_ON_AMD=1)
else()
  enable_language(CUDA)
endif()
add_subdirectory""",
)
SETUP_PY = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, BuildExtension

define_macros = []
if torch.version.hip is not None:
    define_macros += [("FASTOPS_ON_AMD", None)]
setup(name="x", ext_modules=[CUDAExtension("x", ["kernels/k.cu"], define_macros=define_macros)],
      cmdclass={"build_ext": BuildExtension})
"""


async def test_a_build_file_edited_on_disk_is_read_again(client: LanguageClient):
    """The build files decide a C++ file's macros per platform (build.context): the CMakeLists
    changes on disk to define FASTOPS_ON_AMD for the ROCm build alone, and the next edit of the
    kernel (no save, no watcher event) drops the PTX finding under `#ifndef FASTOPS_ON_AMD`, as a
    fresh run does; then a setup.py that defines it the same way, beside a plain CMakeLists."""
    (client.root / ".git").mkdir()
    (client.root / "CMakeLists.txt").write_text(PLAIN_CMAKE)
    (client.root / "kernels").mkdir()
    doc = Doc(client, "kernels/k.cu", "cuda-cpp", GATED_KERNEL)
    assert ("ROC701", 3) in await doc.found()
    (client.root / "CMakeLists.txt").write_text(ROCM_MACRO_CMAKE)
    doc.replace(GATED_KERNEL + "\n")
    assert ("ROC701", 3) not in await doc.found()
    (client.root / "CMakeLists.txt").write_text(PLAIN_CMAKE)
    doc.replace(GATED_KERNEL)
    assert ("ROC701", 3) in await doc.found()
    (client.root / "setup.py").write_text(SETUP_PY)
    doc.replace(GATED_KERNEL + "\n")
    assert ("ROC701", 3) not in await doc.found()


PLATFORM_PY = "import torch\n\n\ndef on_amd():\n    return torch.version.hip is not None\n"
GATED_TRAIN_PY = """\
import torch
from plat import on_amd

if not on_amd():
    torch.backends.cuda.matmul.allow_tf32 = True
"""


async def test_an_imported_module_edited_on_disk_is_read_again(client: LanguageClient):
    """`train.py` gates a TF32 switch on `on_amd()` imported from the project's `plat.py`; when
    `plat.py` changes on disk so that `on_amd` is no predicate any more (it returns a constant),
    the next edit of `train.py` reports the switch, as a fresh run does; and back."""
    (client.root / "plat.py").write_text(PLATFORM_PY)
    doc = Doc(client, "train.py", "python", GATED_TRAIN_PY)
    assert await doc.found() == []
    (client.root / "plat.py").write_text("import torch\n\n\ndef on_amd():\n    return False\n")
    doc.replace(GATED_TRAIN_PY + "\n")
    assert await doc.found() == [("ROC101", 4)]
    (client.root / "plat.py").write_text(PLATFORM_PY)
    doc.replace(GATED_TRAIN_PY)
    assert await doc.found() == []


HEADER_CMAKE = """project(ext LANGUAGES CXX)
set(EXT_SRC "csrc/common.cu")
if(GPU_LANG STREQUAL "CUDA")
  list(APPEND EXT_SRC "csrc/nv_only.cu")
elseif(GPU_LANG STREQUAL "HIP")
  list(APPEND EXT_SRC "csrc/rocm.cu")
endif()
add_library(ext ${EXT_SRC})
"""
MMA_CUH = '#pragma once\n__device__ inline unsigned lane() {\n  unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));\n  return r;\n}\n'


async def test_a_header_whose_includer_changed_on_disk_is_decided_again(client: LanguageClient):
    """A header's platform comes from its includers (build.headers): `mma.cuh` is included by an
    NVIDIA-only source and, under `#ifndef USE_ROCM`, by one the ROCm build compiles: silent.
    The second includer loses its guard on disk: the next edit of the header reports ROC701."""
    root = client.root
    (root / ".git").mkdir()
    (root / "csrc").mkdir()
    (root / "CMakeLists.txt").write_text(HEADER_CMAKE)
    (root / "csrc" / "nv_only.cu").write_text('#include "mma.cuh"\n')
    (root / "csrc" / "common.cu").write_text('#ifndef USE_ROCM\n#include "mma.cuh"\n#endif\n')
    (root / "csrc" / "mma.cuh").write_text(MMA_CUH)
    doc = Doc(client, "csrc/mma.cuh", "cuda-cpp", MMA_CUH)
    assert ("ROC701", 2) not in await doc.found()
    (root / "csrc" / "common.cu").write_text('#include "mma.cuh"\n')
    doc.replace(MMA_CUH + "\n")
    assert ("ROC701", 2) in await doc.found()


# -- issue #28: debounced edits, the project model kept across keystrokes -----------------------------
class CountingDiagnostics(dict):
    """The client's diagnostics by uri, counting the publications each uri received."""

    def __init__(self):
        super().__init__()
        self.count = {}

    def __setitem__(self, uri, value):
        self.count[uri] = self.count.get(uri, 0) + 1
        super().__setitem__(uri, value)


def fresh_check(root, name, text):
    """What `rocm-lint check` finds in ``text`` saved as ``root/name`` (a new process)."""
    import json
    import subprocess

    (root / name).write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "rocm_lint", "check", "--output-format", "json", name],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert out.returncode in (0, 1), out.stderr
    return sorted(
        (f["code"], f["location"]["row"] - 1, f["location"]["column"] - 1) for f in json.loads(out.stdout)
    )


def seen(diagnostics):
    return sorted((d.code, d.range.start.line, d.range.start.character) for d in diagnostics)


async def test_a_burst_of_edits_is_checked_once_on_its_last_text(client: LanguageClient):
    """Twenty keystrokes sent back to back (each a new version, most of them half-typed) cost one
    check, or two when the quiet spell fell inside the burst, never twenty; what is published
    last is what a fresh `rocm-lint check` of the last text finds."""
    base = "".join(TRAIN_PY.splitlines(keepends=True)[:5])  # ASCII: columns compare as they are
    doc = Doc(client, "train.py", "python", base)
    assert await doc.found() == [("ROC101", 3), ("ROC201", 4), ("ROC402", 1)]
    counting = CountingDiagnostics()
    client.diagnostics = counting
    typed = "if torch.cuda.get_device_capability() >= (9, 0):\n    torch.backends.cudnn.allow_tf32 = False\n"
    cuts = [len(typed) * (i + 1) // 20 for i in range(20)]
    for cut in cuts:
        doc.replace(base + typed[:cut])
    await doc.diagnostics()
    await asyncio.sleep(0.5)  # ten debounce windows: a late second check would have come by now
    assert 1 <= counting.count[doc.uri] <= 2
    assert seen(client.diagnostics[doc.uri]) == fresh_check(client.root, "train.py", doc.text)
    assert ("ROC106", 5) in await doc.found()


async def test_edits_equal_a_fresh_check_and_follow_an_imported_module(client: LanguageClient):
    """Edit after edit the server's answer is a fresh run's, with the facts of an imported project
    module kept between keystrokes, and read again once that module changes on disk (no event
    from the client: the file is written by another program)."""
    pkg = client.root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    platform = "import torch\n\n\ndef get_cc():\n    return torch.cuda.get_device_capability()\n"
    (pkg / "platform.py").write_text(platform)
    text = "from .platform import get_cc\n\nif get_cc() >= (9, 0):\n    print('hopper')\n"
    doc = Doc(client, "pkg/main.py", "python", text)
    assert (
        seen(await doc.diagnostics()) == fresh_check(client.root, "pkg/main.py", text) == [("ROC106", 2, 3)]
    )
    for extra in ("x = 1\n", "y = get_cc()\n", "if y[0] == 8:\n    pass\n"):
        doc.replace(doc.text + extra)
        assert seen(await doc.diagnostics()) == fresh_check(client.root, "pkg/main.py", doc.text)
    (pkg / "platform.py").write_text("def get_cc():\n    return (9, 0)  # fixed: no capability here\n")
    doc.replace(doc.text + "# edited\n")
    assert seen(await doc.diagnostics()) == fresh_check(client.root, "pkg/main.py", doc.text) == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "rocm_lint", "server"]))
async def undebounced_client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            initialization_options={"rocm-lint": {"debounce": 0}},
        )
    )
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def test_debounce_zero_checks_every_change(undebounced_client: LanguageClient):
    """`"debounce": 0` answers each change with its own check, as before the setting existed."""
    client = undebounced_client
    doc = Doc(client, "train.py", "python", TRAIN_PY)
    await doc.found()
    counting = CountingDiagnostics()
    client.diagnostics = counting
    for i in range(5):
        doc.replace(TRAIN_PY + f"x = {i}\n")
    while counting.count.get(doc.uri, 0) < 5:
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), TIMEOUT)
    assert counting.count[doc.uri] == 5


async def test_debounce_setting():
    from rocm_lint.server import DEFAULT_DEBOUNCE_MS, debounce_setting

    assert debounce_setting({"debounce": 120}) == 120.0
    assert debounce_setting({"settings": {"rocm-lint": {"debounce": 0}}}) == 0.0
    assert debounce_setting({"debounce": -5}) == 0.0 and debounce_setting({"debounce": 1e9}) == 10_000.0
    assert debounce_setting({"debounce": "fast"}) is None and debounce_setting({"debounce": True}) is None
    assert debounce_setting(None) is None and DEFAULT_DEBOUNCE_MS == 50.0


NVCC_SETUP_PY = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

NVCC = "nvcc"
flags = ["-O3"]  # the nvcc step's
flags.append("--use_fast_math")
try:
    cc = torch.cuda.get_device_capability()
except RuntimeError:
    cc = 0
if cc >= (9, 0):
    flags.append("-DHOPPER")
ext = CUDAExtension("k", ["k.cu"], extra_compile_args={NVCC: flags, "cxx": ["-O2"]})
setup(name="k", ext_modules=[ext], install_requires=["torch==2.4.0", "cupy-cuda12x"],
      cmdclass={"build_ext": BuildExtension})
"""


@pytest.mark.integration  # ten fresh `rocm-lint check` processes: --all-tiers
async def test_build_file_edits_equal_a_fresh_check(client: LanguageClient):
    """The narrowed searches of ROC501 (build facts), ROC405-407 (setup() lists) and ROC106 (except
    fallbacks) read the text's lines: edit after edit of a setup.py that moves, renames, splits
    and gates what they follow (and one with \\r\\n line endings), the server's answer is a fresh
    run's."""
    doc = Doc(client, "setup.py", "python", NVCC_SETUP_PY)
    first = seen(await doc.diagnostics())
    assert first == fresh_check(client.root, "setup.py", NVCC_SETUP_PY)
    assert [code for code, *_ in first] == ["ROC106", "ROC406", "ROC407", "ROC501"]
    edits = [
        lambda t: "# a build\n\n" + t,  # every line moves
        lambda t: t.replace(
            'flags.append("--use_fast_math")\n', 'flags.append("--use_fast_math")\nflags += ["-Xptxas=-v"]\n'
        ),
        lambda t: t.replace(
            'flags.append("--use_fast_math")\n',
            'if not torch.version.hip:\n    flags.append("--use_fast_math")\n',
        ),  # gated
        lambda t: t.replace(
            'install_requires=["torch==2.4.0", "cupy-cuda12x"]', "install_requires=REQ"
        ).replace("NVCC =", 'REQ = ["torch==2.4.0", "cupy-cuda12x"]\nNVCC ='),
        lambda t: t.replace("from setuptools import setup", "from setuptools import setup as build").replace(
            "setup(name=", "build(name="
        ),
        lambda t: t.replace("except RuntimeError:\n    cc = 0", "except RuntimeError:\n    cc = probe()"),
        lambda t: t.replace('NVCC = "nvcc"', 'NVCC = "nv" "cc"'),  # the key's alias, split
        lambda t: t.replace('flags += ["-Xptxas=-v"]', 'flags += ["-Xptxas=-v", "--threads 4"]'),
        lambda t: t.replace("\n", "\r\n"),
    ]
    for edit in edits:
        text = edit(doc.text)
        assert text != doc.text
        doc.replace(text)
        assert seen(await doc.diagnostics()) == fresh_check(client.root, "setup.py", text)
