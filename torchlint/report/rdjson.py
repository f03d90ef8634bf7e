"""reviewdog's diagnostic format (rdjson): one JSON object with every diagnostic, its
code and docs link, and fixes as suggestions, for `reviewdog -f=rdjson`.

Positions are 1-based; columns count code points. A notebook diagnostic is placed on
the line of the .ipynb file that holds the cell's line, its cell named in the message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from torchlint.finding import Finding, Severity
from torchlint.report import ReportContext
from torchlint.rule import REPOSITORY_URL, RULE_DOC_URL

NAME = "rdjson"

SEVERITIES = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    documented = {meta.code for meta in context.rules}
    result = {
        "source": {"name": "torchlint", "url": REPOSITORY_URL},
        "diagnostics": [_diagnostic(f, f.code in documented, context) for f in findings],
    }
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def _position(line: int, column: int) -> dict[str, int]:
    return {"line": line, "column": column}


def _diagnostic(finding: Finding, documented: bool, context: ReportContext) -> dict[str, Any]:
    code: dict[str, str] = {"value": finding.code}
    if documented:
        code["url"] = RULE_DOC_URL.format(code=finding.code)
    if finding.cell:
        message = f"cell {finding.cell}, line {finding.line}, column {finding.column}: {finding.message}"
        line = context.notebook_line(context.cwd / Path(finding.filename), finding.cell, finding.line) or 1
        location: dict[str, Any] = {"path": finding.filename, "range": {"start": {"line": line}}}
    else:
        message = finding.message
        location = {
            "path": finding.filename,
            "range": {
                "start": _position(finding.line, finding.column),
                "end": _position(finding.end_line, finding.end_column),
            },
        }
    diagnostic: dict[str, Any] = {
        "message": message,
        "location": location,
        "severity": SEVERITIES[finding.severity],
        "code": code,
    }
    if finding.fix is not None and not finding.cell and finding.fix.safe:
        diagnostic["suggestions"] = [
            {
                "range": {"start": _position(e.line, e.column), "end": _position(e.end_line, e.end_column)},
                "text": e.replacement,
            }
            for e in finding.fix.edits
        ]
    return diagnostic
