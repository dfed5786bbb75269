"""Docs never drift from the registry."""

import re

import pytest

from conftest import ROOT
from rocm_lint.docgen import render_all
from rocm_lint.registry import all_rules

SECTIONS = [
    "## What it does",
    "## Why is this bad on ROCm?",
    "## Example",
    "## Use instead",
    "## Fix safety",
    "## References",
]


def test_docs_rules_are_generated_from_registry():
    for name, text in render_all().items():
        path = ROOT / "docs" / "rules" / name
        assert path.is_file(), f"{path} missing: run `make docs`"
        assert path.read_text("utf-8") == text, f"{path} is stale: run `make docs`"


def test_no_orphan_pages():
    pages = {p.name for p in (ROOT / "docs" / "rules").glob("*.md")} - {"index.md"}
    assert pages == set(render_all())


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_has_every_section(rule):
    body = rule.body
    positions = [body.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions), [s for s, p in zip(SECTIONS, positions) if p < 0]
    assert positions == sorted(positions), "sections out of order"
    assert re.search(r"https://\S+", body.split("## References", 1)[1]), "a public reference is required"


def test_readme_names_every_family():
    """The README describes the families; the catalogue itself lives in the registry (adding a
    rule touches no README row): `rocm-lint rules` and docs/rules/ list every rule."""
    readme = (ROOT / "README.md").read_text("utf-8")
    for family in {rule.family for rule in all_rules()}:
        assert family in readme
    assert "rocm-lint rules" in readme and "docs/rules/" in readme
