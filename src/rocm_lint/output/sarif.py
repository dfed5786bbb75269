"""SARIF 2.1.0 (what GitHub code scanning and most CI dashboards import).

One ``reportingDescriptor`` per rule of the catalogue (id, name, summary, help text and URL),
one ``result`` per finding with a physical location in character columns, and the fix edits
where the finding has them.  Files that could not be analysed become tool execution
notifications, and make the invocation unsuccessful.  Paths below the project root (the git work
tree, else the config file's directory, else the working directory: ``project_root``) are written
relative to ``%SRCROOT%``, that root, so uploads from CI match the repository's files wherever in
it the run starts.  Each result has a ``partialFingerprints`` entry that survives edits elsewhere in
the file: a hash of the rule, the path and the finding's line text (blanks collapsed), with the
occurrence number among identical lines, never a line number.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, TextIO
from urllib.parse import quote

from rocm_lint import __version__
from rocm_lint.docgen import render_rule
from rocm_lint.finding import FileError, Finding
from rocm_lint.output.source import Sources, repo_path
from rocm_lint.registry import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/rocm-lint/rocm-lint"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "rocmLintLineHash/v1"


def _artifact(path: str, root: str) -> dict:
    rel = repo_path(path, root)
    if rel.startswith("/") or re.match(r"[A-Za-z]:(/|$)", rel):  # outside the root (or another drive)
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(os.fsencode(rel)), "uriBaseId": SRCROOT}  # the name's bytes, %-encoded


def _region(line: int, col: int, end_line: int, end_col: int) -> dict:
    return {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": end_col + 1}


def _rule_descriptor(rule) -> dict:
    return {
        "id": rule.code,
        "name": "".join(word.capitalize() for word in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.code} ({rule.name}): {rule.summary}"},
        "helpUri": rule.url,
        "help": {
            "text": f"{rule.summary}. Documentation: {rule.url} (or `rocm-lint rule {rule.code}`).",
            "markdown": render_rule(rule),
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "tags": ["portability", "rocm", rule.family],
            "precision": "high",
            "fix": rule.fix.value if rule.fix else "none",
        },
    }


def _fix(f: Finding, artifact: dict) -> Optional[dict]:
    if f.fix is None or not f.fix.edits:
        return None
    replacements = [
        {
            "deletedRegion": _region(e.start[0], e.start[1], e.end[0], e.end[1]),
            "insertedContent": {"text": e.content},
        }
        for e in f.fix.edits
    ]
    return {
        "description": {"text": f"{f.fix.message} ({f.fix.applicability.value} fix)"},
        "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
    }


def _line_hash(code: str, uri: str, line_text: str) -> str:
    normalized = " ".join(line_text.split())
    return hashlib.sha256("\0".join((code, uri, normalized)).encode("utf-8", "surrogatepass")).hexdigest()[
        :32
    ]


def sarif_log(
    findings: Sequence[Finding],
    errors: Sequence[FileError] = (),
    *,
    root: Optional[str] = None,
    sources: Optional[Sources] = None,
) -> dict:
    root = os.path.abspath(root or os.getcwd())
    rules = all_rules()
    index: Dict[str, int] = {r.code: i for i, r in enumerate(rules)}
    sources = sources or Sources()
    results: List[dict] = []
    seen: Dict[str, int] = {}
    for f in findings:
        artifact = _artifact(f.path, root)
        digest = _line_hash(f.code, artifact["uri"], sources.line(f.path, f.line))
        seen[digest] = seen.get(digest, 0) + 1
        result = {
            "ruleId": f.code,
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": artifact, "region": _region(*sources.span(f))}}
            ],
            "partialFingerprints": {FINGERPRINT: f"{digest}:{seen[digest]}"},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        fix = _fix(f, artifact)
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    notifications = [
        {
            "level": "error",
            "message": {"text": e.reason},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(e.path, root)}}],
        }
        for e in errors
    ]
    invocation = {"executionSuccessful": not errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "rocm-lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render_sarif(
    findings: Sequence[Finding],
    out: TextIO,
    *,
    errors: Sequence[FileError] = (),
    root: Optional[str] = None,
    sources: Optional[Sources] = None,
) -> None:
    json.dump(sarif_log(findings, errors, root=root, sources=sources), out, indent=2)
    out.write("\n")
