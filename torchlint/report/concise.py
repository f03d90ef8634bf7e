"""One line per finding, `path:line:col: CODE message` (`path:cell N:line:col:` in
notebooks), as ruff's `concise` format; the summary line unless `--quiet`."""

from __future__ import annotations

from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext
from torchlint.report.text import location, summary

NAME = "concise"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    lines = [f"{location(f)}: {f.code} {f.message}" for f in findings]
    if context.show_summary:
        lines.append(summary(findings, context.files_checked, context.fixed))
    return "".join(line + "\n" for line in lines)
