"""``# noqa`` exactly as flake8 reads it (and as ruff accepts it).

* ``# noqa`` on a line suppresses every finding on it; ``# noqa: ROC101,ROC2``
  suppresses those codes and prefixes (flake8 matches prefixes too).
* A noqa comment anywhere in a multi-line statement or string covers all of
  its lines (flake8's logical-line mapping).
* ``# flake8: noqa`` or ``# ruff: noqa`` on a line of its own skips the file;
  ``# ruff: noqa: ROC101`` skips those codes in the file.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from rocm_lint.lines import split_lines

# flake8/defaults.py: NOQA_INLINE_REGEXP
NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.I)
# (`^[^\S\n]*`, not `^\s*`: tried at every line start, `\s*` ran over all the blank lines below it.)
NOQA_FILE = re.compile(
    r"^[^\S\n]*# (?:flake8|ruff)[:=]\s*noqa(?P<codes>:\s?[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*)?\s*$",
    re.I | re.M,
)
_SPLIT = re.compile(r"[,\s]+")


def file_exemption(text: str) -> Tuple[bool, FrozenSet[str]]:
    """(skip whole file, codes exempted file-wide)."""
    codes: List[str] = []
    for m in NOQA_FILE.finditer(text):
        if m.group("codes") is None:
            return True, frozenset()
        else:
            codes.extend(c for c in _SPLIT.split(m.group("codes").lstrip(":").strip()) if c)
    return False, frozenset(c.upper() for c in codes)


def _logical_spans(text: str) -> List[Tuple[int, int]]:
    """flake8's FileProcessor._noqa_line_mapping: the (first, last) lines of each logical line
    (empty when ``text`` does not tokenize)."""
    n_lines = text.count("\n") + 1
    spans: List[Tuple[int, int]] = []
    lo, hi = n_lines + 2, -1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            lo = min(lo, tok.start[0])
            hi = max(hi, tok.end[0])
            if tok.type in (tokenize.NL, tokenize.NEWLINE):
                spans.append((lo, hi))
                lo, hi = n_lines + 2, -1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return spans


def noqa_spans(text: str) -> List[Tuple[int, int]]:
    """The (first, last) lines that one ``# noqa`` comment covers, as flake8 maps them: one physical
    line, or the lines a multi-line string or a backslash continuation joins (``--add-noqa``
    writes within them)."""
    return _logical_spans(text)


def _logical_line_mapping(text: str) -> Dict[int, str]:
    """Line -> text of its whole logical line, for the whole file."""
    lines = split_lines(text, keepends=True)
    mapping: Dict[int, str] = {}
    for lo, hi in _logical_spans(text):
        joined = "".join(lines[lo - 1 : hi])
        for n in range(lo, hi + 1):
            mapping[n] = joined
    return mapping


_BODIES = ("body", "orelse", "finalbody", "handlers")


def _start(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno  # type: ignore[attr-defined]


def _region(tree: ast.Module, line: int) -> Optional[Tuple[int, int]]:
    """Lines (first, last) around ``line`` that hold whole logical lines and can be tokenized on
    their own (a statement with the statements sharing its lines, or a compound statement's
    header up to its body), from the parsed tree; None when ``line`` is in no statement."""
    siblings: List[ast.AST] = tree.body
    region: Optional[Tuple[int, int]] = None
    while siblings:
        index = None
        for i, node in enumerate(siblings):
            if _start(node) <= line <= node.end_lineno:  # type: ignore[attr-defined]
                index = i
                break
        if index is None:
            return region
        node = siblings[index]
        first, last = _start(node), node.end_lineno  # type: ignore[attr-defined]
        i = index
        while i > 0 and siblings[i - 1].end_lineno == first:  # ``a = 1; b = (`` share lines
            i -= 1
            first = _start(siblings[i])
        j = index
        while j + 1 < len(siblings) and _start(siblings[j + 1]) == last:
            j += 1
            last = siblings[j].end_lineno  # type: ignore[attr-defined]
        if i != index or j != index or isinstance(node, ast.Match):
            return first, last
        children = [c for field in _BODIES for c in getattr(node, field, ()) or ()]
        if not children:
            return first, last
        top = min(_start(c) for c in children)
        if line < top:
            return first, max(first, top - 1)  # the header (and comment lines up to the body)
        if top <= first:  # ``if x: y`` - the body shares the header's line
            return first, last
        region = (line, line)  # in the body: a comment or ``else:`` line unless a child holds it
        siblings = sorted(children, key=_start)
    return region


def _region_mapping(lines: List[str], first: int, last: int) -> Optional[Dict[int, str]]:
    """flake8's mapping for lines ``first``..``last`` tokenized on their own (None: cannot)."""
    chunk = lines[first - 1 : last]
    if not chunk:
        return None
    spans = _logical_spans("".join([chunk[0].lstrip(" \t")] + chunk[1:]))  # tokenize wants no indent
    if not spans:
        return None
    mapping: Dict[int, str] = {}
    for lo, hi in spans:
        joined = "".join(chunk[lo - 1 : hi])
        for n in range(lo, hi + 1):
            mapping[n + first - 1] = joined
    return mapping


