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


class ExplodingRule:
    """A test-only rule that raises on any file containing `EXPLODE`."""

    CODE = "TL990"
    NAME = "exploding"
    SUMMARY = "Raises, to test that a broken rule loses nothing else"
    TRIGGERS = (("EXPLODE",),)


@pytest.fixture
def add_rules(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Call with rule instances to run them next to the enabled rules (in this process and
    in the workers it forks); the registry is left alone."""
    from torchlint import api

    real = api.enabled_rules

    def add(*extra: object) -> None:
        monkeypatch.setattr(api, "enabled_rules", lambda config: [*real(config), *extra])

    return add


def exploding_rule():  # type: ignore[no-untyped-def]
    from torchlint.rule import Rule

    class Exploding(ExplodingRule, Rule):
        def check(self, ctx):  # type: ignore[no-untyped-def]
            raise ValueError("boom\nsecond line of a long reason")

    return Exploding()
