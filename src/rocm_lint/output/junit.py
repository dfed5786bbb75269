"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure): one test suite per
file with findings, one failing test case per finding; a file that could not be analysed is a
test case with an ``<error>``.  No findings: one passing case, so the report is never empty."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Dict, List, Optional, Sequence, TextIO
from xml.etree import ElementTree as ET

from rocm_lint.finding import FileError, Finding
from rocm_lint.output.source import Sources, display_name


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text: str) -> str:
    """Text XML 1.0 can carry (control characters in a path or message would make it invalid)."""
    return _NOT_XML.sub("\ufffd", text)


def junit_tree(
    findings: Sequence[Finding], errors: Sequence[FileError] = (), *, sources: Optional[Sources] = None
) -> ET.Element:
    sources = sources or Sources()
    by_file: Dict[str, List[Finding]] = defaultdict(list)
    for f in findings:
        by_file[f.path].append(f)
    root = ET.Element(
        "testsuites",
        name="rocm-lint",
        tests=str(len(findings) + len(errors) or 1),
        failures=str(len(findings)),
        errors=str(len(errors)),
    )
    for raw, items in by_file.items():
        path = display_name(raw)
        suite = ET.SubElement(
            root, "testsuite", name=_x(path), tests=str(len(items)), failures=str(len(items)), errors="0"
        )
        for f in items:
            col = sources.char_col(f.path, f.line, f.col) + 1
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"rocm-lint.{f.code}",
                classname=_x(path),
                file=_x(path),
                line=str(f.line),
            )
            failure = ET.SubElement(case, "failure", message=_x(f.message), type=f.code)
            failure.text = _x(f"{path}:{f.line}:{col}: {f.code} {f.message}")
    if errors:
        suite = ET.SubElement(
            root,
            "testsuite",
            name="files not analysed",
            tests=str(len(errors)),
            failures="0",
            errors=str(len(errors)),
        )
        for e in errors:
            path = display_name(e.path)
            case = ET.SubElement(
                suite, "testcase", name="rocm-lint.analyse", classname=_x(path), file=_x(path)
            )
            ET.SubElement(case, "error", message=_x(e.reason)).text = _x(f"{path}: {e.reason}")
    if not findings and not errors:
        suite = ET.SubElement(root, "testsuite", name="rocm-lint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No findings", classname="rocm-lint")
    return root


def render_junit(
    findings: Sequence[Finding],
    out: TextIO,
    *,
    errors: Sequence[FileError] = (),
    sources: Optional[Sources] = None,
) -> None:
    tree = junit_tree(findings, errors, sources=sources)
    ET.indent(tree)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(tree, encoding="unicode"))
    out.write("\n")
