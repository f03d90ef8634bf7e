"""`check --fix` and `check --diff`: apply the fixes rules offer, re-checking until stable.

A file is fixed in memory pass by pass: each pass applies every applicable fix that
does not touch another one's text, then checks the new text again, since one fix can
make room for the next. A pass whose result does not parse is thrown away and the
fixes are tried one at a time, leaving out those that break the parse. Files
are written (or diffed) once, at the end, in their own encoding and newline style;
in a notebook only the changed cells' sources are rewritten.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from torchlint import api, engine
from torchlint.config import Config
from torchlint.finding import PARSE_ERROR_CODE, Edit, Finding
from torchlint.notebook import cell_with_newline, parse_notebook, with_cell_sources
from torchlint.project import Project, ProjectView
from torchlint.rule import Rule
from torchlint.sources import SourceFile, Unreadable, encode, read_source, write_bytes

MAX_PASSES = 5


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.safe or unsafe)


@dataclass(frozen=True)
class FileFix:
    name: str
    fixed: int
    remaining: list[Finding]
    diff: str = ""
    # Why the file was left as it was, when it could not be fixed or written.
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.fixed > 0 and self.error is None


@dataclass(frozen=True)
class FixResult:
    files: list[FileFix] = field(default_factory=list)
    # Every finding after fixing: those of untouched files and those left in fixed ones.
    findings: list[Finding] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return sum(f.fixed for f in self.files if f.changed)

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files if f.changed)

    @property
    def errors(self) -> list[FileFix]:
        return [f for f in self.files if f.error]


def fix_findings(
    findings: Sequence[Finding],
    config: Config,
    unsafe: bool,
    write: bool,
    cwd: Path | None = None,
    config_for: Callable[[Path], Config] | None = None,
) -> FixResult:
    """Fix the files that have applicable fixes among `findings` (a check's result);
    `config_for` gives each file's settings when they are not `config` for all."""
    cwd = cwd or Path.cwd()
    names = list(dict.fromkeys(f.filename for f in findings if applicable(f, unsafe)))
    rules: dict[int, list[Rule]] = {}
    # Checked again as the check saw them: with the project's other modules.
    project = Project(api.summarize_text)
    files = []
    for name in names:
        file_config = config_for(cwd / name) if config_for is not None else config
        file_rules = rules.setdefault(id(file_config), api.enabled_rules(file_config))
        files.append(
            fix_file(cwd / name, name, file_rules, file_config, unsafe, write, ProjectView.of(project, cwd / name))
        )
    redone = {f.name: f.remaining for f in files if f.changed}
    kept = [f for f in findings if f.filename not in redone]
    return FixResult(files, sorted([*kept, *(f for remaining in redone.values() for f in remaining)]))


def fix_file(
    path: Path,
    name: str,
    rules: Sequence[Rule],
    config: Config,
    unsafe: bool,
    write: bool,
    project: ProjectView | None = None,
) -> FileFix:
    original = read_source(path)
    if isinstance(original, Unreadable):
        return FileFix(name, 0, [], error=original.reason)
    if original.newline is None:
        findings = api.findings_for(original, name, rules, config, project)
        return FileFix(name, 0, findings, error="mixes newline styles; not fixed, to keep the other lines as they are")
    current, fixed, findings = fix_source(original, name, rules, config, unsafe, project)
    if fixed == 0:
        return FileFix(name, 0, findings)
    diff = source_diff(original, current, name)
    if write:
        try:
            data = encode(original, current.notebook.raw if current.notebook else current.text)
        except UnicodeEncodeError as exc:
            return FileFix(name, 0, findings, error=f"the fixed text cannot be written as {exc.encoding}")
        error = write_bytes(path, data)
        if error:
            return FileFix(name, 0, findings, error=f"cannot write the fixed file: {error}")
    return FileFix(name, fixed, findings, diff)


def fix_source(
    source: SourceFile,
    name: str,
    rules: Sequence[Rule],
    config: Config,
    unsafe: bool,
    project: ProjectView | None = None,
) -> tuple[SourceFile, int, list[Finding]]:
    """Fix `source` in memory: (the fixed source, how many fixes were applied, its findings)."""
    findings = api.findings_for(source, name, rules, config, project)
    fixed = passes = 0
    rejected: set[Finding] = set()
    one_at_a_time = False
    while passes < MAX_PASSES:
        chosen = _compatible(f for f in findings if applicable(f, unsafe) and f not in rejected)
        if not chosen:
            break
        if one_at_a_time:
            chosen = chosen[:1]
        updated = _apply(source, chosen)
        after = api.findings_for(updated, name, rules, config, project)
        if _parse_errors(after) > _parse_errors(findings) or updated.text == source.text:
            # A fix that breaks the parse or changes nothing: find it by trying the
            # fixes one at a time, and leave it out.
            if len(chosen) == 1:
                rejected.add(chosen[0])
            one_at_a_time = True
            continue
        source, findings, fixed, passes = updated, after, fixed + len(chosen), passes + 1
    return source, fixed, findings


def _parse_errors(findings: Iterable[Finding]) -> int:
    return sum(f.code == PARSE_ERROR_CODE for f in findings)


def _compatible(candidates: Iterable[Finding]) -> list[Finding]:
    """Fixes to apply together: whole fixes only, none touching another's text.

    Edits are compared as closed ranges, so even adjacent fixes wait for the next pass,
    which sees the first one applied.
    """
    chosen: list[Finding] = []
    taken: list[tuple[int, int, int, int, int]] = []  # (cell, line, column, end_line, end_column)
    for finding in sorted(candidates, key=lambda f: (f.cell, f.fix.edits[0] if f.fix else ())):
        assert finding.fix is not None
        ranges = [(finding.cell, e.line, e.column, e.end_line, e.end_column) for e in finding.fix.edits]
        if any(_touch(r, t) for r in ranges for t in taken):
            continue
        chosen.append(finding)
        taken.extend(ranges)
    return chosen


def _touch(a: tuple[int, int, int, int, int], b: tuple[int, int, int, int, int]) -> bool:
    return a[0] == b[0] and a[1:3] <= b[3:5] and b[1:3] <= a[3:5]


def _apply(source: SourceFile, findings: Sequence[Finding]) -> SourceFile:
    edits: dict[int, list[Edit]] = {}
    for finding in findings:
        assert finding.fix is not None
        edits.setdefault(finding.cell, []).extend(finding.fix.edits)
    nb = source.notebook
    if nb is None:
        return replace(source, text=engine.apply_edits(source.text, edits[0]))
    sources = {}
    for number, cell_edits in edits.items():
        cell = nb.cell(number)
        if cell is not None:
            sources[number] = engine.apply_edits(cell_with_newline(cell), cell_edits)
    fixed = parse_notebook(with_cell_sources(nb, sources))
    return replace(source, text=fixed.python, notebook=fixed)


def source_diff(old: SourceFile, new: SourceFile, name: str) -> str:
    """A unified diff of the fixes; of the changed cells only, for a notebook."""
    if old.notebook is None or new.notebook is None:
        return _unified(old.text, new.text, name)
    parts = []
    for cell in old.notebook.cells:
        after = new.notebook.cell(cell.number)
        if after is not None and after.source != cell.source:
            parts.append(_unified(cell_with_newline(cell), cell_with_newline(after), f"{name}:cell {cell.number}"))
    return "".join(parts)


def _unified(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), name, name)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
