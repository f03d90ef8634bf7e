"""Jupyter notebooks as Python source.

The code cells are joined into one module, one cell after another, so that rules see
names defined in earlier cells; a cell that does not parse on its own (Jupyter runs
cells one at a time) is reported by itself and left out of the join. IPython syntax that is not Python (line magics
`%time`, cell magics `%%bash`, shell lines `!pip ...`, help `obj?`) is masked line
for line, so every line keeps its number and every column its place. Findings are
mapped back to the cell (numbered from 1 over all cells, markdown included, as ruff
and the notebook editors count) and the line in that cell. Fixed cells are written
back by replacing only their `source` values in the JSON text.

Pure: no file I/O (`sources.py` reads notebooks) and no parsing of Python here (the
engine's parsers come in as functions).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

from torchlint.finding import PARSE_ERROR_CODE, Edit, Finding, file_problem
from torchlint.newlines import newline_style, normalize, restore

# Cell magics whose body is Python; the body of any other cell magic (%%bash,
# %%writefile, %%html, ...) is not checked.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_MASK = "pass"
_HELP = re.compile(r"^\s*(\?\??[\w.]|[\w.\[\]()]+\?\??\s*$)")
# `files = !ls` and `t = %timeit -o f()`: an assignment whose value is IPython syntax.
_ASSIGNED_MAGIC = re.compile(r"^\s*[\w.]+(\s*,\s*[\w.]+)*\s*=\s*[%!]")


class NotebookError(Exception):
    """The file is no notebook that can be checked; `line`/`column` locate JSON errors."""

    def __init__(self, reason: str, line: int = 1, column: int = 1) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Cell:
    # 1-based position among all cells of the notebook.
    number: int
    # The cell's text as stored, with "\n" newlines.
    source: str
    # Where the cell starts in the joined source (1-based line) and how many lines it has.
    start: int
    lines: int
    # Cell-relative lines that hold IPython syntax and were masked.
    masked: frozenset[int]
    # The cell's newline style, restored when it is rewritten; None when mixed.
    newline: str | None = "\n"

    def contains(self, line: int) -> bool:
        return self.start <= line < self.start + self.lines


@dataclass(frozen=True)
class Notebook:
    raw: str
    cells: tuple[Cell, ...]
    # The code cells joined, magics masked: what the rules check.
    python: str

    def cell_at(self, line: int) -> Cell | None:
        for cell in self.cells:
            if cell.contains(line):
                return cell
        # Errors "at end of file" point past the last line: blame the last cell.
        return self.cells[-1] if self.cells and line >= self.cells[-1].start else None

    def cell(self, number: int) -> Cell | None:
        return next((c for c in self.cells if c.number == number), None)


def parse_notebook(raw: str) -> Notebook:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"invalid notebook JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise NotebookError("invalid notebook JSON: nested too deeply") from None
    if isinstance(data, dict) and "worksheets" in data:
        raise NotebookError(
            "a notebook in nbformat 3 or older, which torchlint does not read: convert it with "
            "`jupyter nbconvert --to notebook --nbformat 4`"
        )
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError('not a Jupyter notebook in nbformat 4: no top-level "cells" list')
    if not _is_python(data.get("metadata")):
        return Notebook(raw, (), "")
    cells: list[Cell] = []
    chunks: list[str] = []
    start = 1
    for number, item in enumerate(data["cells"], start=1):
        if not isinstance(item, dict) or item.get("cell_type") != "code":
            continue
        stored = _cell_text(item.get("source", ""), number)
        text = normalize(stored)
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        python, masked = mask_ipython(lines)
        cells.append(Cell(number, text, start, len(lines), frozenset(masked), newline_style(stored)))
        chunks.extend(line + "\n" for line in python)
        start += len(lines)
    return Notebook(raw, tuple(cells), "".join(chunks))


def _is_python(metadata: object) -> bool:
    """False only when the notebook says it is in another language (an R or Julia kernel)."""
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return bool(section[field].lower() == "python")
    return True


def _cell_text(source: object, number: int) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    raise NotebookError(f"cell {number}: source must be a string or a list of strings")


def mask_ipython(lines: Sequence[str]) -> tuple[list[str], set[int]]:
    """Replace IPython-only lines by `pass` (or nothing), keeping the line count."""
    out = list(lines)
    masked: set[int] = set()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    body_start = 0
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        name = magic[0] if magic else ""
        end = first + 1 if name in PYTHON_CELL_MAGICS else len(lines)
        for i in range(first, end):
            out[i] = ""
            masked.add(i + 1)
        body_start = end
    scanner = _LogicalLines()
    continued = False
    for i in range(body_start, len(lines)):
        line = lines[i]
        if continued or (scanner.at_statement_start and _is_ipython(line)):
            indent = line[: len(line) - len(line.lstrip())]
            out[i] = "" if continued else indent + _MASK
            masked.add(i + 1)
            continued = line.rstrip().endswith("\\")
            continue
        scanner.feed(line)
    return out, masked


def _is_ipython(line: str) -> bool:
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")) and not stripped.startswith("!="):
        return True
    return bool(_ASSIGNED_MAGIC.match(line) or _HELP.match(line))


class _LogicalLines:
    """Just enough of Python's tokenizer to know whether a line starts a statement:
    IPython only treats `%`, `!` and `?` as special there, not inside brackets,
    strings or backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None
        self.backslash = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        comment = False
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == "\\":
                    i += 2
                elif line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                else:
                    i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "\"'":
                self.quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else c
                i += len(self.quote)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(self.depth - 1, 0)
            i += 1
        self.backslash = not comment and line.endswith("\\")
        if self.quote is not None and len(self.quote) == 1 and not self.backslash:
            self.quote = None  # an unterminated one-line string: the parser will say so


