"""SARIF 2.1.0, as GitHub code scanning and other CI dashboards read it.

Rules carry their documentation as help text and a link to their docs page; results
carry physical locations relative to the working folder (`%SRCROOT%`). Columns count
code points, as LibCST does, and say so (`columnKind`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

from torchlint.finding import Finding, Fix, Severity
from torchlint.report import ReportContext
from torchlint.rule import REPOSITORY_URL, RuleMeta, doc_sections

NAME = "sarif"

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    rules = [_rule(meta) for meta in context.rules]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    for finding in findings:
        if finding.code not in index:  # TL000, TL999 and runtime codes: no docs page
            index[finding.code] = len(rules)
            rules.append({"id": finding.code, "name": finding.name, "shortDescription": {"text": finding.name}})
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "torchlint",
                "version": context.version or "0",
                "informationUri": REPOSITORY_URL,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": context.cwd.resolve().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.code]) for f in findings],
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(meta: RuleMeta) -> dict[str, Any]:
    sections = doc_sections(meta.doc)
    what = sections.get("What it does", meta.summary)
    return {
        "id": meta.code,
        "name": meta.name,
        "shortDescription": {"text": meta.summary},
        "fullDescription": {"text": what},
        "help": {"text": meta.doc, "markdown": meta.doc},
        "helpUri": meta.url,
        "defaultConfiguration": {"level": LEVELS[meta.severity]},
        "properties": {"tags": ["pytorch", "correctness"]},
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    artifact = _artifact(finding.filename)
    message = f"cell {finding.cell}: {finding.message}" if finding.cell else finding.message
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": _region(finding)}}],
    }
    if finding.cell:
        result["properties"] = {"cell": finding.cell}
    elif finding.fix is not None:
        # Edits of notebook findings are relative to a cell, not to the file: not offered here.
        result["fixes"] = [_fix(finding.fix, artifact)]
    return result


def _artifact(filename: str) -> dict[str, Any]:
    path = Path(filename)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix()), "uriBaseId": SRCROOT}


def _region(finding: Finding) -> dict[str, int]:
    return {
        "startLine": finding.line,
        "startColumn": finding.column,
        "endLine": max(finding.end_line, finding.line),
        "endColumn": max(finding.end_column, 1),
    }


def _fix(fix: Fix, artifact: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": {"text": fix.description},
        "artifactChanges": [
            {
                "artifactLocation": artifact,
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": e.line,
                            "startColumn": e.column,
                            "endLine": e.end_line,
                            "endColumn": e.end_column,
                        },
                        "insertedContent": {"text": e.replacement},
                    }
                    for e in fix.edits
                ],
            }
        ],
    }
