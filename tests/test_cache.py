"""The content cache (rocm_lint.cache): a warm run answers from it with the very same output,
an edit re-checks the edited file and the files that read it, and the cache never breaks a run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

from rocm_lint import engine, engine_paths
from rocm_lint.config import Config
from rocm_lint.engine_paths import check_paths


@pytest.fixture
def project(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", copy)
    shutil.copytree(FIXTURES / "sample-project", copy / "sample")
    return copy


@pytest.fixture
def checked(monkeypatch):
    """The files the engine really checks (not answered by the cache), per run."""
    seen = []
    real = engine.check_file

    def spy(path, config, project=None):
        seen.append(os.path.relpath(path))
        return real(path, config, project)

    monkeypatch.setattr(engine_paths, "check_file", spy)
    return seen


def _run(project, cache, seen):
    seen.clear()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        report = check_paths(["."], Config(), jobs=1, cache_dir=str(cache))
    finally:
        os.chdir(cwd)
    return report, sorted(seen)


def test_a_warm_run_checks_nothing_and_finds_the_same(project, tmp_path, checked):
    cache = tmp_path / "cache"
    cold, first = _run(project, cache, checked)
    warm, second = _run(project, cache, checked)
    assert first and second == []
    assert warm.findings == cold.findings
    assert [f.fix for f in warm.findings] == [f.fix for f in cold.findings]
    assert [f.recipe for f in warm.findings] == [f.recipe for f in cold.findings]
    assert [(f.message, f.end_line, f.end_col) for f in warm.findings] == [
        (f.message, f.end_line, f.end_col) for f in cold.findings
    ]


@pytest.fixture
def reads(monkeypatch):
    """The project's files read through read_bounded (absolute paths), per run; not the cache's
    own shards and secret (read without following links)."""
    from rocm_lint import discovery

    seen = []
    real = discovery.read_bounded

    def spy(path, limit, **kwargs):
        if kwargs.get("follow_links", True):
            seen.append(os.path.abspath(path))
        return real(path, limit, **kwargs)

    monkeypatch.setattr(discovery, "read_bounded", spy)
    return seen


def _age(project, monkeypatch, seconds=60):
    """Every file's modification time ``seconds`` in the past (a tree checked out a while ago).
    Setting it changes the files' change time, which cannot be set back: the two-second margin
    for racy timestamps is taken off instead of waiting."""
    import time

    from rocm_lint import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)
    old = time.time() - seconds
    for path in project.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))


def test_a_warm_run_reads_no_unchanged_file(project, tmp_path, checked, reads, monkeypatch):
    """Size, times and inode recorded with the hash answer for a file older than two seconds.
    (A run of a few files, pre-commit's, reads the modules they import anyway: this one is
    made to run as a big tree does.)"""
    monkeypatch.setattr(engine_paths, "_FOLLOW_IMPORTS", 0)
    _age(project, monkeypatch)
    cache = tmp_path / "cache"
    cold, _ = _run(project, cache, checked)
    reads.clear()
    warm, again = _run(project, cache, checked)
    # (dependencies that did not exist, such as a build file above the project, are probed again)
    assert again == [] and [r for r in reads if os.path.isfile(r)] == []
    assert warm.findings == cold.findings


def test_a_file_younger_than_two_seconds_is_read_again_but_not_rechecked(project, tmp_path, checked, reads):
    """A timestamp an edit in the same tick could share is never trusted (git's racy entries)."""
    cache = tmp_path / "cache"
    _run(project, cache, checked)  # the files were just copied: no stat is recorded
    reads.clear()
    _, again = _run(project, cache, checked)
    assert again == [] and str(project / "acme" / "platform.py") in reads


def test_an_edit_that_keeps_size_and_modification_time_is_seen(project, tmp_path, checked, monkeypatch):
    """Content changed, size and mtime put back (a tool restoring timestamps): the change time
    differs, so the file is read and checked again."""
    _age(project, monkeypatch)
    cache = tmp_path / "cache"
    cold, _ = _run(project, cache, checked)
    model = project / "acme" / "model.py"
    st = model.stat()
    text = model.read_text()
    line = "torch.backends.cudnn.allow_tf32 = True  # expect: ROC101"
    edited = text.replace(line, line.replace("cudnn", "cudxx"))
    assert edited != text and len(edited) == len(text)
    model.write_text(edited)
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))
    report, again = _run(project, cache, checked)
    assert "acme/model.py" in again and len(report.findings) == len(cold.findings) - 1
    uncached = check_paths([str(project)], Config(), jobs=1)
    assert [(Path(f.path).name, f.line, f.code, f.message) for f in report.findings] == [
        (Path(f.path).name, f.line, f.code, f.message) for f in uncached.findings
    ]


