"""ROC001: suppression comments that suppress nothing (ruff's RUF100), off by default.

A rocm-lint code named in a suppression comment (``# noqa: ROC101``, ``// NOLINT(ROC601)``,
``// NOLINTNEXTLINE(ROC601)``, ``# rocm-lint: ignore[ROC301]``; the syntax each language reads, as
:mod:`rocm_lint.noqa` applies it) is unused when no finding of that code (or prefix) is on the
lines the comment covers. Only ROC codes are judged, and only those of rules enabled for the
file (a code of a rule switched off here may be needed under other settings); a code that names
no rule at all is reported as unknown. Other tools' codes (``E501``, ``bugprone-*``) and bare
suppressions (``# noqa``, ``// NOLINT``) are never reported.

The engine calls :func:`neutralized` to get the text with every ROC-code suppression disabled
(same length, same lines), checks that text once more, and hands those findings to
:func:`unused_suppressions`, which returns the ROC001 findings. Each has a safe fix: the stale
codes leave the comment; the whole comment goes when no code is left (the line stays: C++ fixes
keep every line at its number). :func:`only_comments_changed` is the check the fixer applies.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from rocm_lint.finding import Applicability, Edit, Finding, Fix
from rocm_lint.lazy import LazyPattern  # compiled when ROC001 is selected
from rocm_lint.lines import split_lines
from rocm_lint.noqa import file_exemption, noqa_spans

CODE = "ROC001"
CPP = ("cuda", "cpp")
# The marker word and its code list (group ``codes``), per syntax; linear patterns.
_NOQA = LazyPattern(
    r"(?P<word>noqa)(?::[ \t]?(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+|[ \t]+[A-Z]+[0-9]+)*))?",
    re.I,
)
_IGNORE = LazyPattern(r"rocm-lint:[ \t]*(?P<word>ignore)(?:\[(?P<codes>[^\]\n]*)\])?", re.I)
_NOLINT = LazyPattern(r"\b(?P<word>NOLINT)(?P<next>NEXTLINE)?\b(?:\((?P<codes>[^)\n]*)\))?")
_CODE_TOKEN = LazyPattern(r"[A-Za-z][\w-]*")


@dataclass(frozen=True)
class Marker:
    """One suppression comment: where it is, which line it covers, its codes as (code, start,
    end) offsets into the text, and the comment around it (start, end offsets)."""

    line: int
    covers: int  # the line it suppresses (NOLINTNEXTLINE: the next one)
    start: int  # the marker word
    end: int  # the end of its code list
    codes: Tuple[Tuple[str, int, int], ...]
    comment: Tuple[int, int]
    word: Tuple[int, int]


def _line_starts(text: str) -> List[int]:
    starts, at = [], 0
    for line in split_lines(text, keepends=True):
        starts.append(at)
        at += len(line)
    return starts


def _python_comments(text: str) -> Optional[List[Tuple[int, int, int]]]:
    """(line, start offset, end offset) of every comment token; None when it does not tokenize."""
    starts = _line_starts(text)
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                at = starts[tok.start[0] - 1] + tok.start[1]
                out.append((tok.start[0], at, at + len(tok.string)))
    except (tokenize.TokenError, SyntaxError, IndentationError, IndexError):
        return None
    return out


def _config_comment(line: str) -> int:
    """Where a config-file line's comment starts: its first ``#`` (as rocm_lint.noqa reads it)
    when that ``#`` starts the line or follows a blank, outside quotes; else -1."""
    i = line.find("#")
    if i < 0 or (i and line[i - 1] not in " \t") or line.count('"', 0, i) % 2 or line.count("'", 0, i) % 2:
        return -1
    return i


def _line_comments(text: str, language: str) -> List[Tuple[int, int, int]]:
    """The comment part of each line as rocm_lint.noqa reads it: from the first ``//`` or ``/*``
    (C++) or ``#`` (config files) to the end of the line; only where that is a comment (the C++
    lexer's comments; a config-file ``#`` outside quotes), so that a fix never edits a string."""
    out = []
    at = 0
    real: List[Tuple[int, int]] = []
    if language in CPP:
        from rocm_lint.cpp.lexer import lex

        real = list(lex(text).comments)
    for n, line in enumerate(split_lines(text, keepends=True), start=1):
        body = line.rstrip("\r\n")
        if language in CPP:
            cuts = [i for i in (body.find("//"), body.find("/*")) if i >= 0]
            cut = min(cuts) if cuts else -1
            if cut >= 0 and not any(a <= at + cut < b for a, b in real):
                cut = -1
        else:
            cut = _config_comment(body)
        if cut >= 0:
            out.append((n, at + cut, at + len(body)))
        at += len(line)
    return out


