"""The fixture harness: every rule fixture of every language, checked against a snapshot.

A positive fixture (``fixtures/rules/ROC101.py``, ``fixtures/rules/ROC601.cu``,
``fixtures/config/Dockerfile`` ...) has its findings pinned in a file beside it
(``ROC101.py.expected``), one finding a line as the CLI's concise output prints it, without the
path::

    12:5 ROC101 `allow_tf32 = True` ... (the whole message)
      fix (safe): Run it only when not on ROCm (`if not is_rocm:`)

``LINE:COL`` are 1-based, the column in characters; a finding with a fix has a second, indented
line with the fix's applicability and message.  The fixture's own ``# expect: CODE`` /
``// expect: CODE`` markers stay (they make it readable) and must name the same (line, code)
pairs as the snapshot.  A negative fixture (``*_ok.*``, anything under ``fixtures/config/ok/``)
has no snapshot: it must stay silent and hold look-alikes of what its rules look for.

After a deliberate change to a rule, rewrite the snapshots and review the diff::

    pytest tests/test_fixture_snapshots.py --update-snapshots

The engine runs once per fixture file, in-process (no subprocess).
"""

from __future__ import annotations

import difflib
import io
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from conftest import CONFIG_FIXTURES, ROOT, RULE_FIXTURES, SNAPSHOT_SUFFIX, expected_findings, is_snapshot
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.engine import check_file
from rocm_lint.finding import Finding
from rocm_lint.output.text import render_concise
from rocm_lint.registry import all_rules
from rocm_lint.rule import CONFIG_LANGUAGES, CPP_LANGUAGES

UPDATE_HINT = "pytest tests/test_fixture_snapshots.py --update-snapshots"
LINTED_LANGUAGES = ("python", *CPP_LANGUAGES, *CONFIG_LANGUAGES)
SNAPSHOT_LINE = re.compile(r"(\d+):(\d+) (ROC\d{3}) \S")  # a finding's line (its fix line is indented)
FIX_LINE = re.compile(r"  fix \((\w+)\): \S")


# -- the fixture files ---------------------------------------------------------------------------------
def _fixture_files() -> List[Path]:
    files = [p for p in RULE_FIXTURES.iterdir() if p.is_file()]
    files += [p for p in CONFIG_FIXTURES.rglob("*") if p.is_file()]
    return sorted(p for p in files if not is_snapshot(p))


def is_negative(path: Path) -> bool:
    if path.parent == RULE_FIXTURES:
        return path.name.split(".")[0].endswith("_ok")  # ROC101_ok.py, ROC601_ok.cu
    return "ok" in path.relative_to(CONFIG_FIXTURES).parts  # fixtures/config/ok/...


def rel(path: Path) -> str:
    """A fixture's name in test ids and messages: relative to the checkout, ``/`` separators."""
    return path.relative_to(ROOT).as_posix()


def snapshot_path(path: Path) -> Path:
    return path.with_name(path.name + SNAPSHOT_SUFFIX)


FILES = _fixture_files()
POSITIVE = [p for p in FILES if not is_negative(p)]
NEGATIVE = [p for p in FILES if is_negative(p)]
RULES = [r for r in all_rules() if set(r.languages) & set(LINTED_LANGUAGES)]


# -- findings and their snapshot text ------------------------------------------------------------------
@lru_cache(maxsize=None)
def findings(path: Path) -> Tuple[Finding, ...]:
    """The engine's findings on one fixture, computed once per session."""
    result = check_file(str(path), Config())
    assert isinstance(result, list), f"{rel(path)}: {result}"
    return tuple(sorted(result, key=lambda f: (f.line, f.col, f.code, f.message)))


def _relative(text: str) -> str:
    """Machine-independent text: the checkout's absolute path left out of messages."""
    for root in {str(ROOT) + os.sep, ROOT.as_posix() + "/"}:
        text = text.replace(root, "")
    return text


