"""The one way every front end fixes: ``--fix``/``--diff``, JSON/SARIF edits, LSP quick fixes and
fix-all all call :func:`fix_text` or :func:`edits_for`.

* :func:`fix_text` applies every allowed fix of a file's findings, in passes: fixes that overlap
  one already taken (a C++ ballot declaration and its mask on one line) land in a later pass,
  re-checked and re-verified, like ruff's fix loop.
* :func:`edits_for` gives the verified edits of one finding's fix alone;
  :func:`edits_by_finding` gives them for all of a file's findings at once (JSON/SARIF), from one
  LibCST transform and one verification per file instead of one per finding.

Both give the fix step what the check learned about the module: the ROCm predicates it binds,
read with the user's configuration (``rocm-predicates``), so a fix reuses ``IS_AMD = on_amd()``
instead of inserting a second flag.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import os
from typing import Dict, List, Optional, Sequence, Tuple, Union

from rocm_lint.config import Config
from rocm_lint.finding import Applicability, Edit, FileError, Finding, GateStatement, RocmValue
from rocm_lint.fix.engine import FixResult, learned_rocm_names, line_edits
from rocm_lint.workspace import Workspace

MAX_PASSES = 8
OVERLAPS = "overlaps another fix; run --fix again"


def _fix_once(
    path: str, text: str, findings: Sequence[Finding], language: str, unsafe: bool, config: Config
) -> FixResult:
    from rocm_lint.fix.text_edits import apply_text_fixes

    if language == "python":
        from rocm_lint.fix.engine import fix_source

        # ROC001's fixes are text edits in comments, not recipes: applied to the text the
        # recipes leave unchanged, else in the next pass (its findings are checked again).
        comments = [f for f in findings if f.fix is not None and f.fix.edits and f.recipe is None]
        others = [f for f in findings if not (f.fix is not None and f.fix.edits and f.recipe is None)]
        result = fix_source(
            path,
            text,
            others,
            unsafe=unsafe,
            rocm_names=learned_rocm_names(path, text, config),
            config=config,
        )
        if comments and result.text != text:
            result.overlapped = list(result.overlapped) + comments
        elif comments:
            more = apply_text_fixes(path, text, comments, language, unsafe=unsafe)
            result.text, result.applied = more.text, list(result.applied) + list(more.applied)
            result.dropped = list(result.dropped) + list(more.dropped)
            result.overlapped = list(result.overlapped) + list(more.overlapped)
        return result

    return apply_text_fixes(path, text, findings, language, unsafe=unsafe)


def fix_text(
    path: str,
    text: str,
    config: Config,
    *,
    unsafe: bool = False,
    language: Optional[str] = None,
    findings: Optional[Sequence[Finding]] = None,
    keep=None,
    workspace: Optional[Workspace] = None,
) -> Union[FixResult, FileError]:
    """``text`` with every allowed fix applied (safe ones; unsafe ones too with ``unsafe``).

    ``workspace``: the front end's caches (its project model is the check's); fresh when None.

    ``findings``: the file's findings when the caller has them (else the file is checked here).
    ``keep(finding, text, original)``: fix only the findings it accepts (``--baseline-commit``:
    those on lines the diff added; a later pass's lines are mapped back to ``original``'s).
    Findings whose fix overlaps another are fixed in later passes; each pass is verified.
    """
    from rocm_lint.discovery import language_of
    from rocm_lint.engine import check_source

    language = language or language_of(path)
    if language is None:
        return FixResult(text)
    if workspace is None:
        workspace = Workspace()
    if "\r" in text and "\n" not in text:
        return _fix_cr_only(path, text, config, unsafe, language, findings, keep, workspace)
    if findings is None:
        checked = check_source(path, text, config, language, workspace=workspace)
        if isinstance(checked, FileError):
            return checked
        findings = checked
    if keep is not None:
        findings = [f for f in findings if keep(f, text, text)]
    result = _fix_once(path, text, findings, language, unsafe, config)
    for _ in range(MAX_PASSES):
        if not result.applied or not result.overlapped:
            break
        again = check_source(path, result.text, config, language, workspace=workspace)
        if isinstance(again, FileError):
            break
        if keep is not None:
            again = [f for f in again if keep(f, result.text, text)]
        more = _fix_once(path, result.text, again, language, unsafe, config)
        if not more.applied:
            break
        result.text = more.text
        result.applied = result.applied + more.applied
        result.dropped = result.dropped + more.dropped
        result.overlapped = more.overlapped
    result.dropped = result.dropped + [(f, OVERLAPS) for f in result.overlapped]
    result.overlapped = []
    return result


def _fix_cr_only(
    path, text, config, unsafe, language, findings, keep, workspace
) -> Union[FixResult, FileError]:
    """A text whose every line ends in a lone CR (old Mac files): fixed as its LF twin (the same
    length, lines and columns: every finding is where it was), then given its CRs back, so the
    fixes' new lines end as the file's do and the last line keeps its ending (LibCST reads a
    lone CR as no line break at all)."""
    twin = text.replace("\r", "\n")
    wanted = None
    if findings is not None:  # the caller's choice, found again in the twin (positions are equal)
        wanted = {(f.line, f.col, f.code) for f in findings}
    twin_keep = keep
    if wanted is not None or keep is not None:

        def twin_keep(f, now, original):
            if wanted is not None and (f.line, f.col, f.code) not in wanted:
                return False
            return keep is None or keep(f, now.replace("\n", "\r"), original.replace("\n", "\r"))

    result = fix_text(
        path, twin, config, unsafe=unsafe, language=language, keep=twin_keep, workspace=workspace
    )
    if isinstance(result, FileError):
        return result
    result.text = result.text.replace("\n", "\r") if result.applied else text
    return result


def edits_for(path: str, text: str, finding: Finding, config: Config) -> Tuple[Edit, ...]:
    """The edits of ``finding``'s fix alone, verified the way ``--fix`` verifies them; empty when
    it has no fix or the fix cannot be applied here."""
    from rocm_lint.discovery import language_of

    if finding.fix is None:
        return ()
    language = language_of(path)
    if language == "python":
        if finding.recipe is None:
            return ()
        from rocm_lint.fix.engine import python_edits_for

        try:
            return python_edits_for(
                path, text, finding, rocm_names=learned_rocm_names(path, text, config), config=config
            )
        except SyntaxError:
            return ()
    if not finding.fix.edits or language is None:
        return ()
    from rocm_lint.fix.text_edits import apply_text_fixes

    result = apply_text_fixes(path, text, [finding], language, unsafe=True)
    return tuple(finding.fix.edits) if result.applied else ()


def edits_by_finding(
    path: str, text: str, findings: Sequence[Finding], config: Config
) -> List[Tuple[Edit, ...]]:
    """:func:`edits_for` of each of ``findings`` (one file's), in order: the same edits, computed
    with one fix per group of findings instead of one per finding (a file with 200 findings took
    minutes).  See :func:`_split_python_edits`; whatever cannot be split is computed alone."""
    from rocm_lint.discovery import language_of

    out: List[Optional[Tuple[Edit, ...]]] = [None] * len(findings)
    python = [i for i, f in enumerate(findings) if f.fix is not None and f.recipe is not None]
    if language_of(path) == "python" and len(python) > 1:
        try:
            split = _split_python_edits(path, text, [findings[i] for i in python], config)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            split = {}
        for i in python:
            if id(findings[i]) in split:
                out[i] = split[id(findings[i])]
    return [
        edits if edits is not None else edits_for(path, text, f, config) for edits, f in zip(out, findings)
    ]


def _lines_edits(old: List[str], parts: List[Tuple[int, int, List[str]]]) -> Tuple[Edit, ...]:
    """Whole-line replacements (as ``python_edits_for`` makes them, with difflib) turning ``old``
    into ``old`` with ``parts`` ((i1, i2, new lines): old[i1:i2] replaced) applied.  Each run of
    touching parts is diffed on its own, the lines it shares with the file at either end set
    aside: diffing the whole file once per finding was quadratic."""
    regions: List[Tuple[int, int, List[str]]] = []
    # in order; at one place an insertion (the flag) comes before the finding's own lines
    for i1, i2, lines in sorted(parts, key=lambda h: (h[0], h[1] != h[0])):
        if regions and regions[-1][1] == i1:
            r1, _, rlines = regions[-1]
            regions[-1] = (r1, i2, rlines + lines)
        else:
            regions.append((i1, i2, list(lines)))
    hunks: List[Tuple[int, int, List[str]]] = []
    for r1, r2, b in regions:
        a = old[r1:r2]
        start, stop, limit = 0, 0, min(len(a), len(b))
        while start < limit and a[start] == b[start]:
            start += 1
        while stop < limit - start and a[len(a) - 1 - stop] == b[len(b) - 1 - stop]:
            stop += 1
        a, b = a[start : len(a) - stop], b[start : len(b) - stop]
        base = r1 + start
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        hunks.extend(
            (base + i1, base + i2, b[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"
        )
    return line_edits(old, hunks)


def _split_python_edits(
    path: str, text: str, findings: Sequence[Finding], config: Config
) -> Dict[int, Tuple[Edit, ...]]:
    """Each finding's edits alone, from fixing a whole group together: {id(finding): edits} for
    the findings it could split; the caller computes the others one by one.

    A group shares what fixing one of its findings alone would share: the applicability (only
    safe fixes are verified) and the ROCm flag's plan (which depends on the first fixed line).
    The group's fixed text is diffed against the original; each changed hunk must touch exactly
    one finding's lines, and the inserted flag statements form their own lines.  A finding's
    text alone is the original with its hunks (and the flag, when its fix reads it) applied:
    the text fixing it alone gives, as the fixes are local rewrites.  Verification passed for
    the group, whose NVIDIA program is the original's; each finding's part folds the same way."""
    from rocm_lint.fix.engine import fix_source, learned_rocm_names, plan_flag
    from rocm_lint.lines import split_lines

    rocm_names = learned_rocm_names(path, text, config)
    tree = ast.parse(text)
    old = split_lines(text, keepends=True)
    out: Dict[int, Tuple[Edit, ...]] = {}
    plans: Dict[int, object] = {}

    def plan(f: Finding):
        """The flag plan fixing ``f`` alone would use (where the flag is, its name, and whether
        ``f`` tests torch in place or has no place)."""
        if id(f) not in plans:
            p = plan_flag(tree, [f], rocm_names, path, config, text)
            plans[id(f)] = (
                p.name,
                p.insert_after,
                tuple(p.statements),
                p.torch_alias,
                p.usable_after,
                id(f) in p.inline,
                id(f) in p.unplaced,
            )
        return plans[id(f)]

    def groups(members: List[Finding]):
        """Split by plan: equal plans at the first and last finding hold for those between
        (the plan changes once, where a module-level ROCm predicate is first bound)."""
        members = sorted(members, key=lambda f: f.line)
        if plan(members[0]) == plan(members[-1]) or len(members) == 1:
            yield members
            return
        half = len(members) // 2
        yield from groups(members[:half])
        yield from groups(members[half:])

    for applicability in (Applicability.SAFE, Applicability.UNSAFE):
        same = [f for f in findings if f.fix.applicability == applicability]
        if len(same) < 2:
            continue
        for group in groups(same):
            if len(group) < 2:
                continue
            result = fix_source(path, text, group, unsafe=True, rocm_names=rocm_names, config=config)
            if result.dropped:
                # fixed alone, these fail too (no place for the fix, or it does not verify); the
                # others are fixed together once more, without them
                group = [f for f in group if any(f is a for a in result.applied)]
                if len(group) < 2:
                    continue
                result = fix_source(path, text, group, unsafe=True, rocm_names=rocm_names, config=config)
                if result.dropped:
                    continue
            out.update(_split(old, split_lines(result.text, keepends=True), result, group))
    return out


def _split(
    old: List[str], new: List[str], result: FixResult, group: Sequence[Finding]
) -> Dict[int, Tuple[Edit, ...]]:
    flag = list(result.inserted)
    # Any correct diff serves to find the hunks (their edits are diffed again, exactly, per
    # finding): autojunk keeps a file of many repeated lines from making this one quadratic.
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=True)
    hunks = []  # (i1, i2, new lines) with the flag statements taken out
    flag_at, flag_lines = None, []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines = new[j1:j2]
        if flag and flag_at is None:
            bare = [line.rstrip("\r\n") for line in lines]
            for k in range(len(lines) - len(flag) + 1):
                if bare[k : k + len(flag)] == flag:
                    # with the blank lines that set it off from the code around it
                    end = k + len(flag)
                    while k > 0 and not bare[k - 1]:
                        k -= 1
                    while end < len(lines) and not bare[end]:
                        end += 1
                    if k == 0:
                        flag_at = i1
                    elif end == len(lines):
                        flag_at = i2
                    else:
                        return {}
                    flag_lines = lines[k:end]
                    lines = lines[:k] + lines[end:]
                    break
        if i1 == i2 and not lines:
            continue
        hunks.append((i1, i2, lines))
    if flag and flag_at is None:
        return {}
    applied = {id(f) for f in result.applied}
    mine: Dict[int, list] = {id(f): [] for f in group}
    shared = set()  # findings whose hunk holds another's too (neighbours gated in one block)
    spans = sorted(((f.line, _last_line(f), i) for i, f in enumerate(group)))
    starts = [line for line, _, _ in spans]
    widest = max(last - line for line, last, _ in spans)
    for hunk in hunks:
        i1, i2, _ = hunk
        # the findings whose lines meet old lines i1+1..i2
        nearby = spans[bisect.bisect_left(starts, i1 + 1 - widest) : bisect.bisect_right(starts, i2)]
        owners = [group[i] for line, last, i in nearby if i1 < last and line <= i2]
        if i1 == i2 or not owners or any(id(f) not in applied for f in owners):
            return {}  # a change that belongs to no fixed finding: not what a split can explain
        if len(owners) > 1:
            shared.update(id(f) for f in owners)
        outside = [
            old[k]
            for k in range(i1, i2)
            if old[k].strip()
            and not old[k].lstrip().startswith("#")
            and not any(line <= k + 1 <= last for line, last, _ in nearby)
        ]
        if outside and set(outside) - set(hunk[2]):
            # code outside every finding changed (fix.format_nest joins a gate into the test of
            # the `if` around it): fixing one finding alone may not change it, so no split
            return {}
        mine[id(owners[0])].append(hunk)
    out: Dict[int, Tuple[Edit, ...]] = {}
    for f in group:
        if id(f) not in applied:
            continue  # computed alone by the caller
        if id(f) in shared or not mine[id(f)]:
            continue
        parts = list(mine[id(f)])
        if flag and isinstance(f.recipe, (GateStatement, RocmValue)):
            parts.append((flag_at, flag_at, flag_lines))
        out[id(f)] = _lines_edits(old, parts)
    return out


def _last_line(f: Finding) -> int:
    span = getattr(f.recipe, "span", None)
    return max(f.line, f.end_line or f.line, span[2] if span else f.line)


# -- the edits a report carries (JSON, SARIF), kept in the content cache -----------------------------
_STYLE_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml", ".flake8", "setup.cfg", "tox.ini")
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def with_edits(
    findings: Sequence[Finding], config: Config, cache_dir: Optional[str] = None, read=None, workspace=None
) -> List[Finding]:
    """``findings`` with each Python fix's edits filled in (ruff's JSON carries them), computed
    once per file (:func:`edits_by_finding`); only files with fixes are read.  C++ and
    config-file findings carry their edits from the check.  With ``cache_dir`` the edits are
    kept with the file's entry in the content cache and reused while nothing the fix read
    changed (:meth:`rocm_lint.cache.Cache.lookup_edits`)."""
    from dataclasses import replace as dc_replace

    from rocm_lint.finding import Fix

    cache = None
    if cache_dir is not None:
        from rocm_lint.cache import Cache

        cache = Cache.open(cache_dir, config, workspace)
    by_file: Dict[str, List[int]] = {}
    for i, f in enumerate(findings):
        if f.fix is not None and f.recipe is not None:
            by_file.setdefault(f.path, []).append(i)
    out = list(findings)
    for path, indexes in by_file.items():
        wanted = [findings[i] for i in indexes]
        all_edits = _cached_edits(cache, path, wanted, config, workspace) if cache is not None else None
        if all_edits is None:
            if read is None:
                from rocm_lint.engine import read_source as read

            text = read(path)
            all_edits = (
                edits_by_finding(path, text, wanted, config) if isinstance(text, str) else [()] * len(wanted)
            )
        for i, f, edits in zip(indexes, wanted, all_edits):
            out[i] = dc_replace(f, fix=Fix(f.fix.applicability, f.fix.message, edits) if edits else None)
    if cache is not None:
        cache.save()
    return out


def _cached_edits(
    cache, path: str, wanted: Sequence[Finding], config: Config, workspace=None
) -> Optional[List[Tuple[Edit, ...]]]:
    """The edits of ``wanted`` from the cache, or computed and stored; None where the cache
    cannot answer for the file (no entry of this run: the caller computes them)."""
    from rocm_lint.cache import TREE, content_hash, finding_key
    from rocm_lint.cache_entries import edits_from, edits_to
    from rocm_lint.discovery import read_bounded
    from rocm_lint.engine import MAX_FILE_BYTES, decode_source

    digest = cache.digest_of(path)
    if digest is None:
        return None
    keys = [finding_key(f) for f in wanted]
    known = cache.lookup_edits(path)
    if known is not None and all(k in known for k in keys):
        return [edits_from(known[k]) if known[k] else () for k in keys]
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except OSError:
        return None
    if not isinstance(data, bytes) or content_hash(data) != digest:
        return None  # changed since the check: computed, not kept
    text = decode_source(path, data)
    if not isinstance(text, str):
        return None
    all_edits = edits_by_finding(path, text, wanted, config)
    # What the fix reads beyond the check's inputs (the entry is valid only while those are
    # unchanged: the file, the modules it imports, the headers and build files): the formatter
    # settings, and the project's Python files its star-import scans read.
    deps = set(_style_files(path)) | {TREE + root for root in _project_roots(path, config, workspace)}
    cache.store_edits(path, digest, deps, {k: edits_to(e) if e else None for k, e in zip(keys, all_edits)})
    return all_edits


def _style_files(path: str) -> List[str]:
    """The formatter settings files the fix may read for ``path`` (present or not)."""
    out = []
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(64):
        out.extend(os.path.join(directory, name) for name in _STYLE_FILES)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return out


def _project_roots(path: str, config: Config, workspace=None) -> List[str]:
    """The outermost folders whose Python files the fix's star-import scans may read for
    ``path``: the folder above its top package, the nearest one above it holding a project
    marker, and the project's roots."""
    from rocm_lint.python.project import project_for
    from rocm_lint.workspace import Workspace

    folder = os.path.dirname(os.path.abspath(path))
    top = folder
    for _ in range(64):
        if not os.path.isfile(os.path.join(top, "__init__.py")) or os.path.dirname(top) == top:
            break
        top = os.path.dirname(top)
    marked, probe = top, folder
    for _ in range(64):
        if any(os.path.exists(os.path.join(probe, m)) for m in _MARKERS):
            marked = probe if len(probe) < len(top) else top
            break
        if os.path.dirname(probe) == probe:
            break
        probe = os.path.dirname(probe)
    roots = [
        os.path.realpath(r)
        for r in [
            top,
            marked,
            *project_for(workspace if workspace is not None else Workspace(), config).roots,
        ]
        if os.path.isdir(r)
    ]
    roots = list(dict.fromkeys(roots))
    return [r for r in roots if not any(o != r and r.startswith(o.rstrip(os.sep) + os.sep) for o in roots)]
