"""The rules' index (``rocm_lint/rule_index.py``) the check reads instead of importing every family:
generated from the families, current, and giving the same checkers as the full catalogue."""

import subprocess
import sys

import pytest

from rocm_lint import registry, rule_index


def test_the_committed_index_is_current():
    # Stale (a family or rule.py edited): `python -m rocm_lint.registry --write-index` regenerates it.
    # A stale index is never used (see test_a_stale_index_is_not_used): this keeps the fast path.
    assert rule_index.FINGERPRINT == registry.fingerprint()
    assert [tuple(row) for row in rule_index.RULES] == [info.as_tuple() for info in registry.built_index()]
    assert registry.render_index() == open(rule_index.__file__, encoding="utf-8").read()


def test_the_index_answers_as_the_catalogue():
    rules = registry.all_rules()
    assert registry.all_codes() == tuple(r.code for r in rules)
    everything = frozenset(r.code for r in rules)
    assert registry.python_checkers(everything) == tuple(c for r in rules for c in r.python_checkers)
    assert registry.python_observers(everything) == tuple(c for r in rules for c in r.observers)
    for language in ("cuda", "shell", "dockerfile", "yaml", "dotenv", "cmake", "manifest", "python"):
        assert registry.source_checkers(language, everything) == tuple(
            c for r in rules for c in r.source_checkers if language in c.languages
        ), language
        assert registry.superseding_rules(language) == tuple(
            r
            for r in rules
            if r.supersedes is not None and any(language in c.languages for c in r.source_checkers)
        )
    for rule in rules:
        assert registry.get_rule(rule.code) is rule
        info = next(i for i in registry.rule_infos() if i.code == rule.code)
        assert (info.languages, info.triggers, info.precheck) == (
            rule.languages,
            rule.triggers,
            rule.precheck,
        )


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.integration  # subprocesses
def test_a_check_imports_only_the_families_it_runs(tmp_path):
    """A Python file holding one rule's trigger imports that rule's family and the families
    whose facts the project pre-pass collects, no C++ family; a file with no trigger word of any
    rule (a Dockerfile without one) imports no family."""
    py = tmp_path / "train.py"
    py.write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    docker = tmp_path / "Dockerfile"
    docker.write_text("FROM ubuntu:22.04\nRUN echo hello\n")
    out = _run(
        "import sys\n"
        "from rocm_lint.cli import main\n"
        f"main(['check', '--quiet', '--exit-zero', '--no-cache', {str(docker)!r}])\n"
        "print(sorted(m for m in sys.modules if m.startswith('rocm_lint.rules.')))\n"
        f"main(['check', '--quiet', '--exit-zero', '--no-cache', {str(py)!r}])\n"
        "print(sorted(m for m in sys.modules if m.startswith('rocm_lint.rules.')))\n"
    )
    none, python = out.splitlines()[0], out.splitlines()[-1]
    assert none == "[]", out
    assert "rocm_lint.rules.backends" in python  # ROC101's family, which fired
    assert "rocm_lint.rules.lane_masks" not in python and "rocm_lint.rules.inductor" not in python, python


def test_a_stale_index_is_not_used(monkeypatch):
    """Another checksum (the families edited since the index was written): the index is built
    from the imported families, and answers the same."""
    fresh = [info.as_tuple() for info in registry.rule_infos()]
    monkeypatch.setattr(rule_index, "FINGERPRINT", "stale")
    registry._index.cache_clear()
    try:
        infos, generated = registry._index()
        assert not generated
        assert [info.as_tuple() for info in infos] == fresh
    finally:
        monkeypatch.undo()
        registry._index.cache_clear()
    assert registry._index()[1]


def _fingerprinted(node, assigned, imported) -> bool:
    """Is the value ``node`` written in the files the index's checksum covers (the family module,
    another family, ``rule.py``)?  A constant, a tuple of them, a name bound to one there."""
    import ast

    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(
            _fingerprinted(e.value if isinstance(e, ast.Starred) else e, assigned, imported)
            for e in node.elts
        )
    if isinstance(node, ast.BinOp):
        return _fingerprinted(node.left, assigned, imported) and _fingerprinted(
            node.right, assigned, imported
        )
    if isinstance(node, ast.Name):
        if node.id in assigned:
            return _fingerprinted(assigned.pop(node.id), assigned, imported)  # (popped: no cycle)
        return imported.get(node.id, "") == "rocm_lint.rule" or imported.get(node.id, "").startswith(
            "rocm_lint.rules."
        )
    return False


