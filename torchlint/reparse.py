"""Parsing a document again after an edit: only the top-level statements around it.

An editor checks a module again after each change, and LibCST's parse of a 2,000-line
module takes about half of the 300 ms a diagnostic may take (bench/lsp_latency.py). The
top-level statements of a module parse independently: between two of them the
tokenizer holds no state, each statement owns the blank lines and column-0 comments
above it, and its block owns the indented comments below it (LibCST's rules). So the
tree of an edited text is the tree of its unchanged statements, kept from the last
parse, around a fresh parse of the span that holds the edit, widened by one statement
on each side so that the lines at its seams fall where a full parse puts them. It is
the tree `libcst.parse_module` gives, node for node (the tests compare both on real
files under random edits). Where a seam is unusual (a span with no statement in it,
lines left after its last statement that belong to the next one, a different default
indent, a "\\r" newline, `barry_as_FLUFL`), or the span does not parse on its own, the
whole text is parsed again, as it would be without this module.

The ranges of reported nodes come from generating the code of their top-level
statements alone, offset by the lines above; the ranges found in a statement are kept
with it, so a finding in an unchanged statement costs no code generation at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import libcst as cst

from torchlint import engine
from torchlint.positions import Position, node_positions, positions_within


@dataclass
class _Statement:
    """One top-level statement of the last text parsed: where it starts and ends there, and
    the ranges (from its own first line) of the nodes in it that were reported."""

    node: cst.BaseStatement
    start: int
    end: int
    ranges: dict[int, Position] = field(default_factory=dict)


class IncrementalParser:
    """Parses successive versions of one document (see the module's docstring); for
    `engine.check_source`, whose `parser` it can be."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._module: cst.Module | None = None
        # None until a parse after the first needs them: they cost a code generation.
        self._statements: list[_Statement] | None = None
        self.reparsed_whole = 0  # how often the whole text was parsed (for the tests)

    def parse(self, source: str) -> cst.Module:
        if self._module is not None and source == self._text:
            return self._module
        module = self._parse_around_edit(source) if self._module is not None else None
        if module is None:
            self.reparsed_whole += 1
            self._module, self._statements = None, None
            module = engine.parse(source)  # raises ParseFailure for the whole text
            self._module = module
        self._text = source
        return module

    def node_positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Position]:
        if module is not self._module:
            return node_positions(module, nodes)
        statements = self._statements_of(module)
        if statements is None:
            return node_positions(module, nodes)
        wanted = {id(node) for node in nodes}
        found: dict[int, Position] = {}
        first_lines = self._first_lines(statements)
        pending = set(wanted)
        for statement in statements:
            for key in pending & statement.ranges.keys():
                found[key] = statement.ranges[key]
        pending -= found.keys()
        # Fresh statements first: most findings after an edit sit in what changed.
        for statement in sorted(statements, key=lambda s: bool(s.ranges)):
            if not pending:
                break
            ranges = positions_within(statement.node, module, pending)
            statement.ranges.update(ranges)
            found.update(ranges)
            pending -= ranges.keys()
        located: dict[int, Position] = {}
        for statement, first_line in zip(statements, first_lines):
            for key in wanted & statement.ranges.keys():
                line, column, end_line, end_column = statement.ranges[key]
                located[key] = (line + first_line - 1, column, end_line + first_line - 1, end_column)
        return located

    # The statements and their seams

    def _statements_of(self, module: cst.Module) -> list[_Statement] | None:
        if self._statements is None and self._text is not None:
            self._statements = _body_statements(module, self._text)
        return self._statements

    def _first_lines(self, statements: Sequence[_Statement]) -> list[int]:
        text = self._text or ""
        lines, line, at = [], 1, 0
        for statement in statements:
            line += text.count("\n", at, statement.start)
            at = statement.start
            lines.append(line)
        return lines

    def _parse_around_edit(self, text: str) -> cst.Module | None:
        old_text, old_module = self._text or "", self._module
        assert old_module is not None
        statements = self._statements_of(old_module)
        if not statements or "\r" in text or "barry_as_FLUFL" in text:
            return None
        prefix = _common_prefix(old_text, text)
        suffix = _common_suffix(old_text, text, min(len(old_text), len(text)) - prefix)
        old_end = max(len(old_text) - suffix, prefix + 1)  # the edit touches old_text[prefix:old_end]
        touched = [i for i, s in enumerate(statements) if s.end > prefix and s.start < old_end]
        if touched:
            first, last = touched[0] - 1, touched[-1] + 1
        elif prefix < statements[0].start:  # in the module's header
            first, last = 0, 1
        else:  # in its footer
            first, last = len(statements) - 2, len(statements) - 1
        first, last = max(first, 0), min(last, len(statements) - 1)
        at_start, at_end = first == 0, last == len(statements) - 1
        start = 0 if at_start else statements[first].start
        span_end = (len(old_text) if at_end else statements[last].end) + len(text) - len(old_text)
        if span_end < start:
            return None
        span = text[start:span_end]
        try:
            piece = engine.parse(span)
        except engine.ParseFailure:
            return None  # the whole text's parse says where the error is
        fresh = list(piece.body)
        if not fresh or (piece.footer and not at_end) or not _keeps_default_indent(piece, old_module, first, last):
            return None
        if not at_start and piece.header:
            fresh[0] = fresh[0].with_changes(leading_lines=[*piece.header, *fresh[0].leading_lines])
        with engine.unvalidated_nodes():
            module = cst.Module(
                body=[*old_module.body[:first], *fresh, *old_module.body[last + 1 :]],
                header=piece.header if at_start else old_module.header,
                footer=piece.footer if at_end else old_module.footer,
                encoding=piece.encoding if at_start else old_module.encoding,
                default_indent=old_module.default_indent,
                default_newline=old_module.default_newline,
                has_trailing_newline=piece.has_trailing_newline if at_end else old_module.has_trailing_newline,
            )
        placed = _placed(module, fresh, start + (_lines_length(module, module.header) if at_start else 0))
        expected_end = span_end
        if at_end:
            expected_end += (0 if module.has_trailing_newline or not text else 1) - _lines_length(module, module.footer)
        if placed[-1].end != expected_end:  # the piece reads differently inside the module
            return None
        shift = len(text) - len(old_text)
        after = [_Statement(s.node, s.start + shift, s.end + shift, s.ranges) for s in statements[last + 1 :]]
        self._module, self._statements = module, [*statements[:first], *placed, *after]
        return module


