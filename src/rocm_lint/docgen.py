"""Render rule pages from the registry: ``rocm-lint rule CODE`` prints the same text
that ``python -m rocm_lint.docgen docs/rules`` writes to ``docs/rules/CODE.md``.

The header (name, summary, family, languages, fix) comes from the registry and the
body (What it does / Why is this bad on ROCm? / Example / Use instead / Fix safety /
References) from ``rocm_lint/docs/CODE.md``, so the two can never disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List

from rocm_lint.registry import all_rules
from rocm_lint.rule import FAMILIES, Rule

_FIX_WORDS = {
    "safe": "safe (`--fix`)",
    "unsafe": "unsafe (`--fix --unsafe-fixes`)",
    "display": "display only (no autofix)",
}


def render_rule(rule: Rule) -> str:
    fix = _FIX_WORDS.get(rule.fix.value, rule.fix.value) if rule.fix else "none"
    header = (
        f"# {rule.code}: {rule.name}\n\n"
        f"{rule.summary}.\n\n"
        f"| Family | Languages | Fix |\n|---|---|---|\n"
        f"| {rule.family} — {FAMILIES.get(rule.family, '')} | {', '.join(rule.languages)} | {fix} |\n\n"
    )
    return header + rule.body.lstrip()


def render_catalogue() -> str:
    """The table of every rule: appended to ``docs/rules/index.md`` when the site is built."""
    rows = ["| Code | Name | Fix | Summary |", "|---|---|---|---|"]
    for rule in all_rules():
        rows.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | "
            f"{rule.fix.value if rule.fix else '-'} | {rule.summary} |"
        )
    return "\n".join(rows) + "\n"


def rules_nav() -> List[Dict[str, object]]:
    """The docs site's nav under "Rules": the index, then each family with its rules."""
    nav: List[Dict[str, object]] = [{"All rules": "rules/index.md"}]
    families: Dict[str, List[Dict[str, str]]] = {}
    for rule in all_rules():
        families.setdefault(rule.family, []).append({f"{rule.code} {rule.name}": f"rules/{rule.code}.md"})
    for family, pages in families.items():
        nav.append({f"{family}: {FAMILIES.get(family, '')}": pages})
    return nav


def render_all() -> Dict[str, str]:
    """Every rule's page, by file name under ``docs/rules/`` (``make docs`` writes them; the
    pages are committed so that each rule's documentation URL resolves on GitHub)."""
    return {f"{r.code}.md": render_rule(r) for r in all_rules()}


def write_page(rule: Rule, out: Path) -> Path:
    """Write one rule's rendered page into ``out`` (the scaffolder's path)."""
    path = out / f"{rule.code}.md"
    path.write_text(render_rule(rule), encoding="utf-8")
    return path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "docs/rules")
    out.mkdir(parents=True, exist_ok=True)
    pages = render_all()
    for stale in out.glob("ROC*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
