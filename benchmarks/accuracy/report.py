"""Printing and JSON of the accuracy benchmark (score.py's output).  Imports nothing of rocm_lint."""

from __future__ import annotations

from collections import Counter

from labels import KINDS, SECTIONS

TOOLS = ("rocm-lint", "grep")
TOOL_TITLES = {"rocm-lint": "rocm-lint", "grep": "grep baseline"}


def _num(x):
    return "-" if x is None else f"{x:.3f}"


def label_summary(labels):
    files = list(labels.files.values())
    kinds = Counter(f.kind for f in files)
    counts = {s: sum(len(getattr(f, s)) for f in files) for s in SECTIONS}
    per_kind = {
        k: {
            "files": kinds.get(k, 0),
            **{s: sum(len(getattr(f, s)) for f in files if f.kind == k) for s in SECTIONS},
        }
        for k in KINDS
    }
    return {"repos": len(labels.repos), "files": len(files), **counts, "kinds": per_kind}


def _summary_line(summary):
    kinds = ", ".join(f"{k} {summary['kinds'][k]['files']}" for k in KINDS)
    return (
        f"{summary['repos']} repositories, {summary['files']} files ({kinds}): {summary['hazards']} hazards, "
        f"{summary['decoys']} decoys, {summary['ambiguous']} ambiguous, {summary['uncovered']} uncovered"
    )


def print_check(labels, corpus_errors, checked, corpus):
    """--check-labels' report; returns the exit status."""
    print(f"label files: {len(labels.sources)}")
    print(f"labels: {_summary_line(label_summary(labels))}")
    for k in KINDS:
        s = label_summary(labels)["kinds"][k]
        print(
            f"  {k:4} {s['files']:4} files {s['hazards']:5} hazards {s['decoys']:5} decoys "
            f"{s['ambiguous']:4} ambiguous {s['uncovered']:4} uncovered"
        )
    if corpus:
        absent = sorted(set(labels.repos) - set(checked))
        print(
            f"checked against the corpus {corpus}: {len(checked)} repositories"
            + (f"; not there (not checked): {', '.join(absent)}" if absent else "")
        )
    for w in labels.warnings:
        print(f"warning: {w}")
    errors = labels.errors + corpus_errors
    for e in errors:
        print(f"error: {e}")
    print(f"{len(errors)} error(s), {len(labels.warnings)} warning(s)")
    return 1 if errors else 0


def _row(title, s):
    return (
        f"{title:14} {s['hazards']:7} {s['hits']:5} {_num(s['recall']):>7} | {s['fp']:4} {s['fp_decoy']:6} "
        f"{s['fp_unlabeled']:9} {_num(s['precision']):>9} {_num(s['precision_decoys']):>11} | "
        f"{s['second']:4} {s['ambiguous']:5} {s['uncovered']:5}"
    )


def print_report(meta, labels, results, tallies, scored, details):
    print("rocm-lint accuracy benchmark")
    print(
        f"labels:    {meta['labels']} ({len(meta['label_files'])} files): {_summary_line(label_summary(labels))}"
    )
    print(f"rocm-lint: {meta['rocm_lint_src']}")
    print(f"corpus:    {meta['corpus']}")
    for res in results:
        n = len(labels.files_of(res["repo"]))
        if res["error"]:
            print(f"  {res['repo']:34} FAILED ({n} labeled files not scored): {res['error']}")
            continue
        print(
            f"  {res['repo']:34} {res['commit'][:12]} {n:3} labeled files {res['seconds']:7.1f} s "
            f"{res['findings_in_tree']:6} findings in the tree"
        )
        if res["absent_blobs"]:
            print(
                f"    {res['absent_blobs']} files absent from the snapshot (large blobs): the tree lacks them"
            )
        if res["lint_errors"]:
            print(
                f"    rocm-lint {res['lint_errors'][0]}, {len(res['lint_errors']) - 1} error lines, e.g. "
                + " | ".join(res["lint_errors"][1:3])
            )
        for path in res["missing"]:
            print(f"    labeled file not in the export (not scored): {path}")
    for repo in meta["absent"]:
        print(f"  {repo:34} not in the corpus: {len(labels.files_of(repo))} labeled files not scored")
    for e in meta["label_errors"]:
        print(f"  label error (that entry is not scored): {e}")
    if labels.warnings:
        print(f"  ({len(labels.warnings)} label warnings: run --check-labels)")
    print()
    print(
        f"{'':14} {'hazards':>7} {'hits':>5} {'recall':>7} | {'FP':>4} {'decoy':>6} {'unlabeled':>9} "
        f"{'precision':>9} {'prec/decoys':>11} | {'2nd':>4} {'ambig':>5} {'uncov':>5}"
    )
    for tool in TOOLS:
        table = tallies[tool].table()
        print(_row(TOOL_TITLES[tool], table["overall"]))
        for kind in KINDS:
            if kind in table["kinds"]:
                print(_row(f"  {kind}", table["kinds"][kind]))
    other = tallies["rocm-lint"].table()["overall"]["fp_other_code"]
    if other:
        print(f"(rocm-lint: {other} of the unlabeled-line FPs sit on a hazard line with another code)")
    print()
    print("per code         rocm-lint                                          | grep baseline")
    print(
        f"{'code':7} {'hazards':>7} | {'hits':>4} {'recall':>6} {'FP':>4} {'decoy':>5} {'prec':>6} "
        f"{'prec/d':>6} {'2nd':>4} {'uncov':>5} | {'hits':>4} {'recall':>6} {'FP':>4} {'prec':>6}"
    )
    lint, grep = tallies["rocm-lint"].table()["codes"], tallies["grep"].table()["codes"]
    for code in sorted(set(lint) | set(grep)):
        a = tallies["rocm-lint"].stats("code:" + code)
        g = tallies["grep"].stats("code:" + code)
        print(
            f"{code:7} {a['hazards']:7} | {a['hits']:4} {_num(a['recall']):>6} {a['fp']:4} {a['fp_decoy']:5} "
            f"{_num(a['precision']):>6} {_num(a['precision_decoys']):>6} {a['second']:4} {a['uncovered']:5} | "
            f"{g['hits']:4} {_num(g['recall']):>6} {g['fp']:4} {_num(g['precision']):>6}"
        )
    if details:
        _print_details(scored["rocm-lint"])