class NoqaIndex:
    """Answers "is this code suppressed on this line?" for one file.

    flake8 reads a noqa comment anywhere in a logical line.  With the parsed ``tree`` only the
    statements holding findings are tokenized (their lines tokenize on their own); without it,
    or where a region does not tokenize, the whole file is (as flake8 does)."""

    def __init__(self, text: str, tree: Optional[ast.Module] = None) -> None:
        self.text = text
        self.tree = tree
        self._mapping: Optional[Dict[int, str]] = None
        self._regions: Dict[int, str] = {}
        self._lines: Optional[List[str]] = None
        self._codes_of: Dict[int, Optional[Tuple[str, ...]]] = {}

    def _physical(self) -> List[str]:
        if self._lines is None:
            self._lines = split_lines(self.text, keepends=True)
        return self._lines

    def _line_text(self, line: int) -> str:
        if self._mapping is None and self.tree is not None:
            if line in self._regions:
                return self._regions[line]
            region = _region(self.tree, line)
            lines = self._physical()
            if region is None:
                return lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""
            mapping = _region_mapping(lines, *region)
            if mapping is not None and line in mapping:
                self._regions.update(mapping)
                return mapping[line]
        if self._mapping is None:
            self._mapping = _logical_line_mapping(self.text)
        if line in self._mapping:
            return self._mapping[line]
        lines = self._physical()
        return lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""

    def _codes(self, line: int) -> Optional[Tuple[str, ...]]:
        """The codes a line's noqa names (``()`` for a bare noqa; None without one), searched
        once per line (not once per finding: many findings on one long line were quadratic)."""
        if line not in self._codes_of:
            m = NOQA_INLINE.search(self._line_text(line))
            codes_str = None if m is None else m.group("codes")
            self._codes_of[line] = (
                None
                if m is None
                else ()
                if codes_str is None
                else tuple(c.strip().upper() for c in _SPLIT.split(codes_str) if c.strip())
            )
        return self._codes_of[line]

    def suppresses(self, line: int, code: str) -> bool:
        codes = self._codes(line)
        if codes is None:
            return False
        if not codes:
            return True
        return code in codes or code.startswith(codes)


def filter_findings(findings: Iterable, text: str, tree: Optional[ast.Module] = None) -> list:
    """Drop findings suppressed by noqa comments (the CLI path; flake8 does its own);
    ``tree``, the parsed module, limits tokenizing to the statements with findings."""
    findings = list(findings)
    if not findings or "noqa" not in text.lower():
        return findings
    skip_file, file_codes = file_exemption(text)
    if skip_file:
        return []
    index = NoqaIndex(text, tree)
    exempt = tuple(file_codes)
    return [
        f
        for f in findings
        if not (exempt and f.code.startswith(exempt)) and not index.suppresses(f.line, f.code)
    ]


# -- C++ and config files ------------------------------------------------------------------
# ``// rocm-lint: ignore[ROC601,ROC602]`` (any comment style; bare ``rocm-lint: ignore`` = all),
# clang-tidy's ``// NOLINT(ROC601)`` / ``// NOLINTNEXTLINE(ROC601)`` (bare = all), and
# ``noqa: ROC301`` after a hash in the hash-comment languages.  Codes may be prefixes (``ROC6``).
_IGNORE = re.compile(r"rocm-lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_NOLINT = re.compile(r"\bNOLINT(?P<next>NEXTLINE)?\b(?:\((?P<codes>[^)]*)\))?")
_COMMENT_MARKERS = ("rocm-lint", "NOLINT", "noqa")


def _codes_match(codes_str: Optional[str], code: str) -> bool:
    if codes_str is None:
        return True
    codes = tuple(c.strip().upper() for c in _SPLIT.split(codes_str) if c.strip())
    return code in codes or code.startswith(codes)


def filter_comment_findings(findings: Iterable, text: str, *, hash_comments: bool) -> list:
    """Drop findings suppressed on their line (or by a NOLINTNEXTLINE on the line above).

    Only the comment part of a line counts, so a string that happens to say NOLINT does not
    suppress: for C++ ``//``/``/*``, for shell, YAML, Dockerfile, .env and CMake ``#``.
    """
    findings = list(findings)
    if not findings or not any(m in text for m in _COMMENT_MARKERS):
        return findings
    lines = split_lines(text)
    opener = "#" if hash_comments else "//"

    def comment_of(n: int) -> str:
        if not 0 < n <= len(lines):
            return ""
        line = lines[n - 1]
        cut = [i for i in (line.find(opener), -1 if hash_comments else line.find("/*")) if i >= 0]
        return line[min(cut) :] if cut else ""

    # Per line, once (not per finding: many findings on one long line were quadratic): the
    # code lists (None: all codes) its comment names for this line and for the next one.
    markers: Dict[int, Tuple[List[Optional[str]], List[Optional[str]]]] = {}

    def markers_of(n: int) -> Tuple[List[Optional[str]], List[Optional[str]]]:
        if n not in markers:
            here = comment_of(n)
            this: List[Optional[str]] = []
            following: List[Optional[str]] = []
            m = _IGNORE.search(here)
            if m:
                this.append(m.group("codes"))
            if not hash_comments:
                for m in _NOLINT.finditer(here):
                    (following if m.group("next") else this).append(m.group("codes"))
            else:
                m = NOQA_INLINE.search(here)
                if m:
                    this.append(m.group("codes"))
            markers[n] = (this, following)
        return markers[n]

    def suppressed(f) -> bool:
        return any(_codes_match(c, f.code) for c in markers_of(f.line)[0]) or any(
            _codes_match(c, f.code) for c in markers_of(f.line - 1)[1]
        )

    return [f for f in findings if not suppressed(f)]
