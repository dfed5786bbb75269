"""Scaffold a new rule: its module, its page and its fixtures, and nothing else.

    python scripts/new_rule.py ROC108 ungated-foo --summary "torch.cuda.foo() without a ROCm gate: \
        HIP has no foo" --call torch.cuda.foo --reference https://github.com/ROCm/...
    python scripts/new_rule.py ROC799 cuda-foo --language cuda --pattern "__foo_sync\\b" \
        --summary "__foo_sync has no HIP counterpart" --reference https://rocm.docs.amd.com/...

Writes ``src/rocm_lint/rules/<name>.py`` (a working rule: a Python rule flags ungated calls of
``--call``, a C++ rule flags ``--pattern`` in code outside comments, strings and NVIDIA-only
branches), ``src/rocm_lint/docs/CODE.md`` (the page, every section stubbed with what to write)
and its rendered copy ``docs/rules/CODE.md``, ``fixtures/rules/CODE.py``/``CODE_ok.py`` (``.cu``
for C++) with their snapshot.  The registry, the docs site, the CLI, flake8 and the language
server pick the rule up by themselves.  Then make the rule right for real code: see
docs/architecture.md, "How to add a rule".
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PY_MODULE = '''"""{code}: {summary}."""

from __future__ import annotations

import ast
from typing import Iterator

from rocm_lint.python.context import ModuleContext
from rocm_lint.rule import PyHit, Rule

{code} = Rule(
    "{code}", "{name}",
    "{summary}",
    triggers=({trigger!r},),
    messages={{"default": "`{{call}}()` without a ROCm gate: {message}; gate it with `if not is_rocm:`"}},
)


@{code}.checker(ast.Call)
def {func}(node: ast.Call, ctx: ModuleContext) -> Iterator[PyHit]:
    qual = ctx.qualname(node.func)
    if qual == {call!r}:
        yield PyHit(node, {code}.message(call=qual))
'''

CPP_MODULE = '''"""{code}: {summary}."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from rocm_lint.lazy import LazyPattern
from rocm_lint.rule import CPP_LANGUAGES, Hit, Rule

if TYPE_CHECKING:  # the C++ reader loads only when a C++ file is checked (tests/test_import_hygiene.py)
    from rocm_lint.cpp.scanner import CppUnit

{code} = Rule(
    "{code}", "{name}",
    "{summary}",
    triggers=({trigger!r},),
    languages=CPP_LANGUAGES,
    messages={{"default": "`{{text}}` outside an NVIDIA-only branch: {message}; keep it under `#ifndef USE_ROCM`"}},
    # No Semgrep twin yet: write its entries in semgrep-rules/rocm-lint.yaml (id rocm-lint.{code})
    # and annotated fixtures in semgrep-rules/tests/{code}.cu, then drop this line.
    semgrep=False,
)

_PATTERN = LazyPattern({pattern!r})  # compiled when a C++ file is first checked


@{code}.source_checker()
def {func}(unit: CppUnit) -> Iterator[Hit]:
    for m in _PATTERN.finditer(unit.code):  # comments and string contents are blanked in unit.code
        yield {code}.hit(m.start(), m.end(), {code}.message(text=m.group(0)))
