"""`rocm-lint check --output-format html`: the porting report (rocm_lint/output/html.py).

The report is made by the real CLI, then opened in a real headless browser (Debian's chromium,
driven by Playwright; `make test` installs both): no console error, no request beyond the file
itself, charts drawn with a real size, the numbers on the page equal to `--output-format json`
on the same tree, and the filters working. Browserless tests check escaping and structure with
Python's HTML parser.
"""

import json
import os
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli
from rocm_lint.output import FORMATS
from rocm_lint.rule import DOCS_URL, FAMILIES

SAMPLE = FIXTURES / "sample-project"
SRC = {"PYTHONPATH": str(ROOT / "src")}  # the CLI runs from other directories
CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and os.path.exists(p)), None)


def cli(*args, cwd):
    return run_cli("check", *args, cwd=cwd, env=SRC)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """(the HTML report's path, the JSON findings) of the sample project, from the real CLI."""
    html_run = cli("--output-format", "html", ".", cwd=SAMPLE)
    json_run = cli("--output-format", "json", ".", cwd=SAMPLE)
    assert html_run.returncode == json_run.returncode == 1, html_run.stderr
    page = tmp_path_factory.mktemp("html") / "report.html"
    page.write_text(html_run.stdout, "utf-8")
    return page, json.loads(json_run.stdout)


