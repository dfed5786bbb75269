"""The hostile-input sweep of issue 38, re-run: every case and its variants (tests/hostile.py),
each in a subprocess with a time and memory limit.  Done when: 0 crashes (a traceback, a signal),
0 hangs, 0 wrong exit codes, 0 writes outside the tree, nothing lost.

Integration tier (a few minutes: ~70 command-line runs, kill trials, language-server sessions):
``python -m pytest tests/test_hostile_sweep.py --all-tiers``; or as a script, which prints the
totals per kind of input: ``PYTHONPATH=src python tests/test_hostile_sweep.py``.
"""

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hostile  # noqa: E402
from hostile import SOURCE, judge  # noqa: E402

pytestmark = pytest.mark.integration

KILL_TRIALS = int(os.environ.get("HOSTILE_KILL_TRIALS", "5"))
CASES = hostile.all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, tmp_path):
    verdict = judge(case, tmp_path)
    assert verdict.ok, (verdict, verdict.run)


# -- kill -9 during --fix --------------------------------------------------------------------------------
def kill_verdicts(base: Path):
    out = []
    for trial in range(KILL_TRIALS):
        result = hostile.kill_during_fix(base / f"kill{trial}", files=24 + 8 * trial)
        verdict = hostile.Verdict(f"kill-9-during-fix-{trial}")
        verdict.hang = bool(result["alive"]) or not result["workers"]
        verdict.lost = ", ".join(result["broken"]) or None
        out.append(verdict)
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_during_fix(tmp_path):
    bad = [v for v in kill_verdicts(tmp_path) if not v.ok]
    assert bad == []


# -- a full disk ---------------------------------------------------------------------------------------------
FULL_DISK_OPTIONS = {
    "output-file": ["--output-format", "json", "-o", "FILE"],
    "sarif": ["--output-format", "sarif", "-o", "FILE"],
    "extra-output": ["--extra-output", "json=FILE"],
    "write-baseline": ["--write-baseline", "FILE"],
}


def full_disk_verdicts(base: Path):
    out = []
    for name, option in FULL_DISK_OPTIONS.items():
        result = hostile.full_disk_run(base / name, option)
        if not result:
            continue  # no tmpfs here: the fast tier's monkeypatched full disk stands in
        run = result["run"]
        verdict = hostile.Verdict(f"full-disk-{name}", run=run)
        verdict.crash, verdict.hang = run.crashed, run.hung
        verdict.wrong_exit = run.rc != 2
        errors = [ln for ln in run.stderr.splitlines() if "error" in ln]
        if result["old"] != "old report\n" or result["temps"] or len(errors) != 1:
            verdict.lost = f"old={result['old']!r} temps={result['temps']} errors={errors}"
        out.append(verdict)
    return out


def test_full_disk(tmp_path):
    verdicts = full_disk_verdicts(tmp_path)
    if not verdicts:
        pytest.skip("no tmpfs can be mounted here (not root)")
    assert [v for v in verdicts if not v.ok] == []


# -- the language server's stream -----------------------------------------------------------------------
def _answered(server, msg_id, code=None):
    answer = server.answer(msg_id, timeout=20)
    if answer is None:
        return "no answer"
    if code is not None and answer.get("error", {}).get("code") != code:
        return f"not error {code}: {answer}"
    return None


