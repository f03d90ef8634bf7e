"""CI output formats: SARIF (validated against the OASIS schema), GitHub workflow
commands and JUnit XML; each usable by any producer of findings (check or probe)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from torchlint.cli import main
from torchlint.finding import Edit, Finding, Fix, Severity
from torchlint.registry import all_rules
from torchlint.report import ReportContext, formats, render
from torchlint.report.github import escape_data, escape_property
from torchlint.rule import RuleMeta

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
BUGGY = """\
import torch
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    opt.step()
"""


def finding(**changes: object) -> Finding:
    base: dict[str, object] = dict(
        filename="src/train.py",
        cell=0,
        line=5,
        column=5,
        end_line=5,
        end_column=15,
        code="TL001",
        name="missing-zero-grad",
        message="`opt.step()` runs in this loop but gradients are never cleared",
    )
    base.update(changes)
    return Finding(**base)  # type: ignore[arg-type]


FINDINGS = [
    finding(),
    finding(
        filename="my notebooks/nb.ipynb",
        cell=3,
        line=2,
        column=1,
        end_line=2,
        end_column=9,
        code="TL002",
        name="unsynchronized-timing",
        severity=Severity.WARNING,
    ),
    finding(filename="/abs/bad.py", line=1, column=1, end_line=1, end_column=1, code="TL000", name="parse-error"),
    finding(
        filename="src/fixme.py",
        code="TL003",
        name="view-after-transpose",
        severity=Severity.INFO,
        message="50% of <tensor> & \"view\":\nline two, with commas",
        fix=Fix("insert `.contiguous()`", (Edit(5, 10, 5, 10, ".contiguous()"),), safe=True),
    ),
]


def context(**changes: object) -> ReportContext:
    base: dict[str, object] = dict(
        files_checked=5,
        rules=tuple(RuleMeta.of(rule) for rule in all_rules()),
        version="0.1.0",
        files=("src/clean.py", "src/train.py", "my notebooks/nb.ipynb", "/abs/bad.py", "src/fixme.py"),
    )
    base.update(changes)
    return ReportContext(**base)  # type: ignore[arg-type]


def validate_sarif(text: str) -> dict:
    log = json.loads(text)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return log


def test_every_format_is_discovered() -> None:
    assert {"text", "json", "sarif", "github", "junit"} <= set(formats())


@pytest.mark.parametrize("findings", [FINDINGS, []], ids=["findings", "clean"])
def test_sarif_is_valid_against_the_oasis_schema(findings: list[Finding]) -> None:
    validate_sarif(render("sarif", findings, context()))


def test_sarif_rules_carry_docs_and_links_to_the_committed_pages(repo: Path) -> None:
    log = validate_sarif(render("sarif", FINDINGS, context()))
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    for rule in all_rules():
        descriptor = rules[rule.CODE]
        assert descriptor["name"] == rule.NAME
        assert descriptor["help"]["markdown"] == rule.doc()
        assert descriptor["shortDescription"]["text"] == rule.SUMMARY
        url = descriptor["helpUri"]
        assert url.endswith(f"/docs/rules/{rule.CODE}.md")
        assert (repo / "docs" / "rules" / f"{rule.CODE}.md").is_file(), url
    # Codes that belong to no rule class still get a descriptor, so ruleIndex is valid.
    assert rules["TL000"]["name"] == "parse-error"


def test_sarif_results_have_physical_locations() -> None:
    log = validate_sarif(render("sarif", FINDINGS, context()))
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == [r["ruleId"] for r in results]
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"] == {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}
    assert first["region"] == {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 15}
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20notebooks/nb.ipynb"
    assert results[1]["level"] == "warning"
    assert results[1]["properties"] == {"cell": 3, "cellLine": 2, "cellColumn": 1}
    assert results[2]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///abs/bad.py"}
    assert results[3]["level"] == "note"
    (change,) = results[3]["fixes"][0]["artifactChanges"]
    assert change["replacements"][0]["insertedContent"] == {"text": ".contiguous()"}


def test_sarif_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(BUGGY)
    result = CliRunner().invoke(main, ["check", "--isolated", "--format", "sarif", "-o", "out.sarif", "."])
    assert result.exit_code == 1
    log = validate_sarif(Path("out.sarif").read_text(encoding="utf-8"))
    (found,) = log["runs"][0]["results"]
    assert found["ruleId"] == "TL001"
    assert found["locations"][0]["physicalLocation"]["region"]["startLine"] == 5


def test_github_workflow_commands() -> None:
    lines = render("github", FINDINGS, context()).splitlines()
    assert lines[0] == (
        "::error file=src/train.py,line=5,col=5,endLine=5,endColumn=15,title=TL001 missing-zero-grad::"
        "`opt.step()` runs in this loop but gradients are never cleared"
    )
    # Notebook cells are no lines of the .ipynb file: the annotation names the cell instead.
    assert lines[1].startswith("::warning file=my notebooks/nb.ipynb,title=TL002 unsynchronized-timing::cell 3, line 2,")
    assert lines[3].startswith("::notice file=src/fixme.py,")
    assert lines[3].endswith('::50%25 of <tensor> & "view":%0Aline two, with commas')
    assert len(lines) == len(FINDINGS)


def test_github_escaping() -> None:
    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("dir,x/a:b%.py\n") == "dir%2Cx/a%3Ab%25.py%0A"
    line = render("github", [finding(filename="a,b:c.py", code="TL001", name="x")], context()).strip()
    assert line.startswith("::error file=a%2Cb%3Ac.py,line=5,")


def test_junit_has_one_case_per_checked_file() -> None:
    text = render("junit", FINDINGS, context())
    root = ET.fromstring(text)
    # src/fixme.py has only an info finding: below the default --fail-on warning.
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "3"
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert list(cases) == ["src/clean.py", "src/train.py", "my notebooks/nb.ipynb", "/abs/bad.py", "src/fixme.py"]
    assert cases["src/clean.py"].find("failure") is None
    failure = cases["my notebooks/nb.ipynb"].find("failure")
    assert failure is not None and failure.get("type") == "TL002"
    assert "my notebooks/nb.ipynb:cell 3:2:1: TL002 [unsynchronized-timing] warning:" in (failure.text or "")
    assert cases["src/fixme.py"].find("failure") is None
    info = cases["src/fixme.py"].find("system-out")
    assert info is not None and 'TL003 [view-after-transpose] info: 50% of <tensor> & "view":' in (info.text or "")


def test_junit_fails_info_findings_with_fail_on_info() -> None:
    root = ET.fromstring(render("junit", FINDINGS, context(fail_on=Severity.INFO)))
    assert root.get("failures") == "4"
    fixme = next(case for case in root.iter("testcase") if case.get("name") == "src/fixme.py")
    assert fixme.find("failure") is not None and fixme.find("system-out") is None


def test_junit_survives_control_characters() -> None:
    text = render("junit", [finding(message="bad \x1b[31m byte \x00")], context(files=()))
    failure = ET.fromstring(text).find("./testsuite/testcase/failure")
    assert failure is not None and "bad \ufffd[31m byte \ufffd" in (failure.text or "")


def test_junit_from_the_command_line_with_a_clean_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ok.py").write_text("import torch\n")
    result = CliRunner().invoke(main, ["check", "--isolated", "--format", "junit", "."])
    assert result.exit_code == 0
    root = ET.fromstring(result.stdout)
    assert [(c.get("name"), c.find("failure")) for c in root.iter("testcase")] == [("ok.py", None)]


def test_the_schema_check_rejects_broken_sarif() -> None:
    log = json.loads(render("sarif", FINDINGS, context()))
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del log["runs"][0]["tool"]["driver"]["name"]
    with pytest.raises(AssertionError, match="startLine|name"):
        validate_sarif(json.dumps(log))


def test_check_help_names_every_format() -> None:
    help_text = CliRunner().invoke(main, ["check", "--help"], terminal_width=200).output
    for name in formats():
        assert name in help_text
