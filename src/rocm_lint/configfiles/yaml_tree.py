"""YAML read by a real parser, for the environment entries the line reader (``yamlish.py``) cannot see.

The line reader finds ``env:``/``environment:``/``variables:``/``args:`` entries where they are
written.  Three shapes people write are beyond it, and ruamel.yaml (imported here, on the first
YAML file that needs it) reads them:

* anchors, aliases and merge keys: ``x-env: &env {A: 1}`` ... ``environment: *env``, or
  ``environment: {<<: *env}``: the entries are reported once, where they are defined (where a
  person fixes them), whatever the number of aliases; where each alias is used decides whether
  the entry can reach ROCm (an entry used only by NVIDIA jobs stays silent);
* flow maps with quoted keys: ``env: {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}``;
* flow sequences: ``environment: [A=1, B=2]``.

The text is composed into ruamel's node graph (the parser and composer of its loaders, with each
node's start and end offsets; an alias is the anchored node itself, so alias bombs stay linear),
not constructed into Python objects: construction flattens merge keys (a chain of 2,000 merges
took 27 s) and the pure-Python round-trip loader takes ~12 s on a 600 kB file.  The C parser
(ruamel.yaml.clib) is used where installed, the pure one otherwise (with a smaller size bound).

Bounded: files over :data:`MAX_CHARS` (:data:`MAX_CHARS_PURE` for the pure parser), nested deeper
than :data:`MAX_DEPTH`, or with more than :data:`MAX_ALIASES` aliases or :data:`MAX_MERGES` merge
keys are left to the line reader, as is any file the parser rejects; the walk over the nodes
stops after :data:`MAX_STEPS` steps.  ``None`` from :func:`tree_env` means "left to the line
reader".
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

MAX_CHARS = 1 << 20  # the C parser composes ~1 MB/s
MAX_CHARS_PURE = 64 << 10  # the pure-Python parser: ~15x slower (~1 s for 64 kB)
MAX_DEPTH = 100  # block and flow nesting (the composer recurses per level)
MAX_ALIASES = 5000
MAX_MERGES = 500
MAX_STEPS = 200_000

ENV_KEYS = frozenset({"env", "environment", "variables", "args"})
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_ITEM_ASSIGN = re.compile(r"([A-Za-z_]\w*)=")
# what the line reader cannot follow: an alias (`*name`; not a glob or a cron field: `*.py`, `* *`),
# a merge key, a flow map or list after an env key (a flow list under `args:` is argv)
_NEEDS_TREE = re.compile(
    r"(?:^|[\s\[{,:-])\*[A-Za-z0-9_]|<<[ \t]*:"
    r"|(?:^|[\s{,-])(?:(?:env|environment|variables)[\"']?[ \t]*:[ \t]*[{\[]"
    r"|args[\"']?[ \t]*:[ \t]*\{)",
    re.M,
)
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class TreeEntry:
    name: str
    name_start: int
    value: str
    value_start: int
    value_end: int
    quoted: bool
    uses: Tuple[int, ...]  # offsets of the env keys that bring the entry in (for the gates)


def needs_tree(text: str) -> bool:
    """Does the text hold a shape only the parser reads (cheap: most YAML files do not)?"""
    return _NEEDS_TREE.search(text) is not None


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """An upper bound of the block and flow nesting, in one pass (stops counting past ``limit``):
    flow brackets outside quotes and comments (open across lines), plus the indentation levels
    open at a line."""
    deepest = flow = block = 0
    indents: List[int] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if not flow:  # inside a flow collection, indentation opens nothing
            col = len(line) - len(body)
            while indents and indents[-1] >= col:
                indents.pop()
            indents.append(col)
            # `- - - x`: every dash opens a level too
            dashes = 0
            while body.startswith("- ") or body == "-":
                dashes += 1
                body = body[2:].lstrip(" ")
            block = len(indents) + dashes
        depth = block + flow
        quote = ""
        prev = " "
        for c in body:
            if quote:
                if c == quote:
                    quote = ""
            elif c in "\"'" and prev in " \t[{,:":
                quote = c
            elif c == "#" and prev in " \t":
                break
            elif c in "[{":
                flow += 1
                depth = max(depth, block + flow)
            elif c in "]}":
                flow = max(0, flow - 1)
            prev = c
        deepest = max(deepest, depth)
        if deepest > limit:
            break
    return deepest


def _parser():
    """ruamel.yaml's composer: the C one where ruamel.yaml.clib is installed (None: no ruamel)."""
    try:
        from ruamel.yaml import YAML
    except ImportError:  # pragma: no cover - a dependency; without it the line reader reads alone
        return None, True
    yaml = YAML(typ="safe", pure=False)  # ruamel picks its C parser when one is installed
    return yaml, getattr(yaml, "Parser", None).__name__ != "CParser"


