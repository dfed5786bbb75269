"""The documentation site: mkdocs.yml's nav matches the rule registry and the docs folder, and
`mkdocs build --strict` (broken links, missing or orphan pages are errors) succeeds."""

import subprocess
import sys

import pytest
from conftest import ROOT

from rocm_lint.registry import all_rules

yaml = pytest.importorskip("yaml")  # mkdocs depends on PyYAML
pytest.importorskip("mkdocs")

DOCS = ROOT / "docs"


def nav_files(node):
    """Every page path in a mkdocs nav (nested lists of {title: path-or-list} or bare paths)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from nav_files(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from nav_files(value)


@pytest.fixture(scope="module")
def nav():
    """The nav as the site is built: mkdocs.yml's, with the rules expanded by the docs hook."""
    import importlib.util

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    assert config["docs_dir"] == "docs"
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return list(nav_files(hooks.on_config(config)["nav"]))


def test_nav_has_a_page_for_every_rule(nav):
    rule_pages = {p for p in nav if p.startswith("rules/")}
    expected = {f"rules/{r.code}.md" for r in all_rules()} | {"rules/index.md"}
    assert sorted(expected - rule_pages) == [], "rules missing from mkdocs.yml's nav"
    assert sorted(rule_pages - expected) == [], "mkdocs.yml's nav lists rules the registry does not have"


def test_nav_and_docs_folder_agree(nav):
    assert len(nav) == len(set(nav)), "a page is listed twice"
    missing = [p for p in nav if not (DOCS / p).is_file()]
    assert missing == [], "nav entries with no file"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert sorted(pages - set(nav)) == [], "pages in docs/ that the nav does not reach"
    for page in (
        "index.md",
        "install.md",
        "usage.md",
        "configuration.md",
        "integrations.md",
        "editors.md",
        "fixes.md",
        "runtime.md",
        "benchmarks.md",
        "architecture.md",
    ):
        assert page in nav


def test_mkdocs_build_strict(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    for rule in all_rules():
        assert (site / "rules" / rule.code / "index.html").is_file(), rule.code
    assert (site / "editors" / "index.html").is_file()
