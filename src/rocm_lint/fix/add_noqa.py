"""``rocm-lint check --add-noqa``: a suppression comment for each finding, as ruff's ``--add-noqa``.

Python gets ``# noqa: ROC101`` at the end of the finding's line, or of the lines one noqa covers
there (flake8's mapping: a multi-line string's, a backslash continuation's; after the closing
triple quote, never inside the string); C++ ``// NOLINT(ROC601)``
(``/* NOLINT(ROC601) */`` before a macro's line-continuing backslash); config files ``# noqa:
ROC301``.  A line that already has such a comment keeps its codes and gets the new ones merged into
its list; a bare ``# noqa``/``NOLINT`` already covers everything.  Running it twice changes nothing.

Nothing is written unless the new text is the same program: Python's ``ast`` is equal, the C++
text without its comments is token-for-token equal, a config file's settings and tool arguments
(as the config readers see them) are equal; and a re-check finds none of the findings the comments
were added for.  Writes go through :mod:`rocm_lint.fix.files` (atomic; encoding, line endings and
mode kept).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Finding
from rocm_lint.lines import split_lines

# A noqa or NOLINT comment's code list, to merge new codes into.  Linear: one character class run.
_NOQA_CODES = re.compile(r"(?P<head>#\s*noqa:\s?)(?P<codes>[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*)", re.I)
# The closing parenthesis is optional (and then checked): a pattern that can fail after a run
# rescans that run from every later start (quadratic on a line of `NOLINT(` without one).
_NOLINT_CODES = re.compile(r"\bNOLINT\((?P<codes>[^)\n]*)(?P<close>\))?")
_BARE_NOLINT = re.compile(r"\bNOLINT\b(?!NEXTLINE|\()")
_BARE_NOQA = re.compile(r"#\s*noqa\b(?!:)", re.I)


@dataclass
class NoqaOutcome:
    path: str
    added: int = 0  # findings that are suppressed now
    error: Optional[str] = None  # the file was not changed, and why
    # findings the file's comments still do not suppress, with why
    skipped: List[Tuple[Finding, str]] = field(default_factory=list)


class NotAdded(Exception):
    """The comments cannot be added to this file (the message says why)."""


# -- one file's text -------------------------------------------------------------------------------
def add_noqa_text(text: str, findings: Sequence[Finding], language: str) -> Tuple[str, Dict[int, str]]:
    """(new text, {1-based line: why no comment went there}) for ``findings`` of one file's
    ``text``; :class:`NotAdded` when the file cannot take them at all."""
    lines = split_lines(text, keepends=True)
    where = _python_targets(text) if language == "python" else {}
    codes: Dict[int, Set[str]] = {}
    for f in findings:
        codes.setdefault(where.get(f.line, f.line), set()).add(f.code)
    skipped: Dict[int, str] = {}
    for line, wanted in codes.items():
        if not 0 < line <= len(lines):
            continue
        body, newline = _split_newline(lines[line - 1])
        why = _no_comment_here(body, language)
        if why:
            skipped[line] = why
            continue
        lines[line - 1] = _with_codes(body, sorted(wanted), language) + newline
    reasons = {
        f.line: skipped[where.get(f.line, f.line)] for f in findings if where.get(f.line, f.line) in skipped
    }
    return "".join(lines), reasons


_DOCKER_RUN = re.compile(r"[^\S\n]*RUN\b", re.I)


def _no_comment_here(body: str, language: str) -> Optional[str]:
    """Why a config file's line cannot end in a ``#`` comment (None: it can)."""
    if language in ("python", "cuda", "cpp"):
        return None
    if body.rstrip().endswith("\\"):
        return "the line continues (a trailing backslash): a comment would end the command"
    if language == "dotenv":
        return "`docker run --env-file` would read an inline comment as part of the value"
    if language == "dockerfile" and not _DOCKER_RUN.match(body):
        return "a Dockerfile takes inline comments only in a RUN command's shell"
    return None


def _split_newline(line: str) -> Tuple[str, str]:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return line[: -len(end)], end
    return line, ""


def _with_codes(body: str, codes: List[str], language: str) -> str:
    """``body`` (one physical line without its newline) with ``codes`` in its suppression comment."""
    if language in ("cuda", "cpp"):
        return _cpp_line(body, codes)
    if _BARE_NOQA.search(_hash_comment(body)):
        return body  # a noqa comment without codes covers every code already
    m = _NOQA_CODES.search(body, _comment_start(body, language))
    if m:
        return body[: m.start("codes")] + _merged(m.group("codes"), codes) + body[m.end("codes") :]
    return body.rstrip() + "  # noqa: " + ", ".join(codes)


def _comment_start(body: str, language: str) -> int:
    """Where the line's comment may begin: the whole line for Python (the tokenizer chose the line),
    the first ``#`` for config files (what :func:`rocm_lint.noqa.filter_comment_findings` reads)."""
    if language == "python":
        return 0
    hash_at = body.find("#")
    return hash_at if hash_at >= 0 else len(body)


def _hash_comment(body: str) -> str:
    hash_at = body.find("#")
    return body[hash_at:] if hash_at >= 0 else ""


def _merged(existing: str, codes: Iterable[str]) -> str:
    """An existing code list with ``codes`` appended (its own spelling and order kept)."""
    have = [c for c in re.split(r"[,\s]+", existing) if c]
    upper = {c.upper() for c in have}
    extra = [c for c in codes if c not in upper and not c.startswith(tuple(upper))]
    if not extra:
        return existing
    sep = ", " if "," in existing or len(have) == 1 else " "
    return existing + sep + sep.join(extra)


