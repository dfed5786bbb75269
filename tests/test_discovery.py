"""File discovery: .gitignore, excludes, explicit paths."""

import subprocess
from pathlib import Path

from rocm_lint.config import Config
from rocm_lint.discovery import iter_files


def names(paths, config=Config()):
    return sorted(Path(p).name for p in iter_files([str(p) for p in paths], config) if isinstance(p, str))


def make(tree: Path, files):
    for rel in files:
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def test_gitignore_respected(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, ["a.py", "gen/b.py", "sub/c.py", "sub/d.py", "notes.txt"])
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("d.py\n")
    assert names([tmp_path]) == ["a.py", "c.py"]
    # walking a subdirectory still honours the root's .gitignore
    assert names([tmp_path / "gen"]) == []
    assert names([tmp_path], Config(respect_gitignore=False)) == ["a.py", "b.py", "c.py", "d.py"]


def test_default_excludes_and_extend_exclude(tmp_path):
    make(tmp_path, ["a.py", ".venv/lib/x.py", "node_modules/y.py", "build_dir/z.py", "third_party/w.py"])
    assert names([tmp_path]) == ["a.py", "w.py", "z.py"]
    assert names([tmp_path], Config(extend_exclude=("third_party", "build_*"))) == ["a.py"]


def test_explicit_file_always_checked(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, ["gen/b.py"])
    (tmp_path / ".gitignore").write_text("gen/\n")
    assert names([tmp_path / "gen" / "b.py"]) == ["b.py"]


def test_duplicates_visited_once(tmp_path):
    make(tmp_path, ["a.py"])
    assert names([tmp_path, tmp_path / "a.py"]) == ["a.py"]


def test_per_file_ignores(tmp_path):
    from rocm_lint.engine_paths import check_paths

    make(tmp_path, [])
    (tmp_path / "tests").mkdir()
    hazard = "import torch\ntorch.backends.cudnn.allow_tf32 = True\n"
    (tmp_path / "tests" / "test_a.py").write_text(hazard)
    (tmp_path / "train.py").write_text(hazard)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nper-file-ignores = { "tests/*" = ["ROC1"] }\n'
    )
    from rocm_lint.config import discover

    report = check_paths([str(tmp_path)], discover([str(tmp_path)]))
    assert [Path(f.path).name for f in report.findings] == ["train.py"]


def test_force_exclude_applies_excludes_to_named_files(tmp_path):
    """What pre-commit needs: it names every file, so the project's excludes must apply to them."""
    make(tmp_path, ["src/a.py", "third_party/lib/w.py", "gen/proto_pb2.py", "src/vendored_x.py"])
    named = [
        tmp_path / p for p in ("src/a.py", "third_party/lib/w.py", "gen/proto_pb2.py", "src/vendored_x.py")
    ]
    config = Config(extend_exclude=("third_party", "gen/*_pb2.py", "vendored_*"), root=tmp_path)
    assert names(named, config) == ["a.py", "proto_pb2.py", "vendored_x.py", "w.py"]  # named: always checked
    assert names(named, Config(**{**config.__dict__, "force_exclude": True})) == ["a.py"]


def test_force_exclude_from_config_and_cli(tmp_path):
    from conftest import run_cli

    make(tmp_path, ["third_party/w.py"])
    (tmp_path / "third_party" / "w.py").write_text("import torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    (tmp_path / "pyproject.toml").write_text('[tool.rocm-lint]\nextend-exclude = ["third_party"]\n')
    assert run_cli("check", "third_party/w.py", cwd=tmp_path).returncode == 1
    assert run_cli("check", "--force-exclude", "third_party/w.py", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocm-lint]\nextend-exclude = ["third_party"]\nforce-exclude = true\n'
    )
    assert run_cli("check", "third_party/w.py", cwd=tmp_path).returncode == 0


def test_force_exclude_looks_only_below_the_project(tmp_path, monkeypatch):
    """A checkout under a directory named like an exclude (`~/dist/proj`) is not excluded."""
    make(tmp_path, ["dist/proj/src/a.py", "dist/proj/venv/b.py"])
    proj = tmp_path / "dist" / "proj"
    monkeypatch.chdir(proj)
    forced = Config(force_exclude=True)
    assert names([proj / "src" / "a.py", proj / "venv" / "b.py"], forced) == ["a.py"]
    assert names([proj / "src" / "a.py"], Config(force_exclude=True, root=proj)) == ["a.py"]


def test_a_gitignore_without_negations_matches_as_one_regex_as_pathspec_does():
    """discovery joins a .gitignore's patterns into one regex when none is negated (pathspec
    tries them one by one); the answer must be pathspec's for every path."""
    import pathspec
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from rocm_lint.discovery import _combined, _OneRegexSpec

    lines = [
        "*.o",
        "build/",
        "/dist",
        "docs/**/x",
        "**/tmp",
        "a?c",
        "[ab]*.py",
        "foo",
        "*.egg-info/",
        "\\#x",
        "dir/*.txt",
        "**",
        "# comment",
        "",
        "  ",
        "x/",
        "/a/b",
        "*.P<y",
        "(?P<z>",
        "c.py ",
    ]
    parts = [
        "a",
        "b",
        "build",
        "dist",
        "docs",
        "x",
        "foo",
        "t.o",
        "c.py",
        "abc",
        "tmp",
        "d.egg-info",
        "#x",
        "(?P<z>",
    ]

    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(st.sampled_from(lines), min_size=1, max_size=6),
        st.lists(st.lists(st.sampled_from(parts), min_size=1, max_size=4), min_size=1, max_size=8),
        st.booleans(),
    )
    def same(patterns, paths, as_dir):
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        one = _combined(spec)
        for path in paths:
            name = "/".join(path) + ("/" if as_dir else "")
            assert bool(one.match_file(name)) == bool(spec.match_file(name)), (patterns, name)

    same()
    assert isinstance(_combined(pathspec.GitIgnoreSpec.from_lines(["*.o", "build/"])), _OneRegexSpec)
    negated = pathspec.GitIgnoreSpec.from_lines(["*.o", "!keep.o"])
    assert _combined(negated) is negated  # the order of patterns matters: pathspec answers
