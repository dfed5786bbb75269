"""A line-based reader of the YAML shapes that carry environment settings and scripts.

It reads every file, templated ones too (Helm, Jinja: lines that hold only ``{{ ... }}`` /
``{% ... %}`` / ``{# ... #}`` tags are blanked first, offsets and line numbers kept, so an
``{{- if .Values.debug }}`` inside an ``env:`` list no longer ends the list).  Anchors, aliases,
merge keys and flow collections it cannot follow are read by a YAML parser (``yaml_tree.py``,
ruamel.yaml); its entries are added where the line reader found none.  It finds:

* environment maps and lists: ``env:`` / ``environment:`` / ``variables:`` (and
  docker-compose ``build: args:``) holding ``NAME: value`` entries (GitHub Actions, GitLab,
  docker-compose), ``- NAME=value`` items (docker-compose), ``- name: NAME`` + ``value: v``
  items (Kubernetes), or a one-line flow map ``{NAME: value, ...}``;
* scripts: ``run:``, ``script:``, ``before_script:``, ``after_script:``, ``command(s):``,
  ``entrypoint:`` as a block scalar (``|``/``>``), a plain or quoted scalar, or a list of them:
  their text is read as shell;
* scopes: each entry under ``jobs:`` / ``services:`` (or each document), so that a job that
  runs in an NVIDIA container does not make the whole file NVIDIA-only.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from rocm_lint.configfiles.dockerfile import is_nvidia_image
from rocm_lint.configfiles.shell import NVIDIA
from rocm_lint.configfiles.unit import Setting, UnitBuilder
from rocm_lint.configfiles.yaml_tree import ENV_KEYS, needs_tree, tree_env

SCRIPT_KEYS = {
    "run",
    "script",
    "before_script",
    "after_script",
    "command",
    "commands",
    "entrypoint",
    "pre_command",
    "post_command",
    "cmd",
}
SCOPE_KEYS = {"jobs", "services"}


@dataclass
class YamlEntry:
    name: str
    name_start: int
    value: str  # scalar with quotes removed
    value_start: int
    value_end: int
    quoted: bool


@dataclass
class YamlFacts:
    env: List[YamlEntry] = field(default_factory=list)
    scripts: List[Tuple[int, int, bool]] = field(default_factory=list)  # (start, end, folded) read as shell
    scopes: List[Tuple[int, int]] = field(default_factory=list)  # (start, end) of jobs/services entries
    exec_forms: List[Tuple[int, int]] = field(default_factory=list)  # one-line `command: [...]` lists


@dataclass
class _Line:
    start: int  # offset of the line
    indent: int  # columns of leading blanks
    body: str  # content without indentation or trailing comment (may be "")
    body_start: int  # offset of body


_KEY = re.compile(
    r"""(?P<dash>(?:-[ \t]+)*)(?P<key>[A-Za-z_][\w.-]*|"[^"]*"|'[^']*')[ \t]*:(?=[ \t]|$)[ \t]*"""
)


def _strip_comment(s: str) -> str:
    quote = None
    for i, c in enumerate(s):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'" and (i == 0 or s[i - 1] in " \t:[{,-"):
            quote = c
        elif c == "#" and (i == 0 or s[i - 1] in " \t"):
            return s[:i].rstrip()
    return s.rstrip()


def _lines(text: str, bom: bool = False) -> List[_Line]:
    """The lines of ``text``; a form feed in the leading blanks (a page break) starts the
    indentation again, as in Python; ``bom``: the first character is a blanked byte order mark,
    not indentation."""
    out = []
    pos = 0
    for raw in text.split("\n"):
        stripped = raw.lstrip(" \t\f")
        lead = len(raw) - len(stripped)
        indent = lead - (raw.rfind("\f", 0, lead) + 1)
        if bom and pos == 0 and indent:
            indent -= 1
        body = _strip_comment(stripped) if not stripped.startswith("#") else ""
        out.append(_Line(pos, indent, body, pos + lead))
        pos += len(raw) + 1
    return out