'''

PAGE = """## What it does
Flags {what} where the code may run on ROCm (code under a ROCm gate stays silent).

## Why is this bad on ROCm?
{summary}. Say what happens on an AMD GPU (error, hang, wrong result) and cite the evidence [1].

## Example
```{lang}
{example}
```

## Use instead
```{lang}
{instead}
```

## Fix safety
No autofix yet.

## References
1. [{reference}]({reference})
"""


def _reason(summary: str) -> str:
    """What a finding's message says after the flagged code: the summary's why (after its colon)."""
    head, _, why = summary.partition(": ")
    return (why or head).strip()


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def scaffold(
    code: str,
    name: str,
    summary: str,
    language: str,
    reference: str,
    call: str = "",
    pattern: str = "",
    root: Path = ROOT,
) -> list:
    """Write the rule's module, page and fixtures under ``root``; return the paths written."""
    code = code.upper()
    if not re.fullmatch(r"ROC[1-9][0-9]{2}", code):
        raise SystemExit(f"{code}: a code is ROC followed by three digits (ROC108)")
    if not re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", name):
        raise SystemExit(f"{name}: a name is lower-case words joined by '-' (ungated-foo)")
    module = root / "src" / "rocm_lint" / "rules" / f"{_snake(name)}.py"
    page = root / "src" / "rocm_lint" / "docs" / f"{code}.md"
    for path in (module, page):
        if path.exists():
            raise SystemExit(f"{path} exists already")
    summary = summary.rstrip(".")
    func = _snake(name)
    fixtures = root / "fixtures" / "rules"
    if language == "python":
        if not re.fullmatch(r"[A-Za-z_][\w.]*\.[A-Za-z_]\w*", call or ""):
            raise SystemExit("--call: the dotted name of the function to flag (torch.cuda.foo)")
        module_dir, leaf = call.rsplit(".", 1)
        source = PY_MODULE.format(
            code=code,
            name=name,
            summary=summary,
            trigger=leaf,
            call=call,
            func=func,
            message=_reason(summary),
        )
        positive = (
            f"import {call.split('.')[0]}\n\n{call}()  # expect: {code}\n\n\n"
            f"def train():\n    {call}()  # expect: {code}\n"
        )
        negative = (
            f"import {call.split('.')[0]}\n\nif not {call.split('.')[0]}.version.hip:\n    {call}()\n\n"
            f"\ndef {leaf}():  # a function of the same name elsewhere is not {call}\n    pass\n\n\n"
            f"{leaf}()\n"
        )
        suffix, lang, example = ".py", "python", f"{call}()"
        instead = f"if not is_rocm:\n    {call}()"
        what = f"calls of `{call}()`"
    elif language == "cuda":
        if not pattern:
            raise SystemExit("--pattern: the regular expression of the C++ code to flag")
        regex = re.compile(pattern)
        literal = re.sub(r"\\[bBAZ]|[\^$]", "", pattern)
        sample = literal if regex.search(literal) else None
        if sample is None or not re.fullmatch(r"[\w:.]+", sample):
            raise SystemExit(
                "--pattern: use a pattern whose plain text is a C++ name it matches "
                "(__foo_sync\\b); edit the fixtures by hand for anything richer"
            )
        source = CPP_MODULE.format(
            code=code,
            name=name,
            summary=summary,
            trigger=sample,
            pattern=pattern,
            func=func,
            message=_reason(summary),
        )
        positive = (
            f"__global__ void kernel(int* out) {{\n  out[0] = {sample}(out[1]);  // expect: {code}\n}}\n"
        )
        negative = (
            f"// {sample} in a comment is not code\n__global__ void kernel(int* out) {{\n"
            f"#ifndef USE_ROCM\n  out[0] = {sample}(out[1]);\n#endif\n"
            f'  const char* s = "{sample}";\n}}\n'
        )
        suffix, lang, example = ".cu", "cpp", f"out[0] = {sample}(x);"
        instead = f"#ifndef USE_ROCM\nout[0] = {sample}(x);\n#else\nout[0] = /* the HIP way */;\n#endif"
        what = f"`{sample}` in CUDA C++"
    else:
        raise SystemExit("--language: python or cuda")
    written = []
    module.write_text(source, encoding="utf-8")
    page.write_text(
        PAGE.format(
            what=what, summary=summary, lang=lang, example=example, instead=instead, reference=reference
        ),
        encoding="utf-8",
    )
    written += [module, page]
    for path, text in ((fixtures / f"{code}{suffix}", positive), (fixtures / f"{code}_ok{suffix}", negative)):
        if path.exists():
            raise SystemExit(f"{path} exists already")
        path.write_text(text, encoding="utf-8")
        written.append(path)
    # The rendered page and the snapshot come from the rule itself, through the registry.
    sys.path.insert(0, str(root / "src"))
    from rocm_lint.docgen import write_page
    from rocm_lint.registry import get_rule

    rule = get_rule(code)
    if rule is None:
        raise SystemExit(f"the registry does not see {code}: is {module} importable?")
    written.append(write_page(rule, root / "docs" / "rules"))
    # The rules' index (what a check reads instead of importing every family), regenerated.
    from rocm_lint.registry import render_index

    index = root / "src" / "rocm_lint" / "rule_index.py"
    index.write_text(render_index(), encoding="utf-8")
    written.append(index)
    # The snapshot is written by the fixture harness itself (one format, one place).
    positive_fixture = fixtures / f"{code}{suffix}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_fixture_snapshots.py",
            "--update-snapshots",
            "-k",
            code,
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    snapshot = positive_fixture.with_name(positive_fixture.name + ".expected")
    if proc.returncode != 0 or not snapshot.is_file():
        raise SystemExit(f"the fixture harness failed on the new rule:\n{proc.stdout}{proc.stderr}")
    written.append(snapshot)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="ROC followed by three digits; the first digit is the family")
    parser.add_argument("name", help="lower-case words joined by '-'")
    parser.add_argument("--summary", required=True, help="one line: what it flags, why it breaks on ROCm")
    parser.add_argument("--language", choices=("python", "cuda"), default="python")
    parser.add_argument("--call", default="", help="Python: the dotted name of the call to flag")
    parser.add_argument("--pattern", default="", help="C++: the regular expression to flag")
    parser.add_argument("--reference", required=True, help="a public URL with the evidence")
    args = parser.parse_args(argv)
    for path in scaffold(
        args.code,
        args.name,
        args.summary,
        args.language,
        args.reference,
        call=args.call,
        pattern=args.pattern,
    ):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
