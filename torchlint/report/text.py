"""`path:line:col: CODE [name] message`, the source line under it, and a summary."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext

NAME = "text"


def location(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell else ""
    return f"{finding.filename}:{cell}{finding.line}:{finding.column}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    lines: list[str] = []
    cache: dict[str, list[str]] = {}
    for finding in findings:
        lines.append(f"{location(finding)}: {finding.code} [{finding.name}] {finding.message}")
        if context.show_source and not finding.cell:
            snippet = _snippet(finding, cache, context)
            if snippet:
                lines.extend(snippet)
    if context.statistics and findings:
        if lines:
            lines.append("")
        counts = Counter((f.code, f.name) for f in findings)
        width = max(len(str(n)) for n in counts.values())
        for (code, name), count in sorted(counts.items()):
            lines.append(f"{count:>{width}}  {code}  {name}")
    if context.show_summary:
        if lines:
            lines.append("")
        lines.append(summary(findings, context.files_checked))
    return "\n".join(lines) + "\n" if lines else ""


def summary(findings: Sequence[Finding], files_checked: int) -> str:
    files = f"{files_checked} file{'s' if files_checked != 1 else ''}"
    if not findings:
        return f"All checks passed ({files} checked)."
    by_file = len({f.filename for f in findings})
    return (
        f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} "
        f"in {by_file} of {files} checked."
    )


def _snippet(finding: Finding, cache: dict[str, list[str]], context: ReportContext) -> list[str]:
    if finding.filename not in cache:
        cache[finding.filename] = context.read_lines(context.cwd / Path(finding.filename))
    source = cache[finding.filename]
    if not 0 < finding.line <= len(source):
        return []
    text = source[finding.line - 1].rstrip()
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    start = max(finding.column - 1 - indent, 0)
    end = finding.end_column - 1 - indent if finding.end_line == finding.line else len(stripped)
    width = max(end - start, 1)
    return [f"    {stripped}", f"    {' ' * start}{'^' * width}"]
