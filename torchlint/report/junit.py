"""JUnit XML, which CI systems show as a test report: one test case per checked file,
failing with the file's findings at or above `--fail-on`; findings below it (info, by
default) are listed in the case's output without failing it."""

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


def _lines(findings: Sequence[Finding]) -> str:
    return "".join(
        f"{_location(f)}: {f.code} [{f.name}] {f.severity.value}: {f.message}\n" for f in findings
    )


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.filename].append(finding)
    files = list(dict.fromkeys([*context.files, *by_file]))
    failing = {name: [f for f in found if f.severity.at_least(context.fail_on)] for name, found in by_file.items()}
    failures = sum(1 for name in files if failing.get(name))
    counts = {"tests": str(len(files)), "failures": str(failures), "errors": "0", "skipped": "0"}
    root = ET.Element("testsuites", {"name": "torchlint", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "torchlint", **counts})
    for name in files:
        case = ET.SubElement(suite, "testcase", {"classname": "torchlint", "name": _clean(name), "file": _clean(name)})
        found = failing.get(name)
        if found:
            codes = ", ".join(dict.fromkeys(f"{f.code} {f.name}" for f in found))
            message = f"{len(found)} finding{'s' if len(found) != 1 else ''}: {codes}"
            failure = ET.SubElement(case, "failure", {"message": _clean(message), "type": found[0].code})
            failure.text = _clean(_lines(found))
        passing = [f for f in by_file.get(name, ()) if not f.severity.at_least(context.fail_on)]
        if passing:
            ET.SubElement(case, "system-out").text = _clean(_lines(passing))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
