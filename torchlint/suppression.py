"""Suppression comments: `# torchlint: disable=TL001,TL003`, `# noqa[: codes]`, and
`# torchlint: disable-file=TL003` anywhere in a file.

A line comment applies to the findings reported on its line (a finding's first line),
as in flake8 and ruff: a `# noqa` somewhere inside the body of a loop that a finding
spans does not silence that finding.

Each comment is kept as a `Directive` with its place in the line, so that the engine
can tell which ones suppressed something (`unused_suppressions`) and edits can rewrite
them (`noqa_edit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torchlint.finding import Finding
from torchlint.registry import matches

_LINE = re.compile(
    r"#\s*(?:(?P<disable>torchlint:\s*disable(?!-file))\s*(?:=\s*(?P<codes>[\w\-,\s]+))?"
    r"|noqa(?::\s*(?P<noqa>[\w\-,\s]+))?)",
    re.IGNORECASE,
)
_FILE = re.compile(r"#\s*torchlint:\s*disable-file\s*(?:=\s*(?P<codes>[\w\-,\s]+))?", re.IGNORECASE)

ALL = ("ALL",)
NOQA, DISABLE, DISABLE_FILE = "noqa", "disable", "disable-file"


def _codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ALL
    codes = tuple(part.strip() for part in text.replace(" ", ",").split(",") if part.strip())
    return codes or ALL


def finding_lines(finding: Finding) -> range:
    """The lines on which a line's suppression comment applies to the finding: its reported
    (first) line only."""
    return range(finding.line, finding.line + 1)


@dataclass(frozen=True)
class Directive:
    """One suppression comment. Columns are 0-based offsets in its line."""

    line: int
    kind: str
    # What it suppresses; `ALL` when it names nothing.
    selectors: tuple[str, ...]
    start: int
    end: int
    # Where the list of codes is, (-1, -1) when there is none.
    codes_start: int = -1
    codes_end: int = -1

    @property
    def is_bare(self) -> bool:
        return self.codes_start < 0


@dataclass(frozen=True)
class Suppressions:
    directives: tuple[Directive, ...]
    _by_line: dict[int, list[Directive]] = field(init=False, repr=False, compare=False)
    _whole_file: tuple[Directive, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_line: dict[int, list[Directive]] = {}
        for directive in self.directives:
            if directive.kind != DISABLE_FILE:
                by_line.setdefault(directive.line, []).append(directive)
        object.__setattr__(self, "_by_line", by_line)
        object.__setattr__(self, "_whole_file", tuple(d for d in self.directives if d.kind == DISABLE_FILE))

    def matching(self, code: str, name: str, lines: range) -> list[tuple[Directive, str]]:
        """Every (directive, selector) that suppresses this finding."""
        found = [(d, sel) for d in self._whole_file for sel in d.selectors if matches(sel, code, name)]
        for line in lines:
            for directive in self._by_line.get(line, ()):
                found.extend((directive, sel) for sel in directive.selectors if matches(sel, code, name))
        return found

    def suppresses(self, code: str, name: str, lines: range) -> bool:
        return bool(self.matching(code, name, lines))


def parse_suppressions(source: str, noqa: bool = True) -> Suppressions:
    """The suppression comments of `source`; `noqa=False` leaves out `# noqa` comments
    (for flake8, which applies them itself)."""
    if "#" not in source:
        return Suppressions(())
    directives: list[Directive] = []
    for lineno, line in enumerate(source.split("\n"), start=1):
        if "#" not in line:
            continue
        for match in _FILE.finditer(line):
            directives.append(_directive(lineno, DISABLE_FILE, match, "codes"))
        for match in _LINE.finditer(line):
            if match.group("disable"):
                directives.append(_directive(lineno, DISABLE, match, "codes"))
            elif noqa:
                directives.append(_directive(lineno, NOQA, match, "noqa"))
    return Suppressions(tuple(directives))


def _directive(line: int, kind: str, match: re.Match[str], group: str) -> Directive:
    codes = match.group(group)
    start, end = match.span()
    if not codes or not codes.strip():
        return Directive(line, kind, ALL, start, end)
    codes_start, codes_end = match.span(group)
    # The codes pattern takes trailing blanks too: they belong to no code.
    codes_end -= len(codes) - len(codes.rstrip())
    return Directive(line, kind, _codes(codes), start, codes_end, codes_start, codes_end)
