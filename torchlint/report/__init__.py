"""Output formats. Each format is one module of this package with `NAME` and `render`,
named after the format (`json_lines.py` is `json-lines`); adding a format is adding a
module. Only the module of the format asked for is imported."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Protocol, Sequence

from torchlint.finding import Finding, Severity
from torchlint.rule import RuleMeta


@dataclass(frozen=True)
class ReportContext:
    files_checked: int
    rules: Sequence[RuleMeta]
    show_source: bool = True
    show_summary: bool = True
    statistics: bool = False
    version: str = ""
    cwd: Path = field(default_factory=Path.cwd)
    # Source lines of a reported file, for snippets; empty when unreadable.
    read_lines: Callable[[Path], list[str]] = lambda path: []
    # Source lines of one cell of a reported notebook.
    read_cell_lines: Callable[[Path, int], list[str]] = lambda path, cell: []
    # The line of a notebook's JSON file that holds a line of one of its cells.
    notebook_line: Callable[[Path, int, int], int | None] = lambda path, cell, line: None
    # Every file checked, for formats that list passing files too (JUnit).
    files: tuple[str, ...] = ()
    # How many findings `--fix` fixed, and whether unsafe fixes count as applicable.
    fixed: int = 0
    unsafe_fixes: bool = False
    # The lowest severity that fails the run (`--fail-on`), for formats that mark failures.
    fail_on: Severity = Severity.WARNING


class Renderer(Protocol):
    def __call__(self, findings: Sequence[Finding], context: ReportContext) -> str: ...


# Modules of this package that are helpers of the formats, not formats.
_HELPERS = frozenset({"fingerprints"})


@lru_cache(maxsize=1)
def format_names() -> tuple[str, ...]:
    """Every format's name, from the module names alone."""
    names = (info.name for info in pkgutil.iter_modules(__path__) if info.name not in _HELPERS)
    return tuple(sorted(name.replace("_", "-") for name in names))


def renderer(format_name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{format_name.replace('-', '_')}")
    if module.NAME != format_name:
        raise LookupError(f"format module {module.__name__} names itself {module.NAME!r}")
    return module.render  # type: ignore[no-any-return]


def formats() -> dict[str, Renderer]:
    return {name: renderer(name) for name in format_names()}


def render(format_name: str, findings: Sequence[Finding], context: ReportContext) -> str:
    return renderer(format_name)(findings, context)