def test_an_edit_rechecks_the_file_and_the_files_that_read_it(project, tmp_path, checked):
    cache = tmp_path / "cache"
    _run(project, cache, checked)
    platform = project / "acme" / "platform.py"
    platform.write_text(platform.read_text() + "\nEXTRA = 1\n")
    report, again = _run(project, cache, checked)
    # model.py and compile.py read their gates and wrappers from platform.py
    assert again == ["acme/compile.py", "acme/model.py", "acme/platform.py"]
    # a gate removed in the platform module changes a finding in a module that imports it
    platform.write_text(
        platform.read_text().replace("AMD_GPU = torch.version.hip is not None", "AMD_GPU = False")
    )
    report, again = _run(project, cache, checked)
    assert "acme/model.py" in again
    uncached = check_paths([str(project)], Config(), jobs=1)
    assert [(Path(f.path).name, f.line, f.code) for f in report.findings] == [
        (Path(f.path).name, f.line, f.code) for f in uncached.findings
    ]


def test_a_new_wrapper_anywhere_rechecks_everything(project, tmp_path, checked):
    cache = tmp_path / "cache"
    _, first = _run(project, cache, checked)
    (project / "acme" / "more.py").write_text(
        "import torch\n\n\ndef sm_version():\n    return torch.cuda.get_device_capability()\n"
    )
    _, again = _run(project, cache, checked)
    assert again == sorted(first + ["acme/more.py"])


def test_the_cache_survives_corruption_and_concurrent_runs(project, tmp_path):
    cache = tmp_path / "cache"
    env = {"ROCM_LINT_CACHE_DIR": str(cache)}
    first = run_cli("check", "--output-format", "json", ".", cwd=project, env=env)
    files = list(cache.rglob("*.json"))
    assert files
    for file in files:  # every shard broken
        file.write_text("{ not json")
    again = run_cli("check", "--output-format", "json", ".", cwd=project, env=env)
    assert again.stdout == first.stdout and again.returncode == first.returncode
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rocm_lint", "check", "--output-format", "json", "."],
            cwd=project,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(o == first.stdout for o in outputs)
    for file in files:
        json.loads(file.read_text().partition("\n")[2])  # whole (after its seal), whoever won
    assert not list(cache.rglob("*.tmp"))


