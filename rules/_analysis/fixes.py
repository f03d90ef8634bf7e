"""Building blocks of autofixes: inserting a statement into a block, before the line that
holds a node, or where a function's code starts.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rules._analysis.index import Index


def insert_statement(body: cst.BaseSuite, position: int, code: str) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """A replacement that inserts the statement `code` before `body.body[position]` (at the end
    when `position` is the length). None for one-line suites, which a fix leaves alone."""
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = list(body.body)
    statements.insert(position, cst.parse_statement(code))
    return body, body.with_changes(body=statements)


def insert_before(idx: Index, node: cst.CSTNode, code: str) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """A replacement that inserts the statement `code` on its own line before the line that
    holds `node` (a simple statement line or a compound statement). None inside a one-line
    suite (`if x: clip(...)`), which a fix leaves alone."""
    line = idx.statement(node)
    if isinstance(line, cst.BaseSmallStatement):
        line = idx.parent(line)  # type: ignore[assignment]
    block = idx.parent(line)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body: list[cst.CSTNode] = list(block.body)
    body.insert(next(i for i, s in enumerate(body) if s is line), cst.parse_statement(code + "\n"))
    return block, block.with_changes(body=body)


def insert_first(body: cst.BaseSuite, code: str) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """A replacement that inserts the statement `code` where a function's code starts: first
    in `body`, or after its docstring."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    first = statements[0].body[0] if statements and isinstance(statements[0], cst.SimpleStatementLine) else None
    docstring = isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString))
    return insert_statement(body, 1 if docstring else 0, code)