def compose(text: str) -> Optional[list]:
    """The documents of ``text`` as ruamel nodes, or None (out of bounds, rejected, no ruamel)."""
    if len(text) > MAX_CHARS or text.count("<<") > MAX_MERGES or text.count("*") > MAX_ALIASES * 4:
        return None
    if nesting_depth(text) > MAX_DEPTH:
        return None
    yaml, pure = _parser()
    if yaml is None or (pure and len(text) > MAX_CHARS_PURE):
        return None
    try:
        return [d for d in yaml.compose_all(text) if d is not None]
    except Exception:  # YAMLError, RecursionError, whatever a malformed file raises inside the parser
        return None


def tree_env(text: str, bom: bool = False) -> Optional[List[TreeEntry]]:
    """The environment entries of every env key's value, reached through aliases and merge keys
    too: each once, at the node that defines it, with the env keys that use it.  ``bom``: the
    first character is a blanked byte order mark."""
    clean, to_text = _without_page_breaks(text, bom)
    docs = compose(clean)
    if docs is None:
        return None
    walk = _Walk(clean)
    try:
        for doc in docs:
            walk.run(doc)
    except _Budget:
        return None
    return [
        TreeEntry(
            name,
            to_text(start),
            value,
            to_text(vs),
            to_text(ve),
            quoted,
            tuple(sorted(to_text(u) for u in walk.uses[vs])),
        )
        for name, start, value, vs, ve, quoted in walk.entries.values()
    ]


def _without_page_breaks(text: str, bom: bool):
    """The text the parser reads: without a blanked byte order mark and without the leading blanks
    up to a form feed (a page break starts the indentation again, as the line reader reads it),
    and the map from its offsets back to ``text``'s."""
    if "\f" not in text and not bom:
        return text, lambda i: i
    clean_starts: List[int] = []
    removed: List[int] = []
    text_starts: List[int] = []
    parts = []
    pos = clean_pos = 0
    for k, line in enumerate(text.split("\n")):
        lead = len(line) - len(line.lstrip(" \t\f"))
        cut = max(line.rfind("\f", 0, lead) + 1, 1 if bom and k == 0 else 0)
        parts.append(line[cut:])
        text_starts.append(pos)
        clean_starts.append(clean_pos)
        removed.append(cut)
        pos += len(line) + 1
        clean_pos += len(line) - cut + 1

    def to_text(i: int) -> int:
        k = bisect_right(clean_starts, i) - 1
        return text_starts[k] + removed[k] + i - clean_starts[k]

    return "\n".join(parts), to_text


class _Budget(Exception):
    pass


