"""The project model's text pre-pass: what a Python module's text says without parsing it.

``rocm_lint.python.project`` asks these before any parse: which project modules a file imports
(:func:`imported_modules`), which top-level definitions hold a fact's evidence
(:func:`top_level_blocks`, :func:`lines_with`, :func:`called`), which exported names a file can
reach as ``ModuleContext.exported`` resolves names (:func:`reachable`: imported by name from a
project module, read through an imported one, or defined in the file), and which names are worth a
trigger word (:func:`usable_trigger`).  Every regex is linear; nothing here reads a file.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import AbstractSet, Dict, FrozenSet, Iterable, List, Set, Tuple

from rocm_lint.words import automaton_of, find_words

# Top-level names that never resolve to a project module (saves file-system probes).
NEVER_PROJECT = frozenset(
    {
        "torch",
        "os",
        "sys",
        "re",
        "typing",
        "math",
        "numpy",
        "np",
        "subprocess",
        "functools",
        "itertools",
        "collections",
        "dataclasses",
        "pathlib",
        "json",
        "logging",
        "warnings",
        "contextlib",
        "abc",
        "enum",
        "time",
        "shutil",
        "argparse",
        "unittest",
        "pytest",
        "triton",
        "setuptools",
        "packaging",
        "importlib",
        "copy",
        "inspect",
        "glob",
        "io",
        "random",
        "string",
        "tempfile",
        "threading",
        "multiprocessing",
    }
)


def is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


# ``from .utils import x`` / ``import pkg.utils``: the modules a file imports, by text (linear:
# each alternative consumes a distinct character class).
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.+[\w.]*|\w[\w.]*)[ \t]+import\b|import[ \t]+(\w[\w.]*))", re.M)


# Other top-level statements: they end the block of the def/assignment before them (a
# ``log = logging.getLogger()`` line is not the class that follows it).
_TOP_OTHER = re.compile(
    r"\n(?:class[ \t]|@|if[ \t(]|elif[ \t(]|else[ \t]*:|try[ \t]*:|except\b|finally\b"
    r"|for[ \t]|while[ \t]|with[ \t]|async[ \t]+(?:with|for)[ \t]|import[ \t]|from[ \t])"
)


def top_level_blocks(text: str) -> List[Tuple[str, int, int]]:
    """(name, start, end): each top-level def/assignment up to the next top-level statement."""
    led = "\n" + text  # newline-led patterns: a match at k starts the line at text offset k
    heads = sorted(
        [(m.start(), m.group(1) or m.group(2)) for m in _TOP_NAME.finditer(led)]
        + [(m.start(), "") for m in _TOP_OTHER.finditer(led)]
    )
    return [
        (name, start, heads[i + 1][0] if i + 1 < len(heads) else len(text))
        for i, (start, name) in enumerate(heads)
        if name
    ]


def called(text: str, words: Iterable[str]) -> bool:
    """Does ``text`` call one of ``words`` (``word(`` or ``word (``, as a whole word)?"""
    for word in words:
        pos = text.find(word)
        while pos != -1:
            end = pos + len(word)
            if pos == 0 or not is_word_char(text[pos - 1]):
                rest = text[end : end + 8].lstrip(" \t")
                if rest.startswith("("):
                    return True
            pos = text.find(word, end)
    return False


def importable(path: str) -> bool:
    """Could another module import names from this file?  Not a ``setup.py`` script nor a
    test module (their names would only make other files look interesting)."""
    name = os.path.basename(path)
    return (
        name not in ("setup.py", "conftest.py", "__main__.py")
        and not name.startswith("test_")
        and not name.endswith("_test.py")
    )


def lines_with(text: str, word: str, limit: int = 64) -> List[str]:
    """The lines of ``text`` that hold ``word`` (at most ``limit``)."""
    lines = []
    pos = text.find(word)
    while pos != -1 and len(lines) < limit:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        lines.append(text[start:end])
        pos = text.find(word, end)
    return lines


def imported_modules(text: str) -> List[str]:
    names: Dict[str, None] = {}
    for m in _IMPORT.finditer(text):
        name = m.group(1) or m.group(2)
        if name and name.strip(".") not in NEVER_PROJECT and name.split(".", 1)[0] not in NEVER_PROJECT:
            names[name] = None
    return list(names)


# ``from M import a, b as c`` (parenthesised lists, bounded) and ``import a.b as c, d``; led by
# a newline (the text is searched as "\n" + text): sre then skips to line starts itself.
_FROM_NAMES = re.compile(
    r"\n[ \t]*from[ \t]+(\.+[\w.]*|\w[\w.]*)[ \t]+import[ \t]*(\([^)]{0,20000}\)?|[^\n]*)"
)
_IMPORT_NAMES = re.compile(r"\n[ \t]*import[ \t]+([^\n;#]*)")
# A top-level ``def name`` / ``async def name`` / ``NAME =`` / ``NAME: T =`` line, newline-led.
_TOP_NAME = re.compile(r"\n(?:(?:async[ \t]+)?def[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?\+?=(?!=))")
_CHAIN = re.compile(r"(?:[ \t]*\.[ \t]*\w+)+")


@lru_cache(maxsize=16)
def _ordered(words: FrozenSet[str]) -> Tuple[str, ...]:
    return tuple(sorted(words))


def _is_project_module(name: str) -> bool:
    return name.startswith(".") or name.split(".", 1)[0] not in NEVER_PROJECT


def _import_bindings(text: str) -> Tuple[Set[str], Set[str]]:
    """(names imported by name from project modules, names bound to project modules), by text."""
    by_name: Set[str] = set()
    modules: Set[str] = set()
    if "import" not in text:
        return by_name, modules
    led = "\n" + text
    for m in _FROM_NAMES.finditer(led):
        if not _is_project_module(m.group(1)):
            continue
        names = m.group(2)
        for part in names.strip("()\\ \t").replace("\n", ",").split(","):
            words = part.split("#", 1)[0].split()
            if not words or words[0] == "#":
                continue
            if not words[0].isidentifier():
                break  # a comment: the rest of the line says nothing
            by_name.add(words[0])
            modules.add(words[-1])  # ``from pkg import utils``: utils.get_cc() reaches utils
    for m in _IMPORT_NAMES.finditer(led):
        for part in m.group(1).split(","):
            words = part.split()
            if words and _is_project_module(words[0]):
                modules.add(words[-1] if len(words) == 3 and words[1] == "as" else words[0].split(".", 1)[0])
    return by_name, modules


def _top_level_names(text: str) -> Set[str]:
    return {m.group(1) or m.group(2) for m in _TOP_NAME.finditer("\n" + text)}


def _dotted(text: str, modules: Set[str]) -> Iterable[str]:
    """The ``modules`` that occur followed by a dot, maybe after blanks (a superset of the roots
    of ``module.a`` chains: most imported names are functions, never read through a dot).  Three
    substring searches per module were four fifths of the project model's per-file question on
    torch and diffusers (a file imports tens of names); past a few modules one Aho-Corasick pass
    over the three spellings of all of them answers the same (1.04 s -> 0.33 s over both trees)."""
    if len(modules) > 4:
        spellings = [module + tail for module in modules for tail in (".", " .", "\t.")]
        automaton = automaton_of(tuple(spellings), dfa=False)
        if automaton is not None:
            try:
                return {
                    spellings[i][:-1].rstrip(" \t")
                    for i, _start, _end in automaton.find_matches_as_indexes(text, overlapping=True)
                }
            except UnicodeEncodeError:  # a lone surrogate: searched one by one below
                pass
    return [m for m in modules if m + "." in text or m + " ." in text or m + "\t." in text]


def _attribute_names(text: str, modules: Set[str]) -> Set[str]:
    """The attribute names read through ``module.a.b`` chains rooted at one of ``modules``."""
    names: Set[str] = set()
    for module in _dotted(text, modules):
        pos = text.find(module)
        while pos != -1:
            end = pos + len(module)
            if pos == 0 or not (is_word_char(text[pos - 1]) or text[pos - 1] == "."):
                m = _CHAIN.match(text, end)
                if m:
                    names.update(part.strip() for part in m.group().split(".")[1:])
            pos = text.find(module, end)
    return names


def reachable(text: str, words: AbstractSet[str]) -> List[str]:
    """The ``words`` that name an export this file can reach, as ``ModuleContext.exported``
    resolves names: imported by name from a project module, read as an attribute of an
    imported project module (``utils.get_cc``), or defined at the top of the file itself."""
    if not words:
        return []
    # Each of the three sources is a name the text spells out, so only the words the text
    # holds can be in the answer: one Aho-Corasick pass (a DFA per word set, kept) finds them,
    # and a file holding none (most files: the exported triggers are a project's few wrappers)
    # costs no import or chain search.
    words = find_words(text, _ordered(frozenset(words)))
    if not words:
        return []
    by_name, modules = _import_bindings(text)
    found = (by_name | _top_level_names(text)) & words
    if modules:
        found |= _attribute_names(text, modules) & words
    return sorted(found)


def _mentioned(text: str, words: Iterable[str]) -> List[str]:
    """The ``words`` that ``text`` holds as whole words."""
    found = []
    for word in words:
        pos = text.find(word)
        while pos != -1:  # a whole-word occurrence?
            end = pos + len(word)
            if (pos == 0 or not is_word_char(text[pos - 1])) and (
                end == len(text) or not is_word_char(text[end])
            ):
                found.append(word)
                break
            pos = text.find(word, end)
    return sorted(found)


def usable_trigger(word: str) -> bool:
    """A candidate name worth a trigger: not short, not a test or ``main`` (every project has them)."""
    return word.isidentifier() and len(word) > 2 and not word.startswith(("test", "Test")) and word != "main"
