"""Suppression comments: `# torchlint: disable=TL001,TL003`, `# noqa[: codes]`, and
`# torchlint: disable-file=TL003` anywhere in a file.

A line comment applies to the findings reported on its line (a finding's first line),
as in flake8 and ruff: a `# noqa` somewhere inside the body of a loop that a finding
spans does not silence that finding."""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchlint.registry import matches

_LINE = re.compile(
    r"#\s*(?:torchlint:\s*disable(?!-file)\s*(?:=\s*(?P<codes>[\w\-,\s]+))?|noqa(?::\s*(?P<noqa>[\w\-,\s]+))?)",
    re.IGNORECASE,
)
_FILE = re.compile(r"#\s*torchlint:\s*disable-file\s*(?:=\s*(?P<codes>[\w\-,\s]+))?", re.IGNORECASE)

ALL = ("ALL",)


def _codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ALL
    codes = tuple(part.strip() for part in text.replace(" ", ",").split(",") if part.strip())
    return codes or ALL


@dataclass(frozen=True)
class Suppressions:
    by_line: dict[int, tuple[str, ...]]
    whole_file: tuple[str, ...]

    def suppresses(self, code: str, name: str, line: int) -> bool:
        """Whether a finding of rule `code`/`name` reported on `line` is suppressed."""
        selectors = (*self.whole_file, *self.by_line.get(line, ()))
        return any(matches(sel, code, name) for sel in selectors)


def parse_suppressions(source: str) -> Suppressions:
    by_line: dict[int, tuple[str, ...]] = {}
    whole_file: list[str] = []
    if "#" not in source:
        return Suppressions(by_line, ())
    for lineno, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        file_match = _FILE.search(line)
        if file_match:
            whole_file.extend(_codes(file_match.group("codes")))
            continue
        match = _LINE.search(line)
        if match:
            by_line[lineno] = _codes(match.group("codes") or match.group("noqa"))
    return Suppressions(by_line, tuple(whole_file))