# Where and why a piece of Python does not parse: (line, column, reason), or None.
SyntaxProblem = Callable[[str], "tuple[int, int, str] | None"]


def check(
    nb: Notebook, filename: str, check_python: Callable[[str], list[Finding]], syntax_problem: SyntaxProblem
) -> list[Finding]:
    """Check the cells with `check_python` and map the findings to cells.

    Jupyter runs cells one at a time, so each cell must parse on its own: a cell that
    does not (an exercise stub `def f():` with only a comment in its body) gets one TL000
    at its own line and is left out. The cells that parse are checked joined, so that
    rules see the model of cell 1 trained in cell 3; their findings keep their cells.
    """
    broken: dict[int, Finding] = {}
    lines = nb.python.split("\n")
    for cell in nb.cells:
        # The cell as the rules see it (magics masked), alone.
        alone = "".join(line + "\n" for line in lines[cell.start - 1 : cell.start - 1 + cell.lines])
        problem = syntax_problem(alone)
        if problem is not None:
            broken[cell.number] = _cell_error(filename, cell, *problem, "on its own")
    python = _blank(nb.python, [c for c in nb.cells if c.number in broken])
    # Cells that each parse may still fail LibCST's parser, or parse only apart: the
    # joined text's parse error then names the cell it falls in, which is left out too.
    for _ in range(len(nb.cells) + 1):
        findings = check_python(python)
        error = next((f for f in findings if f.code == PARSE_ERROR_CODE), None)
        failing = nb.cell_at(error.line) if error else None
        if error is None or failing is None or failing.number in broken:
            break
        reason = error.message.split(": ", 1)[-1]
        broken[failing.number] = _cell_error(filename, failing, error.line - failing.start + 1, error.column, reason, "")
        python = _blank(python, [failing])
    kept = [to_cell(nb, f) for f in findings if f.code != PARSE_ERROR_CODE or not _is_cell_error(nb, f, broken)]
    return sorted([*broken.values(), *kept])


def _cell_error(filename: str, cell: Cell, line: int, column: int, reason: str, how: str) -> Finding:
    # An error "at the end of the cell" points past its last line: show the last line.
    line = min(max(line, 1), max(cell.lines, 1))
    where = f" {how}" if how else ""
    message = f"cannot parse cell {cell.number}{where}: {reason}; the other cells are checked without it"
    return replace(file_problem(filename, PARSE_ERROR_CODE, message, line, column), cell=cell.number)


def _is_cell_error(nb: Notebook, finding: Finding, broken: dict[int, Finding]) -> bool:
    cell = nb.cell_at(finding.line)
    return cell is not None and cell.number in broken


def _blank(python: str, cells: Sequence[Cell]) -> str:
    if not cells:
        return python
    lines = python.split("\n")
    for cell in cells:
        for i in range(cell.start - 1, cell.start - 1 + cell.lines):
            lines[i] = ""
    return "\n".join(lines)


def to_cell(nb: Notebook, finding: Finding) -> Finding:
    cell = nb.cell_at(finding.line)
    return finding if cell is None else _in_cell(finding, cell)


def _in_cell(finding: Finding, cell: Cell) -> Finding:
    offset = cell.start - 1
    fix = finding.fix
    if fix is not None:
        edits = tuple(replace(e, line=e.line - offset, end_line=e.end_line - offset) for e in fix.edits)
        # A fix that reaches into another cell or rewrites masked IPython lines would
        # corrupt the notebook, and one in a cell of mixed newlines would change them: offer none.
        usable = cell.newline is not None and all(_edit_inside(e, cell) for e in edits)
        fix = replace(fix, edits=edits) if usable else None
    line = finding.line - offset
    end_line = min(finding.end_line - offset, cell.lines)
    end_column = finding.end_column if finding.end_line - offset == end_line else len(_line(cell, end_line)) + 1
    return replace(finding, cell=cell.number, line=line, end_line=max(end_line, line), end_column=end_column, fix=fix)


