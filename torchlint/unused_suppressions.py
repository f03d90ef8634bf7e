"""TL900 unused-suppression (ruff's RUF100): a `# noqa: TL0xx` or `# torchlint: disable`
comment that suppresses no finding, or names a code that is no torchlint rule.

Only torchlint's part of a comment is judged: `# noqa: E501` and a bare `# noqa` may
serve other tools (flake8, ruff) and are left alone; in `# torchlint: disable=...`
every name is torchlint's. The fix removes what is unused, or the whole comment.
"""

from __future__ import annotations

import re
from typing import Sequence

from torchlint.finding import UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME, Finding, Fix, Severity
from torchlint.noqa_edit import layout, removal, selector_tokens
from torchlint.registry import catalog, is_valid_selector
from torchlint.suppression import DISABLE_FILE, NOQA, Directive, Suppressions, finding_lines

_OUR_CODE = re.compile(r"^TL\d*$", re.IGNORECASE)


def is_ours(token: str, directive: Directive) -> bool:
    if directive.kind != NOQA:
        return True
    return bool(_OUR_CODE.match(token)) or "-" in token or token.lower() in catalog().values()


def unused_suppressions(
    source: str, filename: str, suppressions: Suppressions, findings: Sequence[Finding]
) -> list[Finding]:
    """TL900 findings for `suppressions`, given every finding before suppression."""
    if not suppressions.directives:
        return []
    used: set[tuple[Directive, str]] = set()
    for finding in findings:
        if not finding.is_internal_error:
            used.update(suppressions.matching(finding.code, finding.name, finding_lines(finding)))
    lines = source.split("\n")
    where = layout(source)
    reported = []
    for directive in suppressions.directives:
        comment_at = where.comments.get(directive.line)
        if comment_at is None or directive.start < comment_at:
            continue  # text in a string that looks like a comment
        if directive.is_bare:
            if directive.kind == NOQA or any(d is directive for d, _ in used):
                continue
            problems, remove = [f"it suppresses no finding {_scope(directive)}"], set[int]()
        else:
            problems, remove = _judge(lines[directive.line - 1], directive, used)
            if not problems:
                continue
        reported.append(_finding(filename, lines, directive, problems, remove))
    return reported


def _judge(line: str, directive: Directive, used: set[tuple[Directive, str]]) -> tuple[list[str], set[int]]:
    unused, unknown, remove = [], [], set()
    for i, (_, _, token) in enumerate(selector_tokens(line, directive)):
        if not is_ours(token, directive):
            continue
        if not is_valid_selector(token):
            unknown.append(token)
            remove.add(i)
        elif (directive, token) not in used:
            unused.append(token)
            remove.add(i)
    problems = []
    if unused:
        verb = "suppresses" if len(unused) == 1 else "suppress"
        problems.append(f"{', '.join(unused)} {verb} no finding {_scope(directive)}")
    if unknown:
        problems.append(f"{', '.join(unknown)} {'is no torchlint rule' if len(unknown) == 1 else 'are no torchlint rules'}")
    return problems, remove


def _scope(directive: Directive) -> str:
    return "in this file" if directive.kind == DISABLE_FILE else "on this line"


def _finding(filename: str, lines: list[str], directive: Directive, problems: list[str], remove: set[int]) -> Finding:
    line = lines[directive.line - 1]
    text = line[directive.start : directive.end]
    edit = removal(directive.line, line, directive, remove, directive.line == len(lines))
    what = "the comment" if edit.replacement == "" else "the unused codes"
    return Finding(
        filename=filename,
        cell=0,
        line=directive.line,
        column=directive.start + 1,
        end_line=directive.line,
        end_column=directive.end + 1,
        code=UNUSED_SUPPRESSION_CODE,
        name=UNUSED_SUPPRESSION_NAME,
        message=f"unused suppression `{text}`: {'; '.join(problems)}; remove {what}",
        severity=Severity.WARNING,
        fix=Fix(f"remove {what}", (edit,), safe=True),
    )
