"""ruff's JSON shape, so tools that read ``ruff --output-format json`` read ours."""

from __future__ import annotations

import json
import os
from typing import List, Optional, TextIO

from rocm_lint.finding import Finding
from rocm_lint.output.source import Sources, name_text
from rocm_lint.registry import get_rule


# Every static finding is an error (SARIF's level, GitHub's ::error): code that breaks on ROCm.
SEVERITY = "error"


def finding_to_json(f: Finding, sources: Optional[Sources] = None) -> dict:
    """One finding as ruff writes it (1-based character columns)."""
    sources = sources or Sources()
    rule = get_rule(f.code)
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability.value,
            "message": f.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": {"row": e.start[0], "column": e.start[1] + 1},
                    "end_location": {"row": e.end[0], "column": e.end[1] + 1},
                }
                for e in f.fix.edits
            ],
        }
    return {
        "cell": f.cell,  # a notebook's 1-based cell number (rows are inside the cell), as ruff
        "code": f.code,
        "end_location": {
            "row": f.end_line or f.line,
            "column": sources.char_col(f.path, f.end_line or f.line, f.end_col if f.end_line else f.col) + 1,
        },
        "filename": name_text(f.path if f.path == "-" else os.path.abspath(f.path)),
        "fix": fix,
        "location": {"row": f.line, "column": sources.char_col(f.path, f.line, f.col) + 1},
        "message": f.message,
        "name": rule.name if rule else None,
        "noqa_row": f.line,
        "nvidia_only_source": f.scope == "nvidia-only",
        "severity": SEVERITY,
        "url": rule.url if rule else None,
    }


def render_json(findings: List[Finding], out: TextIO, *, sources: Optional[Sources] = None) -> None:
    sources = sources or Sources()
    json.dump([finding_to_json(f, sources) for f in findings], out, indent=2)
    out.write("\n")
