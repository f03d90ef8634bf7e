"""Output formats. Each format is one module of this package with `NAME` and `render`;
adding a format is adding a module."""

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
    # Every file checked, for formats that list passing files too (JUnit).
    files: tuple[str, ...] = ()
    # How many findings `--fix` fixed, and whether unsafe fixes count as applicable.
    fixed: int = 0
    unsafe_fixes: bool = False
    # The lowest severity that fails the run (`--fail-on`), for formats that mark failures.
    fail_on: Severity = Severity.WARNING


class Renderer(Protocol):
    def __call__(self, findings: Sequence[Finding], context: ReportContext) -> str: ...


@lru_cache(maxsize=1)
def formats() -> dict[str, Renderer]:
    found: dict[str, Renderer] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(module, "NAME", None)
        if name:
            found[name] = module.render
    return dict(sorted(found.items()))


def render(format_name: str, findings: Sequence[Finding], context: ReportContext) -> str:
    return formats()[format_name](findings, context)
