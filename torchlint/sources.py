"""The one place that reads and writes user files: bytes -> text, with Python's
encoding rules; notebooks -> their code cells as Python; fixed text -> bytes in the
file's own encoding and newline style."""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from torchlint.newlines import newline_style, normalize, restore
from torchlint.notebook import Notebook, NotebookError, file_line, parse_notebook

# Checking a file takes about 580 bytes of memory per byte of ordinary source at its peak
# (LibCST's tree): 1.5 MB keeps a run under 1 GB (docs/performance.md, bench/max_file_size.py)
# and still checks the largest module of torch (1.4 MB).
DEFAULT_MAX_FILE_BYTES = 1_500_000
# Memory follows tokens, not bytes: 2 to 4 KB per token, so that a dense generated table
# (one token per byte) of 1.5 MB would take 3 GB. 250,000 tokens stay under 1 GB; torch's
# largest module has 203,000 (bench/max_file_size.py, docs/performance.md).
DEFAULT_MAX_FILE_TOKENS = 250_000
# A string literal (a docstring too) or a comment is one node of the tree, whatever its length.
_TOKEN = re.compile(
    r"#[^\n]*|[rbuRBUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')"
    r"|\w+|[^\w\s]"
)


def count_tokens(text: str) -> int:
    """About how many tokens `text` has: names, numbers, operators, and each string literal
    or comment as one (a regular expression scan, some 50 ms per MB)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def more_tokens_than(text: str, limit: int) -> int | None:
    """`count_tokens(text)` when it is over `limit`, else None. A text shorter than `limit`
    characters is not scanned: it cannot have more tokens than characters."""
    if len(text) <= limit:
        return None
    count = count_tokens(text)
    return count if count > limit else None


@dataclass(frozen=True)
class SourceFile:
    path: Path
    # Python source with "\n" newlines; for a notebook, its code cells joined.
    text: str
    size: int
    encoding: str = "utf-8"
    # The file's newline style, restored on writing; None when the file mixes styles.
    newline: str | None = "\n"
    notebook: Notebook | None = None


@dataclass(frozen=True)
class Unreadable:
    """A file that cannot be turned into text; `line`/`column` locate a decoding error."""

    path: Path
    reason: str
    line: int = 1
    column: int = 1
    # True when the file exists but is no Python text (bad encoding); False when it
    # could not be read at all (vanished, permissions).
    is_content_error: bool = True
    # A folder that discovery found but could not list: `reason` is the whole message.
    is_folder: bool = False


def read_bytes(path: Path) -> bytes | Unreadable:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return Unreadable(path, "file vanished before it could be read", is_content_error=False)
    except (IsADirectoryError, PermissionError) as exc:
        if os.path.isdir(path):
            return Unreadable(path, _folder_reason(path), is_content_error=False, is_folder=True)
        return Unreadable(path, exc.strerror.lower() if exc.strerror else "permission denied", is_content_error=False)
    except OSError as exc:
        return Unreadable(path, f"cannot be read: {exc.strerror or exc}", is_content_error=False)


def _folder_reason(path: Path) -> str:
    # Discovery lists a folder it found but could not list, so that it is reported.
    if not os.access(path, os.R_OK | os.X_OK):
        return "cannot read this folder (permission denied): the files in it are not checked"
    return "cannot read this folder as a file"


def decode(path: Path, data: bytes) -> SourceFile | Unreadable:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "unknown encoding" in str(exc.msg):
            return Unreadable(path, f"invalid encoding declaration: {exc.msg}")
        # Undecodable bytes in the first two lines: let decoding say where.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return Unreadable(
            path,
            f"not valid {encoding} text: byte 0x{data[exc.start]:02x} at line {line}, column {column}",
            line,
            column,
        )
    except LookupError:
        return Unreadable(path, f"unknown encoding {encoding!r}")
    if text.startswith("\ufeff"):
        text = text[1:]
    if path.suffix == ".ipynb":
        return _notebook(path, text, len(data), encoding)
    # Normalise newlines so that positions agree with the parser's.
    return SourceFile(path, normalize(text), len(data), encoding, newline_style(text))


def _notebook(path: Path, text: str, size: int, encoding: str) -> SourceFile | Unreadable:
    try:
        notebook = parse_notebook(text)
    except NotebookError as exc:
        return Unreadable(path, exc.reason, exc.line, exc.column)
    # The JSON keeps its own newlines: the notebook is written back span by span.
    return SourceFile(path, notebook.python, size, encoding, "\n", notebook)


def read_source(path: Path) -> SourceFile | Unreadable:
    data = read_bytes(path)
    if isinstance(data, Unreadable):
        return data
    return decode(path, data)


def read_lines(path: Path) -> list[str]:
    """Lines of a file for display (source snippets in reports); empty when unreadable."""
    source = read_source(path)
    return source.text.splitlines() if isinstance(source, SourceFile) else []


def read_cell_lines(path: Path, cell: int) -> list[str]:
    """Lines of one notebook cell as written, magics included; empty when unreadable."""
    source = read_source(path)
    if not isinstance(source, SourceFile) or source.notebook is None:
        return []
    found = source.notebook.cell(cell)
    return found.source.splitlines() if found else []


def notebook_file_line(path: Path, cell: int, line: int) -> int | None:
    """The line of a notebook's JSON file that holds `line` of `cell`; None when unknown."""
    source = read_source(path)
    if not isinstance(source, SourceFile) or source.notebook is None:
        return None
    return file_line(source.notebook, cell, line)


def encode(source: SourceFile, text: str) -> bytes:
    """`text` (new Python with "\n" newlines, or a notebook's new JSON) as the bytes
    `source` was stored in: same encoding, byte order mark and newline style."""
    if source.notebook is None:
        text = restore(text, source.newline)
    return text.encode(source.encoding)


def write_bytes(path: Path, data: bytes) -> str | None:
    """Replace the file's content atomically, keeping its permissions; returns why not."""
    import tempfile  # here: only --fix writes, and a check starts faster without it

    try:
        mode = path.stat().st_mode
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".torchlint", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(temp, mode & 0o7777)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
