"""Apply the text edits that C++ (and config-file) findings carry, and verify them.

A C++ fix is a set of (line, col) edits computed by the rule at check time.  The fixer
applies the allowed ones (safe, plus unsafe with ``--unsafe-fixes``), skips edits that
overlap an edit already taken, and then checks the golden rule on the result: the
translation unit seen by the NVIDIA compiler (USE_ROCM and every other ROCm macro
undefined) must be token-for-token the original.  Safe fixes that fail the check are
dropped one by one, never written.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

from rocm_lint.lines import LineIndex
from rocm_lint.finding import Applicability, Finding
from rocm_lint.fix.engine import FixResult
from rocm_lint.fix.verify import apply_verified


def _allowed(f: Finding, unsafe: bool) -> bool:
    if f.fix is None or not f.fix.edits:
        return False
    return f.fix.applicability == Applicability.SAFE or (
        unsafe and f.fix.applicability == Applicability.UNSAFE)


def _apply(text: str, findings: Sequence[Finding]) -> Tuple[str, List[Finding], List[Finding]]:
    """Apply the findings' edits (non-overlapping, in file order); return (text, applied, skipped)."""
    index = LineIndex(text)
    taken: List[Tuple[int, int, str]] = []
    applied, skipped = [], []
    for f in findings:
        spans = [(index.offset(*e.start), index.offset(*e.end), e.content) for e in f.fix.edits]
        if all(s in taken for s in spans):
            applied.append(f)  # several findings sharing one edit (a block of includes)
            continue
        spans = [s for s in spans if s not in taken]
        if any(a < tb and ta < b or (a == b == ta == tb) for a, b, _ in spans for ta, tb, _ in taken):
            skipped.append(f)
            continue
        taken.extend(spans)
        applied.append(f)
    out, last = [], 0
    for a, b, content in sorted(taken, key=lambda e: (e[0], e[1])):
        out.append(text[last:a])
        out.append(content)
        last = b
    out.append(text[last:])
    return "".join(out), applied, skipped


def _same_on_nvidia(language: str, old: str, new: str) -> bool:
    if language in ("cuda", "cpp"):
        from rocm_lint.cpp.preproc import same_on_nvidia

        return same_on_nvidia(old, new)
    return False  # config files have no safe fixes: never claim one is safe


def apply_text_fixes(path: str, text: str, findings: Sequence[Finding], language: str, *,
                     unsafe: bool = False) -> FixResult:
    candidates = sorted((f for f in findings if _allowed(f, unsafe)), key=lambda f: (f.line, f.col))
    result = FixResult(text)
    if not candidates:
        return result

    def attempt(subset):
        new, applied, skipped = _apply(text, subset)
        # C++ fixes, safe or unsafe, all live behind a ROCm macro: the NVIDIA view must not move.
        if not _same_on_nvidia(language, text, new):
            return None, "the fix would change the NVIDIA program"
        return (new, applied, skipped), None

    outcome, result.dropped = apply_verified(candidates, attempt, lambda o: bool(o[1]))
    if outcome is None:
        return result
    result.text, result.applied, skipped = outcome
    result.overlapped = list(skipped)
    return result
