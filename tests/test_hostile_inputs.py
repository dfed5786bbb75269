"""Hostile inputs, one defect of issue 38 at a time (each of these failed before it was fixed):
the cache reads only its own regular files, bounded, and believes only entries of its shape and
seal; reports, baselines and fixes never write through a planted link; workers die with their
parent; a deeply nested config is one error line; the language server answers every request and
follows the shutdown/exit contract; line endings and byte-order marks survive a fix; git runs
nothing a repository's configuration names; every limit is documented.  The sweep over all the
cases and their variants is tests/test_hostile_sweep.py (integration tier)."""

import errno
import json
import os
import re
import subprocess
import sys

import pytest

import hostile
from conftest import ROOT
from hostile import HAZARD, SOURCE, judge, rocm_lint


def _case(name):
    [case] = [c for c in hostile.all_cases() if c.name == name]
    return case


def _passes(name, tmp_path):
    verdict = judge(_case(name), tmp_path)
    assert verdict.ok, (verdict, verdict.run)


# -- the cache -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep-json"])
def test_a_cache_shard_that_is_no_regular_file_is_a_miss(kind, tmp_path):
    """A FIFO hung every run; a link to /dev/zero grew the process without bound (the run here
    may take 2 GiB: it was killed for memory)."""
    _passes(f"cache-shard-{kind}", tmp_path)


@pytest.mark.parametrize(
    "shape", ["entry-is-a-list-resealed", "finding-fields-wrong-types-resealed", "deps-not-pairs-resealed"]
)
def test_an_entry_of_another_shape_is_a_miss(shape, tmp_path):
    """Sealed with the user's own secret (as a rocm-lint of another shape would have written it):
    the entries' shape check answers; ``deps`` that were not pairs crashed every run."""
    _passes(f"cache-entry-{shape}", tmp_path)


def test_a_shard_of_another_shape_under_a_valid_seal_is_a_miss(tmp_path):
    _passes("cache-shard-entries-hold-lists-resealed", tmp_path)


@pytest.mark.parametrize("forgery", ["forged-message", "forged-clean"])
def test_forged_findings_are_never_printed_nor_hide_real_ones(forgery, tmp_path):
    """The entry keeps its shape and the file's hash: only its seal (a keyed hash under a secret
    outside the project) tells the forgery."""
    _passes(f"cache-entry-{forgery}", tmp_path)


def test_entry_shape_and_seal_in_process(tmp_path):
    from rocm_lint.cache_entries import decode_result, seal, valid_entry

    entry = {"hash": "h", "triggers": "t", "deps": [["/a", None]], "stat": None, "result": {"findings": []}}
    assert valid_entry(entry)
    for bad in ([], {"hash": 1}, dict(entry, deps=[[1, 2]]), dict(entry, stat=[1, 2]), dict(entry, edits=[])):
        assert not valid_entry(bad)
    key = b"k" * 32
    assert seal(b"body", key) == seal(b"body", key) != seal(b"bodY", key)
    assert seal(b"body", key) != seal(b"body", b"j" * 32)
    for data in ({"findings": [{"line": -1}]}, {"findings": [7]}, {"error": 3}, []):
        with pytest.raises((ValueError, KeyError, TypeError)):
            decode_result("a.py", data)


def test_the_secret_is_kept_outside_the_project_and_private(tmp_path, monkeypatch):
    from rocm_lint.cache_entries import SECRET_BYTES, secret, secret_file

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    first = secret()
    assert len(first) == SECRET_BYTES and secret() == first
    assert oct(os.stat(secret_file()).st_mode & 0o777) == "0o600"
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-such-place")  # nowhere to keep one
    assert secret() != secret()  # a secret of each call: written, never read back


def test_a_planted_default_cache_link_is_not_used(tmp_path):
    _passes("cache-default-dir-is-a-link", tmp_path)


