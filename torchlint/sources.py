"""The one place that reads user files: bytes -> text, with Python's encoding rules."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str
    size: int


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


def read_bytes(path: Path) -> bytes | Unreadable:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return Unreadable(path, "file vanished before it could be read", is_content_error=False)
    except IsADirectoryError:
        return Unreadable(path, "is a directory, not a file", is_content_error=False)
    except PermissionError:
        return Unreadable(path, "permission denied", is_content_error=False)
    except OSError as exc:
        return Unreadable(path, f"cannot be read: {exc.strerror or exc}", is_content_error=False)


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
    # Normalise newlines so that positions agree with the parser's.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceFile(path, text, len(data))


def read_source(path: Path) -> SourceFile | Unreadable:
    data = read_bytes(path)
    if isinstance(data, Unreadable):
        return data
    return decode(path, data)


def read_lines(path: Path) -> list[str]:
    """Lines of a file for display (source snippets in reports); empty when unreadable."""
    source = read_source(path)
    return source.text.splitlines() if isinstance(source, SourceFile) else []
