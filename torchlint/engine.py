"""Source text + rules -> findings. Pure: no file I/O, no printing, no exits, no torch.

Per file: a trigger prefilter decides which rules can match; only then is the file
parsed (CPython's parser first, as a guard: LibCST's native parser can crash the
process on input nested deeper than CPython accepts), rules run on the shared
parse, positions are resolved only for reported nodes, and suppression comments
are applied.
"""

from __future__ import annotations

import ast
import traceback
import warnings
from typing import Iterable, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from torchlint.finding import (
    INTERNAL_ERROR_CODE,
    INTERNAL_ERROR_NAME,
    PARSE_ERROR_CODE,
    PARSE_ERROR_NAME,
    Edit,
    Finding,
    Fix,
    Severity,
)
from torchlint.rule import FileContext, FixSpec, Report, Rule
from torchlint.suppression import parse_suppressions


class ParseFailure(Exception):
    def __init__(self, line: int, column: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.column = column
        self.reason = reason


def triggered_rules(source: str, rules: Sequence[Rule]) -> list[Rule]:
    return [rule for rule in rules if rule.triggered_by(source)]


def parse(source: str) -> cst.Module:
    """Parse `source`, raising `ParseFailure` with CPython's own reason when it is not Python."""
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        column = nul - (source.rfind("\n", 0, nul) + 1) + 1
        raise ParseFailure(line, column, "source contains a NUL byte")
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences and the like are the user's business, not ours.
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as exc:
        raise ParseFailure(exc.lineno or 1, exc.offset or 1, f"SyntaxError: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ParseFailure(1, 1, "code is nested too deeply for Python's parser") from None
    except ValueError as exc:
        raise ParseFailure(1, 1, str(exc)) from None
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        reason = str(exc.message).strip().splitlines()[0] if exc.message else "syntax error"
        raise ParseFailure(exc.raw_line, exc.raw_column + 1, f"LibCST cannot parse this code: {reason}") from None
    except (RecursionError, MemoryError):
        raise ParseFailure(1, 1, "code is nested too deeply for LibCST's parser") from None


def parse_error(filename: str, line: int, column: int, reason: str) -> Finding:
    return Finding(
        filename=filename,
        cell=0,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        code=PARSE_ERROR_CODE,
        name=PARSE_ERROR_NAME,
        message=f"cannot parse this file: {reason}",
        severity=Severity.ERROR,
    )


def internal_error(filename: str, rule: Rule, exc: BaseException) -> Finding:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    return Finding(
        filename=filename,
        cell=0,
        line=1,
        column=1,
        end_line=1,
        end_column=1,
        code=INTERNAL_ERROR_CODE,
        name=INTERNAL_ERROR_NAME,
        message=(
            f"rule {rule.CODE} ({rule.NAME}) failed on this file: "
            f"{type(exc).__name__}: {exc}{where}; its other findings were kept, please report this"
        ),
        severity=Severity.ERROR,
    )


def check_source(source: str, filename: str, rules: Sequence[Rule]) -> list[Finding]:
    """Check one file's text with `rules`; never raises for any input."""
    active = triggered_rules(source, rules)
    if not active:
        return []
    try:
        module = parse(source)
    except ParseFailure as failure:
        return [parse_error(filename, failure.line, failure.column, failure.reason)]
    ctx = FileContext(filename, source, module)
    reported: list[tuple[Rule, Report]] = []
    findings: list[Finding] = []
    for rule in active:
        try:
            reported.extend((rule, report) for report in rule.check(ctx))
        except Exception as exc:  # a broken rule must not lose the file or the run
            findings.append(internal_error(filename, rule, exc))
    if reported:
        findings.extend(_locate(ctx, reported))
    suppressions = parse_suppressions(source)
    kept = [
        f
        for f in findings
        if f.is_internal_error or not suppressions.suppresses(f.code, f.name, range(f.line, f.end_line + 1))
    ]
    return sorted(set(kept))


def _locate(ctx: FileContext, reported: Iterable[tuple[Rule, Report]]) -> list[Finding]:
    positions = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(PositionProvider)
    findings = []
    for rule, report in reported:
        try:
            where: CodeRange = positions[report.node]
            fix = render_fix(ctx, report.fix) if report.fix else None
        except Exception as exc:  # a rule reported a node outside the tree, or a bad fix
            findings.append(internal_error(ctx.filename, rule, exc))
            continue
        findings.append(
            Finding(
                filename=ctx.filename,
                cell=0,
                line=where.start.line,
                column=where.start.column + 1,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                code=rule.CODE,
                name=rule.NAME,
                message=report.message,
                severity=rule.SEVERITY,
                fix=fix,
            )
        )
    return findings


def render_fix(ctx: FileContext, spec: FixSpec) -> Fix | None:
    """Turn node replacements into minimal text edits on the original source."""
    edits = []
    for old, new in spec.replacements:
        fixed = ctx.module.deep_replace(old, new)
        assert isinstance(fixed, cst.Module)
        edit = _text_edit(ctx.source, fixed.code)
        if edit is not None:
            edits.append(edit)
    if not edits:
        return None
    return Fix(description=spec.description, edits=tuple(sorted(edits)), safe=spec.safe)


def _text_edit(old: str, new: str) -> Edit | None:
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    line, column = offset_to_position(old, start)
    end_line, end_column = offset_to_position(old, end_old)
    return Edit(line, column, end_line, end_column, new[start:end_new])


def offset_to_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def position_to_offset(text: str, line: int, column: int) -> int:
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", offset) + 1
    return offset + column - 1


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; an edit that overlaps an earlier-applied one is skipped."""
    chosen: list[tuple[int, int, str]] = []
    for edit in sorted(set(edits)):
        start = position_to_offset(text, edit.line, edit.column)
        end = position_to_offset(text, edit.end_line, edit.end_column)
        if chosen and start < chosen[-1][1]:
            continue
        chosen.append((start, end, edit.replacement))
    for start, end, replacement in reversed(chosen):
        text = text[:start] + replacement + text[end:]
    return text
