"""Source ranges of a few chosen nodes, exactly as LibCST's `PositionProvider` computes
them, for about the cost of generating the code once.

`PositionProvider` records a range for every node of the module and updates a
(line, column) pair with a regular expression for every token: about twice the cost of
parsing the file. Findings need the ranges of a handful of nodes, so this code generator
keeps one character offset, records ranges only for the wanted nodes (and the child
nodes their syntactic ranges are hoisted from), stops as soon as the last wanted node is
generated, and turns offsets into lines and columns once at the end. The hooks it
overrides are the ones `PositionProvider`'s own codegen state uses, with the same rules
(syntactic ranges win over whole-node ranges), so the results are identical; the tests
compare both on real files.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

# The line breaks LibCST's position provider counts.
_NEWLINE = re.compile(r"\r\n?|\n")
_NO_RECORD: AbstractContextManager[None] = nullcontext()


class _AllFound(Exception):
    """Raised to stop code generation once every wanted node has its range."""


class _OffsetState(CodegenState):
    __slots__ = ("offset", "wanted", "targets_left", "starts", "spans")

    def __init__(self, module: cst.Module, targets: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        # Node ids whose spans to record: the targets, plus the children that a
        # target's syntactic range borrows its start or end from.
        self.wanted = set(targets)
        self.targets_left = set(targets)
        self.starts: dict[int, list[int]] = {}
        self.spans: dict[int, tuple[int, int]] = {}

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def pop_trailing_newline(self) -> None:
        # `PositionProvider` does not move its position back when the module drops its
        # final newline (only the module's own end can see it); neither do we.
        pass

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self.starts.setdefault(id(node), []).append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key not in self.wanted:
            return
        start = self.starts[key].pop()
        if key not in self.spans:  # a syntactic range, recorded earlier, wins
            self.spans[key] = (start, self.offset)
        self.targets_left.discard(key)
        if not self.targets_left:
            raise _AllFound

    # Returns a shared no-op context for the many nodes nobody asked about: cheaper than
    # the base class's generator-based context manager, which it otherwise behaves like.
    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> AbstractContextManager[None]:
        if id(node) not in self.wanted:
            return _NO_RECORD
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(id(child))
        return self._record(node, start_node, end_node)

    @contextmanager
    def _record(
        self, node: cst.CSTNode, start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            end = self.offset
            if start_node is not None:
                start = self.spans[id(start_node)][0]
            if end_node is not None:
                end = self.spans[id(end_node)][1]
            self.spans[id(node)] = (start, end)


Position = tuple[int, int, int, int]
"""1-based start line, 0-based start column, 1-based end line, 0-based end column."""


def node_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Position]:
    """Ranges of `nodes` (by `id`), as `PositionProvider` would give them; nodes that are
    not part of `module` are missing from the result."""
    return positions_within(module, module, {id(node) for node in nodes})


def positions_within(root: cst.CSTNode, module: cst.Module, targets: set[int]) -> dict[int, Position]:
    """Ranges of the nodes in `targets` (ids) that `root` holds, counted from `root`'s own
    first character (line 1, column 0): for a top-level statement of `module`, add the
    lines before it to place them in the module."""
    if not targets:
        return {}
    state = _OffsetState(module, targets)
    try:
        root._codegen(state)
    except _AllFound:
        pass
    text = "".join(state.tokens)
    to_position = _OffsetConverter(text)
    return {
        key: (*to_position(start), *to_position(end))
        for key, (start, end) in state.spans.items()
        if key in targets
    }


class _OffsetConverter:
    """Character offset -> (1-based line, 0-based column) in `text`."""

    def __init__(self, text: str) -> None:
        # Offsets at which a line starts, after each line break.
        self.line_starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def __call__(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1]
