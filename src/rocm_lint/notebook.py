"""Jupyter notebooks (``.ipynb``): their code cells checked as one Python module, as ruff does.

The notebook's JSON (already read bounded and decoded by the engine) gives its code cells; their
source is joined with newlines into one module, IPython magics (`%time`, `!pip install`, `obj?`) turned
into blank lines (`pass` where indented) and cells run by a cell magic (`%%bash`) left out, so line numbers keep their
place.  ``lines`` maps each line of the joined module back to (cell number, row in the cell);
the engine checks the module like any Python file (noqa comments in a cell work as in a ``.py``
file) and :func:`to_cells` moves the findings back into their cells.  Cells are numbered from 1
counting every cell, markdown included (ruff's ``cell``).  Fixes are not offered on notebooks:
the engine drops them (``--fix`` leaves notebooks alone).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import List, Tuple, Union

from rocm_lint.finding import FileError, Finding
from rocm_lint.lines import char_col


@dataclass(frozen=True)
class Notebook:
    module: str  # the code cells' Python, joined
    lines: Tuple[Tuple[int, int], ...]  # joined line (index + 1) -> (cell number, row in the cell)
    python: bool  # False for a notebook of another kernel's language (R, Julia): nothing to check


_HELP = re.compile(r"\?{0,2}[A-Za-z_][\w.]*\?{0,2}")  # IPython's help: `obj?`, `obj??`, `?obj`


def _is_magic(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(("%", "!")) or ("?" in stripped and _HELP.fullmatch(stripped) is not None)


def _without_magic(line: str) -> str:
    """A magic line as plain Python: blank, or `pass` where it is indented (the only statement of
    a block: `for x in xs:` / `    %time f(x)`), so the module still parses."""
    if not _is_magic(line):
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "pass" if indent else ""


def _cell_source(cell: dict) -> Union[str, None]:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def _kernel_language(nb: dict) -> str:
    meta = nb.get("metadata")
    if not isinstance(meta, dict):
        return "python"
    for key in ("language_info", "kernelspec"):
        info = meta.get(key)
        name = info.get("name" if key == "language_info" else "language") if isinstance(info, dict) else None
        if isinstance(name, str) and name:
            return name.lower()
    return "python"


def read_notebook(path: str, text: str) -> Union[Notebook, FileError]:
    """The notebook's code cells as one module, or why the file is no notebook."""
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        return FileError(path, f"invalid notebook JSON{where}: {reason}")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return FileError(path, 'not a Jupyter notebook (no "cells" list)')
    out: List[str] = []
    lines: List[Tuple[int, int]] = []
    for number, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict):
            return FileError(path, f"not a Jupyter notebook (cell {number} is no object)")
        if cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell)
        if source is None:
            return FileError(path, f"not a Jupyter notebook (cell {number} has no text source)")
        rows = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if rows and rows[0].lstrip().startswith("%%"):
            continue  # a cell magic: the cell is another language (bash, html, timeit's arguments)
        for row, line in enumerate(rows, start=1):
            out.append(_without_magic(line))
            lines.append((number, row))
    return Notebook("\n".join(out) + "\n", tuple(lines), _kernel_language(nb) == "python")


def to_cells(notebook: Notebook, findings: List[Finding]) -> List[Finding]:
    """Findings on the joined module, moved into their cells: ``cell``, the row in the cell and a
    character column (the notebook's file holds JSON, so renderers cannot convert columns)."""
    module_lines = notebook.module.split("\n")
    out = []
    for f in findings:
        if not 0 < f.line <= len(notebook.lines):
            continue
        cell, row = notebook.lines[f.line - 1]
        col = char_col(module_lines[f.line - 1], f.col) if f.col > 0 else 0
        end_line, end_col = 0, 0
        if f.end_line and 0 < f.end_line <= len(notebook.lines):
            end_cell, end_row = notebook.lines[f.end_line - 1]
            if end_cell == cell:
                end_line, end_col = end_row, char_col(module_lines[f.end_line - 1], f.end_col)
        out.append(replace(f, line=row, col=col, end_line=end_line, end_col=end_col, cell=cell, fix=None))
    return sorted(out)


_SYNTAX_AT = re.compile(r"^syntax error at line (\d+), column (\d+)")


def syntax_error_in_cells(notebook: Notebook, error: FileError) -> FileError:
    """The joined module's syntax error, placed in its cell."""
    match = _SYNTAX_AT.match(error.reason)
    line = int(match.group(1)) if match else 0
    if not 0 < line <= len(notebook.lines):
        return error
    cell, row = notebook.lines[line - 1]
    return FileError(
        error.path,
        f"syntax error in cell {cell} at line {row}, column {match.group(2)}{error.reason[match.end() :]}",
    )
