"""The trigger-word search (engine.find_words): one Aho-Corasick DFA pass when ahocorasick-rs is
installed, one ``in`` per word without it; both must name exactly the words ``w in text`` names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_lint import engine, words
from rocm_lint.engine import _triggers, python_codes
from rocm_lint.words import find_words

WORDS = _triggers(python_codes(), "python") + _triggers(engine.enabled_codes(engine.Config()), "cuda")


def _naive(text, words):
    return frozenset(w for w in words if w in text)


def test_the_automaton_is_in_use():
    assert words._automaton(WORDS) is not None  # ahocorasick-rs is a dependency


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(WORDS),
            st.text(max_size=8),
            st.sampled_from(["\udcff", "\U0001f600", "é", "\n", " ", "x" * 1100]),
        ),
        max_size=40,
    )
)
def test_finds_exactly_the_words_a_substring_search_finds(parts):
    text = "".join(parts)
    assert find_words(text, WORDS) == _naive(text, WORDS)


def test_a_lone_surrogate_is_searched_word_by_word():
    text = "x" * 2000 + "\udcff allow_tf32 sm"
    assert find_words(text, WORDS) == _naive(text, WORDS) and {"allow_tf32", "sm"} <= find_words(text, WORDS)


def test_overlapping_and_nested_words():
    text = "x" * 2000 + "torch.backends.cuda.matmul.allow_tf32 get_device_capability() arch=sm_90 ccap"
    assert find_words(text, WORDS) == _naive(text, WORDS)
    assert {"allow_tf32", "get_device_capability", "cap", "arch", "arch=", "sm", "cc"} <= find_words(
        text, WORDS
    )


def test_without_ahocorasick_rs_every_word_is_searched(monkeypatch):
    monkeypatch.setattr(words, "_automaton", lambda _words: None)
    text = "y" * 2000 + " nvtx.range_push('a') # CC"
    found = find_words(text, WORDS)
    assert found == _naive(text, WORDS) and {"nvtx", "CC"} <= found