def _cpp_line(body: str, codes: List[str]) -> str:
    comment = _cpp_comment_part(body)
    if _BARE_NOLINT.search(comment):
        return body
    m = _NOLINT_CODES.search(body, len(body) - len(comment))
    if m and m.group("close"):
        return body[: m.start("codes")] + _merged(m.group("codes"), codes) + body[m.end("codes") :]
    stripped = body.rstrip()
    if stripped.endswith("\\"):  # a continued line (a macro): a // comment would end the macro here
        head = stripped[:-1].rstrip()
        return f"{head} /* NOLINT({', '.join(codes)}) */ \\"
    return f"{stripped}  // NOLINT({', '.join(codes)})"


def _cpp_comment_part(body: str) -> str:
    cut = [i for i in (body.find("//"), body.find("/*")) if i >= 0]
    return body[min(cut) :] if cut else ""


def _python_targets(text: str) -> Dict[int, int]:
    """Physical line -> where a noqa for it goes: within the lines one noqa covers (flake8's
    mapping, :func:`rocm_lint.noqa.noqa_spans`: the physical line, or the lines a multi-line string
    or a backslash joins), the line of the noqa comment already there, else the last line (after
    a closing triple quote, never inside the string)."""
    from rocm_lint.noqa import noqa_spans

    spans = noqa_spans(text)
    if not spans:
        raise NotAdded("cannot tokenize")
    lines = split_lines(text)
    out: Dict[int, int] = {}
    for first, last in spans:
        target = next(
            (n for n in range(first, last + 1) if n <= len(lines) and _NOQA_CODES.search(lines[n - 1])), last
        )
        for line in range(first, last + 1):
            out[line] = target
    return out


# -- the same program --------------------------------------------------------------------------------
def same_program(old: str, new: str, language: str, path: str, config: Config) -> Optional[str]:
    """None when ``new`` is ``old`` with comments added, as its language's reader sees it; else why not."""
    if language == "python":
        try:
            same = ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return "the file would no longer parse"
        return None if same else "the comment would change the program"
    if language in ("cuda", "cpp"):
        return None if _cpp_code(old) == _cpp_code(new) else "the comment would change the code"
    from rocm_lint.configfiles.scanner import read_unit

    def settings(text: str):
        unit = read_unit(path, text, config, language)
        return (
            [(s.name, s.value, s.how, s.gate, s.conditions) for s in unit.settings],
            [(tuple(w.value for w in a.words), a.gate, a.conditions) for a in unit.tool_args],
        )

    return None if settings(old) == settings(new) else "the comment would change a setting's value"


_SPACES = re.compile(r"[ \t]+")


def _cpp_code(text: str) -> List[str]:
    """The text without its comments, each line's runs of blanks made one space."""
    from rocm_lint.cpp.lexer import lex

    lexed = lex(text)
    pieces, at = [], 0
    for start, end in lexed.comments:
        pieces.append(text[at:start])
        pieces.append(" " + "\n" * text.count("\n", start, end))
        at = end
    pieces.append(text[at:])
    return [_SPACES.sub(" ", line).strip() for line in "".join(pieces).split("\n")]


# -- files ---------------------------------------------------------------------------------------------
def add_noqa_files(findings: Sequence[Finding], config: Config, roots=None) -> List[NoqaOutcome]:
    """Add the comments for ``findings`` to their files (one outcome per file, in path order);
    ``roots``: the trees the command line named (``rocm_lint.fix.files.project_root``)."""
    by_path: Dict[str, List[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    return [add_noqa_file(path, by_path[path], config, roots) for path in sorted(by_path)]


def add_noqa_file(path: str, findings: Sequence[Finding], config: Config, roots=None) -> NoqaOutcome:
    from rocm_lint.discovery import language_of
    from rocm_lint.engine import check_source
    from rocm_lint.fix.files import Refused, read_for_write, write_back

    language = language_of(path)
    outcome = NoqaOutcome(path)
    if language is None:
        return outcome
    if language == "notebook":
        outcome.error = (
            "no noqa added: notebooks (.ipynb) are checked, not edited; add `# noqa: CODE` in the cell"
        )
        return outcome
    try:
        source = read_for_write(path, config, write=True, roots=roots)
        new, reasons = add_noqa_text(source.text, findings, language)
    except (Refused, NotAdded) as exc:
        outcome.error = f"no noqa added: {exc}"
        return outcome
    if new == source.text:
        outcome.skipped = [(f, reasons.get(f.line, "nowhere to put a comment")) for f in findings]
        return outcome
    problem = same_program(source.text, new, language, path, config)
    again = check_source(path, new, config, language) if problem is None else None
    if problem is None and not isinstance(again, list):
        problem = "the file could not be checked again"
    if problem is not None:
        outcome.error = f"no noqa added: {problem}"
        return outcome
    remaining = {(f.line, f.code) for f in again}  # type: ignore[union-attr]
    outcome.skipped = [
        (f, reasons.get(f.line, "the comment would not suppress it"))
        for f in findings
        if (f.line, f.code) in remaining
    ]
    added = len(findings) - len(outcome.skipped)
    if added:
        error = write_back(path, source, new)
        if error is not None:
            outcome.error = error.replace("being fixed", "adding noqa")
            return outcome
    outcome.added = added
    return outcome