@lru_cache(maxsize=None)
def render(path: Path) -> str:
    """The snapshot text of ``path``: concise output's ``LINE:COL: CODE MESSAGE`` per finding,
    made ``LINE:COL CODE MESSAGE`` without the path, and an indented fix line."""
    found = findings(path)
    out = io.StringIO()
    render_concise(list(found), out)  # the CLI's own columns (1-based characters)
    concise = out.getvalue().split("\n")[:-1]
    assert len(concise) == len(found), f"{rel(path)}: a message spans lines: {concise}"
    lines = []
    for f, line in zip(found, concise):
        prefix = f"{f.path}:"
        assert line.startswith(prefix), line
        m = re.match(r"(\d+):(\d+): (ROC\d{3}) (.*)\Z", line[len(prefix) :])
        assert m and (int(m.group(1)), m.group(3)) == (f.line, f.code), line
        lines.append(_relative(f"{m.group(1)}:{m.group(2)} {m.group(3)} {m.group(4)}"))
        if f.fix is not None:
            assert "\n" not in f.fix.message, f.fix.message
            lines.append(_relative(f"  fix ({f.fix.applicability.value}): {f.fix.message}"))
    return "".join(line + "\n" for line in lines)


def parse_snapshot(text: str) -> Counter:
    """(line, code) of every finding a snapshot names."""
    out: Counter = Counter()
    for n, line in enumerate(text.rstrip("\n").split("\n") if text else [], start=1):
        m = SNAPSHOT_LINE.match(line)
        if m:
            out[(int(m.group(1)), m.group(3))] += 1
        else:
            assert FIX_LINE.match(line), f"snapshot line {n} is neither a finding nor a fix: {line!r}"
    return out


@lru_cache(maxsize=None)
def stored_codes(path: Path) -> frozenset:
    """The codes a positive fixture's stored snapshot names (empty when it has none)."""
    snap = snapshot_path(path)
    return frozenset(c for _, c in parse_snapshot(snap.read_text("utf-8"))) if snap.is_file() else frozenset()


def diff(expected: str, actual: str, path: Path) -> str:
    name = rel(path)
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{name}{SNAPSHOT_SUFFIX} (snapshot)",
            tofile=f"{name} (engine's findings)",
        )
    )


def marker_diff(markers: Counter, snapshot: Counter) -> str:
    lines = [
        f"  line {ln}: {code} marked {markers[(ln, code)]}x, in the snapshot {snapshot[(ln, code)]}x"
        for ln, code in sorted(set(markers) | set(snapshot))
        if markers[(ln, code)] != snapshot[(ln, code)]
    ]
    return "\n".join(lines)


def rule_of(path: Path) -> Optional[str]:
    """The rule a fixture in fixtures/rules/ is named after (ROC707_uses.cuh -> ROC707)."""
    if path.parent != RULE_FIXTURES:
        return None
    return path.name.split(".")[0].split("_")[0]


def triggers_for(path: Path) -> Dict[str, Tuple[str, ...]]:
    """The look-alike words a negative fixture must hold: its rule's, or (fixtures/config/ok/) those of
    every rule for its language."""
    code, language = rule_of(path), language_of(path)
    return {
        r.code: r.triggers
        for r in all_rules()
        if (r.code == code if code else language in r.languages) and r.triggers
    }


# -- one check per fixture file -----------------------------------------------------------------------------
def assert_is_a_positive_fixture(path: Path, actual: str) -> None:
    assert language_of(path) in LINTED_LANGUAGES, f"{rel(path)}: no linted language, the engine skips it"
    assert actual, f"{rel(path)}: a positive fixture with no finding (negatives go in *_ok.* or config/ok/)"
    code = rule_of(path)
    assert code is None or code in {c for _, c in parse_snapshot(actual)}, (
        f"{rel(path)} has no {code} finding"
    )


@pytest.mark.parametrize("path", POSITIVE, ids=rel)
def test_positive_fixture_matches_snapshot(path, request):
    actual = render(path)
    snap = snapshot_path(path)
    if request.config.getoption("--update-snapshots"):
        assert_is_a_positive_fixture(path, actual)  # before writing a snapshot of nothing
        if not snap.is_file() or snap.read_text("utf-8") != actual:
            snap.write_text(actual, "utf-8", newline="\n")
    elif not snap.is_file():
        pytest.fail(
            f"no snapshot for {rel(path)}: run `{UPDATE_HINT}` to write {rel(snap)}, then review it",
            pytrace=False,
        )
    else:
        expected = snap.read_text("utf-8")
        if expected != actual:
            pytest.fail(
                f"{rel(path)}: the findings differ from the snapshot (- snapshot, + engine); "
                f"if the change is intended, run `{UPDATE_HINT}` and review the diff\n"
                + diff(expected, actual, path),
                pytrace=False,
            )
        assert_is_a_positive_fixture(path, actual)
    markers, pinned = expected_findings(path), parse_snapshot(snap.read_text("utf-8"))
    if markers != pinned:
        pytest.fail(
            f"{rel(path)}: the `expect:` markers and the snapshot name different findings\n"
            + marker_diff(markers, pinned),
            pytrace=False,
        )


