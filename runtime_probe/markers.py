"""Line markers: which static findings' lines ran, without `sys.settrace`.

The script is compiled from a copy of its syntax tree in which the statement holding each
finding's line is preceded by a call `MARKER(line)`. The call carries the statement's own
position, so tracebacks and frame line numbers are those of the unchanged file; the file
itself is never touched.
"""

from __future__ import annotations

import ast
from types import CodeType
from typing import Iterable, Iterator

MARKER = "__torchlint_reached__"


def _span(node: ast.stmt) -> tuple[int, int]:
    start = node.lineno
    for decorator in getattr(node, "decorator_list", ()):
        start = min(start, decorator.lineno)
    return start, node.end_lineno or node.lineno


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _child_bodies(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    # except handlers and match cases are not statements but hold statement lists
    for holder in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
        yield holder.body


def _innermost(body: list[ast.stmt], line: int) -> tuple[list[ast.stmt], int] | None:
    """The statement list and index of the innermost statement whose lines hold `line`."""
    for i, stmt in enumerate(body):
        start, end = _span(stmt)
        if start <= line <= end:
            for child in _child_bodies(stmt):
                found = _innermost(child, line)
                if found:
                    return found
            return body, i
    return None


def _marker(line: int, at: ast.stmt) -> ast.stmt:
    call = ast.Expr(ast.Call(ast.Name(MARKER, ast.Load()), [ast.Constant(line)], []))
    ast.copy_location(call, at)
    call.end_lineno, call.end_col_offset = at.lineno, at.col_offset
    return call


def instrument(tree: ast.Module, lines: Iterable[int]) -> ast.Module:
    """Insert markers for `lines` into `tree` (in place) and return it."""
    inserts: dict[int, tuple[list[ast.stmt], ast.stmt, list[int]]] = {}
    for line in sorted(set(lines)):
        found = _innermost(tree.body, line)
        if found is None:
            continue
        body, index = found
        stmt = body[index]
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if body is tree.body and index == 0 and _is_docstring(stmt):
            continue
        inserts.setdefault(id(stmt), (body, stmt, []))[2].append(line)
    for body, stmt, found_lines in inserts.values():
        index = next(i for i, s in enumerate(body) if s is stmt)
        body[index:index] = [_marker(line, stmt) for line in found_lines]
    return tree


def compile_script(source: str, filename: str, lines: Iterable[int]) -> CodeType:
    tree = ast.parse(source, filename)
    return compile(ast.fix_missing_locations(instrument(tree, lines)), filename, "exec", dont_inherit=True)
