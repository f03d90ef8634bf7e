"""Fingerprints of findings that survive unrelated edits, for dashboards that track an
alert across commits (GitHub code scanning, GitLab Code Quality).

A finding is identified by its rule, its file and its source line with whitespace
normalized, not by its line number: inserting code above it changes nothing. The
occurrence index tells apart identical lines of one file with the same finding.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext


def normalized(line: str) -> str:
    return " ".join(line.split())


def fingerprints(findings: Sequence[Finding], context: ReportContext) -> list[str]:
    """One `hash:occurrence` per finding, in order (GitHub's `primaryLocationLineHash` form)."""
    lines: dict[tuple[str, int], list[str]] = {}
    seen: dict[str, int] = {}
    out = []
    for finding in findings:
        key = (finding.filename, finding.cell)
        if key not in lines:
            path = context.cwd / Path(finding.filename)
            lines[key] = context.read_cell_lines(path, finding.cell) if finding.cell else context.read_lines(path)
        source = lines[key]
        text = normalized(source[finding.line - 1]) if 0 < finding.line <= len(source) else ""
        identity = "\0".join((finding.code, finding.filename, str(finding.cell), text))
        digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        occurrence = seen[digest] = seen.get(digest, 0) + 1
        out.append(f"{digest}:{occurrence}")
    return out
