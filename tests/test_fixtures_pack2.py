"""The pack-2 loop-order fixtures: every rule's findings on each script match its
`# expect:` markers exactly (the buggy script is found, its fixed twin is clean)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, expected_findings

from torchlint import engine
from torchlint.registry import all_rules

PACK = ("tl005_", "tl006_", "tl007_", "tl013_", "tl015_")
SCRIPTS = sorted(p for p in FIXTURES.glob("*.py") if p.name.startswith(PACK))


def test_every_rule_of_the_pack_has_a_buggy_script_and_a_fixed_twin() -> None:
    for prefix in PACK:
        buggy = [p for p in SCRIPTS if p.name.startswith(prefix) and not p.stem.endswith("_fixed")]
        assert buggy, f"no fixture for {prefix}"
        for script in buggy:
            assert script.with_name(script.stem + "_fixed.py").exists(), script.name


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_findings_match_markers(script: Path) -> None:
    source = script.read_text(encoding="utf-8")
    rules = [rule() for rule in all_rules()]
    findings = engine.check_source(source, script.name, rules)
    assert not [f for f in findings if f.code in ("TL000", "TL999")], findings
    got = {(f.line, f.code) for f in findings}
    want = expected_findings(source)
    if script.stem.endswith("_fixed"):
        assert not want, "a fixed twin carries no markers"
    else:
        assert want, "a buggy fixture marks its findings"
    assert got == want, [f"{f.line}: {f.code} {f.message}" for f in findings]
