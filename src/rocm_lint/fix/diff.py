"""Unified diffs of large files in time linear in their size (``--diff``).

``difflib`` aligns two texts with ``find_longest_match``, which on two near-identical files whose
lines repeat (a million ``#if``/``#endif`` lines) is quadratic: a fix of two lines in such a file
took minutes to print.  A fix changes few lines, so Myers' greedy algorithm, which costs
O((N + M) * D) for D changed lines, is linear here: the common head and tail are stripped, the
middle is aligned by Myers (up to ``MAX_CHANGES`` changed lines; beyond that, ``difflib``), and
the hunks are grouped and printed by ``difflib``'s own grouping, in its format.  Small files keep
``difflib`` itself (``LINEAR_FROM`` lines), so their diffs stay exactly what they were.
"""

from __future__ import annotations

import difflib
from typing import Iterator, List, Optional, Sequence, Tuple

LINEAR_FROM = 20_000  # lines of both texts together
MAX_CHANGES = 2_000  # changed lines Myers' alignment is tried for


def unified_diff(a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str, n: int = 3) -> Iterator[str]:
    """The lines of ``difflib.unified_diff(a, b, fromfile, tofile, n=n)`` for lines that keep their
    ends; linear in the size for files of few changes."""
    blocks = _matching_blocks(a, b) if len(a) + len(b) >= LINEAR_FROM else None
    if blocks is None:
        yield from difflib.unified_diff(a, b, fromfile=fromfile, tofile=tofile, n=n)
        return
    matcher = _Aligned(a, b, blocks)
    started = False
    for group in matcher.get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in b[j1:j2]:
                    yield "+" + line


class _Aligned(difflib.SequenceMatcher):
    """difflib's opcodes and grouping over matching blocks computed elsewhere (no index of ``b``)."""

    def __init__(self, a: Sequence[str], b: Sequence[str], blocks: List[Tuple[int, int, int]]) -> None:
        super().__init__(None, [], [])
        self.a, self.b = a, b
        self.matching_blocks = [difflib.Match(*block) for block in blocks]
        self.opcodes = None

    def get_matching_blocks(self):
        return self.matching_blocks


def _range(start: int, stop: int) -> str:
    """difflib's range of a unified hunk header."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _matching_blocks(a: Sequence[str], b: Sequence[str]) -> Optional[List[Tuple[int, int, int]]]:
    """(i, j, size) of the runs ``a`` and ``b`` share, in order, ending with ``(len(a), len(b), 0)``
    as difflib's are; None where more than ``MAX_CHANGES`` lines differ."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    middle = _myers(a[head : n - tail], b[head : m - tail])
    if middle is None:
        return None
    blocks: List[Tuple[int, int, int]] = []
    for i, j, size in (
        [(0, 0, head)] + [(i + head, j + head, k) for i, j, k in middle] + [(n - tail, m - tail, tail)]
    ):
        if not size:
            continue
        if blocks and blocks[-1][0] + blocks[-1][2] == i and blocks[-1][1] + blocks[-1][2] == j:
            blocks[-1] = (blocks[-1][0], blocks[-1][1], blocks[-1][2] + size)
        else:
            blocks.append((i, j, size))
    blocks.append((n, m, 0))
    return blocks


def _myers(a: Sequence[str], b: Sequence[str]) -> Optional[List[Tuple[int, int, int]]]:
    """The common runs of a shortest edit script from ``a`` to ``b`` (Myers 1986, greedy forward
    search with the furthest-reaching path per diagonal kept for each number of edits)."""
    n, m = len(a), len(b)
    v = {1: 0}
    trace: List[dict] = []
    for d in range(min(n + m, MAX_CHANGES) + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
    return None


def _backtrack(trace: List[dict], x: int, y: int) -> List[Tuple[int, int, int]]:
    runs: List[Tuple[int, int, int]] = []
    for d in range(len(trace) - 1, 0, -1):
        v = trace[d]
        k = x - y
        down = k == -d or (k != d and v[k - 1] < v[k + 1])
        prev_k = k + 1 if down else k - 1
        prev_x = v[prev_k]
        start_x = prev_x if down else prev_x + 1
        start_y = start_x - k
        if x > start_x:
            runs.append((start_x, start_y, x - start_x))
        x, y = prev_x, prev_x - prev_k
    if x > 0:
        runs.append((0, 0, x))
    runs.reverse()
    return runs