@pytest.mark.parametrize("path", NEGATIVE, ids=rel)
def test_negative_fixture_is_silent(path, request):
    assert language_of(path) in LINTED_LANGUAGES, f"{rel(path)}: no linted language, the engine skips it"
    assert not expected_findings(path), f"{rel(path)}: a negative fixture carries `expect:` markers"
    snap = snapshot_path(path)
    if snap.is_file():
        if not request.config.getoption("--update-snapshots"):
            pytest.fail(
                f"{rel(snap)}: a negative fixture takes no snapshot (it stays silent); "
                f"run `{UPDATE_HINT}` to remove it",
                pytrace=False,
            )
        snap.unlink()
    found = render(path)
    assert not found, f"{rel(path)} must stay silent, found:\n{found}"
    triggers = triggers_for(path)
    assert triggers, f"{rel(path)}: no rule with trigger words applies to it"
    text = path.read_text("utf-8")
    assert any(t in text for words in triggers.values() for t in words), (
        f"{rel(path)}: a negative fixture must hold look-alikes (a trigger word of {sorted(triggers)})"
    )


def test_every_snapshot_has_its_fixture(request):
    """A snapshot whose fixture was renamed or deleted is stale (removed by --update-snapshots)."""
    fixtures = {snapshot_path(p) for p in POSITIVE}
    snapshots = {
        p for d in (RULE_FIXTURES, CONFIG_FIXTURES) for p in d.rglob("*" + SNAPSHOT_SUFFIX) if p.is_file()
    }
    stale = sorted(snapshots - fixtures)
    if stale and request.config.getoption("--update-snapshots"):
        for p in stale:
            if p.with_name(p.name[: -len(SNAPSHOT_SUFFIX)]).is_file():
                continue  # a negative fixture's: test_negative_fixture_is_silent says so and removes it
            p.unlink()
        return
    if stale:
        pytest.fail(
            f"snapshots without a positive fixture: {[rel(p) for p in stale]}; run `{UPDATE_HINT}` "
            "to remove them",
            pytrace=False,
        )


# -- every rule is covered ----------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_positive_and_negative_fixtures(rule):
    named = [rel(p) for p in POSITIVE if rule.code in stored_codes(p)]
    assert named, (
        f"no positive fixture's snapshot names {rule.code} (a missing snapshot? run `{UPDATE_HINT}`)"
    )
    if "python" in rule.languages:
        assert (RULE_FIXTURES / f"{rule.code}_ok.py").is_file(), f"no fixtures/rules/{rule.code}_ok.py"
    if set(rule.languages) & set(CPP_LANGUAGES):
        assert (RULE_FIXTURES / f"{rule.code}_ok.cu").is_file(), f"no fixtures/rules/{rule.code}_ok.cu"
    if not set(rule.languages) & {"python", *CPP_LANGUAGES}:  # config files only
        negatives = [
            p
            for p in NEGATIVE
            if p.parent != RULE_FIXTURES
            and language_of(p) in rule.languages
            and any(t in p.read_text("utf-8") for t in rule.triggers)
        ]
        assert negatives, f"no file in fixtures/config/ok/ holds a {rule.code} look-alike"


def test_the_harness_sees_every_kind_of_fixture():
    kinds = {"python", "cuda", *CONFIG_LANGUAGES}  # (C++ files holding device code: tests/test_cpp.py)
    assert {language_of(p) for p in POSITIVE} == kinds
    assert {language_of(p) for p in NEGATIVE} == kinds
    unlinted = {r.code: r.languages for r in all_rules() if r not in RULES}
    # ROC001 (unused suppressions, off by default) is tested by tests/test_unused_noqa.py,
    # runtime rules by tests/test_runtime.py, ROC000 (flake8's "not analysed") by
    # tests/test_front_end_crashes.py; every other rule has snapshot fixtures
    assert all(set(languages) <= {"runtime", "flake8", "suppressions"} for languages in unlinted.values()), (
        unlinted
    )
