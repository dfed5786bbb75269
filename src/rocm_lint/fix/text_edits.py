"""Apply the text edits that C++ (and config-file) findings carry, and verify them.

A C++ fix is a set of (line, col) edits computed by the rule at check time.  The fixer
applies the allowed ones (safe, plus unsafe with ``--unsafe-fixes``), skips edits that
overlap an edit already taken, and then checks the golden rule on the result: the
translation unit seen by the NVIDIA compiler (USE_ROCM and every other ROCm macro
undefined, and, where the file reads one by value, defined to 0) must be token-for-token
the original, every line at its old line number (``__LINE__``).  Safe fixes that fail the check are
dropped one by one, never written.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import List, Sequence, Tuple

from rocm_lint.lines import LineIndex
from rocm_lint.finding import Applicability, Finding
from rocm_lint.fix.engine import FixResult
from rocm_lint.fix.verify import apply_verified


def _allowed(f: Finding, unsafe: bool) -> bool:
    if f.fix is None or not f.fix.edits:
        return False
    return f.fix.applicability == Applicability.SAFE or (
        unsafe and f.fix.applicability == Applicability.UNSAFE
    )


def _apply(text: str, findings: Sequence[Finding]) -> Tuple[str, List[Finding], List[Finding]]:
    """Apply the findings' edits (non-overlapping, in file order); return (text, applied, skipped).
    The edits taken are kept sorted by offset (their ends are then sorted too: they do not
    overlap), so each finding is checked against its neighbours only."""
    index = LineIndex(text)
    taken: List[Tuple[int, int, str]] = []
    taken_set = set()
    applied, skipped = [], []
    for f in findings:
        spans = [(index.offset(*e.start), index.offset(*e.end), e.content) for e in f.fix.edits]
        if all(s in taken_set for s in spans):
            applied.append(f)  # several findings sharing one edit (a block of includes)
            continue
        spans = [s for s in spans if s not in taken_set]
        if any(_overlaps(taken, a, b) for a, b, _ in spans):
            skipped.append(f)
            continue
        for s in spans:
            insort(taken, s)
            taken_set.add(s)
        applied.append(f)
    out, last = [], 0
    for a, b, content in taken:
        out.append(text[last:a])
        out.append(content)
        last = b
    out.append(text[last:])
    return "".join(out), applied, skipped


def _overlaps(taken: List[Tuple[int, int, str]], a: int, b: int) -> bool:
    """Does ``a..b`` overlap an edit in ``taken`` (sorted, non-overlapping), or insert at the
    same point as an insertion there?"""
    i = bisect_left(taken, (b,))  # the edits that start before b: taken[:i]
    if i and taken[i - 1][1] > a:
        return True
    if a == b:
        j = bisect_left(taken, (a,))
        return j < len(taken) and taken[j][0] == taken[j][1] == a
    return False


def _build_rocm_macros(path: str) -> Tuple[str, ...]:
    """The ROCm-only macros of the project's build for ``path`` (what the fixes may test besides
    the built-in ROCm macros): undefined in the NVIDIA view, as the NVIDIA build leaves them."""
    from rocm_lint.cpp.gates import build_rocm_macros
    from rocm_lint.workspace import Workspace

    try:
        return build_rocm_macros(Workspace(), path)
    except (OSError, ValueError):
        return ()


def _same_on_nvidia(language: str, old: str, new: str, rocm_macros: Tuple[str, ...] = ()) -> bool:
    if language in ("cuda", "cpp"):
        from rocm_lint.cpp.nvidia_view import same_on_nvidia

        return same_on_nvidia(old, new, rocm_macros, lines=True)
    # Python and config files: only a fix that changes comments alone (ROC001's) is the same
    # program; config files have no other safe fixes.
    from rocm_lint.unused_noqa import only_comments_changed

    return only_comments_changed(language, old, new)


def apply_text_fixes(
    path: str, text: str, findings: Sequence[Finding], language: str, *, unsafe: bool = False
) -> FixResult:
    candidates = sorted((f for f in findings if _allowed(f, unsafe)), key=lambda f: (f.line, f.col))
    result = FixResult(text)
    if not candidates:
        return result

    if language in ("cuda", "cpp"):
        from rocm_lint.cpp.lexer import lex, unterminated_literal_line

        line = unterminated_literal_line(lex(text))
        if line:  # (found by the fuzz target: the second --fix offered a fix the first did not)
            why = (
                f"line {line} holds an unterminated string or character literal: where a statement "
                "or block ends cannot be told, so nothing in this file is fixed"
            )
            result.dropped = [(f, why) for f in candidates]
            return result

    macros = _build_rocm_macros(path) if language in ("cuda", "cpp") else ()

    def attempt(subset):
        new, applied, skipped = _apply(text, subset)
        # C++ fixes, safe or unsafe, all live behind a ROCm macro: the NVIDIA view must not move.
        if not _same_on_nvidia(language, text, new, macros):
            return None, "the fix would change the NVIDIA program"
        return (new, applied, skipped), None

    outcome, result.dropped = apply_verified(candidates, attempt, lambda o: bool(o[1]))
    if outcome is None:
        return result
    result.text, result.applied, skipped = outcome
    result.overlapped = list(skipped)
    return result
