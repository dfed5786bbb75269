"""Label files of the accuracy benchmark (format version 2): read, validate, merge.

A label file is JSON: ``{"version": 2, "repos": [{"repo", "commit"}], "files": [{"repo", "path",
"kind", "hazards", "ambiguous", "decoys", "uncovered"}]}``; every entry of the four sections has
``lines`` (positive integers) and ``note``, a hazard also ``code``.  See benchmarks/accuracy/README.md.

Several label files may name the same repository (at the same commit) and the same file.  Entries
from different label files are different readers: where one reader's hazard sits on a line the
other calls ambiguous or a decoy, the line is ambiguous (a disagreement is not a test).
This module imports nothing of rocm_lint.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("py", "cpp", "cfg")
SECTIONS = ("hazards", "ambiguous", "decoys", "uncovered")
MAX_LABEL_BYTES = 32 * 1024 * 1024
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9_.-]{1,100}")
_CODE = re.compile(r"ROC[0-9]{3}")
_TOP_KEYS = {"version", "repos", "files", "labeler", "note", "notes"}  # the last three: free text
_REPO_KEYS = {"repo", "commit"}
_FILE_KEYS = {"repo", "path", "kind", "commit", "note"} | set(SECTIONS)
_ENTRY_KEYS = {"lines", "code", "note", "evidence"}


@dataclass(frozen=True)
class Entry:
    """One labeled fact: its lines, its code (hazards; optional elsewhere), note and label file."""

    lines: tuple
    code: str | None
    note: str
    source: str


@dataclass
class FileLabels:
    repo: str
    path: str
    kind: str
    hazards: list = field(default_factory=list)
    ambiguous: list = field(default_factory=list)
    decoys: list = field(default_factory=list)
    uncovered: list = field(default_factory=list)
    sources: list = field(default_factory=list)

    def lines_of(self, section):
        return {n for e in getattr(self, section) for n in e.lines}


@dataclass
class Labels:
    repos: dict = field(default_factory=dict)  # "owner/name" -> commit
    files: dict = field(default_factory=dict)  # ("owner/name", path) -> FileLabels
    sources: list = field(default_factory=list)  # label files read
    errors: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def files_of(self, repo):
        return [f for (r, _), f in sorted(self.files.items()) if r == repo]


def _lines_ok(value):
    return (
        isinstance(value, list)
        and value != []
        and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value)
    )


def _path_ok(path):
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _entry(raw, where, section, source, known_codes, errors, warnings):
    if not isinstance(raw, dict):
        errors.append(f"{where}: an entry must be an object")
        return None
    extra = sorted(set(raw) - _ENTRY_KEYS)
    if extra:
        warnings.append(f"{where}: unknown keys {extra} (ignored)")
    ok = True
    if not _lines_ok(raw.get("lines")):
        errors.append(
            f"{where}: `lines` must be a non-empty list of positive integers, got {raw.get('lines')!r}"
        )
        ok = False
    code = raw.get("code")
    if section == "hazards" and code is None:
        errors.append(f"{where}: a hazard needs a `code`")
        ok = False
    elif code is not None:
        if not isinstance(code, str) or not _CODE.fullmatch(code):
            errors.append(f"{where}: `code` must look like ROC601, got {code!r}")
            ok = False
        elif known_codes is not None and code not in known_codes:
            errors.append(f"{where}: code {code} is not a rocm-lint rule (`rocm-lint rules --json`)")
            ok = False
    note = raw.get("note", "")
    if not isinstance(note, str):
        errors.append(f"{where}: `note` must be a string")
        ok = False
    elif not note.strip():
        warnings.append(f"{where}: no `note`")
    if "evidence" in raw and not isinstance(raw["evidence"], str):
        errors.append(f"{where}: `evidence` must be a string")
        ok = False
    if not ok:
        return None
    return Entry(tuple(sorted(set(raw["lines"]))), code, note, source)


def _hazard_decoy_clash(labels):
    """Lines both a hazard and a decoy, except a decoy naming a code no hazard on the line has."""
    codes = {}
    for h in labels.hazards:
        for n in h.lines:
            codes.setdefault(n, set()).add(h.code)
    return sorted(
        {n for d in labels.decoys for n in d.lines if n in codes and (d.code is None or d.code in codes[n])}
    )


def validate_document(doc, source, known_codes=None):
    """(repos, files, errors, warnings) of one parsed label file; files are FileLabels."""
    errors, warnings, repos, files = [], [], {}, []
    if not isinstance(doc, dict):
        return repos, files, [f"{source}: the top level must be an object"], warnings
    if doc.get("version") != 2:
        errors.append(f"{source}: `version` must be 2, got {doc.get('version')!r}")
    extra = sorted(set(doc) - _TOP_KEYS)
    if extra:
        warnings.append(f"{source}: unknown top-level keys {extra} (ignored)")
    raw_repos, raw_files = doc.get("repos"), doc.get("files")
    if not isinstance(raw_repos, list):
        errors.append(f"{source}: `repos` must be a list")
        raw_repos = []
    if not isinstance(raw_files, list):
        errors.append(f"{source}: `files` must be a list")
        raw_files = []
    for i, r in enumerate(raw_repos):
        where = f"{source}: repos[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("repo"), str) or not _REPO.fullmatch(r["repo"]):
            errors.append(f'{where}: needs `repo` as "owner/name"')
            continue
        if set(r) - _REPO_KEYS:
            warnings.append(f"{where}: unknown keys {sorted(set(r) - _REPO_KEYS)} (ignored)")
        commit = r.get("commit")
        if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
            errors.append(f"{where} ({r['repo']}): `commit` must be 40 lower-case hex digits, got {commit!r}")
            continue
        if repos.get(r["repo"], commit) != commit:
            errors.append(f"{where}: {r['repo']} is listed with two commits")
        repos[r["repo"]] = commit
    for i, f in enumerate(raw_files):
        where = f"{source}: files[{i}]"
        if not isinstance(f, dict):
            errors.append(f"{where}: must be an object")
            continue
        repo, path, kind = f.get("repo"), f.get("path"), f.get("kind")
        where = f"{where} ({repo}:{path})"
        bad = False
        if not isinstance(repo, str) or not _REPO.fullmatch(repo):
            errors.append(f'{where}: needs `repo` as "owner/name"')
            bad = True
        if not _path_ok(path):
            errors.append(f"{where}: `path` must be a relative path inside the repository")
            bad = True
        if kind not in KINDS:
            errors.append(f"{where}: `kind` must be one of {'/'.join(KINDS)}, got {kind!r}")
            bad = True
        extra = sorted(set(f) - _FILE_KEYS)
        if extra:
            warnings.append(f"{where}: unknown keys {extra} (ignored)")
        labels = FileLabels(repo, path, kind, sources=[source])
        for section in SECTIONS:
            raw = f.get(section, [])
            if not isinstance(raw, list):
                errors.append(f"{where}: `{section}` must be a list")
                bad = True
                continue
            for j, e in enumerate(raw):
                entry = _entry(e, f"{where}: {section}[{j}]", section, source, known_codes, errors, warnings)
                if entry is None:
                    bad = True
                else:
                    getattr(labels, section).append(entry)
        if "commit" in f and f["commit"] != repos.get(repo, f["commit"]):
            errors.append(
                f"{where}: `commit` {f['commit']!r} is not the repository's {repos[repo]}: "
                "the format has one commit per repository"
            )
            bad = True
        both = _hazard_decoy_clash(labels)
        if both:
            errors.append(
                f"{where}: lines {both} are both a hazard and a decoy (a decoy about another "
                "rule on a hazard's line must name that rule in its `code`)"
            )
            bad = True
        both = labels.lines_of("ambiguous") & labels.lines_of("decoys")
        if both:
            warnings.append(f"{where}: lines {sorted(both)} are both ambiguous and a decoy")
        seen = set()
        for h in labels.hazards:
            if (h.code, h.lines) in seen:
                warnings.append(f"{where}: hazard {h.code} on lines {list(h.lines)} is listed twice")
            seen.add((h.code, h.lines))
        if not bad:
            files.append(labels)
    return repos, files, errors, warnings


def _merge_file(into: FileLabels, new: FileLabels, warnings):
    """Add more labels of the same file (another entry, or another reader's label file)."""
    if into.kind != new.kind:
        warnings.append(
            f"{new.repo}:{new.path}: kind {into.kind} in {into.sources[0]}, "
            f"{new.kind} in {new.sources[0]}; keeping {into.kind}"
        )
    into.sources.append(new.sources[0])
    for h in new.hazards:
        if not any(
            k.code == h.code
            and k.source != h.source
            and any(abs(a - b) <= 1 for a in k.lines for b in h.lines)
            for k in into.hazards
        ):
            into.hazards.append(h)  # two readers' same hazard counts once
    into.ambiguous += new.ambiguous
    into.decoys += new.decoys
    into.uncovered += new.uncovered


def _resolve_disagreements(f: FileLabels, warnings):
    """A hazard on a line that another reader calls ambiguous or a decoy is ambiguous."""
    demoted = []
    for h in f.hazards:
        others = {n for e in f.ambiguous + f.decoys if e.source != h.source for n in e.lines}
        if set(h.lines) & others:
            demoted.append(h)
    if not demoted:
        return
    lines = {n for h in demoted for n in h.lines}
    for h in demoted:
        warnings.append(f"{f.repo}:{f.path}: readers disagree on {h.code} line(s) {list(h.lines)}: ambiguous")
        f.ambiguous.append(Entry(h.lines, h.code, "readers disagree: " + h.note, h.source))
    f.hazards = [h for h in f.hazards if h not in demoted]
    f.decoys = [d for d in f.decoys if not set(d.lines) & lines]


def load_labels(paths, known_codes=None) -> Labels:
    """Read, validate and merge label files (a missing or unreadable file is an error line)."""
    out = Labels()
    for path in paths:
        path = Path(path)
        source = path.name
        out.sources.append(str(path))
        try:
            if path.stat().st_size > MAX_LABEL_BYTES:
                out.errors.append(f"{source}: larger than {MAX_LABEL_BYTES} bytes")
                continue
            doc = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            out.errors.append(f"{source}: cannot read it as JSON: {exc}")
            continue
        repos, files, errors, warnings = validate_document(doc, source, known_codes)
        out.errors += errors
        out.warnings += warnings
        for repo, commit in repos.items():
            if out.repos.get(repo, commit) != commit:
                out.errors.append(
                    f"{source}: {repo} at {commit[:12]}, another label file has {out.repos[repo][:12]}"
                )
                continue
            out.repos[repo] = commit
        for f in files:
            if f.repo not in repos and f.repo not in out.repos:
                out.errors.append(f"{source}: {f.repo}:{f.path}: the repository is not in any `repos` list")
            key = (f.repo, f.path)
            if key in out.files:
                _merge_file(out.files[key], f, out.warnings)
            else:
                out.files[key] = f
    for (repo, path), f in list(out.files.items()):
        if len(set(f.sources)) > 1:
            _resolve_disagreements(f, out.warnings)
        if repo not in out.repos:
            out.errors.append(f"{repo}:{path}: no commit for the repository in any label file")
            del out.files[(repo, path)]
    return out


def label_paths(directory):
    """The label files of a folder: every *.json, sorted."""
    return sorted(p for p in Path(directory).glob("*.json") if p.is_file())
