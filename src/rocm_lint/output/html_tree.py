"""Findings rolled up by directory, as an expandable tree (``output/html.py``).

Every directory that holds a finding, however deep, is reachable: the scanned root, then its
directories, each a ``<details>`` element (no script needed) whose summary carries the counts
rolled up from everything below it, the mix of families as a stacked bar, and how many of them
sit in sources the ROCm build compiles and how many in NVIDIA-only sources
(``--report-nvidia-only-sources``).  A directory with no findings of its own and one
subdirectory is shown with it (``a/b/``), as editors compact folders.  Each directory lists its
own files, linked to their findings.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

from rocm_lint.output.html_parts import anchor, esc
from rocm_lint.rule import FAMILIES

OPEN_DEPTH = 1  # the root and its directories start open; deeper ones are a click away


class DirNode:
    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path
        self.families: Counter = Counter()
        self.nvidia_only = 0
        self.files: Dict[str, Tuple[int, int]] = {}  # label -> (findings, in NVIDIA-only sources)
        self.children: Dict[str, "DirNode"] = {}

    @property
    def total(self) -> int:
        return sum(self.families.values())

    def add(self, family: str, nvidia_only: bool) -> None:
        self.families[family] += 1
        self.nvidia_only += nvidia_only

    def walk(self) -> Iterable["DirNode"]:
        """This node and every one below it (no recursion: a tree may be deeper than Python's stack)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())


def split_label(label: str) -> Tuple[List[str], str]:
    """(directory parts, file name) of a report label; an absolute label's first part is ``/``."""
    parts = label.split("/")
    dirs, name = parts[:-1], parts[-1]
    if dirs and dirs[0] == "":
        dirs[0] = "/"
    return [d for d in dirs if d], name


def build_tree(rows: Iterable[Tuple[str, str, bool]]) -> DirNode:
    """The tree of (file label, family, in an NVIDIA-only source) rows, rooted at the scanned
    directory ``.``; each finding counts in its directory and every directory above it."""
    root = DirNode(".", ".")
    for label, family, nvidia_only in rows:
        dirs, _ = split_label(label)
        node = root
        node.add(family, nvidia_only)
        for i, part in enumerate(dirs):
            if part not in node.children:
                path = "/".join(dirs[: i + 1]).replace("//", "/")
                node.children[part] = DirNode(part, path)
            node = node.children[part]
            node.add(family, nvidia_only)
        n, nv = node.files.get(label, (0, 0))
        node.files[label] = (n + 1, nv + nvidia_only)
    for node in root.walk():
        if node is not root:
            _compact(node)
    return root


def _compact(node: DirNode) -> None:
    """Fold a chain of directories that hold nothing but one subdirectory into ``node``."""
    while not node.files and len(node.children) == 1:
        (child,) = node.children.values()
        node.name = f"{node.name.rstrip('/')}/{child.name}"
        node.path = child.path
        node.files, node.children = child.files, child.children


def _mix(families: Counter, total: int) -> str:
    """The families of a directory's findings as one stacked bar (coloured by family)."""
    label = ", ".join(f"{fam} {n}" for fam, n in sorted(families.items()))
    parts = "".join(
        f'<i class="fam-{esc(fam)}" style="width:{100 * n / total:.2f}%" title="{esc(fam)} '
        f'{esc(FAMILIES.get(fam, ""))}: {n}"></i>'
        for fam, n in sorted(families.items())
    )
    return f'<span class="mix" role="img" aria-label="{esc(label)}">{parts}</span>'


def _split(node_total: int, nvidia_only: int, show: bool) -> str:
    if not show:
        return ""
    return (
        f'<span class="split" title="{node_total - nvidia_only} in sources the ROCm build compiles, '
        f'{nvidia_only} in sources it never compiles"><b>{node_total - nvidia_only}</b> ROCm build \u00b7 '
        f"<b>{nvidia_only}</b> NVIDIA-only</span>"
    )


def _open_tag(node: DirNode, depth: int, show_split: bool) -> str:
    total = node.total
    opened = " open" if depth <= OPEN_DEPTH else ""
    shown = "./" if node.path == "." else (node.name if node.name == "/" else node.name.rstrip("/") + "/")
    return (
        f'<details class="dir" data-path="{esc(node.path)}" data-count="{total}" '
        f'data-rocm="{total - node.nvidia_only}" data-nvidia-only="{node.nvidia_only}"{opened}>'
        f'<summary><span class="dir-name">{esc(shown)}</span> <b class="dir-count">{total}</b>'
        f"{_mix(node.families, total)}{_split(total, node.nvidia_only, show_split)}</summary>"
    )


def _files(node: DirNode) -> str:
    if not node.files:
        return ""
    out = ['<ul class="dir-files">']
    for label, (n, nv) in sorted(node.files.items(), key=lambda kv: (-kv[1][0], kv[0])):
        name = label.rsplit("/", 1)[-1]
        note = (
            f' <span class="nvidia-only" title="the ROCm build never compiles this source">'
            f"{nv} in an NVIDIA-only source</span>"
            if nv
            else ""
        )
        out.append(
            f'<li class="dir-file" data-count="{n}" data-nvidia-only="{nv}">'
            f'<a href="#{anchor(label)}">{esc(name)}</a> ({n}){note}</li>'
        )
    out.append("</ul>")
    return "".join(out)


def _render(root: DirNode, show_split: bool, out: List[str]) -> None:
    """Each directory: its summary, its subdirectories (most findings first), its files.  An
    explicit stack, not recursion: a tree may be deeper than Python's stack."""
    stack: List[Tuple[DirNode, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, closing = stack.pop()
        if closing:
            out.append(_files(node) + "</details>")
            continue
        out.append(_open_tag(node, depth, show_split))
        stack.append((node, depth, True))
        children = sorted(node.children.values(), key=lambda c: (-c.total, c.name))
        stack.extend((child, depth + 1, False) for child in reversed(children))


def render_tree(rows: Iterable[Tuple[str, str, bool]], *, show_split: bool) -> Optional[str]:
    """The tree as HTML (None when there is no finding)."""
    root = build_tree(rows)
    if not root.total:
        return None
    out: List[str] = ['<div id="dir-tree">']
    _render(root, show_split, out)
    out.append("</div>")
    return "".join(out)
