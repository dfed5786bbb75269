"""The project model's per-file question, "which exported names can this file reach?"
(``project_text.reachable``), answered fast: the words the text holds first (an Aho-Corasick
pass), the modules read through a dot by one pass when there are many.  Both are pre-filters,
so the answer must be the one of the plain definition, written out here."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rocm_lint.python import project_text
from rocm_lint.python.project_text import _import_bindings, _top_level_names, is_word_char, reachable

NAMES = ["utils", "cc", "get_cc", "ops", "fp8", "kernels", "u", "is_sm90", "V", "config", "a_b"]


def _plain_attribute_names(text, modules):
    names = set()
    for module in modules:
        pos = text.find(module)
        while pos != -1:
            end = pos + len(module)
            if pos == 0 or not (is_word_char(text[pos - 1]) or text[pos - 1] == "."):
                m = project_text._CHAIN.match(text, end)
                if m:
                    names.update(part.strip() for part in m.group().split(".")[1:])
            pos = text.find(module, end)
    return names


def _plain_reachable(text, words):
    by_name, modules = _import_bindings(text)
    found = (by_name | _top_level_names(text)) & set(words)
    return sorted(found | (_plain_attribute_names(text, modules) & set(words)))


PIECES = st.sampled_from(
    [
        "from .utils import get_cc, cc as c2\n",
        "from kernels import (ops,\n  fp8)\n",
        "import pkg.utils as u\n",
        "import utils, config\n",
        "from . import V\n",
        "x = utils.get_cc()\n",
        "y = u . is_sm90\n",
        "z = u\t.fp8\n",
        "def is_sm90():\n    return 1\n",
        "a_b = 3\n",
        "V.config.a_b\n",
        "self.utils.cc\n",
        "xutils.cc\n",
        "print(ops.kernels.fp8)\n",
        "\udcff",
        "é",
        " ",
        ".",
        "\n",
        "#",
        "(",
        "x" * 300,
        "from a import b, c, d, e, f, g\n",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=30), st.sets(st.sampled_from(NAMES)))
def test_reachable_is_the_plain_definition(parts, words):
    text = "".join(parts)
    assert reachable(text, frozenset(words)) == _plain_reachable(text, words)


def test_many_modules_read_through_dots():
    text = (
        "from .m import "
        + ", ".join(f"n{i}" for i in range(20))
        + "\n"
        + "x = n3.get_cc\ny = n7 .is_sm90\nz = n9\t.fp8 + an9.cc\n"
        + "pad\n" * 100
    )
    assert reachable(text, frozenset(NAMES)) == _plain_reachable(text, NAMES) == ["fp8", "get_cc", "is_sm90"]
