"""One JSON object per line, one line per finding (see `Finding.to_dict`): for tools
that stream findings or append them to a log."""

from __future__ import annotations

import json
from typing import Sequence

from torchlint.finding import Finding
from torchlint.report import ReportContext

NAME = "json-lines"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "".join(json.dumps(f.to_dict(), ensure_ascii=False) + "\n" for f in findings)
