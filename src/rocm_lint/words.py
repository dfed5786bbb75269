"""Which of many words occur in a text: the trigger pre-filter of every file.

``w in text`` per word scans the text once per word (a ninth of a run over the torch sources);
with ``pyahocorasick`` installed, one Aho-Corasick pass finds the longer words and a plain
``in``, which stops at the first occurrence, the short frequent ones.  Without the package every
word is searched on its own: the same answer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Tuple

# Words this short are frequent (``cc``, ``sm``, ``cap``): one ``in`` each, which stops at the
# first occurrence, costs less than reporting their every occurrence from the automaton.
_SHORT = 3


@lru_cache(maxsize=32)
def _automaton(words: Tuple[str, ...]):
    """An Aho-Corasick automaton of the longer ``words`` (one pass over a text for all of
    them, where ``w in text`` per word scanned a text once per word: a ninth of a tree's run),
    or None without the ``pyahocorasick`` package (then every word is searched on its own)."""
    try:
        import ahocorasick
    except ImportError:
        return None
    automaton = ahocorasick.Automaton()
    for word in words:
        if len(word) > _SHORT:
            automaton.add_word(word, word)
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton


def find_words(text: str, words: Tuple[str, ...]) -> FrozenSet[str]:
    """The ``words`` that occur in ``text`` as substrings."""
    automaton = _automaton(words) if len(text) > 1024 else None
    if automaton is None:
        return frozenset(w for w in words if w in text)
    found = {word for _end, word in automaton.iter(text)}
    found.update(w for w in words if len(w) <= _SHORT and w in text)
    return frozenset(found)