def print_totals(meta, labels, results, tallies):
    """The overall and per-kind rows, and nothing that names a repository, a file, a line or a code:
    what a frozen test split may show while work goes on."""
    failed = sum(1 for r in results if r["error"]) + len(meta["absent"])
    print(f"rocm-lint accuracy, totals only: {_summary_line(label_summary(labels))}")
    print(f"rocm-lint: {meta['rocm_lint_src']}; repositories not scored: {failed}")
    print(
        f"{'':14} {'hazards':>7} {'hits':>5} {'recall':>7} | {'FP':>4} {'decoy':>6} {'unlabeled':>9} "
        f"{'precision':>9} {'prec/decoys':>11} | {'2nd':>4} {'ambig':>5} {'uncov':>5}"
    )
    for tool in TOOLS:
        table = tallies[tool].table()
        print(_row(TOOL_TITLES[tool], table["overall"]))
        for kind in KINDS:
            if kind in table["kinds"]:
                print(_row(f"  {kind}", table["kinds"][kind]))


def _print_details(scored):
    misses, fps, unc = [], [], []
    for f, out in scored:
        where = f"{f.repo}:{f.path}"
        misses += [f"  {where}:{','.join(map(str, h.lines))} {h.code}  {h.note}" for h in out["misses"]]
        for x, kind, note in out["fps"]:
            label = f"[decoy: {note}]" if kind == "decoy" else f"[{kind}]"
            fps.append(f"  {where}:{x.line} {x.code}  {label} {x.message}")
        unc += [f"  {where}:{x.line} {x.code}  {x.message}" for x in out["uncovered"]]
    for title, rows in (("misses", misses), ("false positives", fps), ("findings on uncovered lines", unc)):
        print(f"\n{title} (rocm-lint): {len(rows)}")
        for row in rows:
            print(row)


def _finding(f, x, **more):
    return {
        "repo": f.repo,
        "path": f.path,
        "kind": f.kind,
        "line": x.line,
        "code": x.code,
        "message": x.message,
        **more,
    }


def _hazard(f, h, **more):
    return {
        "repo": f.repo,
        "path": f.path,
        "kind": f.kind,
        "lines": list(h.lines),
        "code": h.code,
        "note": h.note,
        **more,
    }


def result_json(meta, labels, results, tallies, scored):
    out = {
        "meta": meta,
        "labels": label_summary(labels),
        "label_warnings": labels.warnings,
        "repos": [
            {
                k: r[k]
                for k in (
                    "repo",
                    "commit",
                    "error",
                    "missing",
                    "seconds",
                    "findings_in_tree",
                    "absent_blobs",
                    "lint_errors",
                )
            }
            for r in results
        ],
    }
    for tool in TOOLS:
        lists = {
            "hits": [],
            "misses": [],
            "false_positives": [],
            "second": [],
            "ambiguous": [],
            "uncovered": [],
        }
        for f, o in scored[tool]:
            lists["hits"] += [_hazard(f, h, found_line=x.line, message=x.message) for h, x in o["hits"]]
            lists["misses"] += [_hazard(f, h) for h in o["misses"]]
            lists["false_positives"] += [_finding(f, x, where=k, decoy_note=n) for x, k, n in o["fps"]]
            for key in ("second", "ambiguous", "uncovered"):
                lists[key] += [_finding(f, x) for x in o[key]]
        out[tool] = {**tallies[tool].table(), **lists}
    return out