def markers(text: str, language: str) -> Optional[List[Marker]]:
    """Every suppression comment that names codes, in the syntax ``language`` reads."""
    if language == "python":
        comments = _python_comments(text)
        if comments is None:
            return None
        patterns: Tuple[re.Pattern[str], ...] = (_NOQA,)
    elif language in CPP:
        comments, patterns = _line_comments(text, language), (_IGNORE, _NOLINT)
    else:
        comments, patterns = _line_comments(text, language), (_IGNORE, _NOQA)
    out = []
    for line, a, b in comments:
        comment = text[a:b]
        for pattern in patterns:
            for m in pattern.finditer(comment):
                if pattern is _NOQA and not comment[: m.start()].rstrip().endswith("#"):
                    continue  # flake8's noqa comment: the word right after a hash
                if m.group("codes") is None:
                    continue  # a bare suppression: never judged
                base = a + m.start("codes")
                codes = tuple(
                    (c.group().upper(), base + c.start(), base + c.end())
                    for c in _CODE_TOKEN.finditer(m.group("codes"))
                )
                if not codes:
                    continue
                nxt = pattern is _NOLINT and m.group("next")
                out.append(
                    Marker(
                        line,
                        line + 1 if nxt else line,
                        a + m.start(),
                        a + m.end(),
                        codes,
                        (a, b),
                        (a + m.start("word"), a + m.end("word")),
                    )
                )
    return out


def _maybe(text: str) -> bool:
    """Could ``text`` hold a suppression with a ROC code? (Files that cannot are not tokenized.)"""
    low = text.lower()
    return "roc" in low and any(w in low for w in ("noqa", "nolint", "rocm-lint"))


def _ours(code: str) -> bool:
    return code.startswith("ROC")


def neutralized(text: str, language: str) -> Optional[str]:
    """``text`` with every suppression that names a ROC code disabled (its marker word
    misspelt, same length); None when there is none (or the file cannot be read for comments)."""
    if language == "notebook" or not _maybe(text):
        return None
    found = markers(text, language)
    if not found:
        return None
    chars = list(text)
    changed = False
    for m in found:
        if any(_ours(c) for c, _, _ in m.codes):
            a, _ = m.word
            chars[a + 1] = "x" if chars[a + 1] != "x" else "y"
            changed = True
    return "".join(chars) if changed else None


def _covered(text: str, language: str) -> Dict[int, Tuple[int, int]]:
    """Python: line -> (first, last) line of its logical line (a noqa anywhere in it counts)."""
    if language != "python":
        return {}
    out = {}
    for lo, hi in noqa_spans(text):
        for n in range(lo, hi + 1):
            out[n] = (lo, hi)
    return out


def unused_suppressions(
    path: str,
    text: str,
    language: str,
    unsuppressed: Sequence[Finding],
    enabled: FrozenSet[str],
    known: Iterable[str],
) -> List[Finding]:
    """The ROC001 findings of one file: ``unsuppressed`` are its findings with the ROC-code
    suppressions disabled (the check of :func:`neutralized`'s text), ``enabled`` the codes
    enabled for it, ``known`` every code rocm-lint has."""
    if CODE not in enabled or language == "notebook" or not _maybe(text):
        return []
    if language == "python":
        skip, exempt = file_exemption(text)
        if skip or CODE.startswith(tuple(exempt)) and exempt:
            return []
    found = markers(text, language)
    if not found:
        return []
    known = tuple(known)
    spans = _covered(text, language)
    by_line: Dict[int, List[str]] = {}
    for f in unsuppressed:
        by_line.setdefault(f.line, []).append(f.code)
    out = []
    starts = _line_starts(text)
    for m in found:
        ours = [c for c in m.codes if _ours(c[0])]
        if not ours or any(CODE.startswith(c) for c, _, _ in m.codes):
            continue  # no ROC code, or the comment suppresses ROC001 itself
        lo, hi = spans.get(m.covers, (m.covers, m.covers))
        here = [code for n in range(lo, hi + 1) for code in by_line.get(n, ())]
        unknown = [c for c in ours if not any(k.startswith(c[0]) for k in known)]
        unused = [
            c
            for c in ours
            if c not in unknown
            and any(k.startswith(c[0]) for k in enabled if k != CODE)
            and not any(code.startswith(c[0]) for code in here)
        ]
        stale = unknown + unused
        if not stale:
            continue
        parts = []
        if unused:
            parts.append("unused: " + ", ".join(f"`{c}`" for c, _, _ in unused))
        if unknown:
            parts.append("unknown: " + ", ".join(f"`{c}`" for c, _, _ in unknown))
        line, col = m.line, m.start - starts[m.line - 1]
        end_col = m.end - starts[m.line - 1]
        message = f"unused suppression ({'; '.join(parts)}): it suppresses no finding on its line"
        edits = _removal(text, m, {c[1] for c in stale}, starts)
        fix = Fix(
            Applicability.SAFE, "Remove the unused suppression code" + ("s" if len(stale) > 1 else ""), edits
        )
        out.append(Finding(path, line, col, CODE, message, line, end_col, fix=fix))
    return out