def server_verdicts(base: Path):
    out = []

    def session(name, script):
        root = base / name
        root.mkdir(parents=True)
        (root / "a.py").write_text(SOURCE)
        server = hostile.Server(root)
        verdict = hostile.Verdict(f"server-{name}")
        try:
            if server.initialize(root) is None:
                verdict.hang = True
            else:
                problem = script(server, root)
                if problem == "hang":
                    verdict.hang = True
                elif problem:
                    verdict.wrong_exit = True
                    verdict.lost = problem
        finally:
            if server.proc.poll() not in (None, 0, 1):
                verdict.crash = True
            server.close()
        out.append(verdict)

    def positions(server, root):
        uri = (root / "a.py").as_uri()
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}},
        )
        msg_id = 100
        for line in (-(2**40), -1, 0, 1, 2, 10**6, 2**31 - 1, 2**31, 2**53):
            for character in (-1, 0, 10**6, 2**31):
                for method, params in hostile.position_requests(uri, line, character):
                    msg_id += 1
                    server.request(msg_id, method, params)
                    invalid = not (0 <= line < 2**31 and 0 <= character < 2**31)
                    problem = _answered(server, msg_id, -32602 if invalid else None)
                    if problem:
                        return f"{method} at {line}:{character}: {problem}"
        return None

    def huge_length(length):
        def script(server, root):
            server.send_raw(b"Content-Length: %d\r\n\r\n{}" % length)
            problem = _answered(server, None, -32600)
            if problem:
                return problem
            if server.rss_kib() > 512 * 1024:
                return f"memory: {server.rss_kib()} KiB"
            return None

        return script

    def long_header(server, root):
        server.send_raw(b"X-Junk: " + b"a" * (8 << 20) + b"\r\n")
        server.request(1, "shutdown")
        return _answered(server, 1) if server.rss_kib() < 512 * 1024 else "memory"

    def garbage_bodies(server, root):
        for i, body in enumerate([b"{", b"[]", b"null", b'{"jsonrpc": "2.0"}', b"\xff\xfe", b'"x"']):
            server.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.request(5, "shutdown")
        return _answered(server, 5)

    def after_shutdown(server, root):
        server.request(1, "shutdown")
        problem = _answered(server, 1)
        for i, (method, params) in enumerate(hostile.position_requests((root / "a.py").as_uri(), 0, 0), 2):
            server.request(i, method, params)
            problem = problem or _answered(server, i, -32600)
        server.request(9, "shutdown")
        problem = problem or _answered(server, 9, -32600)
        server.notify("exit")
        code = server.exit_code()
        return problem or (None if code == 0 else f"exit code {code}")

    def exit_without_shutdown(server, root):
        server.notify("exit")
        code = server.exit_code()
        return None if code == 1 else f"exit code {code}"

    def unopened_fifo(server, root):
        os.mkfifo(root / "pipe.py")
        os.symlink("/dev/zero", root / "zero.py")
        msg_id = 20
        for name in ("pipe.py", "zero.py", "missing.py"):
            uri = (root / name).as_uri()
            requests = hostile.position_requests(uri, 0, 0)
            requests.append(("textDocument/diagnostic", hostile.text_document(uri)))
            for method, params in requests:
                msg_id += 1
                server.request(msg_id, method, params)
                problem = _answered(server, msg_id)
                if problem:
                    return f"{name} {method}: {problem}"
        return None

    session("positions", positions)
    for length in (10**12, 2**63, 64 * 1024 * 1024 + 1):
        session(f"content-length-{length}", huge_length(length))
    session("long-header-line", long_header)
    session("garbage-bodies", garbage_bodies)
    session("requests-after-shutdown", after_shutdown)
    session("exit-without-shutdown", exit_without_shutdown)
    session("unopened-fifo-and-device", unopened_fifo)
    return out


def test_server_stream(tmp_path):
    pytest.importorskip("pygls")
    assert [v for v in server_verdicts(tmp_path) if not v.ok] == []


# -- git --------------------------------------------------------------------------------------------------------
def git_verdicts(base: Path):
    out = []
    for option in (["--baseline-commit", "HEAD"], ["--baseline-commit", "HEAD", "--fix"]):
        setup = hostile.hostile_repository(base / "-".join(o.strip("-") for o in option))
        run = hostile.rocm_lint("check", "--no-cache", *option, ".", cwd=setup["repo"])
        verdict = hostile.Verdict("git-" + " ".join(option), run=run)
        verdict.crash, verdict.hang = run.crashed, run.hung
        verdict.wrong_exit = run.rc not in (0, 1)
        marks = sorted(p.name for p in setup["marks"].iterdir())
        verdict.outside_written = bool(marks)  # a program the repository named ran
        verdict.lost = f"ran: {marks}" if marks else None
        out.append(verdict)
    return out


def test_git_runs_nothing_the_repository_names(tmp_path):
    assert [v for v in git_verdicts(tmp_path) if not v.ok] == []


# -- as a script ---------------------------------------------------------------------------------------------
def main() -> int:
    totals: Counter = Counter()
    failed = []
    with tempfile.TemporaryDirectory(prefix="rocm-lint-sweep-") as tmp:
        base = Path(tmp)
        verdicts = [judge(case, base / case.name) for case in CASES]
        if sys.platform.startswith("linux"):
            verdicts += kill_verdicts(base / "kill")
        verdicts += full_disk_verdicts(base / "disk")
        try:
            import pygls  # noqa: F401

            verdicts += server_verdicts(base / "server")
        except ImportError:
            pass
        verdicts += git_verdicts(base / "git")
    for v in verdicts:
        totals["cases"] += 1
        totals["crashes"] += v.crash
        totals["hangs"] += v.hang
        totals["wrong exit codes"] += v.wrong_exit
        totals["writes outside the tree"] += v.outside_written
        totals["lost"] += bool(v.lost)
        if not v.ok:
            failed.append(v)
    for key in ("cases", "crashes", "hangs", "wrong exit codes", "writes outside the tree", "lost"):
        print(f"{key:>24}: {totals[key]}")
    for v in failed:
        print(f"FAILED {v.case}: {v}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
