"""Every rule's own VALID and INVALID examples, run as tests (the Fixit model).

Adding a rule adds its tests here without touching this file.
"""

from __future__ import annotations

import libcst as cst
import pytest
from conftest import expected_findings

from torchlint import engine
from torchlint.registry import all_rules
from torchlint.rule import DOC_SECTIONS, Rule

CASES = [
    pytest.param(rule, kind, i, id=f"{rule.CODE}-{kind}-{i}")
    for rule in all_rules()
    for kind in ("valid", "invalid")
    for i in range(len(rule.examples(kind)))
]


def run(rule: type[Rule], source: str) -> list:
    return [f for f in engine.check_source(source, "example.py", [rule()]) if f.code != "TL000"]


@pytest.mark.parametrize("rule, kind, i", CASES)
def test_example(rule: type[Rule], kind: str, i: int) -> None:
    example = rule.examples(kind)[i]
    source = example.code
    cst.parse_module(source)  # an example must be valid Python
    findings = run(rule, source)
    internal = [f for f in findings if f.is_internal_error]
    assert not internal, internal[0].message
    got = {(f.line, f.code) for f in findings}
    if kind == "valid":
        assert not expected_findings(source), "VALID examples carry no `# expect:` markers"
        assert got == set(), f"false positive(s) on a VALID example: {findings}"
    else:
        want = {(line, code) for line, code in expected_findings(source) if code == rule.CODE}
        assert want, "an INVALID example marks its findings with `# expect: CODE`"
        assert got == want, f"expected {sorted(want)}, got {sorted(got)}: {[f.message for f in findings]}"


@pytest.mark.parametrize("rule, kind, i", [c for c in CASES if c.values[1] == "invalid"])
def test_fix(rule: type[Rule], kind: str, i: int) -> None:
    """A fix leaves a file that parses, changes only flagged code, and cures the finding."""
    example = rule.examples(kind)[i]
    findings = run(rule, example.code)
    edits = [edit for f in findings if f.fix for edit in f.fix.edits]
    if example.fixed_code is None:
        return
    assert edits, "the example declares a fixed form but the rule offered no fix"
    fixed = engine.apply_edits(example.code, edits)
    assert fixed == example.fixed_code
    cst.parse_module(fixed)
    assert run(rule, fixed) == []


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.CODE)
def test_rule_metadata(rule: type[Rule]) -> None:
    sections = rule.doc_sections()
    for section in DOC_SECTIONS:
        assert sections.get(section), f"{rule.CODE} doc lacks a '## {section}' section"
    assert rule.SUMMARY and "\n" not in rule.SUMMARY
    assert rule.TRIGGERS and all(rule.TRIGGERS)
    # The core rules (issue 2) need 12 of each, the second pack (issue 6) 8.
    minimum = 12 if rule.CODE <= "TL004" else 8
    assert len(rule.examples("valid")) >= minimum, f"at least {minimum} VALID examples, hard negatives included"
    assert len(rule.examples("invalid")) >= minimum, f"at least {minimum} INVALID examples"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.CODE)
def test_examples_pass_the_prefilter(rule: type[Rule]) -> None:
    """Every INVALID example passes the rule's trigger prefilter (else it could never be found)."""
    for example in rule.examples("invalid"):
        assert rule.triggered_by(example.code), example.code