class Parsed(HTMLParser):
    """Every start tag with its attributes, and the text of <script> elements."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._in_script, self.text = [], [], False, []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        self.text.append(data)

    def by_id(self, ident):
        return next(attrs for tag, attrs in self.tags if attrs.get("id") == ident)

    def all(self, tag, **match):
        return [
            a
            for t, a in self.tags
            if t == tag and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in match.items())
        ]


def expected_numbers(findings):
    fix = Counter(
        "manual" if not f["fix"] or f["fix"]["applicability"] == "display" else f["fix"]["applicability"]
        for f in findings
    )
    return {
        "total": len(findings),
        "families": dict(Counter(f["code"][:4] for f in findings)),
        "files": len({f["filename"] for f in findings}),
        "rules": len({f["code"] for f in findings}),
        "safe": fix["safe"],
        "unsafe": fix["unsafe"],
        "manual": fix["manual"],
    }


# -- browserless: structure, numbers, escaping ----------------------------------------------------------
def test_html_is_a_format():
    assert "html" in FORMATS
    assert "html" in cli("--help", cwd=ROOT).stdout


def test_report_structure_and_numbers(sample):
    page, findings = sample
    doc = Parsed(page.read_text("utf-8"))
    want = expected_numbers(findings)
    assert want["total"] >= 10 and len(want["families"]) >= 5  # the sample project gives real work

    def count(ident):
        return int(doc.by_id(ident)["data-count"])

    assert count("total-findings") == want["total"]
    assert count("total-files") == want["files"] and count("total-rules") == want["rules"]
    assert [count(f"total-{k}") for k in ("safe", "unsafe", "manual")] == [
        want[k] for k in ("safe", "unsafe", "manual")
    ]
    assert count("total-errors") == 0
    assert {a["data-family"]: int(a["data-count"]) for a in doc.all("tr", class_="family-row")} == want[
        "families"
    ]
    assert len(doc.all("li", class_="finding")) == want["total"]
    # every finding links its rule page; every family is named
    links = {a["href"] for a in doc.all("a", class_="code")}
    assert links == {DOCS_URL.format(code=f["code"]) for f in findings}
    text = "".join(doc.text)
    assert all(FAMILIES[fam] in text for fam in want["families"])
    # a code frame per finding, with the finding's line marked
    assert len(doc.all("table", class_="frame")) == want["total"]
    assert len(doc.all("tr", class_="hit")) >= want["total"]
    # self-contained: one inline script, inline style, no external resource, a CSP that forbids them
    assert len(doc.scripts) == 1 and not any(
        "src" in a for t, a in doc.tags if t in ("script", "img", "iframe")
    )
    assert not any(t == "link" for t, _ in doc.tags)
    csp = next(
        a["content"] for t, a in doc.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in csp
    assert not any(k.startswith("on") for _, a in doc.tags for k in a)  # no inline handlers


HOSTILE_PY = (
    "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True  # </script><script>alert(1)</script>\n"
)
HOSTILE_CU = (
    '#include <cuda_runtime.h> // "><img src=x onerror=alert(2)> &amp; \x1b[31m\n'
    "__global__ void k(unsigned* o) { unsigned m = __ballot_sync(0xffffffff, 1); o[0] = m; }\n"
)


def hostile_tree(root: Path):
    (root / "<script>alert(3)<").mkdir()
    (root / "<script>alert(3)<" / 'x"><img src=x onerror=alert(4)>.py').write_text(HOSTILE_PY)
    (root / "esc\x1b[2Jname\r.py").write_text(HOSTILE_PY)
    (root / "line\u2028sep.cu").write_text(HOSTILE_CU)
    os.mkdir(os.fsencode(root) + b"/caf\xe9")
    with open(os.fsencode(root) + b"/caf\xe9/k\xff.cu", "w") as out:
        out.write(HOSTILE_CU)
    (root / "blob.py").write_bytes(b"import torch\n" + b"\x00" * 64)  # a file that cannot be analysed


def test_hostile_names_and_code_are_escaped(tmp_path):
    hostile_tree(tmp_path)
    run = cli("--output-format", "html", ".", cwd=tmp_path)
    assert run.returncode == 2, run.stderr  # the binary file is an error
    text = run.stdout
    doc = Parsed(text)
    assert len(doc.scripts) == 1 and "alert" not in doc.scripts[0]
    assert not any(t in ("img", "iframe", "object", "embed") for t, _ in doc.tags)
    assert not any(k.startswith("on") for _, a in doc.tags for k in a)
    assert sum(t == "script" for t, _ in doc.tags) == 1
    assert not any(c in text for c in "\x1b\r\u2028\x00")
    shown = "".join(doc.text)
    assert '<script>alert(3)</x"><img src=x onerror=alert(4)>.py' in shown
    assert "esc\\x1b[2Jname\\r.py" in shown and "line\\u2028sep.cu" in shown
    assert "caf\\xe9/k\\xff.cu" in shown
    assert "</script><script>alert(1)</script>" in shown  # the code frame shows the code as text
    assert '"><img src=x onerror=alert(2)> &amp; \\x1b[31m' in shown
    assert int(doc.by_id("total-errors")["data-count"]) == 1
    assert len(doc.all("li", class_="file-error")) == 1


def test_empty_report(tmp_path):
    (tmp_path / "ok.py").write_text("print('hello')\n")
    run = cli("--output-format", "html", ".", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = Parsed(run.stdout)
    assert int(doc.by_id("total-findings")["data-count"]) == 0
    assert "No findings." in "".join(doc.text)


# -- in a real browser ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no chromium here (make test installs Debian's chromium with apt-get where it can)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, path: Path):
    page = browser.new_page()
    problems, requests, dialogs = [], [], []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems, requests, dialogs


@pytest.mark.integration  # a real external tool or torch itself: --all-tiers
def test_report_in_a_browser(browser, sample):
    path, findings = sample
    want = expected_numbers(findings)
    page, problems, requests, dialogs = open_page(browser, path)
    # the charts are drawn, with a real size
    for chart in ("family-chart", "directory-chart", "fix-chart"):
        box = page.locator(f"#{chart}").bounding_box()
        assert box and box["width"] > 100 and box["height"] > 10, chart
        sizes = page.eval_on_selector_all(
            f"#{chart} rect",
            "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; })",
        )
        assert sizes and all(w > 0 and h > 0 for w, h in sizes), (chart, sizes)
    bars = page.eval_on_selector_all(
        "#family-chart g.bar", "gs => gs.map(g => [g.dataset.key, +g.dataset.count])"
    )
    assert dict(bars) == want["families"]
    assert len(bars) == len(page.query_selector_all("#family-chart rect"))

    # the numbers a person reads equal the JSON output's
    def number(sel):
        return int(page.locator(sel).inner_text().split()[0])

    assert number("#total-findings b") == want["total"]
    assert [number(f"#total-{k} b") for k in ("safe", "unsafe", "manual")] == [
        want[k] for k in ("safe", "unsafe", "manual")
    ]
    rows = page.eval_on_selector_all(
        "#family-table tr.family-row", "trs => trs.map(tr => [tr.cells[0].innerText, +tr.cells[2].innerText])"
    )
    assert dict(rows) == want["families"]
    dirs = page.eval_on_selector_all("#directory-chart g.bar", "gs => gs.map(g => +g.dataset.count)")
    assert sum(dirs) == want["total"]
    assert page.locator("li.finding:visible").count() == want["total"]
    # the filters: one family off, then only the family of a clicked bar, then everything again
    family = max(want["families"], key=want["families"].get)
    page.locator(f'#filters input[data-group="family"][value="{family}"]').uncheck()
    assert page.locator("li.finding:visible").count() == want["total"] - want["families"][family]
    assert int(page.locator("#shown").inner_text()) == want["total"] - want["families"][family]
    page.locator(f'#family-chart g.bar[data-key="{family}"] rect').click()
    assert page.locator("li.finding:visible").count() == want["families"][family]
    page.locator('#filters input[data-group="fix"][value="manual"]').uncheck()
    left = sum(
        1 for f in findings if f["code"][:4] == family and f["fix"] and f["fix"]["applicability"] != "display"
    )
    assert page.locator("li.finding:visible").count() == left
    page.locator("#show-all").click()
    assert page.locator("li.finding:visible").count() == want["total"]
    assert problems == [] and dialogs == []
    assert requests == [path.as_uri()]  # nothing from the network, nothing else at all


def test_hostile_report_in_a_browser(browser, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    hostile_tree(project)
    run = cli("--output-format", "html", ".", cwd=project)
    page_file = tmp_path / "report.html"
    page_file.write_text(run.stdout, "utf-8")
    page, problems, requests, dialogs = open_page(browser, page_file)
    assert dialogs == [] and problems == [] and requests == [page_file.as_uri()]
    assert page.locator("img").count() == 0 and page.locator("script").count() == 1
    names = page.eval_on_selector_all("details.file > summary", "ss => ss.map(s => s.innerText)")
    assert any('x"><img src=x onerror=alert(4)>.py' in n for n in names), names
    assert page.locator("#errors li.file-error").count() == 1
    assert page.locator("li.finding:visible").count() == int(
        page.locator("#total-findings").get_attribute("data-count")
    )


# -- issue #29 item 8: what was scanned, every directory, family colours, the ROCm/NVIDIA split ---------
from test_build_context import CMAKE_SPLIT, KERNEL  # noqa: E402 (the project the build tests use)

SHA = "0123456789abcdef0123456789abcdef01234567"


def split_project(root: Path) -> Path:
    """A repository whose CMake build compiles csrc/cuda only for NVIDIA; HEAD names a branch
    that lives in packed-refs (as after `git gc`)."""
    files = {
        "CMakeLists.txt": CMAKE_SPLIT,
        "csrc/cuda/k.cu": KERNEL,
        "csrc/common/k.cu": KERNEL,
        "csrc/common/deep/er/k2.cu": KERNEL,
        "tools/t.py": HOSTILE_PY.split("  #")[0] + "\n",
        ".git/HEAD": "ref: refs/heads/port\n",
        ".git/packed-refs": f"# pack-refs with: peeled fully-peeled sorted \n{SHA} refs/heads/port\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    return root


def tree_counts(doc):
    """{directory path: (findings, in NVIDIA-only sources)} of the report's directory tree."""
    return {
        a["data-path"]: (int(a["data-count"]), int(a["data-nvidia-only"]))
        for a in doc.all("details", class_="dir")
    }


