"""The Semgrep rules in semgrep-rules/ (shipped in the package as rocm_lint/semgrep/rocm-lint.yaml).

The rules match text (`languages: [generic]`, `pattern-regex`): Semgrep's C++ parser stops at
CUDA syntax, and a generic rule never parses, so Semgrep reports no parse error on CUDA files.
`semgrep --test semgrep-rules/` checks the annotated files of semgrep-rules/tests/rocm-lint/
(`// ruleid: rocm-lint.ROC702-hipblas` or `// ok: ...` on the line before the code, Semgrep's
convention, with the exact rule id); a test here runs it. This harness reads the same
annotations by rocm-lint code (plus semgrep-rules/tests/no-findings/, files where a rule finds
nothing at all, which `semgrep --test` cannot hold), and checks that every Semgrep finding on the
shared C++ fixtures is also a finding of the built-in scanner, except the differences by design
listed in docs/semgrep.md.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import (
    FIXTURES,
    NVIDIA_DEFINES,
    ROCM_DEFINES,
    ROOT,
    RULE_FIXTURES,
    is_snapshot,
    nvcc_ptx,
    translation_unit,
)
from rocm_lint.config import Config
from rocm_lint.cpp.logical_warp import LogicalWarps
from rocm_lint.cpp.nvidia_view import same_on_nvidia
from rocm_lint.engine import check_file, check_source
from rocm_lint.fix.text_edits import apply_text_fixes
from rocm_lint.finding import Applicability
from rocm_lint.registry import all_rules
from rocm_lint.rules.cuda_cpp import CUDA_HEADERS
from rocm_lint.semgrep import RULES, semgrep_command

pytestmark = pytest.mark.integration  # the integration tier: make test / --all-tiers

SEMGREP_DIR = ROOT / "semgrep-rules"
SEMGREP_TESTS = SEMGREP_DIR / "tests"
SEMGREP_FIXTURES = SEMGREP_TESTS / "rocm-lint"  # what `semgrep --test semgrep-rules/` reads
ANNOTATION = re.compile(r"(?://|/\*)\s*(ruleid|ok):\s*([\w.,\s-]+?)\s*(?:\*/)?\s*$")
# The rules with a Semgrep twin, as each Rule declares (Rule.semgrep; C++ rules by default).
CPP_CODES = [r.code for r in all_rules() if r.has_semgrep_twin]
SUPPRESSED_COMMENT = re.compile(r"//\s*(?:rocm-lint:\s*ignore\[[^\]]*\]|NOLINT(?:NEXTLINE)?(?:\([^)]*\))?)")
SUPPRESSED = re.compile(r"\bNOLINT(?:NEXTLINE)?\b|rocm-lint:\s*ignore")

if semgrep_command() is None:  # pragma: no cover - `make test` installs semgrep
    pytest.skip("semgrep is not installed (pip install -e '.[test]')", allow_module_level=True)


def run_semgrep(files):
    proc = subprocess.run(
        [
            *semgrep_command(),
            "scan",
            "--config",
            str(RULES),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--scan-unknown-extensions",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    fatal = [e for e in data["errors"] if e.get("level") != "warn"]  # PartialParsing is a warning
    assert fatal == [], fatal
    found = defaultdict(set)
    for r in data["results"]:
        key = (r["start"]["line"], r["extra"]["metadata"]["rocm-lint-code"])
        path = Path(r["path"]).resolve()
        # The entries of one code (ROC702 per HIP header, ROC703 fixed and unfixed) never report a
        # line twice between them.
        assert key[1] not in FIX_VARIANTS or key not in found[path], f"{path.name}:{key[0]} {key[1]} twice"
        found[path].add(key)
    return found


def rules():
    return yaml.safe_load(RULES.read_text("utf-8"))["rules"]


# The whole file, where it tests USE_ROCM by value (`#if USE_ROCM`): no `#ifdef USE_ROCM` fix there.
BY_VALUE_FILE = next(
    p["pattern-regex"]
    for r in rules()
    if r["id"] == "rocm-lint.ROC702-by-value"
    for p in r["patterns"]
    if p.get("pattern-regex", "").startswith("(?s)\\A")
)
FIX_VARIANTS = {
    code for code, n in Counter(r["metadata"]["rocm-lint-code"] for r in rules()).items() if n > 2
}


def fixture_files():
    # (`X.fixed.cu`: what `semgrep --test` expects `--autofix` to make of `X.cu`)
    return sorted(p for p in SEMGREP_TESTS.rglob("*.cu") if not p.name.endswith(".fixed.cu"))


def shared_files():
    return sorted(
        p for p in RULE_FIXTURES.iterdir() if p.name.startswith(("ROC6", "ROC7")) and not is_snapshot(p)
    )


@pytest.fixture(scope="module")
def semgrep_findings():
    """One Semgrep run (start-up is seconds) over every file the tests look at."""
    return run_semgrep(fixture_files() + shared_files())


def annotations(path: Path):
    """{line: (kind, codes)} for the code line each annotation precedes."""
    out = {}
    pending = []
    for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        m = ANNOTATION.search(line)
        if m and line.strip().startswith(("//", "/*")):
            # `rocm-lint.ROC702-hipblas` is rocm-lint's ROC702
            codes = {c.strip().rsplit(".", 1)[-1].split("-")[0] for c in m.group(2).split(",") if c.strip()}
            pending.append((m.group(1), codes))
            continue
        for kind, codes in pending:
            entry = out.setdefault(lineno, {"ruleid": set(), "ok": set()})
            entry[kind] |= codes
        pending = []
    return out


# -- the rules file --------------------------------------------------------------------------------
def test_rules_mirror_the_cpp_catalogue():
    assert (SEMGREP_DIR / "rocm-lint.yaml").resolve() == RULES.resolve()
    entries = rules()
    ids = [r["id"] for r in entries]
    assert len(set(ids)) == len(ids)  # Semgrep drops results of rules that share an id
    assert sorted({r["metadata"]["rocm-lint-code"] for r in entries}) == CPP_CODES
    for r in entries:
        code = r["metadata"]["rocm-lint-code"]
        meta = r["metadata"]
        assert r["id"] == f"rocm-lint.{code}" or r["id"].startswith(f"rocm-lint.{code}-")
        assert meta["category"] == "portability" and meta["confidence"] in ("HIGH", "MEDIUM", "LOW")
        assert any(ref.endswith(f"/docs/rules/{code}.md") for ref in meta["references"])
        assert (
            r["severity"] in ("ERROR", "WARNING") and r["languages"] == ["generic"] and r["message"].strip()
        )
        assert {"*.cu", "*.cuh", "*.hip", "*.cpp", "*.h"} <= set(r["paths"]["include"]), r["id"]
    # A code has several entries only to give its safe fix one template each (ROC702 per HIP
    # header, ROC703 per ROCm value of the condition); at most one of them reports without a fix.
    # Each also has a `-by-value` entry: the same findings, without a fix, in files that test
    # USE_ROCM by value, which every entry with a fix leaves out (test below).
    for code in FIX_VARIANTS:
        plain = [
            r
            for r in entries
            if r["metadata"]["rocm-lint-code"] == code and not r["id"].endswith("-by-value")
        ]
        assert sum("fix" not in r for r in plain) <= 1, code
        (twin,) = [r for r in entries if r["id"] == f"rocm-lint.{code}-by-value"]
        assert "fix" not in twin and BY_VALUE_FILE in [p.get("pattern-regex") for p in twin["patterns"]]
    for r in entries:
        if "fix" in r:
            assert BY_VALUE_FILE in [p.get("pattern-not-regex") for p in r["patterns"]], r["id"]
    safe = {r.code for r in all_rules() if r.code in CPP_CODES and r.fix == Applicability.SAFE}
    with_fix = {r["metadata"]["rocm-lint-code"] for r in entries if "fix" in r}
    assert with_fix == safe == FIX_VARIANTS == {"ROC702", "ROC703"}


def test_rules_file_is_plain_yaml():
    """No anchors or aliases (Semgrep's validator rejects an aliased `message`), no top-level key
    but `rules` (`--experimental` rejects unknown ones); the region exclusions written out in each
    rule are copies of one text per region."""
    events = list(yaml.parse(RULES.read_text("utf-8")))
    assert [e for e in events if isinstance(e, yaml.AliasEvent) or getattr(e, "anchor", None)] == []
    assert list(yaml.safe_load(RULES.read_text("utf-8"))) == ["rules"]
    regions = Counter(
        p["pattern-not-regex"][:60]
        for r in rules()
        for p in r.get("patterns", [])
        if "pattern-not-regex" in p and p["pattern-not-regex"].startswith("(?sm)^[ \\t]*#")
    )
    texts = {
        p["pattern-not-regex"]
        for r in rules()
        for p in r.get("patterns", [])
        if "pattern-not-regex" in p and p["pattern-not-regex"][:60] in regions
    }
    assert len(texts) == len(regions), "two copies of a region differ"


@pytest.mark.parametrize("experimental", [False, True], ids=["pysemgrep", "experimental"])
def test_semgrep_validates_the_rules_without_errors(experimental, tmp_path):
    """A plain (not --quiet) run prints no rule validation error, with and without `--experimental`
    (which rejected the file for its `x-regions` key), and still finds what it should."""
    shutil.copy(SEMGREP_FIXTURES / "ROC602.cu", tmp_path / "k.cu")
    proc = subprocess.run(
        [
            *semgrep_command(),
            "scan",
            *(["--experimental"] if experimental else []),
            "--config",
            str(RULES),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--scan-unknown-extensions",
            "k.cu",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for word in ("RuleParseError", "validation failed", "Invalid YAML", "Unknown or duplicate"):
        assert word not in proc.stderr
    data = json.loads(proc.stdout)
    assert [
        e for e in data["errors"] if e.get("type") != "PartialParsing" and e["type"][0] != "PartialParsing"
    ] == []
    assert {r["extra"]["metadata"]["rocm-lint-code"] for r in data["results"]} == {"ROC602"}


def test_every_rule_has_positive_and_negative_fixtures():
    seen = defaultdict(set)
    for path in fixture_files():
        for entry in annotations(path).values():
            for kind in ("ruleid", "ok"):
                for code in entry[kind]:
                    seen[code].add(kind)
    assert {c: sorted(seen[c]) for c in CPP_CODES} == {c: ["ok", "ruleid"] for c in CPP_CODES}


# -- the harness -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_semgrep_fixture(path, semgrep_findings):
    found = semgrep_findings.get(path.resolve(), set())
    expected = {(line, code) for line, entry in annotations(path).items() for code in entry["ruleid"]}
    forbidden = {(line, code) for line, entry in annotations(path).items() for code in entry["ok"]}
    assert sorted(expected - found) == [], "ruleid lines Semgrep did not report"
    assert sorted(found & forbidden) == [], "ok lines Semgrep reported"
    assert sorted(found - expected) == [], "findings on lines with no ruleid annotation"


# -- parity with the built-in scanner -------------------------------------------------------------------
def builtin(path):
    result = check_file(str(path), Config())
    assert isinstance(result, list), result
    return [f for f in result if f.code in CPP_CODES]


def logical_warp_lines(path, monkeypatch):
    """ROC603 lines the built-in scanner leaves silent because the code uses a 32-lane logical warp
    consistently (rocm_lint.cpp.logical_warp): its findings with that analysis switched off, less
    its findings."""
    with monkeypatch.context() as m:
        m.setattr(LogicalWarps, "mixed", lambda self, offset: None)
        m.setattr(LogicalWarps, "constant_consistent", lambda self, name, definition: False)
        without = {(f.line, f.code) for f in builtin(path) if f.code == "ROC603"}
    return without - {(f.line, f.code) for f in builtin(path)}


@pytest.mark.parametrize("path", fixture_files() + shared_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_semgrep_finding_is_a_builtin_finding(path, semgrep_findings, monkeypatch):
    ours = builtin(path)
    found = semgrep_findings.get(path.resolve(), set())
    lines = path.read_text("utf-8").splitlines()
    # By design (docs/semgrep.md): a CUTLASS/CuTe-bound file gets only ROC707 from the built-in
    # scanner, once per file; Semgrep reports each include and the line hazards.
    # (the one ROC707 finding may name libcu++, included before CUTLASS)
    bound = any(f.code == "ROC707" for f in ours) and (
        any(f.code == "ROC707" and ("CUTLASS" in f.message or "CuTe" in f.message) for f in ours)
        or re.search(r'(?m)^[ \t]*#[ \t]*include[ \t]*[<"](?:cutlass|cute)/', path.read_text("utf-8"))
        is not None
    )
    if bound:  # compared per file: Semgrep's ROC707 must be the built-in one
        assert {c for _, c in found if c == "ROC707"} <= {f.code for f in ours}
        return
    if any(f.code == "ROC707" for f in ours):  # libcu++: once per file in the built-in scanner
        found = {(ln, c) for ln, c in found if c != "ROC707"}
    # By design: Semgrep does not read clang-tidy's NOLINT or rocm-lint's ignore comments.
    found = {(ln, c) for ln, c in found if not SUPPRESSED.search(lines[ln - 1])}
    # By design: Semgrep sees `threadIdx.x & 31` on its line, not a function that uses a 32-lane
    # logical warp consistently (with its calls); only the built-in scanner reads that.
    if any(c == "ROC603" for _, c in found):
        found -= logical_warp_lines(path, monkeypatch)
    # By design: a file that declares its own `warpSize` constant reads that one (no ROC604);
    # Semgrep matches each use and cannot see the declaration elsewhere in the file.
    if re.search(r"\b(?:constexpr|const)\b[^;{}()=\n]*\bwarpSize\s*=", path.read_text("utf-8")):
        found = {(ln, c) for ln, c in found if c != "ROC604"}
    # By design: Semgrep's ROC701 is every asm statement that is not AMD GCN; the built-in scanner
    # reports PTX only (an opcode PTX alone has, or a shared one with a PTX qualifier:
    # rocm_lint.cpp.asm), so CPU SIMD asm (RISC-V V, ARM SVE, POWER VSX) is Semgrep's alone.
    if any(c == "ROC701" for _, c in found):
        found = {(ln, c) for ln, c in found if c != "ROC701" or _ptx_on_line(lines, ln)}
    # By design: what Semgrep cannot see (docs/semgrep.md), per fixture: a vendor #if/#elif chain
    # naming its own ROCm and NVIDIA macros (ROC702), a feature macro the file defines only under
    # a ROCm test (ROC705).
    found = {(ln, c) for ln, c in found if c not in BEYOND_SEMGREP.get(path.name, ())}
    assert sorted(found - {(f.line, f.code) for f in ours}) == []


# Fixtures whose negatives need a fact a regex over one file's text cannot hold (the built-in
# scanner learns it from the file's conditionals): the codes Semgrep may still report there.
BEYOND_SEMGREP = {
    "ROC702_vendor_chain_ok.cuh": ("ROC702",),  # cpp.vocabulary: a vendor chain's branches
    "ROC705_ok.cu": ("ROC705",),  # rules.cuda_versions: a term false on ROCm whatever the arch
}


def _ptx_on_line(lines, line):
    """Does the asm statement starting on ``line`` hold a PTX instruction (the built-in's test)?"""
    from rocm_lint.cpp.asm import ptx_instruction

    text = "\n".join(lines[line - 1 : line + 3])
    return any(ptx_instruction(literal) for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', text))


def test_crlf_files_give_the_same_findings(semgrep_findings, tmp_path):
    """Windows line endings (ROCm/apex has CRLF sources) change no region and no finding."""
    copies = {}
    for path in fixture_files():
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        copies[copy.resolve()] = path.resolve()
    crlf = run_semgrep(list(copies))
    assert {copies[p]: lines for p, lines in crlf.items()} == {
        p: semgrep_findings[p] for p in copies.values() if p in semgrep_findings
    }


def test_parity_is_not_vacuous(semgrep_findings):
    """The shared fixtures give Semgrep real work: most rules find something there."""
    codes = {c for p in shared_files() for _, c in semgrep_findings.get(p.resolve(), set())}
    assert len(codes) >= 11, sorted(codes)


# -- the safe fixes (ROC702, ROC703) -----------------------------------------------------------------------
FIXABLE = [
    SEMGREP_FIXTURES / "ROC702.cu",
    SEMGREP_FIXTURES / "ROC703.cu",
    FIXTURES / "fixes" / "cuda_headers.cu",
    FIXTURES / "fixes" / "cuda_version_guard.cu",
]


def semgrep_json(files, *options, cwd=None):
    proc = subprocess.run(
        [
            *semgrep_command(),
            "scan",
            "--config",
            str(RULES),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--scan-unknown-extensions",
            *options,
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["results"]


@pytest.fixture(scope="module")
def semgrep_fixed(tmp_path_factory):
    """{fixture: (original text, text after `semgrep --autofix`)}, one Semgrep run for all."""
    tmp = tmp_path_factory.mktemp("semgrep-autofix")
    copies = {}
    for path in FIXABLE:
        copy = tmp / f"{path.parent.name}-{path.name}"
        shutil.copy(path, copy)
        copies[path] = copy
    semgrep_json(copies.values(), "--autofix")
    return {path: (path.read_text("utf-8"), copy.read_text("utf-8")) for path, copy in copies.items()}


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.name)
def test_semgrep_fixes_keep_the_nvidia_program(path, semgrep_fixed, tmp_path):
    before, after = semgrep_fixed[path]
    assert after != before, "nothing was fixed"
    assert same_on_nvidia(before, after)
    assert translation_unit(before, tmp_path, "before") == translation_unit(after, tmp_path, "after")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no CUDA toolkit here")
@pytest.mark.parametrize(
    "path", [p for p in FIXABLE if "__global__" in p.read_text("utf-8")], ids=lambda p: p.name
)
def test_semgrep_fixes_keep_nvcc_ptx_identical(path, semgrep_fixed, tmp_path):
    before, after = semgrep_fixed[path]
    assert nvcc_ptx(before, tmp_path, "before") == nvcc_ptx(after, tmp_path, "after")


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.name)
def test_semgrep_fixes_give_rocm_what_the_builtin_fixes_give(path, semgrep_fixed, tmp_path):
    """The ROCm build gets the same program from both (ROC703 fixes keep it as it was, ROC702
    fixes include the HIP header from the built-in scanner's table). Semgrep does not read
    rocm-lint's suppression comments, so the built-in scanner fixes the file without them."""
    before, after = semgrep_fixed[path]
    unsuppressed = SUPPRESSED_COMMENT.sub("", before)
    findings = check_source(str(path), unsuppressed, Config())
    builtin_fixed = apply_text_fixes(str(path), unsuppressed, findings, "cuda").text
    assert builtin_fixed != unsuppressed

    def rocm(text, name):
        return translation_unit(text, tmp_path, name, defines=ROCM_DEFINES)

    assert rocm(after, "semgrep") == rocm(builtin_fixed, "builtin")


def test_semgrep_fixes_are_final(semgrep_fixed, tmp_path):
    """A second run finds nothing left to fix, and the built-in scanner agrees: no line Semgrep
    had a fix for is still a ROC702/ROC703 finding after the fix (it may have moved: a ROC702 fix
    puts the original include in the `#else`)."""
    copies = []
    for path, (_, after) in semgrep_fixed.items():
        copies.append(tmp_path / f"{path.parent.name}-{path.name}")
        copies[-1].write_text(after)
    assert [r["start"]["line"] for r in semgrep_json(copies) if r["extra"].get("fix")] == []
    text_of = {p.resolve(): p.read_text("utf-8").splitlines() for p in FIXABLE}
    had_fix = {
        (Path(r["path"]).resolve(), text_of[Path(r["path"]).resolve()][r["start"]["line"] - 1].strip())
        for r in semgrep_json(FIXABLE)
        if r["extra"].get("fix")
    }
    assert len(had_fix) >= 8
    for path, (before, after) in semgrep_fixed.items():
        lines = after.splitlines()
        remaining = [
            (f.code, lines[f.line - 1].strip())
            for f in check_source(str(path), after, Config())
            if f.code in ("ROC702", "ROC703")
        ]
        assert [r for r in remaining if (path.resolve(), r[1]) in had_fix] == []


def test_no_ifdef_fix_where_the_file_tests_use_rocm_by_value(tmp_path):
    """A project that tests `#if USE_ROCM` may build for NVIDIA with `-DUSE_ROCM=0`: there the
    fixes' `#ifdef USE_ROCM` is true and the NVIDIA build would include the HIP header (or take
    the ROCm side of a version test). Semgrep's fix is one template and cannot follow the file's
    style, so such files get the findings without a fix."""
    prefix = "#if USE_ROCM\n#define ON_ROCM 1\n#endif\n"
    by_value, defined = [], []
    for path in FIXABLE:
        for out, head in ((by_value, prefix), (defined, prefix.replace("#if USE_ROCM", "#ifdef USE_ROCM"))):
            out.append(tmp_path / f"{len(out)}-{'value' if out is by_value else 'defined'}-{path.name}")
            out[-1].write_text(head + path.read_text("utf-8"))
    shutil.copy(SEMGREP_FIXTURES / "by_value.cu", tmp_path / "by_value.cu")
    by_value.append(tmp_path / "by_value.cu")
    found = semgrep_json(by_value)
    assert {r["extra"]["metadata"]["rocm-lint-code"] for r in found} >= {"ROC702", "ROC703"}
    assert [(r["path"], r["start"]["line"]) for r in found if r["extra"].get("fix")] == []

    # The same lines have a fix where the file tests the macro with #ifdef ...
    def key(r):
        return (
            Path(r["path"]).name.split("-", 2)[2],
            r["start"]["line"],
            r["extra"]["metadata"]["rocm-lint-code"],
        )

    with_fix = {key(r): r for r in semgrep_json(defined) if r["extra"].get("fix")}
    value_keys = {key(r) for r in found if "-value-" in r["path"]}
    assert len(with_fix) >= 8 and set(with_fix) <= value_keys
    # ... and that fix would change the NVIDIA build of the by-value file (-DUSE_ROCM=0).
    nvidia0 = (*NVIDIA_DEFINES, "-DUSE_ROCM=0")
    semgrep_json(defined, "--autofix")
    changed = []
    for d, v in zip(defined, by_value):
        before = v.read_text("utf-8")
        fixed_as_ifdef = d.read_text("utf-8").replace(
            prefix.replace("#if USE_ROCM", "#ifdef USE_ROCM"), prefix, 1
        )
        assert fixed_as_ifdef != before
        if translation_unit(before, tmp_path, "before", defines=nvidia0) != translation_unit(
            fixed_as_ifdef, tmp_path, "after", defines=nvidia0
        ):
            changed.append(v.name.split("-", 2)[2])
    assert {"ROC702.cu", "cuda_headers.cu"} <= set(changed)  # the HIP headers (ROC703's macros print nothing)
    # --autofix leaves the by-value files as they are.
    texts = [p.read_text("utf-8") for p in by_value]
    semgrep_json(by_value, "--autofix")
    assert [p.read_text("utf-8") for p in by_value] == texts


def test_roc702_fixes_follow_the_builtin_header_table(tmp_path):
    headers = sorted(CUDA_HEADERS) + ["cub/block/block_reduce.cuh", "nvtx3/nvToolsExt3.h"]
    (tmp_path / "headers.cu").write_text("".join(f"#include <{h}>\n" for h in headers))
    results = semgrep_json(["headers.cu"], cwd=tmp_path)
    assert {r["extra"]["metadata"]["rocm-lint-code"] for r in results} == {"ROC702"}
    fixes = {r["start"]["line"]: r["extra"].get("fix") for r in results}
    expected = {}
    for line, header in enumerate(headers, start=1):
        hip = CUDA_HEADERS.get(header, "hipcub/hipcub.hpp" if header.startswith("cub/") else None)
        expected[line] = hip and f"#ifdef USE_ROCM\n#include <{hip}>\n#else\n#include <{header}>\n#endif"
    assert fixes == expected


# -- Semgrep's limits on CUDA, as verified on the pinned version ---------------------------------------
def test_directories_and_named_files_are_scanned_python_is_not(tmp_path):
    """Generic rules limited to C/C++/CUDA names: Semgrep scans `.cu` files in a directory and named
    ones without --scan-unknown-extensions (a `languages: [cpp]` rule skipped both), and never a
    Python file that holds the same text."""
    shutil.copy(SEMGREP_FIXTURES / "ROC701.cu", tmp_path / "k.cu")
    shutil.copy(SEMGREP_FIXTURES / "ROC701.cu", tmp_path / "k.py")
    base = [
        *semgrep_command(),
        "scan",
        "--config",
        str(RULES),
        "--json",
        "--metrics=off",
        "--disable-version-check",
    ]

    def run(args):
        return json.loads(
            subprocess.run(base + args, capture_output=True, text=True, timeout=300, cwd=tmp_path).stdout
        )

    for args in (["."], ["k.cu"], ["--scan-unknown-extensions", "k.cu"]):
        data = run(args)
        assert {r["path"] for r in data["results"]} == {"k.cu"}, args
        assert len(data["results"]) == 2 and data["errors"] == [], args
    assert run(["k.py"])["results"] == []


def test_no_parse_errors_on_cuda(semgrep_findings):
    """No rule parses C++ (every one is `generic`): Semgrep reports no PartialParsing on CUDA files,
    where `languages: [cpp]` rules gave one per file with `__global__` or `<<<...>>>`."""
    files = fixture_files() + shared_files()
    proc = subprocess.run(
        [
            *semgrep_command(),
            "scan",
            "--config",
            str(RULES),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    data = json.loads(proc.stdout)
    assert data["errors"] == []
    assert len(data["paths"]["scanned"]) == len(
        [f for f in files if f.suffix != ".py"]
    )  # (ROC701's .py: never)


def test_semgrep_test_passes():
    """`semgrep --test semgrep-rules/` (the annotated files of tests/rocm-lint/, exact rule ids)."""
    proc = subprocess.run(
        [*semgrep_command(), "--test", "--metrics=off", "--disable-version-check", str(SEMGREP_DIR)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "0/0" not in proc.stdout and "passed" in proc.stdout.lower(), proc.stdout[-2000:]


# -- the pre-commit hook wrapper -------------------------------------------------------------------------
def test_wrapper_picks_cpp_files(tmp_path, capsys):
    from rocm_lint.semgrep import cpp_files, main

    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\n")
    (tmp_path / "host.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "dev.cpp").write_text("__global__ void k() {}\n")
    (tmp_path / "a.py").write_text("import torch\n")
    names = [str(tmp_path / n) for n in ("k.cu", "host.cpp", "dev.cpp", "a.py")]
    assert cpp_files(names) == [names[0], names[2]]
    assert main([names[1], names[3]]) == 0  # nothing for Semgrep: not even started
    assert main([names[0]]) == 1  # a finding: --error
    assert main(["--autofix", names[0]]) == 1  # options go to Semgrep: the hook's `args: [--autofix]`
    assert (tmp_path / "k.cu").read_text() == (
        "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime.h>\n#endif\n"
    )
    assert main([names[0]]) == 0


WRAPPER = (
    "import sys; from rocm_lint.semgrep import main; sys.argv[0] = 'rocm-lint-semgrep'; sys.exit(main())"
)


def run_wrapper(*args, cwd, src=ROOT / "src"):
    """`rocm-lint-semgrep` in a subprocess, with rocm_lint imported from ``src``."""
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run(
        [sys.executable, "-c", WRAPPER, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_wrapper_help():
    proc = run_wrapper("--help", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: rocm-lint-semgrep") and "--exit-zero" in proc.stdout
    assert "--autofix" in proc.stdout and "exit status" in proc.stdout


def test_wrapper_scans_the_current_directory_by_default(tmp_path):
    (tmp_path / "src").mkdir()
    shutil.copy(SEMGREP_FIXTURES / "ROC602.cu", tmp_path / "src" / "k.cu")
    proc = run_wrapper(cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # findings fail, like `rocm-lint check`
    assert "rocm-lint.ROC602" in proc.stdout and "k.cu" in proc.stdout
    assert run_wrapper("--exit-zero", cwd=tmp_path).returncode == 0
    (tmp_path / "src" / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    assert run_wrapper(cwd=tmp_path).returncode == 0


def test_wrapper_passes_option_values_to_semgrep(tmp_path):
    """`--output FILE` and `-j N` keep their values: neither becomes a path to scan."""
    shutil.copy(SEMGREP_FIXTURES / "ROC702.cu", tmp_path / "k.cu")
    (tmp_path / "4").write_text("__global__ void k() { __nanosleep(10); }\n")  # a value named like a file
    proc = run_wrapper("--sarif", "--output", "out.sarif", "-j", "4", "k.cu", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    results = json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"k.cu"}
    assert not (tmp_path / "4.sarif").exists()
    # `--` ends the options: a file named like an option is a file.
    shutil.copy(SEMGREP_FIXTURES / "ROC702.cu", tmp_path / "--json.cu")
    proc = run_wrapper("--json", "--", "--json.cu", cwd=tmp_path)
    assert {r["path"] for r in json.loads(proc.stdout)["results"]} == {"--json.cu"}


def sarif_rule_ids(proc, path):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    run = json.loads(Path(path).read_text())["runs"][0]
    return sorted({r["ruleId"] for r in run["results"]}), sorted(
        r["id"] for r in run["tool"]["driver"]["rules"]
    )


def test_rule_ids_do_not_depend_on_where_rules_and_semgrep_are(tmp_path):
    """SARIF ruleIds are the ids of the rules file wherever the package is installed and wherever
    Semgrep runs: GitHub code scanning tracks alerts by ruleId. (Semgrep's default prefixes each
    id with the rules file's directory relative to the working directory, such as
    `tmp.venv.lib.python3.12.site-packages.rocm_lint.semgrep.rocm-lint.ROC602`.)"""
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    for name in ("ROC602.cu", "ROC702.cu"):
        shutil.copy(SEMGREP_FIXTURES / name, project / "kernels" / name)
    site = tmp_path / "venv" / "lib" / "site-packages"  # an installed copy of the package
    shutil.copytree(
        ROOT / "src" / "rocm_lint", site / "rocm_lint", ignore=shutil.ignore_patterns("__pycache__")
    )
    seen = [
        sarif_rule_ids(
            run_wrapper("--sarif", "--output", tmp_path / "a.sarif", "kernels", cwd=project),
            tmp_path / "a.sarif",
        ),
        sarif_rule_ids(
            run_wrapper("--sarif", "--output", tmp_path / "b.sarif", ".", cwd=project / "kernels"),
            tmp_path / "b.sarif",
        ),
        sarif_rule_ids(
            run_wrapper("--sarif", "--output", tmp_path / "c.sarif", "kernels", cwd=project, src=site),
            tmp_path / "c.sarif",
        ),
        sarif_rule_ids(
            run_wrapper("--sarif", "--output", tmp_path / "d.sarif", project, cwd=site, src=site),
            tmp_path / "d.sarif",
        ),
    ]
    assert seen[0][0] and "rocm-lint.ROC602" in seen[0][0] and "rocm-lint.ROC702-hip-runtime" in seen[0][0]
    assert all(s == seen[0] for s in seen), seen
    assert all(i.startswith("rocm-lint.ROC") for i in seen[0][1])
    # Why the wrapper passes --no-rewrite-rule-ids: Semgrep's own default from the same places.
    plain = subprocess.run(
        [
            *semgrep_command(),
            "scan",
            "--config",
            str(site / "rocm_lint/semgrep/rocm-lint.yaml"),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--scan-unknown-extensions",
            "kernels/ROC602.cu",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (plain_id,) = {r["check_id"] for r in json.loads(plain.stdout)["results"]}
    assert plain_id.endswith(".venv.lib.site-packages.rocm_lint.semgrep.rocm-lint.ROC602"), plain_id


@pytest.mark.parametrize(
    "page", [ROOT / "docs" / "semgrep.md", SEMGREP_DIR / "README.md"], ids=lambda p: p.name
)
def test_documented_ci_command_fails_on_findings(page, tmp_path):
    """The `semgrep scan` command the docs give for CI exits 1 on findings (it lacked `--error`
    and passed) and reports the rules file's ids."""
    block = re.search(r"```sh\n(semgrep scan [^`]*?)```", page.read_text("utf-8")).group(1)
    words = block.replace("\\\n", " ").split()
    words = [w.replace("semgrep-rules/rocm-lint.yaml", str(RULES)) for w in words[2 : words.index("$(git")]]
    shutil.copy(SEMGREP_FIXTURES / "ROC602.cu", tmp_path / "k.cu")
    proc = subprocess.run(
        [*semgrep_command(), "scan", *words, "--json", "k.cu"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert {r["check_id"] for r in json.loads(proc.stdout)["results"]} == {"rocm-lint.ROC602"}


# -- the pre-commit hook, through the real pre-commit ------------------------------------------------------
def test_precommit_hook(tmp_path_factory):
    pytest.importorskip("pre_commit")
    from test_precommit import _env, _git, hook_repository

    tmp = tmp_path_factory.mktemp("semgrep-hook")
    env = _env(tmp)
    hooks = hook_repository(tmp, env)
    project = tmp / "project"
    project.mkdir()
    shutil.copy(SEMGREP_FIXTURES / "ROC702.cu", project / "kernel.cu")
    (project / "ok.cu").write_text(
        "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1.f; }\n"
    )
    (project / "train.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    _git("init", "--quiet", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)

    def run(*files):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pre_commit",
                "try-repo",
                str(hooks),
                "rocm-lint-semgrep",
                "--color",
                "never",
                "--files",
                *files,
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    failed = run("kernel.cu", "train.py")
    out = failed.stdout + failed.stderr
    assert failed.returncode == 1, out
    assert "rocm-lint.ROC702" in out and "kernel.cu" in out
    assert "train.py" not in out.split("hook id: rocm-lint-semgrep", 1)[-1]  # Python is not Semgrep's
    passed = run("ok.cu", "train.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
