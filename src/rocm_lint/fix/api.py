"""The one way every front end fixes: ``--fix``/``--diff``, JSON/SARIF edits, LSP quick fixes and
fix-all all call :func:`fix_text` or :func:`edits_for`.

* :func:`fix_text` applies every allowed fix of a file's findings, in passes: fixes that overlap
  one already taken (a C++ ballot declaration and its mask on one line) land in a later pass,
  re-checked and re-verified, like ruff's fix loop.
* :func:`edits_for` gives the verified edits of one finding's fix alone.

Both give the fix step what the check learned about the module: the ROCm predicates it binds,
read with the user's configuration (``rocm-predicates``), so a fix reuses ``IS_AMD = on_amd()``
instead of inserting a second flag.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from rocm_lint.config import Config
from rocm_lint.finding import Edit, FileError, Finding
from rocm_lint.fix.engine import FixResult, learned_rocm_names

MAX_PASSES = 8
OVERLAPS = "overlaps another fix; run --fix again"


def _fix_once(path: str, text: str, findings: Sequence[Finding], language: str, unsafe: bool,
              config: Config) -> FixResult:
    if language == "python":
        from rocm_lint.fix.engine import fix_source

        return fix_source(path, text, findings, unsafe=unsafe, rocm_names=learned_rocm_names(path, text, config))
    from rocm_lint.fix.text_edits import apply_text_fixes

    return apply_text_fixes(path, text, findings, language, unsafe=unsafe)


def fix_text(path: str, text: str, config: Config, *, unsafe: bool = False, language: Optional[str] = None,
             findings: Optional[Sequence[Finding]] = None) -> Union[FixResult, FileError]:
    """``text`` with every allowed fix applied (safe ones; unsafe ones too with ``unsafe``).

    ``findings``: the file's findings when the caller has them (else the file is checked here).
    Findings whose fix overlaps another are fixed in later passes; each pass is verified.
    """
    from rocm_lint.discovery import language_of
    from rocm_lint.engine import check_source

    language = language or language_of(path)
    if language is None:
        return FixResult(text)
    if findings is None:
        checked = check_source(path, text, config, language)
        if isinstance(checked, FileError):
            return checked
        findings = checked
    result = _fix_once(path, text, findings, language, unsafe, config)
    for _ in range(MAX_PASSES):
        if not result.applied or not result.overlapped:
            break
        again = check_source(path, result.text, config, language)
        if isinstance(again, FileError):
            break
        more = _fix_once(path, result.text, again, language, unsafe, config)
        if not more.applied:
            break
        result.text = more.text
        result.applied = result.applied + more.applied
        result.dropped = result.dropped + more.dropped
        result.overlapped = more.overlapped
    result.dropped = result.dropped + [(f, OVERLAPS) for f in result.overlapped]
    result.overlapped = []
    return result


def edits_for(path: str, text: str, finding: Finding, config: Config) -> Tuple[Edit, ...]:
    """The edits of ``finding``'s fix alone, verified the way ``--fix`` verifies them; empty when
    it has no fix or the fix cannot be applied here."""
    from rocm_lint.discovery import language_of

    if finding.fix is None:
        return ()
    language = language_of(path)
    if language == "python":
        if finding.recipe is None:
            return ()
        from rocm_lint.fix.engine import python_edits_for

        try:
            return python_edits_for(path, text, finding, rocm_names=learned_rocm_names(path, text, config))
        except SyntaxError:
            return ()
    if not finding.fix.edits or language is None:
        return ()
    from rocm_lint.fix.text_edits import apply_text_fixes

    result = apply_text_fixes(path, text, [finding], language, unsafe=True)
    return tuple(finding.fix.edits) if result.applied else ()
