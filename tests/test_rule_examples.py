"""Every rule's own VALID and INVALID examples, run as tests (the Fixit model).

Adding a rule adds its tests here without touching this file.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from conftest import expected_findings
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint import engine
from torchlint.config import Config
from torchlint.finding import Finding
from torchlint.fix import fix_source
from torchlint.registry import all_rules
from torchlint.rule import DOC_SECTIONS, Rule
from torchlint.sources import SourceFile

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


@pytest.mark.parametrize("rule, kind, i", CASES)
def test_fix(rule: type[Rule], kind: str, i: int) -> None:
    """Every fix (unsafe ones included), applied as `check --fix` does, leaves a file that
    parses, changes only the statement it was offered for, and cures its finding; VALID
    examples stay untouched; an example's `fixed=` form is what the fixes produce."""
    example = rule.examples(kind)[i]
    source = SourceFile(Path("example.py"), example.code, len(example.code))
    fixed, applied, remaining = fix_source(source, "example.py", [rule()], Config(), unsafe=True)
    findings = run(rule, example.code)
    if kind == "valid":
        assert applied == 0 and fixed.text == example.code
        return
    offered = [f for f in findings if f.fix]
    if not offered:
        assert example.fixed_code is None, "the example declares a fixed form but the rule offered no fix"
        return
    for finding in offered:
        assert finding.fix is not None
        first, last = enclosing_statement(example.code, finding)
        for edit in finding.fix.edits:
            assert first <= edit.line and edit.end_line <= last + (edit.end_column == 1), (
                f"the fix of line {finding.line} edits lines {edit.line}-{edit.end_line}, "
                f"outside its statement (lines {first}-{last})"
            )
    cst.parse_module(fixed.text)
    assert applied >= 1
    assert not [f for f in remaining if f.fix], "a fixed file still has fixable findings: the fix did not cure them"
    assert len(remaining) <= len(findings) - len(offered)
    if example.fixed_code is not None:
        assert fixed.text == example.fixed_code


def enclosing_statement(source: str, finding: Finding) -> tuple[int, int]:
    """First and last line of the innermost statement that contains the finding's start."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    best: tuple[int, int] = (1, source.count("\n") + 1)
    start = (finding.line, finding.column - 1)
    for node, where in positions.items():
        if not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            continue
        if (where.start.line, where.start.column) <= start <= (where.end.line, where.end.column):
            if where.end.line - where.start.line <= best[1] - best[0]:
                best = (where.start.line, where.end.line)
    return best


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
