"""Helpers shared by the probe tests: locating tagged lines in the probe's test scripts
and building static findings by hand (the probe must not depend on any rule's output)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import expected_findings

from torchlint.finding import Finding
from torchlint.runtime_probe.protocol import STATIC_NAMES

DATA = Path(__file__).resolve().parent / "data" / "probe"
CPU = DATA / "cpu"
_TAG = re.compile(r"#\s*line:\s*(?P<tag>[\w-]+)")


def line_of(path: Path, tag: str) -> int:
    """The line of `path` carrying the comment `# line: TAG`."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _TAG.search(text)
        if match and match.group("tag") == tag:
            return number
    raise LookupError(f"no `# line: {tag}` in {path}")


def static(path: Path, code: str, tag: str, filename: str | None = None) -> Finding:
    """A static finding of rule `code` at the line tagged `tag`."""
    return static_at(path, code, line_of(path, tag), filename)


def static_at(path: Path, code: str, line: int, filename: str | None = None) -> Finding:
    """A static finding of rule `code` at `line`."""
    return Finding(
        filename=filename or str(path),
        cell=0,
        line=line,
        column=1,
        end_line=line,
        end_column=2,
        code=code,
        name=STATIC_NAMES.get(code, "rule"),
        message=f"static {code}",
    )


def marked(path: Path) -> list[Finding]:
    """The static findings that the `# expect:` markers of a fixture name."""
    text = path.read_text(encoding="utf-8")
    return [static_at(path, code, line) for line, code in sorted(expected_findings(text))]