def _removal(text: str, m: Marker, stale_starts: set, starts: List[int]) -> Tuple[Edit, ...]:
    """Edits that take the stale codes out of the marker, or the marker (and the comment, when it
    held nothing else) out of the line; the line itself stays."""
    keep = [c for c in m.codes if c[1] not in stale_starts]

    def pos(offset: int) -> Tuple[int, int]:
        return (m.line, offset - starts[m.line - 1])

    if keep:
        first, last = m.codes[0][1], m.codes[-1][2]
        separator = ", " if ", " in text[first:last] or " " in text[first:last] else ","
        return (Edit(separator.join(text[c[1] : c[2]] for c in keep), pos(first), pos(last)),)
    a, b = m.comment
    end = m.end  # the marker and the blanks after it
    while end < b and text[end] in " \t":
        end += 1
    line_start = starts[m.line - 1]

    def blanks_before(at: int) -> int:
        while at > line_start and text[at - 1] in " \t":
            at -= 1
        return at

    before = text[a : m.start]
    if before.rstrip().endswith("/*") and text[end:b].startswith("*/"):  # `/* NOLINT(ROC603) */`
        return (Edit("", pos(blanks_before(a + before.rstrip().rfind("/*"))), pos(end + 2)),)
    opener = max(before.rfind("#"), before.rfind("//"))
    if opener < 0 or before[opener:].lstrip("#/").strip():
        return (Edit("", pos(m.start), pos(end)),)  # `// see NOLINT(ROC601)`: the marker alone
    opener += a
    after = text[end:b]
    if not after.strip():  # the comment ends with the marker: it goes, with the blanks before it
        return (Edit("", pos(blanks_before(opener)), pos(b)),)
    if after.startswith(("#", "//")):  # `# noqa: ROC101  # why` -> `# why`
        return (Edit("", pos(opener), pos(end)),)
    return (Edit("", pos(m.start), pos(end)),)  # `// NOLINT(ROC603) reason` -> `// reason`


def only_comments_changed(language: str, old: str, new: str) -> bool:
    """The check a ROC001 fix passes before it is written: the program is the same. Python: the
    same tokens less comments; config files: the same text before each line's comment."""
    if language == "python":

        def tokens(text: str):
            try:
                return [
                    (t.type, t.string)
                    for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type not in (tokenize.COMMENT, tokenize.NL)
                ]
            except (tokenize.TokenError, SyntaxError, IndentationError):
                return None

        before = tokens(old)
        return before is not None and before == tokens(new)
    a, b = split_lines(old), split_lines(new)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x != y:
            i = _config_comment(x)
            if (
                i < 0
                or x[:i].rstrip() != y[:i].rstrip()
                or y[len(x[:i].rstrip()) :].strip()[:1] not in ("", "#")
            ):
                return False
    return True


def explicitly_selected(config) -> bool:
    """Is ROC001 named by ``select`` or ``extend-select`` (``ROC001``, ``ROC00``, ``ROC0``)?  The
    default ``select = ["ROC"]`` does not turn it on (ruff's RUF100 is off by default too)."""
    return any(len(s) >= 4 and CODE.startswith(s.upper()) for s in (*config.select, *config.extend_select))