def json_counts(findings, cwd: Path):
    """What the tree must say, computed from --output-format json: for each directory holding
    findings (and every directory above it), the findings under it and those in NVIDIA-only sources."""
    counts = Counter()
    nvidia = Counter()
    leaves = set()
    for f in findings:
        rel = os.path.relpath(f["filename"], cwd).replace(os.sep, "/")
        parts = rel.split("/")[:-1]
        leaves.add("/".join(parts) or ".")
        for i in range(len(parts) + 1):
            key = "/".join(parts[:i]) or "."
            counts[key] += 1
            nvidia[key] += f["nvidia_only_source"]
    return {k: (counts[k], nvidia[k]) for k in counts}, leaves


def assert_tree_equals_json(text, findings, cwd: Path):
    doc = Parsed(text)
    want, leaves = json_counts(findings, cwd)
    got = tree_counts(doc)
    # every node the tree shows has the JSON's counts (compacted chains are named by their last directory)
    for path, value in got.items():
        assert value == want[path], (path, value, want[path])
    assert got["."] == (len(findings), sum(f["nvidia_only_source"] for f in findings))
    # every directory with findings of its own is in the tree, with its files linked to their findings
    assert leaves <= set(got), sorted(leaves - set(got))
    listed = Counter()
    for a in doc.all("li", class_="dir-file"):
        listed["n"] += int(a["data-count"])
        listed["nvidia"] += int(a["data-nvidia-only"])
    assert (
        listed == Counter(n=len(findings), nvidia=sum(f["nvidia_only_source"] for f in findings)) - Counter()
    )
    anchors = {a["id"] for a in doc.all("details", class_="file")}
    tree_links = {a["href"][1:] for t, a in doc.tags if t == "a" and a.get("href", "").startswith("#file-")}
    assert tree_links == anchors
    # the totals of the ROCm-build / NVIDIA-only split
    nv = sum(f["nvidia_only_source"] for f in findings)
    assert int(doc.by_id("total-nvidia-only")["data-count"]) == nv
    assert int(doc.by_id("total-rocm")["data-count"]) == len(findings) - nv
    assert len(doc.all("li", class_="finding", data_source="nvidia-only")) == nv
    return doc