def test_clean_on_a_symlinked_cache_dir_says_why_in_one_line(tmp_path):
    """It was a traceback (shutil.rmtree refuses links), and exit 0."""
    _passes("clean-a-linked-cache-dir", tmp_path)
    _passes("clean-a-linked-named-cache-dir", tmp_path / "named")


# -- reports and baselines -----------------------------------------------------------------------------
@pytest.mark.parametrize("option", ["output-file", "extra-output", "write-baseline"])
def test_a_report_never_goes_through_a_link_out_of_the_project(option, tmp_path):
    _passes(f"report-{option}-link-outside", tmp_path)


def test_a_report_through_a_link_inside_the_project_keeps_the_link(tmp_path):
    _passes("report-write-baseline-link-inside", tmp_path / "a")
    _passes("report-output-file-link-inside", tmp_path / "b")


def test_a_report_through_a_linked_folder_out_of_the_project_is_refused(tmp_path):
    _passes("report-output-file-link-dir-link", tmp_path)


def _no_space(monkeypatch):
    """Every write of a file rocm-lint opens itself fails as on a full disk."""
    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Full(real(fd, *a, **k)))


@pytest.mark.parametrize("option", ["-o", "--extra-output", "--write-baseline"])
def test_a_failed_report_write_is_one_line_and_exit_2(option, tmp_path, monkeypatch, capsys):
    from rocm_lint.cli import main

    (tmp_path / "a.py").write_text(SOURCE)
    report = tmp_path / "report.json"
    report.write_text("old report\n")
    monkeypatch.chdir(tmp_path)
    _no_space(monkeypatch)
    target = f"json={report}" if option == "--extra-output" else str(report)
    rc = main(["check", "--no-cache", option, target, "a.py"])
    err = capsys.readouterr().err
    assert rc == 2
    assert [ln for ln in err.splitlines() if "error" in ln] == [
        f"rocm-lint: error: {report}: cannot write the "
        + ("baseline" if option == "--write-baseline" else "report")
        + ": no space left on device"
    ]
    assert report.read_text() == "old report\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_report_on_a_full_tmpfs_is_one_line_and_exit_2(tmp_path):
    result = hostile.full_disk_run(tmp_path, ["--output-format", "json", "-o", "FILE"])
    if not result:
        pytest.skip("no tmpfs can be mounted here (not root)")
    run = result["run"]
    assert run.rc == 2 and not run.crashed, run.stderr
    assert "no space left on device" in run.stderr
    assert result["old"] == "old report\n" and result["temps"] == []


# -- fixes from outside a tree -------------------------------------------------------------------------
@pytest.mark.parametrize("action", ["fix", "add-noqa"])
def test_fix_run_from_above_a_tree_never_follows_its_links_out(action, tmp_path):
    """From the tree's parent (``$HOME``) with no config, the working directory held the link's
    target too: the link in the tree was followed and the file outside rewritten."""
    _passes(f"fix-{action}-from-parent", tmp_path)


def test_fix_run_from_the_root_never_follows_a_trees_links_out(tmp_path):
    _passes("fix-fix-from-root", tmp_path)


def test_named_roots_and_project_root():
    from rocm_lint.config import Config
    from rocm_lint.fix.files import project_root

    assert project_root("/home/u/proj/a.py", Config(), ("/home/u/proj",)) == "/home/u/proj"
    assert project_root("/home/u/proj/sub/a.py", Config(), ("/home/u", "/home/u/proj")) == "/home/u/proj"
    assert project_root("/elsewhere/a.py", Config(), ("/home/u/proj",)) == "/elsewhere"


# -- workers die with their parent ---------------------------------------------------------------------
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_fix_workers_die_with_their_killed_parent(tmp_path):
    result = hostile.kill_during_fix(tmp_path, files=24)
    assert result["workers"], "no worker process was seen"
    assert result["alive"] == []
    assert result["broken"] == []


