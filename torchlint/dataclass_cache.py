"""The compiled code of the methods that `dataclasses` generates, kept between runs.

A dataclass's `__init__`, `__repr__`, `__eq__` (and a frozen one's `__setattr__` and
`__delattr__`) are written as source text and compiled when the class is created. LibCST
defines some 200 frozen node classes, and compiling their thousand methods is about 40%
of `import libcst`, the largest part of a one-file `torchlint check` (bench/startup.py).
The command line has `dataclasses` look each text up here first, in a file next to
torchlint's own bytecode, as CPython does for modules: a text compiled by the same
interpreter always gives the same code, so a hit changes the time and nothing else.

The lookup replaces the name `exec` in the `dataclasses` module, the one call through
which every Python from 3.11 to 3.14 runs the generated text; should a later one stop
calling it, nothing is cached and nothing else changes. A text is found by its length
and CPython's own source hash (the one hash-based .pyc files are checked with). The file
is read once, written at exit only when a text was new and bytecode may be written
(`PYTHONDONTWRITEBYTECODE`), atomically, and never fails a run: a file that cannot be
read or written, or that another interpreter wrote, is passed over.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from _imp import source_hash

# Entries kept from earlier runs; beyond it, only what this run used is written
# (texts of older versions of LibCST or of torchlint would otherwise pile up).
MAX_ENTRIES = 4096
# The key of `source_hash` (any constant: the hash only has to be the same each run).
_HASH_KEY = 0x746C

Key = tuple[int, bytes]


class DataclassCodeCache:
    """Compiled code by source text; `exec` stands in for the built-in in `dataclasses`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stored: dict[Key, bytes] = self._read() if path is not None else {}
        self.used: dict[Key, bytes] = {}
        self.new = 0

    def _read(self) -> dict[Key, bytes]:
        assert self.path is not None
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        magic = importlib.util.MAGIC_NUMBER
        if not data.startswith(magic):
            return {}  # written by another interpreter: its code would not load here
        try:
            entries = marshal.loads(data[len(magic) :])
        except (EOFError, ValueError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def code(self, text: str) -> CodeType:
        key = (len(text), source_hash(_HASH_KEY, text.encode("utf-8", "surrogatepass")))
        stored = self.stored.get(key)
        if stored is not None:
            try:
                code = marshal.loads(stored)
            except (EOFError, ValueError, TypeError):
                code = None
            if isinstance(code, CodeType):
                self.used[key] = stored
                return code
        # As `exec(text)` in `dataclasses` compiles it: no `from __future__` flags of ours.
        code = compile(text, "<string>", "exec", dont_inherit=True)
        self.used[key] = marshal.dumps(code)
        self.new += 1
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if isinstance(source, str):
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def save(self) -> None:
        if self.path is None or not self.new or sys.dont_write_bytecode:
            return
        merged = {**self.stored, **self.used}
        entries = merged if len(merged) <= MAX_ENTRIES else self.used
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(entries))
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):  # no folder, no temporary file
                temporary.unlink(missing_ok=True)


def cache_path() -> Path | None:
    """Beside this module's bytecode (under `sys.pycache_prefix` where one is set)."""
    try:
        bytecode = Path(importlib.util.cache_from_source(__file__))
    except NotImplementedError:  # an interpreter without a bytecode cache
        return None
    return bytecode.with_name(f"dataclass-methods.{sys.implementation.cache_tag}.marshal")


_active: DataclassCodeCache | None = None


def enable(path: Path | None = None) -> DataclassCodeCache:
    """Cache the dataclass methods of every class created from now on in this process
    (at `path`, default `cache_path()`); saved at exit. Idempotent."""
    global _active
    if _active is None:
        _active = DataclassCodeCache(path or cache_path())
        setattr(dataclasses, "exec", _active.exec)
        atexit.register(_active.save)
    return _active

