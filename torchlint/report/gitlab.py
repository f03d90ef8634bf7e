"""GitLab Code Quality: a JSON list of issues that merge requests show beside the diff.

Each issue has `description`, `check_name`, `fingerprint` (stable across unrelated
edits, see `fingerprints`), `severity` and `location.path` / `location.lines.begin`.
A notebook issue points at the line of the .ipynb file that holds the cell's line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from torchlint.finding import Finding, Severity
from torchlint.report import ReportContext
from torchlint.report.fingerprints import fingerprints

NAME = "gitlab"

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    issues = [_issue(f, fp, context) for f, fp in zip(findings, fingerprints(findings, context))]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _issue(finding: Finding, fingerprint: str, context: ReportContext) -> dict[str, Any]:
    if finding.cell:
        path = context.cwd / Path(finding.filename)
        begin = context.notebook_line(path, finding.cell, finding.line) or 1
        end = context.notebook_line(path, finding.cell, finding.end_line) or begin
        description = f"cell {finding.cell}, line {finding.line}: {finding.message}"
    else:
        begin, end, description = finding.line, finding.end_line, finding.message
    return {
        "type": "issue",
        "check_name": f"{finding.code} {finding.name}",
        "description": f"{finding.code} {description}",
        "categories": ["Bug Risk"],
        "severity": SEVERITIES[finding.severity],
        "fingerprint": fingerprint,
        "location": {"path": Path(finding.filename).as_posix(), "lines": {"begin": begin, "end": max(begin, end)}},
    }
