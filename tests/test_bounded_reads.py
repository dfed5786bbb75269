"""Every read is bounded and only regular files are read: a FIFO, a device, a link to
``/dev/zero`` or an unreadable directory never hangs a run, never eats memory and is never
skipped in silence when it was named."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_lint.config import Config
from rocm_lint.discovery import iter_files, read_bounded
from rocm_lint.engine import read_source
from rocm_lint.engine_paths import check_paths
from rocm_lint.finding import FileError

HAZARD = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
SRC = str(Path(__file__).resolve().parents[1] / "src")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")


def _run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "rocm_lint", "check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@needs_fifo
def test_fifo_named_on_the_command_line_is_one_error_line(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    proc = _run_cli(str(fifo), timeout=30)  # used to block forever in open()
    assert proc.returncode == 2
    errors = [ln for ln in proc.stderr.splitlines() if "pipe.py" in ln]
    assert errors == [f"rocm-lint: error: {fifo}: not a regular file (a FIFO); skipped"]


@needs_fifo
def test_fifo_in_a_walked_tree_is_skipped_and_the_rest_checked(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    os.mkfifo(tmp_path / "b.py")
    os.mkfifo(tmp_path / "Dockerfile")
    proc = _run_cli(str(tmp_path), timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "a.py:2:1: ROC101" in proc.stdout
    assert "b.py" not in proc.stdout + proc.stderr


@needs_dev_zero
def test_link_to_dev_zero_is_not_read(tmp_path):
    link = tmp_path / "zero.py"
    link.symlink_to("/dev/zero")
    proc = _run_cli(str(link), timeout=30)  # used to read until memory ran out
    assert proc.returncode == 2
    assert f"{link}: not a regular file (a character device); skipped" in proc.stderr
    (tmp_path / "a.py").write_text(HAZARD)
    report = check_paths([str(tmp_path)], Config())  # in a walk: skipped
    assert [f.code for f in report.findings] == ["ROC101"] and not report.errors


@needs_fifo
def test_read_source_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "x.cu"
    os.mkfifo(fifo)
    result = read_source(str(fifo))
    assert isinstance(result, FileError) and "FIFO" in result.reason


def test_reads_stop_at_the_limit(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 100)
    assert read_bounded(str(big), 600) == b"x = 1\n" * 100
    assert read_bounded(str(big), 599) == "file too large (600 bytes, limit 599); skipped"
    assert isinstance(read_bounded(str(tmp_path), 10), str)  # a directory is not read
    with pytest.raises(OSError):
        read_bounded(str(tmp_path / "missing.py"), 10)


def test_a_file_growing_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    """The size is checked before reading, and no more than limit + 1 bytes are ever read."""
    path = tmp_path / "grows.py"
    path.write_bytes(b"#" * 10)
    real_fstat = os.fstat
    asked = []

    def read(fd, n):
        asked.append(n)
        return b"#" * n  # a file that never ends

    monkeypatch.setattr(os, "read", read)
    monkeypatch.setattr(os, "fstat", real_fstat)
    result = read_bounded(str(path), 3 << 20)
    assert result == f"file too large (more than {3 << 20} bytes, limit {3 << 20}); skipped"
    assert sum(asked) == (3 << 20) + 1


def test_unreadable_directory_is_an_error_line_and_the_rest_is_checked(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(HAZARD)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.py").write_text(HAZARD)
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path).rstrip(os.sep).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = check_paths([str(tmp_path)], Config())
    assert [(f.path, f.code) for f in report.findings] == [(str(tmp_path / "a.py"), "ROC101")]
    assert [(e.path, e.reason) for e in report.errors] == [
        (str(locked), "cannot read directory: permission denied")
    ]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_directory_for_real(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.py").write_text(HAZARD)
    locked.chmod(0)
    try:
        proc = _run_cli(str(tmp_path))
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2
    assert f"{locked}: cannot read directory: permission denied" in proc.stderr
    assert "a.py:2:1: ROC101" in proc.stdout


def test_walk_reports_an_unreadable_root(tmp_path, monkeypatch):
    def scandir(path="."):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(os, "scandir", scandir)
    items = list(iter_files([str(tmp_path)], Config()))
    assert [(e.path, e.reason) for e in items] == [
        (str(tmp_path), "cannot read directory: permission denied")
    ]


def test_fix_reads_are_bounded_and_regular_files_only(tmp_path, monkeypatch):
    """--fix reads the file it rewrites through the same bounded reader as the check."""
    from rocm_lint.config import Config
    from rocm_lint.fix import files

    big = tmp_path / "big.py"
    big.write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n" + "#" * 4096 + "\n")
    monkeypatch.setattr("rocm_lint.engine.MAX_FILE_BYTES", 1024)
    outcome = files.fix_file(str(big), Config(), unsafe=False, write=True)
    assert outcome.error and "too large" in outcome.error
    assert "allow_tf32 = True" in big.read_text()
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    outcome = files.fix_file(str(fifo), Config(), unsafe=False, write=False)
    assert outcome.error and "not a regular file" in outcome.error
