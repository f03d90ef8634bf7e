from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")


def expected_findings(source: str) -> set[tuple[int, str]]:
    """(line, code) pairs marked with `# expect: TL0xx[, TL0yy]` comments."""
    found = set()
    for lineno, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in match.group("codes").split(","):
                found.add((lineno, code.strip()))
    return found


@pytest.fixture
def repo() -> Path:
    return REPO
