"""`check --add-noqa`: a `# noqa: TL0xx` on every line with a finding, extending a
`# noqa: ...` already there, so that a legacy code base passes today and only new
code is held to the rules. Files are rewritten in their own encoding and newline style;
in a notebook only the changed cells' sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from torchlint.finding import PARSE_ERROR_CODE, UNUSED_SUPPRESSION_CODE, Finding
from torchlint.noqa_edit import with_noqa
from torchlint.notebook import cell_with_newline, with_cell_sources
from torchlint.sources import SourceFile, encode, read_source, write_bytes


@dataclass
class AddNoqaResult:
    added: int = 0
    files: int = 0
    # (file, line or 0, why) for what was left alone.
    problems: list[tuple[str, int, str]] = field(default_factory=list)


def _wanted(finding: Finding) -> bool:
    # Parse and internal errors are no findings to silence, nor is an unused suppression.
    return not finding.is_internal_error and finding.code not in (PARSE_ERROR_CODE, UNUSED_SUPPRESSION_CODE)


def add_noqa(findings: Sequence[Finding], cwd: Path) -> AddNoqaResult:
    result = AddNoqaResult()
    by_file: dict[str, dict[int, dict[int, set[str]]]] = {}  # file -> cell -> line -> codes
    for finding in findings:
        if _wanted(finding):
            lines = by_file.setdefault(finding.filename, {}).setdefault(finding.cell, {})
            lines.setdefault(finding.line, set()).add(finding.code)
    for name, cells in by_file.items():
        source = read_source(cwd / name)
        if not isinstance(source, SourceFile):
            result.problems.append((name, 0, source.reason))
            continue
        if source.newline is None:
            result.problems.append((name, 0, "mixes newline styles; left as is"))
            continue
        text, added = _edited(source, cells, name, result)
        if not added:
            continue
        error = write_bytes(cwd / name, encode(source, text))
        if error:
            result.problems.append((name, 0, f"cannot write it: {error}"))
            continue
        result.added += added
        result.files += 1
    return result


def _edited(source: SourceFile, cells: dict[int, dict[int, set[str]]], name: str, result: AddNoqaResult) -> tuple[str, int]:
    skipped_reason = "no comment can go on this line (it ends inside a string or continues with a backslash)"
    if source.notebook is None:
        text, added, skipped = with_noqa(source.text, cells.get(0, {}))
        result.problems.extend((name, line, skipped_reason) for line in skipped)
        return text, added
    nb = source.notebook
    new_sources: dict[int, str] = {}
    total = 0
    for number, lines in cells.items():
        found = nb.cell(number)
        if found is None:
            continue
        text, added, skipped = with_noqa(cell_with_newline(found), lines)
        result.problems.extend((f"{name}:cell {number}", line, skipped_reason) for line in skipped)
        if added:
            new_sources[number] = text
            total += added
    return (with_cell_sources(nb, new_sources) if new_sources else nb.raw), total