def test_what_the_index_holds_is_written_in_the_files_its_checksum_covers():
    """The checksum covers ``rules/*.py`` and ``rule.py``: a rule's triggers, precheck and languages
    must be written there (literals, or names bound to literals there), never computed from
    another module, or an edit of that module would leave a stale index that looks current."""
    import ast
    from pathlib import Path

    families = Path(registry.__file__).parent / "rules"
    bad = []
    for path in sorted(families.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assigned = {
            t.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        imported = {
            alias.asname or alias.name: node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Rule":
                for kw in node.keywords:
                    if kw.arg in ("triggers", "precheck", "languages") and not _fingerprinted(
                        kw.value, dict(assigned), imported
                    ):
                        bad.append(f"{path.name}:{kw.value.lineno} {kw.arg}")
    assert not bad


# Prechecks written literal-led for speed, with the plain form they stand for and the pieces that
# decide a match (a leading `\b`, or alternatives with no common literal, made the regex engine try
# every position of a file: 4.5, 3, 1.3, 1.1 and 0.5 ms on torch/_inductor/config.py).
_LITERAL_LED = {
    "ROC701": (
        r"\b(?:__)?asm(?:__)?\b|inline_asm_elementwise",
        ["asm", "__asm__", "__asm", "asm__", "inline_asm_elementwise"],
    ),
    "ROC404": (r"\b(?:nvidia-smi|nvcc|nsys|ncu|nvprof)\b", ["nvidia-smi", "nvcc", "nsys", "ncu", "nvprof"]),
    "ROC203": (
        r"cudagraph(?:s|_trees)\s*=(?!=)|[\"']triton\.cudagraph",
        ["cudagraphs =", "cudagraph_trees=", "'triton.cudagraph", '"triton.cudagraphs'],
    ),
    "ROC205": (r"memory_planning\s*=(?!=)|[\"']memory_planning", ["memory_planning =", "'memory_planning"]),
    "ROC107": (
        r"version\.cuda|torch\.version\s*,\s*[\"']cuda",
        ["version.cuda", "torch.version, 'cuda", 'torch.version,"cuda'],
    ),
}
_EDITS = "_a=' \".,-\nx1é"


def _near(example: str, rng) -> str:
    """``example`` with up to three characters inserted, removed or replaced, between neighbours."""
    text = list(example)
    for _ in range(rng.randint(0, 3)):
        at = rng.randint(0, len(text))
        kind = rng.randint(0, 2)
        if kind == 0:
            text.insert(at, rng.choice(_EDITS))
        elif text and at < len(text):
            if kind == 1:
                del text[at]
            else:
                text[at] = rng.choice(_EDITS)
    return (
        rng.choice(["", " ", "x", "_", "a", "\n", "."])
        + "".join(text)
        + rng.choice(["", " ", "x", "_", "=", "\n"])
    )


def test_literal_led_prechecks_match_the_same_texts_as_their_plain_forms():
    """A precheck only answers "could this file have a finding": the rewritten form must find a
    match exactly where the plain one does, on the fixtures and on near misses of each form it
    stands for (characters inserted, removed or replaced, word and non-word neighbours)."""
    import random
    import re

    from conftest import FIXTURES

    fixtures = [
        p.read_text(encoding="utf-8", errors="replace") for p in sorted(FIXTURES.rglob("*")) if p.is_file()
    ]
    rng = random.Random(28)
    for code, (plain, examples) in _LITERAL_LED.items():
        fast = re.compile(registry.get_rule(code).precheck)
        slow = re.compile(plain)
        assert fast.pattern != slow.pattern
        texts = fixtures + [_near(rng.choice(examples), rng) for _ in range(6000)]
        differ = [t for t in texts if bool(fast.search(t)) != bool(slow.search(t))]
        assert not differ, (code, differ[:5])
        matched = sum(bool(slow.search(t)) for t in texts)
        assert 500 < matched < len(texts) - 500, code  # near misses on both sides of the answer