def _body_statements(module: cst.Module, text: str) -> list[_Statement] | None:
    """Where each top-level statement of `module` (parsed from `text`) starts and ends;
    None where the lengths do not add up to `text`."""
    placed = _placed(module, module.body, _lines_length(module, module.header))
    end = placed[-1].end if placed else _lines_length(module, module.header)
    # The module drops the last statement's newline where the text has none.
    expected = len(text) + (0 if module.has_trailing_newline or not text else 1)
    if not placed or end + _lines_length(module, module.footer) != expected:
        return None
    return placed


def _placed(module: cst.Module, nodes: Sequence[cst.BaseStatement], at: int) -> list[_Statement]:
    out: list[_Statement] = []
    for node in nodes:
        length = len(module.code_for_node(node))
        out.append(_Statement(node, at, at + length))
        at += length
    return out


def _lines_length(module: cst.Module, lines: Sequence[cst.EmptyLine]) -> int:
    return sum(len(module.code_for_node(line)) for line in lines)


def _keeps_default_indent(piece: cst.Module, module: cst.Module, first: int, last: int) -> bool:
    """The default indent is the first block's, and a block with the default keeps no
    indent of its own. A piece whose blocks disagree with the module's default shows in
    their lengths (`_parse_around_edit` compares them); what lengths cannot show is a
    piece that removes the module's first block and brings none, leaving the default to a
    later block."""
    if any(not isinstance(node, cst.SimpleStatementLine) for node in piece.body):
        return True
    first_block = next((i for i, n in enumerate(module.body) if not isinstance(n, cst.SimpleStatementLine)), None)
    return first_block is None or not first <= first_block <= last


def _common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # slices compare in C: a binary search beats a loop over characters
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, max(limit, 0)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low