def test_a_worker_whose_parent_is_gone_exits():
    """The watch itself: a process whose parent pid is not the one it was given exits."""
    code = "import rocm_lint.workers as w; w._die_with_parent(1); print('survived')"
    done = subprocess.run(
        [sys.executable, "-c", code], timeout=60, env=hostile.env_for(), capture_output=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, b"", b"")


# -- configuration -----------------------------------------------------------------------------------------
def test_a_deeply_nested_config_is_one_error_line_and_exit_2(tmp_path):
    _passes("config-pyproject.toml-array-100000", tmp_path / "a")
    _passes("config-rocm-lint.toml-table-100000", tmp_path / "b")


def test_flake8_reads_past_a_deeply_nested_config(tmp_path):
    pytest.importorskip("flake8")
    (tmp_path / "pyproject.toml").write_text("[tool.rocm-lint]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "a.py").write_text(SOURCE)
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "ROC", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=hostile.env_for(),
    )
    assert "ROC000" not in done.stdout and "a.py:2:1: ROC101" in done.stdout, done.stdout
    assert "nested too deeply" in done.stderr


# -- the language server ------------------------------------------------------------------------------------
@pytest.fixture
def server(tmp_path):
    pytest.importorskip("pygls")
    (tmp_path / "a.py").write_text(SOURCE)
    srv = hostile.Server(tmp_path)
    srv.initialize(tmp_path)
    yield srv
    srv.close()


def _open(server, uri, text=SOURCE):
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )


POSITIONS = [(-1, 0), (0, -5), (2**31, 0), (0, 2**40), (10**6, 10**6), (1, 10**6)]


def test_every_position_request_is_answered(server, tmp_path):
    """Out of LSP's range (negative, past 2^31-1): an InvalidParams error (the request was
    dropped unanswered); past the text: LSP's clamping, a result."""
    uri = (tmp_path / "a.py").as_uri()
    _open(server, uri)
    msg_id = 10
    for line, character in POSITIONS:
        for method, params in hostile.position_requests(uri, line, character):
            msg_id += 1
            server.request(msg_id, method, params)
            answer = server.answer(msg_id)
            assert answer is not None, (method, line, character)
            if line < 0 or character < 0 or line >= 2**31 or character >= 2**31:
                assert answer["error"]["code"] == -32602, answer
            else:
                assert "error" not in answer, answer


def test_a_huge_content_length_is_refused_with_bounded_memory(server):
    server.send_raw(b"Content-Length: 1000000000000\r\n\r\n{}")
    answer = server.answer(None)
    assert answer is not None and answer["error"]["code"] == -32600
    assert server.proc.poll() is None and server.rss_kib() < 512 * 1024


def test_requests_after_shutdown_are_answered_and_exit_says_0(server):
    server.request(1, "shutdown")
    assert server.answer(1) == {"jsonrpc": "2.0", "id": 1, "result": None}
    server.request(
        2, "textDocument/hover", {"textDocument": {"uri": "file:///x.py"}, "position": hostile.position(0, 0)}
    )
    assert server.answer(2)["error"]["code"] == -32600
    server.notify("exit")
    assert server.exit_code() == 0


def test_exit_without_shutdown_exits_1(server):
    server.notify("exit")
    assert server.exit_code() == 1


def test_an_unopened_fifo_document_is_never_read(server, tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    uri = fifo.as_uri()
    requests = hostile.position_requests(uri, 0, 0) + [
        ("textDocument/diagnostic", hostile.text_document(uri))
    ]
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]},
    )
    for msg_id, (method, params) in enumerate(requests, start=7):
        server.request(msg_id, method, params)
        answer = server.answer(msg_id)
        assert answer is not None and "error" not in answer, method


# -- line endings and byte-order marks --------------------------------------------------------------------
def test_fix_keeps_a_cr_only_python_files_final_line_ending(tmp_path):
    _passes("fix-py-cr", tmp_path)
    text = SOURCE.replace("\n", "\r")
    run = rocm_lint(
        "check", "--no-cache", "--fix", "--stdin-filename", "a.py", "-", cwd=tmp_path, stdin=text.encode()
    )
    assert run.stdout.endswith(HAZARD + "\r") and "\n" not in run.stdout, run.stdout


