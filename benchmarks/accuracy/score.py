"""rocm-lint's accuracy benchmark: recall and precision on labeled real repositories.

For every repository in the labels: export the tree at the labeled commit from a snapshot in the
corpus (``git archive <commit> | tar -x`` into a temporary folder), run rocm-lint over the whole
tree as a user would (``python -m rocm_lint check . --output-format json --exit-zero --no-cache``,
cwd = the tree root, PYTHONPATH = the rocm-lint src under test), keep the findings in labeled files
and score them (scoring.py); a naive grep (scoring.GREP_BASELINE) is scored on the same lines.

The corpus folder holds one snapshot per repository: ``<owner>+<name>/repo`` (a bare git
directory, as the fetch tool lays them out), or ``<owner>+<name>`` itself a bare or normal git
repository.  Repositories missing from the corpus are listed and skipped; a repository whose
export or run fails is reported, the others are still scored.

Usage:
  python benchmarks/accuracy/score.py [CORPUS] [--labels DIR] [--rocm-lint-src DIR] [-j N]
                                      [--details] [--json FILE] [--repo OWNER/NAME ...]
  python benchmarks/accuracy/score.py --check-labels [CORPUS] [--labels DIR]
CORPUS defaults to $ACCURACY_CORPUS; the src to $ROCM_LINT_SRC, else this checkout's src/.
This script imports nothing of rocm_lint: it runs it as a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labels import label_paths, load_labels
from report import print_check, print_report, print_totals, result_json
from scoring import Finding, Tally, grep_findings, score_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MAX_FILE_BYTES = 16 * 1024 * 1024


def git_dir(corpus, repo):
    """The git command prefix for a repository's snapshot in the corpus, or None."""
    base = Path(corpus) / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return ["git", "--git-dir", str(cand)]
        if (cand / ".git").exists():
            return ["git", "-C", str(cand)]
    return None


def has_commit(git, commit):
    return subprocess.run(git + ["cat-file", "-e", commit + "^{commit}"], capture_output=True).returncode == 0


