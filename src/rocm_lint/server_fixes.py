"""The language server's fixes: one finding's verified edits (quick fixes) and every safe fix of
a text (``source.fixAll``), kept per check of a text in the server's ``FixStore``.  No pygls here;
the fix engine is imported only when a fix is asked for."""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from rocm_lint.config import Config
from rocm_lint.finding import Edit, FileError, Finding
from rocm_lint.workspace import Workspace

# The verified fixes of the last check's findings: an editor asks for code actions again on every
# move of the cursor, and a fix is worked out once per check of a text (a new text, a new
# configuration or a re-check after an imported module changed start afresh).
# The server owns the store (``RocmLintServer.fixes``): path -> (text, config, check, memo).
FixStore = Dict[str, Tuple[str, Config, object, Dict[object, Tuple[Edit, ...]]]]
_FIXES_KEPT = 8


def _fixes_of(
    store: FixStore, path: str, text: str, config: Config, checked: object
) -> Dict[object, Tuple[Edit, ...]]:
    known = store.get(path)
    if known is not None and known[0] == text and known[1] is config and known[2] is checked:
        return known[3]
    if len(store) >= _FIXES_KEPT and path not in store:
        store.pop(next(iter(store)))
    memo: Dict[object, Tuple[Edit, ...]] = {}
    store[path] = (text, config, checked, memo)
    return memo


def fix_edits(
    path: str, text: str, f: Finding, config: Config, checked: object = None, store: Optional[FixStore] = None
) -> Tuple[Edit, ...]:
    """The edits of one finding's fix, verified the way ``--fix`` verifies them (``fix.api.edits_for``
    fixes the finding alone, so LibCST reads its statement).  ``checked``: the findings list of
    the check ``f`` comes from; the edits are kept while it is the current one."""
    from rocm_lint.fix.api import edits_for

    if checked is None or store is None:
        return edits_for(path, text, f, config)
    memo = _fixes_of(store, path, text, config, checked)
    if f not in memo:
        memo[f] = edits_for(path, text, f, config)
    return memo[f]


def fix_all(
    path: str,
    text: str,
    findings: Sequence[Finding],
    config: Config,
    workspace: Optional[Workspace] = None,
    store: Optional[FixStore] = None,
) -> Optional[str]:
    """The text with every safe fix applied: what ``rocm-lint check --fix`` would write (the same
    passes: fixes that overlap land in a later pass); worked out once per text."""
    from rocm_lint.fix.api import fix_text

    memo = _fixes_of(store if store is not None else {}, path, text, config, findings)
    key = "fix-all"
    if key not in memo:
        try:
            result = fix_text(path, text, config, findings=findings, workspace=workspace)
        except SyntaxError:
            result = None
        memo[key] = None if result is None or isinstance(result, FileError) else result.text  # type: ignore[assignment]
    return memo[key]  # type: ignore[return-value]