@pytest.mark.parametrize("ending", ["bom", "cr", "bom-cr", "bom-crlf"])
def test_a_cuda_file_with_a_bom_or_cr_only_lines_is_fixed(ending, tmp_path):
    _passes(f"fix-cu-{ending}", tmp_path)


def test_a_bom_does_not_shift_line_1_columns(tmp_path):
    from rocm_lint.config import Config
    from rocm_lint.engine import check_file

    plain, marked = tmp_path / "a.cu", tmp_path / "b.cu"
    text = b"unsigned m = __ballot_sync(0xffffffff, p);\n"
    plain.write_bytes(text)
    marked.write_bytes(b"\xef\xbb\xbf" + text)

    def where(path):
        return [(f.line, f.col, f.code) for f in check_file(str(path), Config())]

    assert where(marked) == where(plain) != []


def test_a_cuda_file_mixing_cr_and_lf_says_why_it_is_not_fixed(tmp_path):
    path = tmp_path / "k.cu"
    path.write_bytes(hostile.CUDA_HEADERS.encode().replace(b"\n", b"\r", 2))
    before = path.read_bytes()
    run = rocm_lint("check", "--no-cache", "--output-format", "json", "k.cu", cwd=tmp_path)
    fixes = [f["fix"] for f in json.loads(run.stdout) if f.get("fix")]
    assert fixes and all(f["applicability"] == "display" and "lone CR" in f["message"] for f in fixes)
    assert path.read_bytes() == before


# -- git --------------------------------------------------------------------------------------------------
def test_baseline_commit_runs_nothing_the_repository_configures(tmp_path):
    setup = hostile.hostile_repository(tmp_path)
    run = rocm_lint("check", "--no-cache", "--baseline-commit", "HEAD", ".", cwd=setup["repo"])
    assert run.rc == 1 and "a.py:2:1: ROC101" in run.stdout, run.stderr
    assert sorted(p.name for p in setup["marks"].iterdir()) == []


def test_every_git_command_disables_fsmonitor_and_hooks(tmp_path, monkeypatch):
    from rocm_lint import diffbase

    seen = []
    real = subprocess.Popen

    def spy(args, **kwargs):
        seen.append(list(args))
        return real(args, **kwargs)

    setup = hostile.hostile_repository(tmp_path)
    monkeypatch.setattr(diffbase.subprocess, "Popen", spy)
    diffbase.changed_since("HEAD", [str(setup["repo"])])
    assert seen and all(a[2:6] == ["-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null"] for a in seen)
    [diff] = [a for a in seen if "diff" in a]
    assert {"--no-ext-diff", "--no-textconv", "filter.evil.clean=", "filter.evil.process="} <= set(diff)


# -- every limit is documented -----------------------------------------------------------------------------
def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def test_every_limit_is_in_the_usage_page():
    from rocm_lint import cache, config, diffbase, discovery, engine, server_stream

    usage = (ROOT / "docs" / "usage.md").read_text()
    limits = [
        engine.MAX_FILE_BYTES,
        config.MAX_CONFIG_BYTES,
        discovery.MAX_GITIGNORE_BYTES,
        cache.MAX_CACHE_BYTES,
        cache.MAX_CACHE_BYTES // cache.SHARDS,
        diffbase.MAX_GIT_OUTPUT,
        server_stream.MAX_MESSAGE_BYTES,
        server_stream.MAX_HEADER_BYTES,
    ]
    for limit in limits:
        assert _mib(limit) in usage, _mib(limit)
    assert f"{cache.MAX_ENTRIES:,}" in usage
    assert f"{diffbase.GIT_TIMEOUT} s" in usage
    assert re.search(r"## Limits", usage)