def test_cache_directory_is_ignored_by_git_and_no_cache_writes_nothing(project, tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    proc = run_cli("check", ".", cwd=project, env={"ROCM_LINT_CACHE_DIR": ""})
    assert proc.returncode == 1, proc.stderr
    assert (project / ".rocm_lint_cache" / "CACHEDIR.TAG").is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".rocm_lint_cache" not in status
    shutil.rmtree(project / ".rocm_lint_cache")
    run_cli("check", "--no-cache", ".", cwd=project, env={"ROCM_LINT_CACHE_DIR": ""})
    assert not (project / ".rocm_lint_cache").exists()


def test_clean_removes_the_cache_and_nothing_else(project, tmp_path):
    env = {"ROCM_LINT_CACHE_DIR": ""}
    run_cli("check", ".", cwd=project, env=env)
    assert (project / ".rocm_lint_cache").is_dir()
    proc = run_cli("clean", cwd=project, env=env)
    assert proc.returncode == 0 and "removed" in proc.stderr
    assert not (project / ".rocm_lint_cache").exists()
    assert (project / "acme").is_dir()
    proc = run_cli("clean", "--cache-dir", str(project / "acme"), cwd=project)
    assert "not removed" in proc.stderr and (project / "acme" / "model.py").is_file()


def test_a_read_only_cache_location_never_fails_the_run(project, tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    proc = run_cli(
        "check",
        "--output-format",
        "concise",
        ".",
        cwd=project,
        env={"ROCM_LINT_CACHE_DIR": str(blocker / "cache")},
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_cached_findings_name_the_file_as_this_run_was_given_it(project, tmp_path):
    env = {"ROCM_LINT_CACHE_DIR": str(tmp_path / "cache")}
    absolute = run_cli("check", "--output-format", "concise", str(project / "acme" / "model.py"), env=env)
    relative = run_cli("check", "--output-format", "concise", "model.py", cwd=project / "acme", env=env)
    assert absolute.stdout.count(str(project)) == len(absolute.stdout.splitlines())
    assert relative.stdout.splitlines() and all(
        line.startswith("model.py:") for line in relative.stdout.splitlines()
    )


def test_an_edited_header_rechecks_the_kernels_that_include_it(tmp_path, checked):
    """A header's macro decides a C++ finding: editing only the header re-checks its includers,
    also when the header was read (and cached in memory) for another file first."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "mask.h").write_text("#pragma once\n#define FULL_MASK 0xffffffff\n")
    body = (
        '#include "mask.h"\n__global__ void k(float* x) {{ x[0] = __shfl_xor_sync(FULL_MASK, x[0], {n}); }}\n'
    )
    for n in (1, 2):
        (src / f"k{n}.cu").write_text(body.format(n=n))
    cache = tmp_path / "cache"
    cold, first = _run(src, cache, checked)
    assert [f.code for f in cold.findings] == ["ROC602", "ROC602"]
    (src / "mask.h").write_text("#pragma once\n#define FULL_MASK 0xffffffffffffffffull\n")
    warm, again = _run(src, cache, checked)
    assert again == ["k1.cu", "k2.cu", "mask.h"]
    assert warm.findings == []


def test_an_edited_build_file_rechecks_the_kernels_it_decides(tmp_path, checked):
    """The platform a directory gets from the project's CMakeLists (build.context) decides
    C++ findings: editing only the CMakeLists re-checks the kernels below it."""
    root = tmp_path / "proj"
    (root / "csrc" / "amd").mkdir(parents=True)
    (root / ".git").mkdir()
    cmake = (
        "if(USE_ROCM)\n  add_subdirectory(csrc/{rocm})\nelse()\n  add_subdirectory(csrc/{cuda})\nendif()\n"
    )
    (root / "CMakeLists.txt").write_text(cmake.format(rocm="amd", cuda="nv"))
    (root / "csrc" / "amd" / "k.cu").write_text("#define WARP_SIZE 64\n__global__ void k() {}\n")
    cache = tmp_path / "cache"
    cold, first = _run(root, cache, checked)
    assert [f.code for f in cold.findings] == ["ROC605"]  # ROCm-only: a wave64 constant there
    warm, again = _run(root, cache, checked)
    assert again == [] and warm.findings == cold.findings
    (root / "CMakeLists.txt").write_text(cmake.format(rocm="nv", cuda="amd"))
    edited, rechecked = _run(root, cache, checked)
    assert os.path.join("csrc", "amd", "k.cu") in rechecked
    assert edited.findings == []  # never built for ROCm now
    # a build file that appears where none was looked at re-checks too
    (root / "CMakeLists.txt").write_text("")
    _run(root, cache, checked)
    (root / "csrc" / "CMakeLists.txt").write_text("if(USE_ROCM)\n  add_subdirectory(amd)\nendif()\n")
    created, rechecked = _run(root, cache, checked)
    assert os.path.join("csrc", "amd", "k.cu") in rechecked
    assert [f.code for f in created.findings] == ["ROC605"]


def test_a_one_file_run_reads_and_writes_only_its_shard(project, tmp_path, monkeypatch):
    """The entries are spread over shards by directory: a run of one file (pre-commit, an editor)
    in a project whose whole tree is cached opens that file's shard alone and rewrites only it,
    and a whole-tree run still answers every file from the cache afterwards."""
    from rocm_lint import cache as cache_module

    cache = tmp_path / "cache"
    cold, _ = _run(project, cache, [])
    shards = sorted(cache.rglob("*.json"))
    assert len(shards) > 1
    before = {p: p.stat().st_mtime_ns for p in shards}
    opened = []
    real = cache_module.Entries._read

    def spy(self, file):
        opened.append(file)
        return real(self, file)

    monkeypatch.setattr(cache_module.Entries, "_read", spy)
    one = project / "sample" / "train.py"
    assert one.is_file()
    (project / "sample" / "train.py").write_text(one.read_text() + "\n# edited\n")
    cwd = os.getcwd()
    os.chdir(project)
    try:
        check_paths([os.path.join("sample", "train.py")], Config(), jobs=1, cache_dir=str(cache))
    finally:
        os.chdir(cwd)
    assert len(opened) == 1
    changed = [p for p in shards if p.stat().st_mtime_ns != before[p]]
    assert [str(p) for p in changed] == opened
    seen: list = []
    warm, again = _run(project, cache, seen)
    assert again == [] and warm.findings == cold.findings
