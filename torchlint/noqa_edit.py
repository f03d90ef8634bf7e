"""Editing suppression comments: adding or extending `# noqa: TL0xx` on a line
(`check --add-noqa`, the editor's "disable for this line"), and removing codes that
suppress nothing (the fix of TL900 unused-suppression).

Pure text functions; lines are found with the tokenizer, so that a comment never lands
inside a multi-line string or after a line-continuation backslash.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from torchlint.finding import Edit
from torchlint.suppression import NOQA, Directive, parse_suppressions

_TOKEN = re.compile(r"[^,\s]+")


@dataclass(frozen=True)
class LineLayout:
    """What the tokenizer says about each line of a source."""

    # Line -> 0-based column where its comment starts.
    comments: dict[int, int]
    # Lines whose end is inside a string or continued by a backslash: no comment fits there.
    closed: frozenset[int]


def layout(source: str) -> LineLayout:
    comments: dict[int, int] = {}
    closed: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments.setdefault(token.start[0], token.start[1])
            elif token.end[0] > token.start[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                closed.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass  # broken code: keep what was tokenized so far
    lines = source.split("\n")
    for number, line in enumerate(lines, start=1):
        if line.rstrip().endswith("\\") and number not in comments:
            closed.add(number)
    return LineLayout(comments, frozenset(closed))


def selector_tokens(line: str, directive: Directive) -> list[tuple[int, int, str]]:
    """(start, end, text) of each code or name in the directive's list."""
    if directive.is_bare:
        return []
    text = line[directive.codes_start : directive.codes_end]
    return [(directive.codes_start + m.start(), directive.codes_start + m.end(), m.group()) for m in _TOKEN.finditer(text)]


def removal(line_number: int, line: str, directive: Directive, remove: set[int], is_last_line: bool) -> Edit:
    """The edit that drops the tokens at indexes `remove` from the directive, or the
    whole directive (and its line, if nothing else is on it) when none would be left."""
    tokens = selector_tokens(line, directive)
    if directive.is_bare or len(remove) == len(tokens):
        before = line[: directive.start].rstrip()
        after = line[directive.end :]
        if after.strip():
            # Another comment follows: keep it, drop the directive and the blanks after it.
            end = len(line) - len(after.lstrip())
            return Edit(line_number, directive.start + 1, line_number, end + 1, "")
        if not before and not is_last_line:
            return Edit(line_number, 1, line_number + 1, 1, "")
        return Edit(line_number, len(before) + 1, line_number, len(line) + 1, "")
    deleted = [False] * len(line)
    for i in sorted(remove):
        start, end, _ = tokens[i]
        if i + 1 < len(tokens):
            span = range(start, tokens[i + 1][0])
        else:
            span = range(tokens[i - 1][1], end)
        for at in span:
            deleted[at] = True
    first = directive.codes_start
    last = directive.codes_end
    kept = "".join(ch for at, ch in enumerate(line[first:last], start=first) if not deleted[at])
    return Edit(line_number, first + 1, line_number, last + 1, kept)


def with_noqa(source: str, codes_by_line: dict[int, set[str]]) -> tuple[str, int, list[int]]:
    """`source` with `# noqa: CODES` on the given lines, extending a `# noqa: ...`
    already there; returns (new source, how many lines changed, lines left alone because
    no comment can go there)."""
    lines = source.split("\n")
    where = layout(source)
    suppressions = parse_suppressions(source)
    noqa_on: dict[int, Directive] = {}
    for directive in suppressions.directives:
        if directive.kind == NOQA:
            noqa_on.setdefault(directive.line, directive)
    changed = 0
    skipped: list[int] = []
    for number in sorted(codes_by_line):
        if not 0 < number <= len(lines):
            continue
        line = lines[number - 1]
        existing = noqa_on.get(number)
        if existing is not None and (where.comments.get(number, len(line)) <= existing.start):
            if existing.is_bare:
                continue  # `# noqa` already suppresses everything here
            have = {token.upper() for _, _, token in selector_tokens(line, existing)}
            new = sorted(code for code in codes_by_line[number] if code.upper() not in have)
            if new:
                at = existing.codes_end
                lines[number - 1] = line[:at] + "".join(f", {code}" for code in new) + line[at:]
                changed += 1
            continue
        if number in where.closed:
            skipped.append(number)
            continue
        stripped = line.rstrip()
        lines[number - 1] = f"{stripped}  # noqa: {', '.join(sorted(codes_by_line[number]))}"
        changed += 1
    return "\n".join(lines), changed, skipped