def test_directory_tree_counts_equal_the_json_on_the_sample_project(sample):
    page, findings = sample
    doc = assert_tree_equals_json(page.read_text("utf-8"), findings, SAMPLE)
    assert doc.by_id("scan-nvidia-only")["data-reported"] == "false"
    assert len(findings) and len({os.path.dirname(f["filename"]) for f in findings}) >= 3


def test_header_tree_and_split_on_a_project_with_nvidia_only_sources(tmp_path):
    root = split_project(tmp_path)
    args = ("--report-nvidia-only-sources", "--no-cache", ".")
    env = dict(SRC, SOURCE_DATE_EPOCH="1790000000")
    html_run = run_cli("check", "--output-format", "html", *args, cwd=root, env=env)
    json_run = run_cli("check", "--output-format", "json", *args, cwd=root, env=env)
    assert html_run.returncode == json_run.returncode == 1, html_run.stderr
    findings = json.loads(json_run.stdout)
    assert sorted(f["nvidia_only_source"] for f in findings) == [False, False, False, True]
    doc = assert_tree_equals_json(html_run.stdout, findings, root)
    dirs = tree_counts(doc)
    # csrc/common/deep/er holds findings only through one chain: shown as one entry, reachable
    assert dirs["csrc"] == (3, 1) and dirs["csrc/cuda"] == (1, 1) and dirs["csrc/common/deep/er"] == (1, 0)
    assert "deep/er/" in "".join(doc.text)
    # the header: paths, the commit from packed-refs, the branch, the date, version, files checked
    assert doc.by_id("scan-commit")["data-sha"] == SHA
    text = "".join(doc.text)
    assert "on branch port" in text and "2026-09-21" in text
    assert doc.by_id("scan-date")["data-epoch"] == "1790000000"
    assert int(doc.by_id("scan-files")["data-count"]) == int(
        html_run.stderr.split("(")[1].split(" checked")[0]
    )
    assert doc.by_id("scan-nvidia-only")["data-reported"] == "true"
    assert int(doc.by_id("scan-errors")["data-count"]) == 0
    # the filters offer the split
    assert {a["value"] for a in doc.all("input", data_group="source")} == {"rocm", "nvidia-only"}


def test_files_not_analysed_are_counted_by_reason(tmp_path):
    hostile_tree(tmp_path)
    (tmp_path / "broken.py").write_text(HOSTILE_PY + "def f(:\n")
    (tmp_path / "broken2.py").write_text(HOSTILE_PY + "class (:\n")
    run = cli("--output-format", "html", ".", cwd=tmp_path)
    doc = Parsed(run.stdout)
    assert int(doc.by_id("scan-errors")["data-count"]) == 3
    kinds = {a["data-count"] for a in doc.all("span", class_="error-kind")}
    assert kinds == {"2", "1"}
    text = "".join(doc.text)
    assert "syntax error: 2" in text and "binary file: 1" in text
    assert "not a git repository" in text or doc.by_id("scan-commit").get("data-sha")


