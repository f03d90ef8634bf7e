"""Source that arrives on stdin (`check --stdin-filename PATH -`), as editors and
pipelines send an unsaved buffer: checked and reported as PATH, so that PATH's
configuration and per-file-ignores apply, and fixed in memory with `--fix`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchlint import api
from torchlint.config import Config
from torchlint.finding import Finding
from torchlint.notebook import file_line
from torchlint.sources import SourceFile, decode, encode

# The name findings carry when the caller names no file, as ruff and flake8 write it.
UNNAMED = "-"


@dataclass(frozen=True)
class StdinResult:
    findings: list[Finding]
    # The decoded text, for source snippets; None when it is no readable source.
    source: SourceFile | None
    # With fixing: the bytes to print (the input itself when nothing was fixed), how many
    # findings were fixed, and their diff.
    output: bytes = b""
    fixed: int = 0
    diff: str = ""


def check_stdin(data: bytes, name: str, config: Config, fix: bool = False, unsafe: bool = False) -> StdinResult:
    from torchlint.fix import fix_source, source_diff

    path = Path(name)
    rules = api.enabled_rules(config)
    source = decode(path, data)
    if not isinstance(source, SourceFile):
        return StdinResult(api.check_data(path, name, source, rules, config), None, data)
    if not fix or source.newline is None:
        # Mixed newline styles are not fixed, as in files: the other lines stay as they are.
        return StdinResult(api.check_data(path, name, data, rules, config), source, data)
    fixed_source, fixed, findings = fix_source(source, name, rules, config, unsafe)
    if not fixed:
        return StdinResult(findings, source, data)
    text = fixed_source.notebook.raw if fixed_source.notebook else fixed_source.text
    return StdinResult(findings, fixed_source, encode(source, text), fixed, source_diff(source, fixed_source, name))


def report_readers(result: StdinResult) -> dict[str, Any]:
    """`ReportContext` readers that take the lines from stdin's text: every finding of a
    stdin check is in it, whatever is on disk at its path."""
    source = result.source
    notebook = source.notebook if source is not None else None

    def lines(path: Path) -> list[str]:
        return source.text.splitlines() if source is not None and notebook is None else []

    def cell_lines(path: Path, cell: int) -> list[str]:
        found = notebook.cell(cell) if notebook is not None else None
        return found.source.splitlines() if found else []

    def notebook_line(path: Path, cell: int, line: int) -> int | None:
        return file_line(notebook, cell, line) if notebook is not None else None

    return {"read_lines": lines, "read_cell_lines": cell_lines, "notebook_line": notebook_line}
