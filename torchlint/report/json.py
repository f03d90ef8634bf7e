"""A JSON list of findings, one object per finding (see `Finding.to_dict`)."""

from __future__ import annotations

import json
from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext

NAME = "json"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"