def test_read_commit_from_the_files(tmp_path):
    """HEAD forms git writes: a branch in a loose ref, one in packed-refs, a detached HEAD, a
    worktree's `gitdir:` file with its `commondir`; hostile HEADs give no commit, never a read
    outside the git directory or a hang."""
    from rocm_lint.output.html_scan import read_commit

    repo = tmp_path / "repo"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / "sub" / "deeper").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").write_text(SHA + "\n")
    commit = read_commit(str(repo / "sub" / "deeper"))
    assert (commit.sha, commit.branch) == (SHA, "main")
    (repo / ".git" / "refs" / "heads" / "main").unlink()
    assert read_commit(str(repo)) is None  # an unborn branch
    (repo / ".git" / "packed-refs").write_text(f"{SHA} refs/heads/main\n^{'f' * 40}\n")
    assert read_commit(str(repo)).sha == SHA
    (repo / ".git" / "HEAD").write_text("b" * 40 + "\n")
    assert (read_commit(str(repo)).sha, read_commit(str(repo)).branch) == ("b" * 40, None)
    # a linked worktree: .git is a file naming its own git dir, refs live in the common dir
    wt_git = repo / ".git" / "worktrees" / "wt"
    wt_git.mkdir(parents=True)
    (wt_git / "HEAD").write_text("ref: refs/heads/main\n")
    (wt_git / "commondir").write_text("../..\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {wt_git}\n")
    assert read_commit(str(tmp_path / "wt")).sha == SHA
    # hostile: a ref that climbs out, a FIFO as HEAD, a huge HEAD
    (secret := tmp_path / "secret").write_text(SHA + "\n")
    (repo / ".git" / "HEAD").write_text("ref: refs/../../../secret\n")
    assert read_commit(str(repo)) is None
    (repo / ".git" / "HEAD").unlink()
    os.mkfifo(repo / ".git" / "HEAD")
    assert read_commit(str(repo)) is None
    (repo / ".git" / "HEAD").unlink()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n" * 10000)
    assert read_commit(str(repo)) is None
    assert secret.exists()


@pytest.mark.integration  # real git
def test_commit_equals_git_rev_parse(tmp_path):
    from rocm_lint.output.html_scan import read_commit

    git = shutil.which("git")
    if git is None:
        pytest.skip("no git here")
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )

    def run(*a, cwd=tmp_path / "r"):
        return subprocess.run(
            [git, *a], cwd=cwd, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    (tmp_path / "r").mkdir()
    run("init", "-q", "-b", "trunk")
    (tmp_path / "r" / "a.py").write_text("x = 1\n")
    run("add", "a.py")
    run("commit", "-qm", "one")
    assert read_commit(str(tmp_path / "r")).sha == run("rev-parse", "HEAD")
    assert read_commit(str(tmp_path / "r")).branch == "trunk"
    run("pack-refs", "--all")
    assert read_commit(str(tmp_path / "r")).sha == run("rev-parse", "HEAD")
    run("worktree", "add", "-q", "-b", "side", str(tmp_path / "w"))
    (tmp_path / "w" / "b.py").write_text("y = 2\n")
    run("add", "b.py", cwd=tmp_path / "w")
    run("commit", "-qm", "two", cwd=tmp_path / "w")
    commit = read_commit(str(tmp_path / "w"))
    assert (commit.sha, commit.branch) == (run("rev-parse", "HEAD", cwd=tmp_path / "w"), "side")
    run("checkout", "-q", "--detach", "HEAD~0")
    assert read_commit(str(tmp_path / "r")).branch is None


def _hue_and_contrast(colour):
    import colorsys

    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c):
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    def lum(rgb):
        return 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])

    def ratio(a, b):
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)

    def hexrgb(h):
        return tuple(int(h[i : i + 2], 16) / 255 for i in (1, 3, 5))

    from rocm_lint.output.html_assets import DARK_BACKGROUND, LIGHT_BACKGROUND

    hue, _, sat = colorsys.rgb_to_hls(r, g, b)
    return (
        hue * 360,
        sat,
        ratio(lum((r, g, b)), lum(hexrgb(LIGHT_BACKGROUND))),
        ratio(lum((r, g, b)), lum(hexrgb(DARK_BACKGROUND))),
    )


def test_family_colours_are_categorical_and_readable():
    """No family is green (green reads "good"), each bar has 3:1 contrast on both themes
    (WCAG 1.4.11), and no two families share a colour."""
    from rocm_lint.output.html_assets import FAMILY_COLOURS, STYLE

    assert set(FAMILY_COLOURS) == set(FAMILIES)
    assert len(set(FAMILY_COLOURS.values())) == len(FAMILY_COLOURS)
    for fam, colour in FAMILY_COLOURS.items():
        hue, sat, light, dark = _hue_and_contrast(colour)
        assert light >= 3 and dark >= 3, (fam, colour, light, dark)
        assert not (75 <= hue <= 165 and sat > 0.15), (fam, colour, hue)  # no green
        assert f".fam-{fam}{{fill:{colour}" in STYLE


