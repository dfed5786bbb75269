"""The rule unit is closed: what a rule has outside the linter is declared on its ``Rule`` and
held to the declaration here (fast tier; tests/test_semgrep.py runs Semgrep itself)."""

import ast

import yaml

from conftest import ROOT
from rocm_lint import runtime
from rocm_lint.registry import all_rules
from rocm_lint.semgrep import RULES


def _runtime_codes():
    """The codes ``rocm_lint.runtime.check()`` can report: ``_finding("ROCxxx", ...)`` and the
    codes of its settings tables."""
    tree = ast.parse((ROOT / "src" / "rocm_lint" / "runtime.py").read_text("utf-8"))
    codes = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "_finding"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    codes |= {code for _, code in runtime.UNSAFE_INDUCTOR_SETTINGS}
    return codes


def test_every_runtime_check_is_declared_on_its_rule():
    assert "ROC101" in _runtime_codes()  # the scan is not vacuous
    assert sorted(_runtime_codes()) == sorted(r.code for r in all_rules() if r.runtime)


def test_every_semgrep_twin_is_declared_on_its_rule():
    entries = yaml.safe_load(RULES.read_text("utf-8"))["rules"]
    in_yaml = {e["metadata"]["rocm-lint-code"] for e in entries}
    assert sorted(in_yaml) == sorted(r.code for r in all_rules() if r.has_semgrep_twin)
    assert {r.code for r in all_rules() if "cuda" in r.languages} >= in_yaml