class _Walk:
    def __init__(self, text: str) -> None:
        self.text = text
        self.steps = 0
        self.seen: set = set()
        self.entries: Dict[int, tuple] = {}  # value start -> (name, name_start, value, vs, ve, quoted)
        self.uses: Dict[int, set] = {}  # value start -> env key offsets

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Budget()

    def run(self, root) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in self.seen:
                continue
            self.seen.add(id(node))
            self.step()
            value = node.value
            if not isinstance(value, list):
                continue
            for item in value:
                if isinstance(item, tuple):  # a mapping's (key, value)
                    key, val = item
                    stack.append(val)
                    if _is_scalar(key) and key.value in ENV_KEYS and key.tag != _MERGE_TAG:
                        self.env_value(key, val)
                else:
                    stack.append(item)

    def add(self, entry: tuple, use: int) -> None:
        vs = entry[3]
        self.entries.setdefault(vs, entry)
        self.uses.setdefault(vs, set()).add(use)

    def env_value(self, key, val) -> None:
        use = key.start_mark.index
        if _is_mapping(val):
            for entry in self.map_entries(val):
                self.add(entry, use)
        elif _is_sequence(val):
            flow = self.text[self._past_props(val.start_mark.index) :][:1] == "["
            if flow and key.value == "args":  # a flow list under args: is argv, not environment
                return
            for item in val.value:
                self.step()
                if _is_scalar(item):
                    m = _ITEM_ASSIGN.match(item.value)
                    span = self.scalar_span(item)
                    if m and span:
                        vs, ve, quoted = span
                        self.add((m.group(1), vs, item.value[m.end() :], vs + m.end(), ve, quoted), use)
                elif _is_mapping(item):
                    entry = self.name_value_item(item)
                    if entry:
                        self.add(entry, use)

    def map_entries(self, node, depth: int = 0, merged_seen: Optional[set] = None):
        """``NAME: value`` entries of a mapping, its merged mappings' after its own (an own key
        overrides a merged one); a mapping merged twice is read once."""
        merged_seen = {id(node)} if merged_seen is None else merged_seen
        own = set()
        merged = []
        out = []
        for key, val in node.value:
            self.step()
            if not _is_scalar(key):
                continue
            if key.tag == _MERGE_TAG:
                merged.extend(val.value if _is_sequence(val) else [val])
                continue
            own.add(key.value)
            if not _NAME.match(key.value):
                continue
            if _is_mapping(val):  # GitLab: `NAME: {value: v, description: ...}`
                inner = [v for k, v in val.value if _is_scalar(k) and k.value == "value"]
                if not inner:
                    continue
                val = inner[0]
            if not _is_scalar(val) or val.style in ("|", ">") or val.value == "" and val.style is None:
                continue
            span = self.scalar_span(val)
            if span:
                vs, ve, quoted = span
                name_start = self._past_props(key.start_mark.index) + (1 if key.style in ("'", '"') else 0)
                if name_start > vs:  # an alias to a scalar defined earlier: report it at the definition
                    name_start = vs
                out.append((key.value, name_start, val.value, vs, ve, quoted))
        if depth < MAX_DEPTH:
            for m in merged:
                if _is_mapping(m) and id(m) not in merged_seen:
                    merged_seen.add(id(m))
                    # `<<: [*a, *b]`: a key of *a wins over the same key of *b
                    fresh = [e for e in self.map_entries(m, depth + 1, merged_seen) if e[0] not in own]
                    own.update(e[0] for e in fresh)
                    out.extend(fresh)
        return out

    def name_value_item(self, node) -> Optional[tuple]:
        """A Kubernetes ``- name: NAME`` / ``value: v`` item."""
        fields = {k.value: v for k, v in node.value if _is_scalar(k)}
        name, val = fields.get("name"), fields.get("value")
        if not (_is_scalar(name) and _is_scalar(val) and _NAME.match(name.value)) or val.style in ("|", ">"):
            return None
        span = self.scalar_span(val)
        if not span:
            return None
        vs, ve, quoted = span
        return (name.value, vs, val.value, vs, ve, quoted)

    def _past_props(self, p: int) -> int:
        """Past an anchor (``&x``) and a tag (``!t``) in front of a node."""
        text = self.text
        while p < len(text) and text[p] in "&!":
            while p < len(text) and text[p] not in " \t\n":
                p += 1
            while p < len(text) and text[p] in " \t\n":
                p += 1
        return p

    def scalar_span(self, node) -> Optional[Tuple[int, int, bool]]:
        """(value start, value end, quoted): inside the quotes of a quoted scalar."""
        start, end = self._past_props(node.start_mark.index), node.end_mark.index
        if start > end:
            return None
        if node.style in ("'", '"'):
            return start + 1, max(start + 1, end - 1), True
        return start, end, False


def _is_scalar(node) -> bool:
    return type(node).__name__ == "ScalarNode"


def _is_mapping(node) -> bool:
    return type(node).__name__ == "MappingNode"


def _is_sequence(node) -> bool:
    return type(node).__name__ == "SequenceNode"
