"""`path:line:col: CODE [name] severity: message` (`path:cell N:line:col:` in notebooks),
the source line under it with a `fix:` line when `--fix` can fix it, and a summary that
counts findings by severity."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from torchlint.finding import Finding, Severity
from torchlint.report import ReportContext

NAME = "text"


def location(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell else ""
    return f"{finding.filename}:{cell}{finding.line}:{finding.column}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    lines: list[str] = []
    cache: dict[tuple[str, int], list[str]] = {}
    for finding in findings:
        lines.append(f"{location(finding)}: {finding.code} [{finding.name}] {finding.severity.value}: {finding.message}")
        if context.show_source:
            snippet = _snippet(finding, cache, context)
            if snippet:
                lines.extend(snippet)
            if finding.fix is not None:
                how = "--fix" if fixable(finding, context.unsafe_fixes) else "--fix --unsafe-fixes"
                lines.append(f"    [*] fix: {finding.fix.description} ({how})")
    if context.statistics and findings:
        if lines:
            lines.append("")
        counts = Counter((f.code, f.name, f.severity.value) for f in findings)
        width = max(len(str(n)) for n in counts.values())
        name_width = max(len(name) for _, name, _ in counts)
        for (code, name, severity), count in sorted(counts.items()):
            lines.append(f"{count:>{width}}  {code}  {name:<{name_width}}  {severity}")
        lines.append("")
        for severity, count in severity_counts(findings):
            lines.append(f"{count:>{width}}  {severity.value}")
    if context.show_summary:
        if lines:
            lines.append("")
        lines.append(summary(findings, context.files_checked, context.fixed, context.fail_on))
        fixes = fix_summary(findings, context.unsafe_fixes)
        if fixes:
            lines.append(fixes)
    return "\n".join(lines) + "\n" if lines else ""


def fixable(finding: Finding, unsafe_fixes: bool) -> bool:
    return finding.fix is not None and (finding.fix.safe or unsafe_fixes)


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def summary(
    findings: Sequence[Finding], files_checked: int, fixed: int = 0, fail_on: Severity = Severity.WARNING
) -> str:
    files = _count(files_checked, "file")
    if not findings:
        done = f"Fixed {_count(fixed, 'finding')}; all" if fixed else "All"
        return f"{done} checks passed ({files} checked)."
    by_file = len({f.filename for f in findings})
    done = f" ({fixed} fixed)" if fixed else ""
    kinds = ", ".join(_count(n, severity.value, _PLURALS[severity]) for severity, n in severity_counts(findings))
    found = f"Found {_count(len(findings), 'finding')} ({kinds}) in {by_file} of {files} checked{done}"
    if not any(f.severity.at_least(fail_on) for f in findings):
        return f"{found}; none is at or above --fail-on {fail_on.value}, so the run passes."
    return found + "."


_PLURALS = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "info"}


def severity_counts(findings: Sequence[Finding]) -> list[tuple[Severity, int]]:
    """How many findings of each severity there are, gravest first, leaving out zeros."""
    counts = Counter(f.severity for f in findings)
    return [(severity, counts[severity]) for severity in Severity if counts[severity]]


def fix_summary(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    """How many findings `--fix` would fix, and how many more `--unsafe-fixes` would."""
    ready = sum(fixable(f, unsafe_fixes) for f in findings)
    hidden = sum(f.fix is not None and not fixable(f, unsafe_fixes) for f in findings)
    more = (
        f" ({_count(hidden, 'hidden fix', 'hidden fixes')} can be enabled with the `--unsafe-fixes` option)"
        if hidden
        else ""
    )
    if ready:
        return f"[*] {ready} fixable with the `--fix` option{more}."
    return f"No fixes available{more}." if hidden else ""


def _snippet(finding: Finding, cache: dict[tuple[str, int], list[str]], context: ReportContext) -> list[str]:
    key = (finding.filename, finding.cell)
    if key not in cache:
        path = context.cwd / Path(finding.filename)
        cache[key] = context.read_cell_lines(path, finding.cell) if finding.cell else context.read_lines(path)
    source = cache[key]
    if not 0 < finding.line <= len(source):
        return []
    text = source[finding.line - 1].rstrip()
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    start = max(finding.column - 1 - indent, 0)
    end = finding.end_column - 1 - indent if finding.end_line == finding.line else len(stripped)
    width = max(end - start, 1)
    return [f"    {stripped}", f"    {' ' * start}{'^' * width}"]