def _line(cell: Cell, line: int) -> str:
    lines = cell.source.split("\n")
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _edit_inside(edit: Edit, cell: Cell) -> bool:
    # An edit may end at column 1 of the line after the cell: the cell's last newline.
    if edit.line < 1 or edit.end_line > cell.lines + (1 if edit.end_column == 1 else 0):
        return False
    return not any(edit.line <= line <= edit.end_line for line in cell.masked)


def cell_with_newline(cell: Cell) -> str:
    """The cell's source ending in a newline, as edits in cell coordinates expect."""
    return cell.source if cell.source.endswith("\n") else cell.source + "\n"


def with_cell_sources(nb: Notebook, sources: dict[int, str]) -> str:
    """The notebook's JSON text with the `source` of the given cells replaced.

    Everything else, formatting included, is kept byte for byte. `sources` maps
    cell numbers to new text in the form `cell_with_newline` gives.
    """
    spans = _source_spans(nb.raw)
    ascii_only = nb.raw.isascii()
    pieces: list[str] = []
    pos = 0
    for number in sorted(sources):
        cell = nb.cell(number)
        if cell is None or number not in spans:
            continue
        text = sources[number]
        if not cell.source.endswith("\n") and text.endswith("\n"):
            text = text[:-1]
        text = restore(text, cell.newline)
        start, end = spans[number]
        pieces.append(nb.raw[pos:start])
        pieces.append(_encode_source(nb.raw[start:end], text, ascii_only))
        pos = end
    pieces.append(nb.raw[pos:])
    return "".join(pieces)


def _encode_source(old: str, text: str, ascii_only: bool) -> str:
    """Encode `text` the way the old `source` value was: one string, or a list of lines
    with the same layout."""
    value = json.loads(old)
    if (value if isinstance(value, str) else "".join(value)) == text:
        return old
    if not old.startswith("["):
        return json.dumps(text, ensure_ascii=ascii_only)
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    spans = list(_array_items(old, 0))
    if not spans:
        return json.dumps(lines, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in lines]
    opening = old[1 : spans[0][0]]
    closing = old[spans[-1][1] : -1]
    separator = old[spans[0][1] : spans[1][0]] if len(spans) > 1 else "," + opening
    return "[" + opening + separator.join(items) + closing + "]"


_decoder = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _object_members(text: str, pos: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) for the members of the object at `text[pos]`."""
    pos = _skip(text, pos + 1)
    while text[pos] != "}":
        key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        pos = _skip(text, _skip(text, pos) + 1)  # past ':'
        _, end = _decoder.scan_once(text, pos)  # type: ignore[attr-defined]
        yield key, pos, end
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)


def _array_items(text: str, pos: int) -> Iterator[tuple[int, int]]:
    pos = _skip(text, pos + 1)
    while text[pos] != "]":
        _, end = _decoder.scan_once(text, pos)  # type: ignore[attr-defined]
        yield pos, end
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)


def _source_spans(raw: str) -> dict[int, tuple[int, int]]:
    """Where each cell's `source` value lies in the notebook's JSON text, by cell number."""
    spans: dict[int, tuple[int, int]] = {}
    top = _skip(raw, 0)
    for key, start, _ in _object_members(raw, top):
        if key != "cells":
            continue
        spans.clear()  # duplicate keys: the last one wins, as in json.loads
        for number, (cell_start, _end) in enumerate(_array_items(raw, start), start=1):
            if raw[cell_start] != "{":
                continue
            for cell_key, value_start, value_end in _object_members(raw, cell_start):
                if cell_key == "source":
                    spans[number] = (value_start, value_end)
    return spans


def file_line(nb: Notebook, cell_number: int, line: int) -> int | None:
    """The 1-based line of the notebook's JSON text that holds `line` of a cell, for
    tools that show the .ipynb file itself (code scanning, merge-request widgets)."""
    span = _source_spans(nb.raw).get(cell_number)
    if span is None:
        return None
    start, end = span
    if nb.raw[start] == "[":
        # nbformat writes one source line per list item, one item per JSON line.
        items = list(_array_items(nb.raw, start))
        if not items:
            return nb.raw.count("\n", 0, start) + 1
        start = items[min(max(line, 1), len(items)) - 1][0]
    return nb.raw.count("\n", 0, start) + 1