def export(git, commit, dest):
    """`git archive <commit> | tar -x -C dest`; returns the paths whose blobs the snapshot lacks.

    A snapshot may leave out its largest blobs: then git archive stops, and the tree is written
    blob by blob instead, without the absent ones.  Other failures raise RuntimeError."""
    archive = subprocess.Popen(
        git + ["archive", "--format=tar", commit], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    tar = subprocess.run(["tar", "-x", "-C", str(dest), "-f", "-"], stdin=archive.stdout, capture_output=True)
    archive.stdout.close()
    err = archive.stderr.read().decode("utf-8", "replace").strip()
    if archive.wait() == 0 and tar.returncode == 0:
        return []
    if "invalid object" in err or "cannot read" in err:
        shutil.rmtree(dest)
        dest.mkdir()
        return export_blobs(git, commit, dest)
    raise RuntimeError(
        f"export of {commit[:12]} failed: {err or tar.stderr.decode('utf-8', 'replace').strip()}"
    )


def export_blobs(git, commit, dest):
    """Write the tree at commit file by file (git ls-tree + cat-file --batch); skip absent blobs."""
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", "--full-tree", commit], capture_output=True)
    if listing.returncode != 0:
        raise RuntimeError(
            f"git ls-tree {commit[:12]} failed: {listing.stderr.decode('utf-8', 'replace').strip()}"
        )
    entries = []
    for rec in listing.stdout.split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob":
                entries.append((mode, sha, os.fsdecode(path)))
    absent = []
    with tempfile.TemporaryFile() as shas:
        shas.write(b"".join(sha + b"\n" for _, sha, _ in entries))
        shas.seek(0)
        batch = subprocess.Popen(
            git + ["cat-file", "--batch"], stdin=shas, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        for mode, sha, path in entries:
            header = batch.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing"
                absent.append(path)
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == b"120000":
                os.symlink(os.fsdecode(data), target)
                continue
            target.write_bytes(data)
            if mode == b"100755":
                target.chmod(0o755)
        batch.stdout.close()
        batch.wait()
    return absent


def read_text(path):
    with open(path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    return data[:MAX_FILE_BYTES].decode("utf-8", "replace")


def lint_env(src):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env.pop("ROCM_LINT_CACHE_DIR", None)
    return env


def run_rocm_lint(tree, src, timeout):
    """Findings of `rocm-lint check .` in tree, by path relative to the tree: {path: [Finding]}."""
    cmd = [
        sys.executable,
        "-m",
        "rocm_lint",
        "check",
        ".",
        "--output-format",
        "json",
        "--exit-zero",
        "--no-cache",
    ]
    proc = subprocess.run(cmd, cwd=tree, env=lint_env(src), capture_output=True, timeout=timeout)
    errors = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    try:
        items = json.loads(proc.stdout)
    except ValueError as exc:
        why = (
            f"exited {proc.returncode}: " + " | ".join(errors[-5:])
            if proc.returncode
            else f"JSON does not parse: {exc}"
        )
        raise RuntimeError(f"rocm-lint {why}") from None
    if not isinstance(items, list):
        raise RuntimeError("rocm-lint's JSON output is not a list of findings")  # noqa: TRY004 (caught per repository)
    root = os.path.realpath(tree)
    out = {}
    for item in items:
        name = item.get("filename") or ""
        path = os.path.relpath(os.path.normpath(os.path.join(root, name)), root).replace(os.sep, "/")
        row = (item.get("location") or {}).get("row") or 0
        out.setdefault(path, []).append(Finding(item.get("code", "?"), int(row), item.get("message", "")))
    return out, (proc.returncode, errors)


def score_repo(job):
    """One repository: export, lint, grep.  Returns a plain dict (it crosses processes)."""
    repo, commit, git, files, src, timeout = job
    started = time.monotonic()
    result = {
        "repo": repo,
        "commit": commit,
        "error": None,
        "missing": [],
        "lint": {},
        "grep": {},
        "findings_in_tree": 0,
        "absent_blobs": 0,
        "lint_errors": [],
    }
    tmp = tempfile.mkdtemp(prefix="rocm-lint-accuracy-")
    try:
        if not has_commit(git, commit):
            raise RuntimeError(
                f"commit {commit} is not in the snapshot ({' '.join(git[1:])}): fetch a snapshot that has it"
            )
        tree = Path(tmp) / "tree"
        tree.mkdir()
        result["absent_blobs"] = len(export(git, commit, tree))
        for path, kind in files:
            p = tree / path
            if not p.is_file():
                result["missing"].append(path)
                continue
            result["grep"][path] = grep_findings(read_text(p), kind)
        found, (status, errors) = run_rocm_lint(tree, src, timeout)
        if status != 0:
            result["lint_errors"] = [f"exit status {status}"] + errors
        result["findings_in_tree"] = sum(map(len, found.values()))
        result["lint"] = {path: found.get(path, []) for path, _ in files if path not in result["missing"]}
    except subprocess.TimeoutExpired:
        result["error"] = f"rocm-lint ran past {timeout} s"
    except (OSError, RuntimeError) as exc:
        result["error"] = str(exc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def rocm_lint_codes(src):
    """(codes, module file) of the rocm-lint under test; raises SystemExit when it does not run."""
    probe = "import rocm_lint; print(rocm_lint.__file__)"
    where = subprocess.run([sys.executable, "-c", probe], env=lint_env(src), capture_output=True, text=True)
    proc = subprocess.run(
        [sys.executable, "-m", "rocm_lint", "rules", "--json"],
        env=lint_env(src),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"score.py: `rocm-lint rules --json` failed with src {src}: {proc.stderr.strip()[-400:]}")
    module = where.stdout.strip()
    if module and not os.path.realpath(module).startswith(os.path.realpath(src) + os.sep):
        sys.exit(f"score.py: rocm_lint imports from {module}, not from {src}")
    return {r["code"] for r in json.loads(proc.stdout)}, module


def describe_src(src):
    head = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
    )
    if head.returncode != 0:
        return str(src)
    dirty = subprocess.run(
        ["git", "-C", str(src), "status", "--porcelain", "--", "."], capture_output=True, text=True
    )
    return (
        f"{src} (commit {head.stdout.strip()}{', with uncommitted changes' if dirty.stdout.strip() else ''})"
    )


def check_against_corpus(labels, corpus):
    """Errors for labeled paths missing at the commit and lines past a file's end."""
    errors, checked = [], []
    for repo, commit in sorted(labels.repos.items()):
        git = git_dir(corpus, repo)
        if git is None:
            continue
        if not has_commit(git, commit):
            errors.append(f"{repo}: commit {commit} is not in the snapshot")
            continue
        checked.append(repo)
        for f in labels.files_of(repo):
            blob = subprocess.run(git + ["cat-file", "blob", f"{commit}:{f.path}"], capture_output=True)
            if blob.returncode != 0:
                errors.append(f"{repo}:{f.path}: no such file at {commit[:12]}")
                continue
            data = blob.stdout
            count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            for section in ("hazards", "ambiguous", "decoys", "uncovered"):
                for e in getattr(f, section):
                    past = [n for n in e.lines if n > count]
                    if past:
                        errors.append(
                            f"{repo}:{f.path}: {section} line(s) {past} past the end ({count} lines)"
                        )
    return errors, checked


class _Serial:
    """The executor interface, in this process (no -j)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, items):
        return map(fn, items)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "corpus",
        nargs="?",
        default=os.environ.get("ACCURACY_CORPUS"),
        help="folder of repository snapshots (default: $ACCURACY_CORPUS)",
    )
    ap.add_argument("--labels", default=str(HERE / "labels"), help="folder of label files (*.json)")
    ap.add_argument(
        "--rocm-lint-src",
        default=os.environ.get("ROCM_LINT_SRC") or str(ROOT / "src"),
        help="the src/ folder of the rocm-lint to score (default: $ROCM_LINT_SRC, else this checkout's)",
    )
    ap.add_argument("-j", "--jobs", type=int, default=1, help="repositories scored in parallel (default 1)")
    ap.add_argument(
        "--details", action="store_true", help="list every miss, false positive and uncovered finding"
    )
    ap.add_argument(
        "--totals-only",
        action="store_true",
        help="print the overall and per-kind rows alone (a frozen test split: no per-code, per-line "
        "or per-repository figure; --json is refused with it)",
    )
    ap.add_argument("--json", metavar="FILE", help="write every count and classified finding as JSON")
    ap.add_argument("--repo", action="append", default=[], help="score only this repository (repeatable)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds one rocm-lint run may take")
    ap.add_argument(
        "--check-labels",
        action="store_true",
        help="validate the label files (and, with a corpus, paths and lines) and exit",
    )
    args = ap.parse_args(argv)
    if args.totals_only and (args.json or args.details):
        ap.error("--totals-only prints totals alone: it takes neither --json nor --details")
    src = Path(args.rocm_lint_src).resolve()
    if not (src / "rocm_lint").is_dir():
        sys.exit(f"score.py: {src} has no rocm_lint package (pass the src/ folder of a checkout)")
    paths = label_paths(args.labels)
    if not paths:
        sys.exit(f"score.py: no label files (*.json) in {args.labels}")
    codes, _ = rocm_lint_codes(src)
    labels = load_labels(paths, codes)
    if args.check_labels:
        errors, checked = [], []
        if args.corpus:
            errors, checked = check_against_corpus(labels, args.corpus)
        return print_check(labels, errors, checked, args.corpus)
    if not args.corpus:
        sys.exit(
            "score.py: no corpus: pass CORPUS or set ACCURACY_CORPUS (a folder of <owner>+<name> snapshots)"
        )
    repos = sorted(r for r in labels.repos if not args.repo or r in args.repo)
    jobs, absent = [], []
    for repo in repos:
        files = [(f.path, f.kind) for f in labels.files_of(repo)]
        git = git_dir(args.corpus, repo)
        if git is None:
            absent.append(repo)
        elif files:
            jobs.append((repo, labels.repos[repo], git, files, str(src), args.timeout))
    results = []
    with ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 and len(jobs) > 1 else _Serial() as pool:
        for res in pool.map(score_repo, jobs):
            print(
                f"score.py: {res['repo']} {'FAILED' if res['error'] else 'scored'} ({res['seconds']} s)",
                file=sys.stderr,
                flush=True,
            )
            results.append(res)
    tallies = {"rocm-lint": Tally(), "grep": Tally()}
    scored = {"rocm-lint": [], "grep": []}
    for res in results:
        if res["error"]:
            continue
        for f in labels.files_of(res["repo"]):
            if f.path in res["missing"]:
                continue
            for tool, key in (("rocm-lint", "lint"), ("grep", "grep")):
                outcome = score_file(f, res[key][f.path])
                tallies[tool].add(f.kind, outcome)
                scored[tool].append((f, outcome))
    meta = {
        "labels": args.labels,
        "label_files": [str(p) for p in paths],
        "corpus": args.corpus,
        "rocm_lint_src": describe_src(src),
        "absent": absent,
    }
    meta["label_errors"] = labels.errors
    if args.totals_only:
        print_totals(meta, labels, results, tallies)
    else:
        print_report(meta, labels, results, tallies, scored, args.details)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result_json(meta, labels, results, tallies, scored), fh, indent=1)
            fh.write("\n")
    return 0 if any(not r["error"] for r in results) and not labels.errors else 1


if __name__ == "__main__":
    sys.exit(main())
