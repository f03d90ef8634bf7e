"""GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` line per
finding, which GitHub shows as an annotation on the file and line."""

from __future__ import annotations

from typing import Sequence

from torchlint.finding import Finding, Severity
from torchlint.report import ReportContext

NAME = "github"

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(_command(f) + "\n" for f in findings)


def _command(finding: Finding) -> str:
    properties = [("file", finding.filename)]
    message = finding.message
    if finding.cell:
        # Cell lines are not lines of the .ipynb file: annotate the file, name the cell.
        message = f"cell {finding.cell}, line {finding.line}, column {finding.column}: {message}"
    else:
        properties += [
            ("line", str(finding.line)),
            ("col", str(finding.column)),
            ("endLine", str(finding.end_line)),
            ("endColumn", str(finding.end_column)),
        ]
    properties.append(("title", f"{finding.code} {finding.name}"))
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[finding.severity]} {props}::{escape_data(message)}"
