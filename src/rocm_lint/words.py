"""Which of many words occur in a text: the trigger pre-filter of every file.

``w in text`` per word scans the text once per word (a ninth of a run over the torch sources).
With ``ahocorasick-rs`` installed (a dependency; wheels for CPython on Linux, macOS and Windows),
one pass of an Aho-Corasick DFA over the text finds every word, overlapping occurrences
included; without the package, or for a text the DFA cannot take (a lone surrogate has no
UTF-8), every word is searched on its own: the same answer.

Measured on the Python sources of torch 2.13 and diffusers 0.42.1 (3,476 files, 75 MB, CPU):
every word by ``in`` 2 s; pyahocorasick (the previous backend, longer words only, short ones by
``in``) 1.38 s; ahocorasick-rs's default automaton 0.37 s; its DFA 0.15 s, all words in it (the
short ones by ``in`` beside it cost 0.46 s more: an absent word is a scan of the whole text).
"""

from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Iterable, List, Tuple


def automaton_of(words: Tuple[str, ...], dfa: bool = True):
    """An Aho-Corasick automaton of ``words`` (``find_matches_as_strings`` /
    ``find_matches_as_indexes``, index into ``words``), or None without the ``ahocorasick-rs``
    package.  A DFA scans fastest and costs most to build: for a word list used on many texts;
    ``dfa=False`` for a list made for one text."""
    try:
        import ahocorasick_rs
    except ImportError:
        return None
    if not words:
        return None
    if dfa:
        return ahocorasick_rs.AhoCorasick(list(words), implementation=ahocorasick_rs.Implementation.DFA)
    return ahocorasick_rs.AhoCorasick(list(words))


@lru_cache(maxsize=32)
def _automaton(words: Tuple[str, ...]):
    """The DFA of a trigger list (one pass over a text for all of them), or None without the
    ``ahocorasick-rs`` package (then every word is searched on its own)."""
    return automaton_of(words)


def find_words(text: str, words: Tuple[str, ...]) -> FrozenSet[str]:
    """The ``words`` that occur in ``text`` as substrings."""
    automaton = _automaton(words) if len(text) > 256 else None
    if automaton is not None:
        try:
            return frozenset(automaton.find_matches_as_strings(text, overlapping=True))
        except UnicodeEncodeError:  # a lone surrogate (bytes decoded with surrogateescape)
            pass
    return frozenset(w for w in words if w in text)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def whole_word_positions(text: str, word: str) -> List[int]:
    """Offsets where ``word`` (word characters) occurs as a whole word: no letter, digit or
    ``_`` either side."""
    found: List[int] = []
    n = len(word)
    pos = text.find(word)
    while pos != -1:
        if (pos == 0 or not _word_char(text[pos - 1])) and (
            pos + n >= len(text) or not _word_char(text[pos + n])
        ):
            found.append(pos)
        pos = text.find(word, pos + n)
    return found


def line_numbers(text: str, offsets: Iterable[int]) -> List[int]:
    """The 1-based line of each of the sorted ``offsets`` (newlines counted between
    consecutive ones: linear in the text)."""
    lines: List[int] = []
    line, last = 1, 0
    for pos in offsets:
        line += text.count("\n", last, pos)
        last = pos
        lines.append(line)
    return lines