def scalar(text: str, start: int, end: int) -> Tuple[str, int, int, bool]:
    """A one-line scalar at ``text[start:end]``: (value, value start, value end, quoted)."""
    raw = text[start:end]
    s = raw.strip()
    if not s:
        return "", start, start, False
    lead = start + raw.index(s[0])
    if s[0] in "\"'" and len(s) >= 2 and s.endswith(s[0]):
        inner = s[1:-1]
        value = inner.replace("''", "'") if s[0] == "'" else re.sub(r"\\(.)", r"\1", inner)
        return value, lead + 1, lead + len(s) - 1, True
    return s, lead, lead + len(s), False


def read_yaml(text: str, bom: bool = False) -> YamlFacts:
    facts = YamlFacts()
    lines = _Lines(_lines(text, bom))
    n = len(lines)
    i = 0
    while i < n:
        ln = lines[i]
        if not ln.body:
            i += 1
            continue
        m = _KEY.match(ln.body)
        if not m:
            i += 1
            continue
        key = m.group("key").strip("\"'")
        key_col = ln.indent + len(m.group("dash"))
        rest_start = ln.body_start + m.end()
        rest = ln.body[m.end() :]
        block_end = _block_end(lines, i, key_col)
        if key in SCOPE_KEYS and not rest:
            _scopes(lines, i + 1, block_end, facts)
        if key in ENV_KEYS:
            if rest.startswith("{"):
                _flow_map(text, rest_start, ln.body_start + len(ln.body), facts)
            elif not rest:
                _env_block(text, lines, i + 1, block_end, facts)
        elif key in SCRIPT_KEYS:
            _script(text, lines, i, rest, rest_start, key_col, block_end, facts)
        if rest.startswith(("|", ">")):
            i = max(block_end, i + 1)  # a block scalar's lines are text, not keys
            continue
        i += 1
    return facts


class _Lines(list):
    """The lines, with what finds the end of a block in about constant time: scanning forward
    from every key was quadratic on deeply nested files (each block runs to the end)."""

    def __init__(self, lines: List[_Line]) -> None:
        super().__init__(lines)
        n = len(lines)
        # A line with a body ends the block of a key at column c when its "stop" column is <= c:
        # its indentation, or one more for a `- ` item (an item at the key's column stays in).
        inf = 1 << 62
        self.stop = [
            inf if not ln.body else ln.indent + (1 if ln.body.startswith("- ") or ln.body == "-" else 0)
            for ln in lines
        ]
        # next_lower[j]: the first line after j whose stop is lower than line j's (n: none)
        self.next_lower = [n] * n
        stack: List[int] = []
        for j in range(n - 1, -1, -1):
            while stack and self.stop[stack[-1]] >= self.stop[j]:
                stack.pop()
            self.next_lower[j] = stack[-1] if stack else n
            stack.append(j)
        # last_body[j]: the last line before j with a body (-1: none)
        self.last_body = [-1] * (n + 1)
        last = -1
        for j in range(n):
            self.last_body[j] = last
            if lines[j].body:
                last = j
        self.last_body[n] = last


def _block_end(lines: _Lines, i: int, key_col: int) -> int:
    """Index of the first line after line ``i`` that is not inside its value (more indented,
    blank, a comment, or a ``- `` item at the key's own column: compact sequences)."""
    n = len(lines)
    stop, next_lower = lines.stop, lines.next_lower
    j = i + 1
    while j < n and stop[j] > key_col:
        # lines up to next_lower[j] stop no lower than line j: none of them ends the block
        j = next_lower[j]
    return max(i + 1, lines.last_body[j] + 1)


def _scopes(lines: List[_Line], a: int, b: int, facts: YamlFacts) -> None:
    col = None
    starts = []
    for j in range(a, b):
        ln = lines[j]
        if not ln.body:
            continue
        if col is None:
            col = ln.indent
        if ln.indent == col and _KEY.match(ln.body):
            starts.append(j)
    for k, j in enumerate(starts):
        end_line = starts[k + 1] if k + 1 < len(starts) else b
        end = lines[end_line].start if end_line < len(lines) else lines[-1].start + len(lines[-1].body) + 1
        facts.scopes.append((lines[j].start, end))


