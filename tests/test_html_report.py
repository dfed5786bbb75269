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
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in match.items())]


def expected_numbers(findings):
    fix = Counter("manual" if not f["fix"] or f["fix"]["applicability"] == "display" else f["fix"]["applicability"]
                  for f in findings)
    return {"total": len(findings), "families": dict(Counter(f["code"][:4] for f in findings)),
            "files": len({f["filename"] for f in findings}), "rules": len({f["code"] for f in findings}),
            "safe": fix["safe"], "unsafe": fix["unsafe"], "manual": fix["manual"]}


# -- browserless: structure, numbers, escaping ----------------------------------------------------------
def test_html_is_a_format():
    assert "html" in FORMATS
    assert "html" in cli("--help", cwd=ROOT).stdout


def test_report_structure_and_numbers(sample):
    page, findings = sample
    doc = Parsed(page.read_text("utf-8"))
    want = expected_numbers(findings)
    assert want["total"] >= 10 and len(want["families"]) >= 5  # the sample project gives real work
    count = lambda ident: int(doc.by_id(ident)["data-count"])
    assert count("total-findings") == want["total"]
    assert count("total-files") == want["files"] and count("total-rules") == want["rules"]
    assert [count(f"total-{k}") for k in ("safe", "unsafe", "manual")] == [want[k] for k in ("safe", "unsafe", "manual")]
    assert count("total-errors") == 0
    assert {a["data-family"]: int(a["data-count"]) for a in doc.all("tr", class_="family-row")} == want["families"]
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
    assert len(doc.scripts) == 1 and not any("src" in a for t, a in doc.tags if t in ("script", "img", "iframe"))
    assert not any(t == "link" for t, _ in doc.tags)
    csp = next(a["content"] for t, a in doc.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    assert not any(k.startswith("on") for _, a in doc.tags for k in a)  # no inline handlers


HOSTILE_PY = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True  # </script><script>alert(1)</script>\n"
HOSTILE_CU = ('#include <cuda_runtime.h> // "><img src=x onerror=alert(2)> &amp; \x1b[31m\n'
              "__global__ void k(unsigned* o) { unsigned m = __ballot_sync(0xffffffff, 1); o[0] = m; }\n")


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
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
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
            f"#{chart} rect", "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; })")
        assert sizes and all(w > 0 and h > 0 for w, h in sizes), (chart, sizes)
    bars = page.eval_on_selector_all("#family-chart g.bar", "gs => gs.map(g => [g.dataset.key, +g.dataset.count])")
    assert dict(bars) == want["families"]
    assert len(bars) == len(page.query_selector_all("#family-chart rect"))
    # the numbers a person reads equal the JSON output's
    number = lambda sel: int(page.locator(sel).inner_text().split()[0])
    assert number("#total-findings b") == want["total"]
    assert [number(f"#total-{k} b") for k in ("safe", "unsafe", "manual")] == [want[k] for k in ("safe", "unsafe", "manual")]
    rows = page.eval_on_selector_all("#family-table tr.family-row",
                                     "trs => trs.map(tr => [tr.cells[0].innerText, +tr.cells[2].innerText])")
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
    left = sum(1 for f in findings if f["code"][:4] == family and f["fix"] and f["fix"]["applicability"] != "display")
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
    assert page.locator("li.finding:visible").count() == int(page.locator("#total-findings").get_attribute("data-count"))
