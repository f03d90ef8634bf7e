"""pylint's parseable format, `path:line: [CODE] message`, as ruff and flake8 write it
for tools that read pylint output. A notebook finding names its cell in the message."""

from __future__ import annotations

from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext

NAME = "pylint"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(_line(f) + "\n" for f in findings)


def _line(finding: Finding) -> str:
    message = finding.message.replace("\n", " ")
    if finding.cell:
        return f"{finding.filename}:{finding.line}: [{finding.code}] cell {finding.cell}: {message}"
    return f"{finding.filename}:{finding.line}: [{finding.code}] {message}"
