"""The accuracy benchmark (benchmarks/accuracy/): the committed labels validate, and the scorer
classifies findings exactly as the scoring rules say, on a small git repository built here."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from rocm_lint.registry import all_rules

BENCH = ROOT / "benchmarks" / "accuracy"
SCORE = BENCH / "score.py"
sys.path.insert(0, str(BENCH))
from labels import label_paths, load_labels  # noqa: E402 - benchmarks/accuracy is on sys.path only now
from scoring import Finding, grep_findings, score_file  # noqa: E402 - likewise

CODES = {r.code for r in all_rules()}
COMMIT_RE = "[0-9a-f]{40}"

TRAIN_PY = """\
import torch

torch.backends.cuda.matmul.allow_tf32 = True

if torch.version.hip is None:
    torch.backends.cudnn.allow_tf32 = True

torch.backends.cudnn.allow_tf32 = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
model = torch.compile(model,
                      mode="reduce-overhead")
"""

KERN_CU = """\
#include <cuda_runtime.h>

__global__ void k(int *out, int p) {
    unsigned m = __ballot_sync(0xffffffff, p);
    out[0] = __popc(m);
    int lane = threadIdx.x & 31;
    out[1] = lane;
}
"""


def git(*args, cwd):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


def entry(lines, note="n", code=None):
    out = {"lines": lines, "note": note}
    if code:
        out["code"] = code
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A corpus with the same small repository twice: acme/tiny as a normal git repository and
    acme/bare as the fetch tool lays it out (acme+bare/repo, a bare git directory)."""
    base = tmp_path_factory.mktemp("corpus")
    work = base / "acme+tiny"
    work.mkdir()
    (work / "train.py").write_text(TRAIN_PY)
    (work / "kern.cu").write_text(KERN_CU)
    (work / "other.py").write_text("torch.backends.cuda.matmul.allow_tf32 = True\n")
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "tiny", cwd=work)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    (base / "acme+bare").mkdir()
    git("clone", "-q", "--bare", str(work), str(base / "acme+bare" / "repo"), cwd=base)
    return base, commit


def tiny_labels(repo, commit):
    train = {
        "repo": repo,
        "path": "train.py",
        "kind": "py",
        "hazards": [
            entry([3], code="ROC101"),  # hit, exact line
            entry([8, 9], code="ROC101"),  # hit (8) and a second occurrence (9)
            entry([13], code="ROC201"),  # finding on 14: hit within +-1
            entry([1], code="ROC401"),
        ],  # nothing reported there: a miss
        "decoys": [
            entry([6], "gated by torch.version.hip"),  # silent: no false positive
            entry([12], "a decoy the tool reports"),
        ],  # false positive on a decoy
        "ambiguous": [entry([10])],  # its finding is ignored
        "uncovered": [entry([11])],
    }  # its finding is counted apart
    kern = {
        "repo": repo,
        "path": "kern.cu",
        "kind": "cpp",
        "hazards": [entry([1], code="ROC702"), entry([4], code="ROC602"), entry([5], code="ROC601")],
        "decoys": [],
        "ambiguous": [],
        "uncovered": [],
    }  # ROC601 on 4, ROC603 on 6: unlabeled FPs
    return {"version": 2, "repos": [{"repo": repo, "commit": commit}], "files": [train, kern]}


def write_labels(folder, name, doc):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))
    return folder