def _flow_map(text: str, start: int, end: int, facts: YamlFacts) -> None:
    inner = text[start:end]
    close = inner.rfind("}")
    body_end = start + (close if close > 0 else len(inner))
    for m in _FLOW_ENTRY.finditer(text[start + 1 : body_end]):
        base = start + 1
        value, vs, ve, quoted = scalar(text, base + m.start("value"), base + m.end("value"))
        name = "name" if m.group("name") else "qname"
        facts.env.append(YamlEntry(m.group(name), base + m.start(name), value, vs, ve, quoted))


# `NAME: value` in a one-line flow map; the name may be quoted (`{"NAME": "1"}`)
_FLOW_ENTRY = re.compile(
    r"""(?:(?<![\w"'])(?P<name>[A-Za-z_]\w*)|(?<![^{,\s])(?P<q>["'])(?P<qname>[A-Za-z_]\w*)(?P=q))"""
    r"""[ \t]*:[ \t]*(?P<value>"[^"]*"|'[^']*'|[^,}]*)"""
)


_ITEM_ASSIGN = re.compile(r"([A-Za-z_]\w*)=")


def _env_block(text: str, lines: List[_Line], a: int, b: int, facts: YamlFacts) -> None:
    first = next((j for j in range(a, b) if lines[j].body), None)
    if first is None:
        return
    col = lines[first].indent
    if lines[first].body.startswith("-"):
        # a list: `- NAME=value` (compose) or `- name: NAME` / `value: v` (Kubernetes)
        items = [j for j in range(a, b) if lines[j].body.startswith("-") and lines[j].indent == col]
        for k, j in enumerate(items):
            end = items[k + 1] if k + 1 < len(items) else b
            ln = lines[j]
            item = re.match(r"-[ \t]*", ln.body)
            at = ln.body_start + item.end()
            value, vs, ve, quoted = scalar(text, at, ln.body_start + len(ln.body))
            m = _ITEM_ASSIGN.match(value)
            if m and not _KEY.match(ln.body[item.end() :]):
                facts.env.append(YamlEntry(m.group(1), vs, value[m.end() :], vs + m.end(), ve, quoted))
                continue
            fields = {}
            for jj in range(j, end):
                body = lines[jj].body[item.end() :] if jj == j else lines[jj].body
                base = lines[jj].body_start + (item.end() if jj == j else 0)
                km = _KEY.match(body)
                if km and not km.group("dash") and (jj == j or lines[jj].indent == ln.indent + item.end()):
                    fields[km.group("key").strip("\"'")] = (
                        base + km.end(),
                        lines[jj].body_start + len(lines[jj].body),
                        base + km.start("key"),
                    )
            if "name" in fields and "value" in fields:
                name, _, _, _ = scalar(text, fields["name"][0], fields["name"][1])
                if re.fullmatch(r"[A-Za-z_]\w*", name):
                    value, vs, ve, quoted = scalar(text, fields["value"][0], fields["value"][1])
                    if not value.startswith(("|", ">")):
                        facts.env.append(YamlEntry(name, vs, value, vs, ve, quoted))
        return
    for j in range(a, b):
        ln = lines[j]
        if not ln.body or ln.indent != col:
            continue
        km = _KEY.match(ln.body)
        if not km or km.group("dash"):
            continue
        name = km.group("key").strip("\"'")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            continue
        rest_start = ln.body_start + km.end()
        rest_end = ln.body_start + len(ln.body)
        if rest_start < rest_end:
            value, vs, ve, quoted = scalar(text, rest_start, rest_end)
            if value.startswith(("|", ">", "{", "[", "&", "*")):
                continue
            facts.env.append(YamlEntry(name, ln.body_start, value, vs, ve, quoted))
        else:  # GitLab: `NAME:` / `  value: v`
            for jj in range(j + 1, b):
                sub = lines[jj]
                if sub.body and sub.indent <= col:
                    break
                vm = re.match(r"value[ \t]*:[ \t]*", sub.body)
                if vm:
                    value, vs, ve, quoted = scalar(
                        text, sub.body_start + vm.end(), sub.body_start + len(sub.body)
                    )
                    facts.env.append(YamlEntry(name, ln.body_start, value, vs, ve, quoted))
                    break