@pytest.mark.integration  # a whole real tree, twice through the CLI
def test_real_tree_counts_equal_the_json(tmp_path):
    """ROCM_LINT_REPORT_TREE names a real checkout (e.g. vLLM's ROCm fork): the tree, totals and
    split of the report equal --output-format json on it, with --report-nvidia-only-sources."""
    tree = os.environ.get("ROCM_LINT_REPORT_TREE")
    if not tree or not os.path.isdir(tree):
        pytest.skip("set ROCM_LINT_REPORT_TREE to a real source tree")
    args = ("--report-nvidia-only-sources", "--exit-zero", "--cache-dir", str(tmp_path / "cache"), ".")
    html_run = run_cli("check", "--output-format", "html", *args, cwd=tree, env=SRC)
    json_run = run_cli("check", "--output-format", "json", *args, cwd=tree, env=SRC)
    findings = json.loads(json_run.stdout)
    doc = assert_tree_equals_json(html_run.stdout, findings, Path(tree))
    assert int(doc.by_id("total-findings")["data-count"]) == len(findings)
    assert {
        a["data-family"]: int(a["data-count"]) for a in doc.all("tr", class_="family-row")
    } == expected_numbers(findings)["families"]


@pytest.mark.integration  # a real browser
def test_directory_tree_in_a_browser(browser, tmp_path):
    """Without any script, the tree opens by click: a directory closed at first shows its
    subdirectories and files once opened; each family bar segment has a real size."""
    root = split_project(tmp_path / "project")
    run = run_cli(
        "check",
        "--output-format",
        "html",
        "--report-nvidia-only-sources",
        "--no-cache",
        ".",
        cwd=root,
        env=SRC,
    )
    page_file = tmp_path / "report.html"
    page_file.write_text(run.stdout, "utf-8")
    page, problems, requests, dialogs = open_page(browser, page_file)
    page.evaluate("() => document.querySelectorAll('script').forEach(s => s.remove())")
    common = page.locator('details.dir[data-path="csrc/common"]')
    deep = page.locator('details.dir[data-path="csrc/common/deep/er"]')
    assert page.locator('details.dir[data-path="csrc"]').get_attribute("open") is not None
    assert common.is_visible() and common.get_attribute("open") is None and not deep.is_visible()
    common.locator(":scope > summary").click()
    assert deep.is_visible()
    deep.locator(":scope > summary").click()
    link = deep.locator("li.dir-file a")
    assert link.inner_text() == "k2.cu"
    link.click()
    assert page.evaluate("() => location.hash") == link.get_attribute("href")
    widths = page.eval_on_selector_all(
        'details.dir[data-path="."] > summary .mix i', "els => els.map(e => e.getBoundingClientRect().width)"
    )
    assert len(widths) == 2 and all(w > 0 for w in widths)
    split = page.locator('details.dir[data-path="csrc"] > summary .split').inner_text()
    assert split.startswith("2 ROCm build") and split.endswith("1 NVIDIA-only")
    # the source filter keeps only the findings in NVIDIA-only sources
    page2, *_ = open_page(browser, page_file)
    page2.locator('#filters input[data-group="source"][value="rocm"]').uncheck()
    assert page2.locator("li.finding:visible").count() == 1
    assert problems == [] and dialogs == [] and requests == [page_file.as_uri()]


@pytest.mark.integration  # >1 s: a tree 1,200 directories deep
def test_directory_tree_deeper_than_pythons_stack():
    """A hostile tree deeper than Python's recursion limit, with findings at every level: the
    report's tree is built and drawn without recursion, every level reachable with its count."""
    import sys

    from rocm_lint.output.html_tree import render_tree

    depth = sys.getrecursionlimit() + 200
    rows = [
        ("/".join(["d"] * level + [f"f{level}.py"]), "ROC1", level % 2 == 0) for level in range(1, depth + 1)
    ]
    doc = Parsed(render_tree(rows, show_split=True))
    dirs = tree_counts(doc)
    assert len(dirs) == depth + 1
    assert dirs["."] == (depth, depth // 2) and depth % 2 == 0
    deepest = "/".join(["d"] * depth)
    assert dirs[deepest] == (1, 1) and dirs["d"] == (depth, depth // 2)
    assert len(doc.all("li", class_="dir-file")) == depth