def run_score(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, str(SCORE), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_committed_labels_validate():
    paths = label_paths(BENCH / "labels")
    if not paths:
        pytest.skip("no label files committed yet")
    labels = load_labels(paths, CODES)
    assert labels.errors == []
    assert labels.files, "label files with no labeled file"
    proc = run_score("--check-labels")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def scored(corpus, tmp_path_factory):
    base, commit = corpus
    labels = write_labels(tmp_path_factory.mktemp("labels"), "tiny.json", tiny_labels("acme/tiny", commit))
    out = tmp_path_factory.mktemp("out") / "result.json"
    proc = run_score(base, "--labels", labels, "--json", out, "--details")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, json.loads(out.read_text())


def test_scores_each_class_of_finding(scored):
    _, result = scored
    lint = result["rocm-lint"]
    py, cpp = lint["kinds"]["py"], lint["kinds"]["cpp"]
    assert (py["hazards"], py["hits"], py["misses"]) == (4, 3, 1)
    assert (py["second"], py["ambiguous"], py["uncovered"]) == (1, 1, 1)
    assert (py["fp"], py["fp_decoy"], py["fp_unlabeled"]) == (1, 1, 0)
    assert (cpp["hazards"], cpp["hits"], cpp["fp"], cpp["fp_decoy"], cpp["fp_unlabeled"]) == (3, 3, 2, 0, 2)
    overall = lint["overall"]
    assert overall["recall"] == round(6 / 7, 4)
    assert overall["precision"] == round(6 / 9, 4)
    assert overall["precision_decoys"] == round(6 / 7, 4)
    assert {(m["path"], m["code"]) for m in lint["misses"]} == {("train.py", "ROC401")}
    hits = {(h["path"], h["code"], tuple(h["lines"]), h["found_line"]) for h in lint["hits"]}
    assert ("train.py", "ROC201", (13,), 14) in hits  # +-1
    assert ("train.py", "ROC101", (8, 9), 8) in hits
    assert [(s["line"], s["code"]) for s in lint["second"]] == [(9, "ROC101")]
    assert [a["line"] for a in lint["ambiguous"]] == [10]
    assert [u["line"] for u in lint["uncovered"]] == [11]
    fps = {(f["path"], f["line"], f["code"], f["where"]) for f in lint["false_positives"]}
    assert fps == {
        ("train.py", 12, "ROC101", "decoy"),
        ("kern.cu", 4, "ROC601", "other-code"),
        ("kern.cu", 6, "ROC603", "unlabeled"),
    }
    # only labeled files count: other.py's finding is in the tree, not in the score
    assert result["repos"][0]["findings_in_tree"] == 13
    assert lint["codes"]["ROC101"]["hazards"] == 2 and lint["codes"]["ROC603"]["fp"] == 1


def test_grep_baseline_scored_on_the_same_lines(scored):
    _, result = scored
    grep = result["grep"]
    # allow_tf32 on every assignment: the gated line 6 and line 12 are decoy FPs
    assert {(f["line"], f["where"]) for f in grep["false_positives"] if f["path"] == "train.py"} == {
        (6, "decoy"),
        (12, "decoy"),
    }
    assert grep["kinds"]["py"]["hits"] == 3 and grep["kinds"]["py"]["misses"] == 1
    assert grep["codes"]["ROC602"]["hits"] == 1
    assert ("kern.cu", 6, "ROC603") in {(f["path"], f["line"], f["code"]) for f in grep["false_positives"]}


def test_printed_report(scored):
    out, _ = scored
    assert "grep baseline" in out
    assert "acme/tiny" in out
    assert "train.py:1 ROC401" in out  # --details lists the miss
    assert "train.py:12 ROC101  [decoy: a decoy the tool reports]" in out


def test_bare_layout_missing_commit_and_absent_repo(corpus, tmp_path):
    base, commit = corpus
    doc = tiny_labels("acme/bare", commit)
    direct = tiny_labels("acme/direct", commit)  # acme+direct is itself a bare repository
    git("clone", "-q", "--bare", str(base / "acme+tiny"), str(tmp_path / "acme+direct"), cwd=tmp_path)
    for name in ("acme+tiny", "acme+bare"):
        (tmp_path / name).symlink_to(base / name)
    base = tmp_path
    doc["repos"] += direct["repos"]
    doc["files"] += direct["files"]
    doc["repos"].append({"repo": "acme/gone", "commit": commit})
    doc["files"].append(
        {"repo": "acme/gone", "path": "a.py", "kind": "py", "hazards": [entry([1], code="ROC101")]}
    )
    write_labels(tmp_path / "labels", "a.json", doc)
    write_labels(tmp_path / "labels", "b.json", tiny_labels("acme/tiny", "0" * 40))
    out = tmp_path / "r.json"
    proc = run_score("--labels", tmp_path / "labels", "--json", out, "-j", "2", cwd=ROOT)
    assert proc.returncode != 0 and "no corpus" in proc.stderr
    proc = subprocess.run(
        [sys.executable, str(SCORE), "--labels", str(tmp_path / "labels"), "--json", str(out), "-j", "2"],
        env={**__import__("os").environ, "ACCURACY_CORPUS": str(base)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    by_repo = {r["repo"]: r for r in result["repos"]}
    assert by_repo["acme/bare"]["error"] is None and by_repo["acme/direct"]["error"] is None
    assert "0000000000000000000000000000000000000000 is not in the snapshot" in by_repo["acme/tiny"]["error"]
    assert result["meta"]["absent"] == ["acme/gone"]
    assert "acme/tiny" in proc.stdout and "FAILED" in proc.stdout and "not in the corpus" in proc.stdout
    assert result["rocm-lint"]["overall"]["hits"] == 12  # acme/bare and acme/direct


def test_snapshot_without_large_blobs_and_a_broken_link(corpus, tmp_path):
    """A snapshot lacking a blob (fetched snapshots leave out their largest files) is exported file
    by file without it; rocm-lint's error lines (a broken symbolic link) are reported, its findings
    still scored."""
    base, _ = corpus
    work = tmp_path / "src"
    git("clone", "-q", str(base / "acme+tiny"), str(work), cwd=tmp_path)
    (work / "include").mkdir()
    (work / "include" / "gone.h").symlink_to("../third_party/gone.h")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "link", cwd=work)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    snap = tmp_path / "corpus" / "acme+holes" / "repo"
    git("clone", "-q", "--bare", "--no-local", str(work), str(snap), cwd=tmp_path)
    blob = subprocess.run(
        ["git", "rev-parse", f"{head}:other.py"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    packs = list((snap / "objects" / "pack").glob("*.pack"))
    for pack in packs:  # unpack, then drop other.py's blob
        pack.rename(tmp_path / pack.name)
        (snap / "objects" / "pack" / (pack.stem + ".idx")).unlink()
        with open(tmp_path / pack.name, "rb") as fh:
            subprocess.run(["git", "--git-dir", str(snap), "unpack-objects", "-q"], stdin=fh, check=True)
    (snap / "objects" / blob[:2] / blob[2:]).unlink()
    write_labels(tmp_path / "labels", "h.json", tiny_labels("acme/holes", head))
    out = tmp_path / "r.json"
    proc = run_score(tmp_path / "corpus", "--labels", tmp_path / "labels", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    repo = result["repos"][0]
    assert repo["error"] is None and repo["absent_blobs"] == 1
    assert any("broken symbolic link" in line for line in repo["lint_errors"])
    assert repo["findings_in_tree"] == 12  # other.py is absent
    assert result["rocm-lint"]["overall"]["hits"] == 6
    assert "1 files absent from the snapshot" in proc.stdout


def test_check_labels(corpus, tmp_path):
    base, commit = corpus
    doc = tiny_labels("acme/tiny", commit)
    doc["files"][0]["hazards"].append(entry([6], code="ROC101"))  # also a decoy
    doc["files"][1]["hazards"].append(entry([0], code="ROC601"))  # not a positive line
    doc["files"][1]["hazards"].append(entry([2], code="ROC999"))  # no such rule
    doc["files"].append({"repo": "acme/tiny", "path": "k.py", "kind": "python"})
    write_labels(tmp_path / "bad", "bad.json", doc)
    proc = run_score("--check-labels", "--labels", tmp_path / "bad")
    assert proc.returncode == 1
    for words in (
        "both a hazard and a decoy",
        "positive integers",
        "ROC999 is not a rocm-lint rule",
        "`kind` must be one of py/cpp/cfg",
    ):
        assert words in proc.stdout, words
    doc = tiny_labels("acme/tiny", commit)
    doc["files"][1]["decoys"].append(entry([40]))  # past the end of kern.cu
    doc["files"].append({"repo": "acme/tiny", "path": "nope.py", "kind": "py", "hazards": []})
    write_labels(tmp_path / "paths", "p.json", doc)
    assert (
        run_score("--check-labels", "--labels", tmp_path / "paths").returncode == 0
    )  # no corpus: schema only
    proc = run_score("--check-labels", base, "--labels", tmp_path / "paths")
    assert proc.returncode == 1
    assert "acme/tiny:nope.py: no such file" in proc.stdout
    assert "acme/tiny:kern.cu: decoys line(s) [40] past the end (8 lines)" in proc.stdout


def test_two_readers_disagreeing_make_a_line_ambiguous(tmp_path):
    one = {
        "version": 2,
        "repos": [{"repo": "a/b", "commit": "1" * 40}],
        "files": [
            {
                "repo": "a/b",
                "path": "x.cu",
                "kind": "cpp",
                "hazards": [entry([3], code="ROC602"), entry([7], code="ROC603")],
            }
        ],
    }
    two = {
        "version": 2,
        "repos": [{"repo": "a/b", "commit": "1" * 40}],
        "files": [
            {
                "repo": "a/b",
                "path": "x.cu",
                "kind": "cpp",
                "hazards": [entry([7], code="ROC603")],
                "ambiguous": [entry([3])],
            }
        ],
    }
    write_labels(tmp_path, "one.json", one)
    write_labels(tmp_path, "two.json", two)
    labels = load_labels(label_paths(tmp_path), CODES)
    assert labels.errors == []
    f = labels.files[("a/b", "x.cu")]
    assert [(h.code, h.lines) for h in f.hazards] == [("ROC603", (7,))]  # both readers: one hazard
    assert 3 in f.lines_of("ambiguous")
    out = score_file(f, [Finding("ROC602", 3), Finding("ROC603", 7)])
    assert len(out["hits"]) == 1 and [x.line for x in out["ambiguous"]] == [3] and out["fps"] == []


def test_matching_prefers_exact_lines_and_is_one_to_one(tmp_path):
    doc = {
        "version": 2,
        "repos": [{"repo": "a/b", "commit": "1" * 40}],
        "files": [
            {
                "repo": "a/b",
                "path": "x.cu",
                "kind": "cpp",
                "hazards": [entry([8], code="ROC602"), entry([9], code="ROC602")],
            }
        ],
    }
    write_labels(tmp_path, "m.json", doc)
    f = load_labels(label_paths(tmp_path), CODES).files[("a/b", "x.cu")]
    out = score_file(f, [Finding("ROC602", 9), Finding("ROC602", 8)])
    assert sorted((h.lines[0], x.line) for h, x in out["hits"]) == [(8, 8), (9, 9)]
    out = score_file(f, [Finding("ROC602", 9)])
    assert len(out["hits"]) == 1 and len(out["misses"]) == 1 and out["second"] == []
    out = score_file(f, [Finding("ROC602", 11), Finding("ROC603", 8)])  # 2 lines off; wrong code
    assert out["hits"] == [] and {(x.line, w) for x, w, _ in out["fps"]} == {
        (11, "unlabeled"),
        (8, "other-code"),
    }


def test_grep_patterns_match_what_a_porting_engineer_greps():
    assert [f.code for f in grep_findings("torch.backends.cuda.matmul.allow_tf32 = True", "py")] == ["ROC101"]
    assert [f.code for f in grep_findings("    m = __ballot_sync(0xffffffff, p);", "cpp")] == [
        "ROC601",
        "ROC602",
    ]
    assert grep_findings("torch.backends.cuda.matmul.allow_tf32 = True", "cpp") == []  # py patterns, py files
    assert [f.code for f in grep_findings('asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));', "cpp")] == [
        "ROC701"
    ]
    assert [f.code for f in grep_findings("#include <cuda_fp16.h>", "cpp")] == ["ROC702"]
