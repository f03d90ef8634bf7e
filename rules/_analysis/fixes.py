"""Building blocks of autofixes: inserting a statement into a block.
"""

from __future__ import annotations

import libcst as cst


def insert_statement(body: cst.BaseSuite, position: int, code: str) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """A replacement that inserts the statement `code` before `body.body[position]` (at the end
    when `position` is the length). None for one-line suites, which a fix leaves alone."""
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = list(body.body)
    statements.insert(position, cst.parse_statement(code))
    return body, body.with_changes(body=statements)
