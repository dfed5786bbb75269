"""Writes keep their promise (issue 15, item 7): `--fix` never writes outside the project through
a link, keeps owner and mode, refuses read-only and hard-linked files, never loses an editor's
save, makes its temporary files with O_EXCL and removes those of killed runs; baselines are
written atomically."""

import os
import stat
import subprocess
import sys
import time

import pytest

from conftest import run_cli
from rocm_lint.config import Config

HAZARD = "torch.backends.cuda.matmul.allow_tf32 = True"
SOURCE = f"import torch\n{HAZARD}\n"


def write(path, text=SOURCE):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def temps(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_fix_refuses_a_symlink_out_of_the_project(tmp_path):
    outside = write(tmp_path / "outside" / "victim.py")
    project = tmp_path / "project"
    write(project / "mine.py")
    (project / "planted.py").symlink_to(outside)
    result = run_cli("check", "--fix", ".", cwd=project)
    assert result.returncode == 2, result.stderr
    assert "planted.py: not fixed: a symbolic link leads out of the project" in result.stderr
    assert outside.read_text() == SOURCE  # untouched
    assert "if not is_rocm:" in (project / "mine.py").read_text()  # the run went on
    assert (project / "planted.py").is_symlink()


def test_fix_writes_through_a_symlink_inside_the_project(tmp_path):
    real = write(tmp_path / "pkg" / "real.py")
    (tmp_path / "alias.py").symlink_to(real)
    assert run_cli("check", "--fix", "alias.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "alias.py").is_symlink() and "if not is_rocm:" in real.read_text()


def test_fix_refuses_a_read_only_file(tmp_path):
    path = write(tmp_path / "ro.py")
    path.chmod(0o444)
    result = run_cli("check", "--fix", "ro.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "ro.py: not fixed: the file is read-only" in result.stderr
    assert path.read_text() == SOURCE and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_fix_keeps_mode_and_owner(tmp_path):
    path = write(tmp_path / "a.py")
    path.chmod(0o640)
    owner = (path.stat().st_uid, path.stat().st_gid)
    if os.geteuid() == 0:  # root can give the file away: the fix must give it back
        owner = (4321, 4322)
        os.chown(path, *owner)
    assert run_cli("check", "--fix", "a.py", cwd=tmp_path).returncode == 0
    st = path.stat()
    assert "if not is_rocm:" in path.read_text()
    assert stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == owner


def test_fix_refuses_a_file_with_several_hard_links(tmp_path):
    """Replacing the file would split the links (the other name keeps the old text, e.g. a
    package cache), writing in place would not be atomic: refused, the user decides."""
    path = write(tmp_path / "a.py")
    other = tmp_path / "cache" / "a.py"
    other.parent.mkdir()
    os.link(path, other)
    result = run_cli("check", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "a.py: not fixed: the file has 2 hard links" in result.stderr
    assert path.read_text() == SOURCE and os.path.samefile(path, other)


def test_an_editor_save_after_the_check_is_not_lost(tmp_path, monkeypatch):
    """The editor saves (same size, same mtime) after rocm-lint's stat check, while the temporary
    file is made: the content is compared again just before the rename."""
    import tempfile

    from rocm_lint.fix.files import fix_file

    path = write(tmp_path / "a.py")
    saved = SOURCE.replace("True", "Fals")  # same length
    real_mkstemp = tempfile.mkstemp

    def editor_saves_meanwhile(*args, **kwargs):
        st = path.stat()
        path.write_text(saved)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", editor_saves_meanwhile)
    outcome = fix_file(str(path), Config(), unsafe=False, write=True)
    assert outcome.error == "changed on disk while being fixed; not written"
    assert path.read_text() == saved
    assert temps(tmp_path) == []


def test_write_baseline_does_not_follow_a_planted_link(tmp_path):
    from rocm_lint.baseline import write_baseline

    victim = write(tmp_path / "victim.txt", "keep me\n")
    baseline = tmp_path / "baseline.json"
    (tmp_path / f"baseline.json.tmp{os.getpid()}").symlink_to(victim)  # the old temp file's name
    write_baseline([], str(baseline))
    assert victim.read_text() == "keep me\n"
    assert '"findings": []' in baseline.read_text()


def test_a_failed_baseline_write_keeps_the_old_one_and_leaves_no_temp(tmp_path, monkeypatch):
    from rocm_lint import baseline as bl

    path = write(tmp_path / "baseline.json", "old\n")

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bl.os, "replace", fail)
    with pytest.raises(OSError):
        bl.write_baseline([], str(path))
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]


def test_a_new_baseline_gets_the_umask_mode(tmp_path):
    from rocm_lint.baseline import write_baseline

    umask = os.umask(0o022)
    try:
        write_baseline([], str(tmp_path / "b.json"))
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o644


def test_stale_temp_files_of_killed_runs_are_removed(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead_pid = int(dead.stdout)
    write(tmp_path / "a.py")
    (tmp_path / f".rocm-lint-{dead_pid}-k1ll3d.tmp").write_text("half a file")
    legacy = tmp_path / ".rocm-lint-abc123xy.tmp"  # an old run's name, without its pid
    legacy.write_text("half a file")
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(legacy, (day_ago, day_ago))
    running = tmp_path / f".rocm-lint-{os.getpid()}-busy.tmp"  # a live run's: kept
    running.write_text("being written")
    assert run_cli("check", "--fix", "a.py", cwd=tmp_path).returncode == 0
    assert temps(tmp_path) == [running.name]


def test_a_sigkilled_fix_leaves_a_temp_file_the_next_run_removes(tmp_path):
    """Kill the fixer between writing its temporary file and the rename; the next --fix run
    removes what it left and fixes the file."""
    path = write(tmp_path / "a.py")
    code = (
        "import os, signal, sys\n"
        "from rocm_lint.config import Config\n"
        "from rocm_lint.fix import files\n"
        "real = files.os.replace\n"
        "files.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        "files.fix_file(sys.argv[1], Config(), unsafe=False, write=True)\n"
    )
    killed = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    assert len(temps(tmp_path)) == 1 and path.read_text() == SOURCE
    assert run_cli("check", "--fix", "a.py", cwd=tmp_path).returncode == 0
    assert temps(tmp_path) == [] and "if not is_rocm:" in path.read_text()


def test_fixes_in_worker_processes_write_what_a_serial_run_writes(tmp_path):
    """--fix spreads files over worker processes (8 or more files): the same bytes as -j 1,
    and a file reached twice (a symbolic link beside it) is fixed once, never concurrently."""
    from conftest import run_cli

    source = (
        "import torch\n\n\ndef setup(n):\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
        "    return torch.compile(n, mode='reduce-overhead')\n"
    )
    trees = {}
    for jobs in ("1", "2"):
        root = tmp_path / f"j{jobs}"
        root.mkdir()
        for i in range(12):
            (root / f"m{i}.py").write_text(source.replace("n)", f"n{i})").replace("(n,", f"(n{i},"))
        (root / "alias.py").symlink_to(root / "m0.py")
        proc = run_cli("check", "--no-cache", "--fix", "-j", jobs, ".", cwd=root)
        assert proc.returncode in (0, 1), proc.stderr
        trees[jobs] = {p.name: p.read_bytes() for p in sorted(root.iterdir())}
    assert trees["1"] == trees["2"]
    assert trees["2"]["m3.py"] != source.encode() and b"is_rocm" in trees["2"]["m3.py"]
