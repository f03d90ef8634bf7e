"""Every bundled fixture script yields exactly the findings its `# expect:` markers name.

Generic over `fixtures/*.py`: a fixture added by any rule is checked here without
touching this file. Buggy fixtures mark their findings; corrected twins mark none.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, expected_findings

from torchlint import api

FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))


def test_there_are_fixtures() -> None:
    assert FIXTURE_FILES, f"no fixtures found in {FIXTURES}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path) -> None:
    result = api.check_paths([path])
    assert not result.internal_errors, result.internal_errors[0].message
    got = {(f.line, f.code) for f in result.findings}
    want = expected_findings(path.read_text(encoding="utf-8"))
    assert got == want, f"{path.name}: expected {sorted(want)}, got {sorted(got)}"


@pytest.mark.parametrize("path", [p for p in FIXTURE_FILES if p.stem.endswith("_fixed")], ids=lambda p: p.name)
def test_fixed_twin_has_a_buggy_original(path: Path) -> None:
    original = path.with_name(path.name.replace("_fixed.py", ".py"))
    assert original.exists(), f"{path.name} is the corrected twin of a missing {original.name}"
    assert expected_findings(original.read_text(encoding="utf-8")), f"{original.name} marks no finding"
