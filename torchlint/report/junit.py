"""JUnit XML, which CI systems show as a test report: one test case per checked file,
failing with the file's findings."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext

NAME = "junit"

# Characters that XML 1.0 cannot carry, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _location(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell else ""
    return f"{finding.filename}:{cell}{finding.line}:{finding.column}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.filename].append(finding)
    files = list(dict.fromkeys([*context.files, *by_file]))
    failures = sum(1 for name in files if by_file.get(name))
    counts = {"tests": str(len(files)), "failures": str(failures), "errors": "0", "skipped": "0"}
    root = ET.Element("testsuites", {"name": "torchlint", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "torchlint", **counts})
    for name in files:
        case = ET.SubElement(suite, "testcase", {"classname": "torchlint", "name": _clean(name), "file": _clean(name)})
        found = by_file.get(name)
        if not found:
            continue
        codes = ", ".join(dict.fromkeys(f"{f.code} {f.name}" for f in found))
        failure = ET.SubElement(
            case,
            "failure",
            {"message": _clean(f"{len(found)} finding{'s' if len(found) != 1 else ''}: {codes}"), "type": found[0].code},
        )
        failure.text = _clean(
            "\n".join(f"{_location(f)}: {f.code} [{f.name}] {f.message}" for f in found) + "\n"
        )
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