def _script(
    text: str, lines: List[_Line], i: int, rest: str, rest_start: int, key_col: int, b: int, facts: YamlFacts
) -> None:
    if rest.startswith(("|", ">")):
        if i + 1 < b:
            facts.scripts.append((lines[i + 1].start, _end_of(lines, b), rest.startswith(">")))
        return
    if rest.startswith("["):
        facts.exec_forms.append((rest_start, lines[i].body_start + len(lines[i].body)))
        return
    if rest.startswith(("{", "&", "*")):
        return
    if rest:
        _scalar_script(text, lines, i, rest_start, b, facts)
        return
    # a list of scripts
    for j in range(i + 1, b):
        ln = lines[j]
        if ln.body.startswith("- ") or ln.body == "-":
            item = ln.body[1:].lstrip()
            item_start = ln.body_start + len(ln.body) - len(item)
            if item.startswith(("|", ">")):
                item_end = _block_end(lines, j, ln.indent)
                if j + 1 < item_end:
                    facts.scripts.append((lines[j + 1].start, _end_of(lines, item_end), item.startswith(">")))
            elif item and not item.startswith(("[", "{")) and not _KEY.match(item):
                _scalar_script(text, lines, j, item_start, _block_end(lines, j, ln.indent), facts)


def _scalar_script(text: str, lines: List[_Line], i: int, start: int, b: int, facts: YamlFacts) -> None:
    """A plain or quoted scalar from ``start`` (continuation lines up to line ``b``)."""
    end = _end_of(lines, b) if b > i + 1 else lines[i].body_start + len(lines[i].body)
    q = text[start] if start < len(text) else ""
    if q in "\"'":
        close = text.find(q, start + 1, end + 1)
        while q == '"' and close > 0 and text[close - 1] == "\\":
            close = text.find(q, close + 1, end + 1)
        facts.scripts.append((start + 1, close if close > 0 else end, True))
    else:
        facts.scripts.append((start, end, True))


def _end_of(lines: List[_Line], b: int) -> int:
    last = lines[b - 1]
    return last.body_start + len(last.body) if last.body else last.start


# -- YAML ---------------------------------------------------------------------------------------------
_YAML_NVIDIA = re.compile(
    r"nvidia\.com/gpu|\b(?:driver|runtime)[ \t]*:[ \t]*[\"']?nvidia|NVIDIA_VISIBLE_DEVICES"
    r"|\b(?:image|container)[ \t]*:[ \t]*[\"']?(\S+)|runs-on[ \t]*:.*\b(?:nvidia|cuda)\b",
    re.I,
)
_YAML_ROCM = re.compile(r"rocm|amd\.com/gpu|/dev/kfd|\bgfx\d|\bmi[123]\d\d\b", re.I)


def _yaml_gate(code: str, start: int, end: int) -> Optional[str]:
    part = code[start:end]
    if _YAML_ROCM.search(part):
        return None
    for m in _YAML_NVIDIA.finditer(part):
        if m.group(1) is None or is_nvidia_image(m.group(1).strip("\"'")):
            return NVIDIA
    return None


def _template_tags_only(line: str) -> bool:
    """Does the line hold only template tags (``{{- if .Values.x }}``, ``{% endif %}``,
    ``{{- end }} {{/* c */}}``)?  One pass, no regex."""
    pos, n, found = 0, len(line), False
    while True:
        while pos < n and line[pos] in " \t":
            pos += 1
        if pos == n:
            return found
        close = _TAG_CLOSE.get(line[pos : pos + 2])
        if close is None:
            return False
        end = line.find(close, pos + 2)
        if end < 0:
            return False
        pos, found = end + 2, True


