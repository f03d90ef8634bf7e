"""SARIF 2.1.0, as GitHub code scanning and other CI dashboards read it.

Rules carry their documentation as help text and a link to their docs page, a short
`fullDescription` (code scanning shows at most 1024 characters of it) and the
`precision` and `problem.severity` that code scanning sorts by. Results carry physical
locations relative to the working folder (`%SRCROOT%`) and `partialFingerprints` that
survive unrelated edits. Columns count code points, as LibCST does, and say so
(`columnKind`). A notebook result points at the line of the .ipynb file that holds the
cell's line, so that the alert opens on that cell; cell, line and column are in its
properties.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

from torchlint.finding import Finding, Fix, Severity
from torchlint.report import ReportContext
from torchlint.report.fingerprints import fingerprints
from torchlint.rule import REPOSITORY_URL, RuleMeta, doc_sections

NAME = "sarif"

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
PROBLEM_SEVERITIES = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}
# What code scanning shows of a rule's fullDescription.
MAX_DESCRIPTION = 1024
FINGERPRINT_KEY = "primaryLocationLineHash"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    rules = [_rule(meta) for meta in context.rules]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    for finding in findings:
        if finding.code not in index:  # TL000, TL999 and runtime codes: no docs page
            index[finding.code] = len(rules)
            rules.append(_builtin_rule(finding))
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
        "results": [
            _result(f, index[f.code], fingerprint, context)
            for f, fingerprint in zip(findings, fingerprints(findings, context))
        ],
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
        "fullDescription": {"text": shorten(what, MAX_DESCRIPTION)},
        "help": {"text": meta.doc, "markdown": meta.doc},
        "helpUri": meta.url,
        "defaultConfiguration": {"level": LEVELS[meta.severity]},
        "properties": _rule_properties(meta.severity, meta.precision),
    }


def _builtin_rule(finding: Finding) -> dict[str, Any]:
    """TL000, TL900, TL999 and runtime codes: no docs page, but what code scanning needs,
    and their documentation as `torchlint explain` prints it."""
    from torchlint.codes import code_doc

    doc = code_doc(finding.code)
    described = {"text": doc.summary} if doc is not None else {"text": finding.name}
    rule: dict[str, Any] = {
        "id": finding.code,
        "name": finding.name,
        "shortDescription": {"text": finding.name},
        "fullDescription": {"text": shorten(described["text"], MAX_DESCRIPTION)},
        "defaultConfiguration": {"level": LEVELS[finding.severity]},
        "properties": _rule_properties(finding.severity, "very-high"),
    }
    if doc is not None:
        rule["help"] = {"text": doc.render(), "markdown": doc.render()}
    return rule


def _rule_properties(severity: Severity, precision: str) -> dict[str, Any]:
    return {
        "tags": ["pytorch", "correctness"],
        "precision": precision,
        "problem.severity": PROBLEM_SEVERITIES[severity],
    }


def shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, ellipsis included."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def _result(finding: Finding, rule_index: int, fingerprint: str, context: ReportContext) -> dict[str, Any]:
    artifact = _artifact(finding.filename)
    message = (
        f"cell {finding.cell}, line {finding.line}: {finding.message}" if finding.cell else finding.message
    )
    region = _notebook_region(finding, context) if finding.cell else _region(finding)
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    if finding.cell:
        result["properties"] = {"cell": finding.cell, "cellLine": finding.line, "cellColumn": finding.column}
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


def _notebook_region(finding: Finding, context: ReportContext) -> dict[str, int]:
    """The lines of the .ipynb file that hold the finding's cell lines (columns in the
    JSON text differ from the cell's, so none are given)."""
    path = context.cwd / Path(finding.filename)
    start = context.notebook_line(path, finding.cell, finding.line)
    if start is None:
        return {"startLine": 1}
    end = context.notebook_line(path, finding.cell, finding.end_line) or start
    return {"startLine": start, "endLine": max(start, end)}


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
