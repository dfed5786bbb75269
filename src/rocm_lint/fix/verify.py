"""Keep the fixes that pass verification: shared by the Python and the text (C++) fixers.

A file's fixes are first applied and verified together.  When the result fails (it would not
parse, or would change the NVIDIA program), each fix is tried alone to find the culprits, which
are dropped with their reason; the others are applied together once more, and if that still
fails they are dropped too.  Nothing unverified is ever returned.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from rocm_lint.finding import Finding

T = TypeVar("T")
# attempt(subset) -> (outcome, None) when the subset's fixes verify, or (None, why) when not;
# applied(outcome) tells whether the outcome applied anything.
Attempt = Callable[[Sequence[Finding]], Tuple[Optional[T], Optional[str]]]


def apply_verified(
    candidates: Sequence[Finding], attempt: "Attempt[T]", applied: Callable[[T], bool]
) -> Tuple[Optional[T], List[Tuple[Finding, str]]]:
    """(the verified outcome of the largest set found, or None; [(dropped finding, why)])."""
    outcome, why = attempt(candidates)
    if outcome is not None:
        return outcome, []
    dropped: List[Tuple[Finding, str]] = []
    good = []
    for f in candidates:
        one, reason = attempt([f])
        if one is None:
            dropped.append((f, reason or "the fix did not verify"))
        elif applied(one):
            good.append(f)
    if not good:
        return None, dropped
    outcome, why = attempt(good)
    if outcome is None:
        dropped.extend((f, why or "the fix did not verify") for f in good)
    return outcome, dropped