_TAG_CLOSE = {"{{": "}}", "{%": "%}", "{#": "#}"}


def blank_template_lines(code: str) -> str:
    """``code`` with each line that holds only template tags blanked (same length: offsets and
    line numbers kept); the text itself when there is none."""
    if "{{" not in code and "{%" not in code and "{#" not in code:
        return code
    lines = code.split("\n")
    changed = False
    for k, line in enumerate(lines):
        if line.lstrip(" \t")[:1] == "{" and _template_tags_only(line.rstrip(" \r")):
            lines[k] = " " * len(line)
            changed = True
    return "\n".join(lines) if changed else code


def read_yaml_unit(b: UnitBuilder) -> None:
    code = b.code
    text = blank_template_lines(code)
    facts = read_yaml(text, b.bom)
    docs = [0] + [m.start() for m in re.finditer(r"(?m)^---", code)] + [len(code)]
    regions = [(a, z, _yaml_gate(code, a, z)) for a, z in zip(docs, docs[1:])]
    scopes = [(a, z, _yaml_gate(code, a, z)) for a, z in facts.scopes]

    # Scopes (jobs, services) follow each other: found by bisection, not by a scan per setting
    # (settings x jobs was quadratic); overlapping ones (never seen) are scanned in order.
    disjoint = all(z <= a2 for (_, z, _), (a2, _, _) in zip(scopes, scopes[1:]))
    scope_starts = [a for a, _, _ in scopes]
    region_starts = [a for a, _, _ in regions]

    def gate_at(offset: int) -> Optional[str]:
        if disjoint:
            k = bisect_right(scope_starts, offset) - 1
            if k >= 0 and scopes[k][0] <= offset < scopes[k][1]:
                return scopes[k][2]
        else:
            for a, z, g in scopes:
                if a <= offset < z:
                    return g
        k = bisect_right(region_starts, offset) - 1
        while k >= 0:  # regions are consecutive; an empty one may share its start with the next
            a, z, g = regions[k]
            if a <= offset < z:
                return g
            k -= 1
            if z <= offset:
                break
        return None

    for e in facts.env:
        computed = "$" in e.value or "{{" in e.value
        b.settings.append(
            Setting(
                e.name,
                e.value,
                e.name_start,
                e.value_start,
                e.value_end,
                "yaml",
                computed,
                False,
                gate_at(e.name_start),
            )
        )
    if needs_tree(text):
        # what the line reader found (its spans of a multi-line quoted value differ: the name too)
        found = {e.value_start for e in facts.env} | {e.value_end for e in facts.env}
        names = {(e.name, e.name_start) for e in facts.env}
        for t in tree_env(text, b.bom) or ():
            if t.value_start in found or t.value_end in found or (t.name, t.name_start) in names:
                continue
            # once, where it is defined; it can reach ROCm unless every env key that uses it is NVIDIA's
            gates = {gate_at(u) for u in t.uses}
            computed = "$" in t.value or "{{" in t.value
            b.settings.append(
                Setting(
                    t.name,
                    t.value,
                    t.name_start,
                    t.value_start,
                    t.value_end,
                    "yaml",
                    computed,
                    False,
                    gates.pop() if len(gates) == 1 else None,
                )
            )
    folded = None
    for start, end, fold in facts.scripts:
        if fold and "\n" in text[start:end]:  # a plain or folded scalar: its lines join with blanks
            if folded is None:
                folded = list(text)
            for p in range(start, end):
                if folded[p] == "\n" and text[p + 1 : p + 2] != "\n" and text[p - 1 : p] != "\n":
                    folded[p] = " "
    text = "".join(folded) if folded is not None else text
    for start, end, _ in facts.scripts:
        b.shell(start, end, gate_at(start), text=text)
    for start, end in facts.exec_forms:
        b.exec_form(start, end, gate_at(start))
