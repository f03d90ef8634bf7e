"""The formats beside text/json/sarif/github/junit (concise, json-lines, gitlab, rdjson,
pylint), `--output-format`, and SARIF as GitHub code scanning reads it: short
descriptions, precision and problem severity, fingerprints that survive unrelated
edits, notebook alerts on the cell's line of the .ipynb file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_formats import BUGGY, FINDINGS, context, finding, validate_sarif
from test_notebook import SETUP, TRAIN, cell, write_notebook

from torchlint.cli import main
from torchlint.finding import Severity
from torchlint.report import format_names, render
from torchlint.report.sarif import MAX_DESCRIPTION
from torchlint.rule import RuleMeta

NEW_FORMATS = ("concise", "json-lines", "gitlab", "rdjson", "pylint")
TWO_BUGS = BUGGY + "\nfor x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n"


def run_check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "-j", "1", *args])
    return result.exit_code, result.stdout


def test_the_new_formats_are_known_and_listed_in_the_help() -> None:
    assert set(NEW_FORMATS) <= set(format_names())
    help_text = CliRunner().invoke(main, ["check", "--help"]).output
    assert "--output-format" in help_text


def test_only_the_chosen_format_is_imported() -> None:
    code = (
        "import sys; from torchlint.report import format_names, render; format_names(); "
        "print(sorted(m for m in sys.modules if m.startswith('torchlint.report.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_concise_is_one_line_per_finding_and_a_summary() -> None:
    lines = render("concise", FINDINGS, context()).splitlines()
    assert lines[0] == "src/train.py:5:5: TL001 `opt.step()` runs in this loop but gradients are never cleared"
    assert lines[1].startswith("my notebooks/nb.ipynb:cell 3:2:1: TL002 ")
    # A message with a newline is still one line per finding, plus the summary.
    assert len(lines) == len(FINDINGS) + 2 and lines[-1].startswith("Found 4 findings")
    quiet = render("concise", FINDINGS[:1], context(show_summary=False))
    assert quiet.count("\n") == 1


def test_json_lines_is_one_object_per_line() -> None:
    lines = render("json-lines", FINDINGS, context()).splitlines()
    assert [json.loads(line) for line in lines] == [f.to_dict() for f in FINDINGS]
    assert render("json-lines", [], context()) == ""


def test_gitlab_code_quality_has_the_required_fields() -> None:
    issues = json.loads(render("gitlab", FINDINGS, context()))
    assert len(issues) == len(FINDINGS)
    first = issues[0]
    assert first["check_name"] == "TL001 missing-zero-grad"
    assert first["description"].startswith("TL001 `opt.step()`")
    assert first["severity"] == "major" and issues[1]["severity"] == "minor" and issues[3]["severity"] == "info"
    assert first["location"] == {"path": "src/train.py", "lines": {"begin": 5, "end": 5}}
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert isinstance(issue["location"]["lines"]["begin"], int)


def test_rdjson_has_codes_links_ranges_and_suggestions() -> None:
    result = json.loads(render("rdjson", FINDINGS, context()))
    assert result["source"]["name"] == "torchlint"
    first, nb, parse_error, fixable = result["diagnostics"]
    assert first["code"]["value"] == "TL001" and first["code"]["url"].endswith("/docs/rules/TL001.md")
    assert first["location"]["range"] == {"start": {"line": 5, "column": 5}, "end": {"line": 5, "column": 15}}
    assert first["severity"] == "ERROR" and nb["severity"] == "WARNING" and fixable["severity"] == "INFO"
    assert nb["message"].startswith("cell 3, line 2, column 1: ")
    assert "url" not in parse_error["code"]
    assert fixable["suggestions"] == [
        {"range": {"start": {"line": 5, "column": 10}, "end": {"line": 5, "column": 10}}, "text": ".contiguous()"}
    ]


def test_pylint_is_path_line_code_message() -> None:
    lines = render("pylint", FINDINGS, context()).splitlines()
    assert lines[0] == "src/train.py:5: [TL001] `opt.step()` runs in this loop but gradients are never cleared"
    assert lines[1].startswith("my notebooks/nb.ipynb:2: [TL002] cell 3: ")
    assert len(lines) == len(FINDINGS)


@pytest.mark.parametrize("name", NEW_FORMATS)
def test_each_new_format_from_the_command_line(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(BUGGY)
    code, out = run_check("--output-format", name, "train.py")
    assert code == 1
    assert "TL001" in out and "train.py" in out


def test_unknown_format_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["check", "--isolated", "--format", "yaml", "."])
    assert result.exit_code == 2 and "unknown format 'yaml'" in result.stderr and "json-lines" in result.stderr


def test_sarif_rules_are_what_code_scanning_needs() -> None:
    long_doc = "## What it does\n" + "word " * 400 + "\n\n## Why is this bad?\nBecause."
    long_rule = RuleMeta("TL998", "long-rule", "A summary", Severity.WARNING, long_doc)
    findings = [*FINDINGS, finding(code="TL998", name="long-rule", severity=Severity.WARNING)]
    log = validate_sarif(render("sarif", findings, context(rules=(*context().rules, long_rule))))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert {"TL000", "TL001", "TL998"} <= {r["id"] for r in rules}
    for rule in rules:
        assert len(rule["fullDescription"]["text"]) <= MAX_DESCRIPTION, rule["id"]
        assert rule["properties"]["precision"] in ("very-high", "high", "medium", "low")
        assert rule["properties"]["problem.severity"] in ("error", "warning", "recommendation")
    long = next(r for r in rules if r["id"] == "TL998")
    assert long["fullDescription"]["text"].endswith("…") and long["help"]["markdown"] == long_doc
    assert long["properties"]["problem.severity"] == "warning"
    # A code without a rule (here TL000) is described by its documentation, as `explain` prints it.
    parse_error = next(r for r in rules if r["id"] == "TL000")
    assert parse_error["fullDescription"]["text"] == "a file, or a notebook cell, that cannot be read or parsed"
    assert parse_error["help"]["markdown"].startswith("# TL000 parse-error\n")


def sarif_results(tmp_path: Path, *args: str) -> list[dict]:
    code, out = run_check("--format", "sarif", *args)
    assert code == 1
    return validate_sarif(out)["runs"][0]["results"]


def test_sarif_fingerprints_survive_unrelated_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(TWO_BUGS)
    before = sarif_results(tmp_path, "train.py")
    prints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in before]
    # The same rule on two identical lines: same hash, told apart by the occurrence.
    assert len(prints) == 2 and len(set(prints)) == 2
    assert prints[0].split(":")[0] == prints[1].split(":")[0] and [p[-2:] for p in prints] == [":1", ":2"]
    Path("train.py").write_text("# a new comment\nimport os\n\n" + TWO_BUGS.replace("opt.step()\n", "opt.step()   \n", 1))
    after = sarif_results(tmp_path, "train.py")
    lines = lambda results: [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]  # noqa: E731
    assert lines(after) == [n + 3 for n in lines(before)]
    assert [r["partialFingerprints"] for r in after] == [r["partialFingerprints"] for r in before]
    Path("train.py").write_text(TWO_BUGS.replace("opt.step()", "optimizer.step()", 1).replace("opt =", "optimizer ="))
    changed = sarif_results(tmp_path, "train.py")
    assert changed[0]["partialFingerprints"] != before[0]["partialFingerprints"]


def test_sarif_notebook_alert_opens_on_the_cell_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_notebook(tmp_path / "nb.ipynb", cell("# Title", "markdown"), cell(SETUP), cell(TRAIN))
    (result,) = sarif_results(tmp_path, "nb.ipynb")
    assert result["properties"] == {"cell": 3, "cellLine": 4, "cellColumn": 5}
    region = result["locations"][0]["physicalLocation"]["region"]
    raw_line = path.read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert raw_line.strip() == '"    opt.step()"'
    assert result["message"]["text"].startswith("cell 3, line 4: ")
    # GitLab and reviewdog place it on the same line of the file.
    _, gitlab = run_check("--format", "gitlab", "nb.ipynb")
    assert json.loads(gitlab)[0]["location"]["lines"]["begin"] == region["startLine"]
    _, rdjson = run_check("--format", "rdjson", "nb.ipynb")
    assert json.loads(rdjson)["diagnostics"][0]["location"]["range"]["start"]["line"] == region["startLine"]


def test_sarif_notebook_with_string_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_notebook(tmp_path / "nb.ipynb", cell("".join(SETUP)), cell("".join(TRAIN)))
    (result,) = sarif_results(tmp_path, "nb.ipynb")
    region = result["locations"][0]["physicalLocation"]["region"]
    raw_line = path.read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert "opt.step()" in raw_line and "for x, y in loader" in raw_line
