"""The result cache: an unchanged file is not checked again.

`.torchlint_cache/` (in the folder of the configuration file, else the working folder)
holds one JSON index per *settings key*, a hash of everything besides a file's own
bytes that can change its findings: the cache format, torchlint's version, the Python
version, the size and time of every module of torchlint, its rules and LibCST (so that
editing a rule in a development install invalidates the cache), the configuration's
fingerprint and the enabled rule codes. Inside an index, each file's absolute path maps
to a hash of its bytes, its findings and the project summaries its check used (their
absolute names and digests, see `torchlint.project`): a hit needs the same bytes and the
same digests now. The index also keeps each project module's summary by path and content
hash. Looking a file up costs reading and hashing it, and the modules it used once per run
(those that the run checks are read and hashed once, for their own lookups); no rule and
not even LibCST is imported when every file is a hit.

Writers replace an index atomically (a temporary file, then `os.replace`), so a run that
dies while writing never leaves a torn file. Saving merges with the index on disk under
an exclusive lock of the folder (`.lock`, `flock` where the platform has it): the entries
this run wrote win, and the entries that concurrent runs saved in the meantime are kept,
so that two runs at once (pre-commit's parallel hooks, two terminals) lose nothing. An
index that cannot be read or does not have the expected shape is ignored; a cache that
cannot be written is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from torchlint import __version__
from torchlint.config import Config
from torchlint.digests import blake2b
from torchlint.finding import Finding
from torchlint.registry import RULES_PACKAGE, catalog, is_selected

CACHE_DIR_NAME = ".torchlint_cache"
FORMAT = 2
# Indexes of other settings beyond this many (the oldest written first) are removed.
KEEP_INDEXES = 8
# Temporary files of runs that died while writing are removed after this long.
STALE_TEMP_SECONDS = 3600
_TEMP_PREFIX = ".tmp-"
_LOCK_NAME = ".lock"
# A run waits this long for another run's save; then it saves without the lock (it may lose
# that run's new entries, but never hangs or fails the run).
LOCK_WAIT_SECONDS = 10.0
_README = "Cache of torchlint results; safe to delete (`torchlint clean`).\n"


def cache_dir(config: Config, cwd: Path) -> Path:
    return (config.root or cwd) / CACHE_DIR_NAME


def content_digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def enabled_codes(config: Config) -> list[str]:
    """Codes of the rules `config` enables, from the rule modules' names (no import)."""
    return sorted(code for code, name in catalog().items() if is_selected(code, name, config.select, config.ignore))


def code_fingerprint() -> list[tuple[str, int, int]]:
    """Name, size and modification time of every module of torchlint, its rules and LibCST's
    entry point: cheap to take (a few dozen `stat` calls) and changed by any edit."""
    stamps: list[tuple[str, int, int]] = []
    for package in ("torchlint", RULES_PACKAGE):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            stamps.extend(_stamps(_modules_below(folder)))
    libcst = importlib.util.find_spec("libcst")
    if libcst is not None and libcst.origin:
        stamps.extend(_stamps([libcst.origin]))
    return sorted(stamps)


def _modules_below(folder: str) -> Iterator[str]:
    """The `.py` files below `folder`, as `rglob` finds them (not through linked folders),
    at half its cost (`rglob` was some 5% of a fully cached run's work)."""
    for below, subfolders, files in os.walk(folder):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        yield from (os.path.join(below, name) for name in files if name.endswith(".py"))


def _stamps(paths: Iterable[str]) -> list[tuple[str, int, int]]:
    stamps = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        stamps.append((path, info.st_size, info.st_mtime_ns))
    return stamps


def settings_key(config: Config) -> str:
    parts: list[Any] = [
        FORMAT,
        __version__,
        list(sys.version_info[:2]),
        code_fingerprint(),
        config.fingerprint(),
        enabled_codes(config),
    ]
    return blake2b(json.dumps(parts).encode(), digest_size=12).hexdigest()


@dataclass(frozen=True)
class CachedResult:
    findings: list[Finding]
    # The project summaries the check used: absolute name -> digest.
    deps: dict[str, str]


class ResultCache:
    """Findings by absolute path and content digest, for one settings key."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = key
        self.path = folder / f"{key}.json"
        # The index file as this run read it: unchanged on disk (no other run replaced it)
        # means nothing to merge on saving.
        self._loaded_stamp: tuple[int, int, int] | None = None
        self._entries, self._summaries = self._load()
        self._seen: set[str] = set()
        self._written: set[str] = set()
        self._summaries_written: set[str] = set()

    @classmethod
    def open(cls, folder: Path, config: Config) -> ResultCache:
        return cls(folder, settings_key(config))

    def _load(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The index on disk: (file entries, module summaries); empty when unreadable."""
        try:
            with open(self.path, "rb") as handle:
                self._loaded_stamp = _stamp(os.fstat(handle.fileno()))
                data = json.loads(handle.read())
        except (OSError, ValueError):
            return {}, {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != self.key:
            return {}, {}
        entries, summaries = data.get("entries"), data.get("summaries")
        return (entries if isinstance(entries, dict) else {}), (summaries if isinstance(summaries, dict) else {})

    def get(self, path: Path, digest: str, filename: str) -> CachedResult | None:
        """The findings stored for this file's content, named `filename`, and the summary
        digests they depend on; None on a miss."""
        key = os.path.abspath(path)
        entry = self._entries.get(key)
        try:
            if entry is None or entry[0] != digest or not isinstance(entry[2], dict):
                return None
            findings = [Finding.from_dict({**item, "filename": filename}) for item in entry[1]]
        except (LookupError, TypeError, ValueError, AttributeError):  # a damaged entry is a miss
            return None
        self._seen.add(key)
        return CachedResult(findings, entry[2])

    def put(self, path: Path, digest: str, findings: Sequence[Finding], deps: dict[str, str] | None = None) -> None:
        key = os.path.abspath(path)
        items = []
        for finding in findings:
            item = finding.to_dict()
            del item["filename"]  # the file is named as the user names it, run by run
            items.append(item)
        self._entries[key] = [digest, items, dict(deps or {})]
        self._seen.add(key)
        self._written.add(key)

    def summaries(self) -> dict[str, tuple[str, Any]]:
        """Module summaries by absolute path: (content digest, summary or None)."""
        return {
            key: (value[0], value[1])
            for key, value in self._summaries.items()
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
        }

    def put_summaries(self, summaries: dict[str, tuple[str, Any]]) -> None:
        for key, (digest, summary) in summaries.items():
            old = self._summaries.get(key)
            if not (isinstance(old, list) and old[:1] == [digest]):
                self._summaries[key] = [digest, summary]
                self._summaries_written.add(key)

    def save(self) -> None:
        """Write the index if anything changed, merged with what concurrent runs saved
        since it was read; never fails the run."""
        if not (self._written or self._summaries_written):
            return
        try:
            self._create_folder()
            import tempfile  # here: a run whose results all come from the cache writes nothing

            with _locked(self.folder / _LOCK_NAME):
                entries, summaries = self._merged_with_disk()
                handle, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=self.folder)
                try:
                    with os.fdopen(handle, "w", encoding="utf-8") as out:
                        # `dumps`, not `dump`: only `dumps` uses the C encoder (`dump` encodes
                        # chunk by chunk in Python, some ten times slower).
                        out.write(
                            json.dumps(
                                {"format": FORMAT, "key": self.key, "entries": entries, "summaries": summaries},
                                separators=(",", ":"),
                            )
                        )
                    os.replace(temp, self.path)
                except BaseException:
                    os.unlink(temp)
                    raise
            self._prune()
        except OSError:
            return

    def _merged_with_disk(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """This run's entries and summaries over the index as it is on disk now: another run
        may have saved entries of other files (or newer ones of files this run only read)."""
        try:
            unchanged = self._loaded_stamp is not None and _stamp(os.stat(self.path)) == self._loaded_stamp
        except OSError:
            unchanged = False
        disk_entries, disk_summaries = ({}, {}) if unchanged else self._load()
        merged = {**self._entries, **disk_entries}
        merged.update((key, self._entries[key]) for key in self._written)
        entries = {key: value for key, value in merged.items() if key in self._seen or os.path.exists(key)}
        summaries = {**self._summaries, **disk_summaries}
        summaries.update((key, self._summaries[key]) for key in self._summaries_written)
        return entries, {key: value for key, value in summaries.items() if os.path.exists(key)}

    def _create_folder(self) -> None:
        if self.folder.is_dir():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        # Keep the cache out of git and out of backups, as ruff and pytest do.
        (self.folder / ".gitignore").write_text("# Created by torchlint.\n*\n", encoding="utf-8")
        (self.folder / "CACHEDIR.TAG").write_text(
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by torchlint.\n",
            encoding="utf-8",
        )
        (self.folder / "README").write_text(_README, encoding="utf-8")

    def _prune(self) -> None:
        now = time.time()
        indexes = []
        for path in self.folder.iterdir():
            try:
                modified = path.stat().st_mtime
            except OSError:
                continue
            if path.name.startswith(_TEMP_PREFIX) and now - modified > STALE_TEMP_SECONDS:
                path.unlink(missing_ok=True)
            elif path.suffix == ".json" and path != self.path:
                indexes.append((modified, path))
        for _, path in sorted(indexes, reverse=True)[KEEP_INDEXES - 1 :]:
            path.unlink(missing_ok=True)


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    # A writer replaces the index with a new file (`os.replace`): a new inode.
    return (info.st_ino, info.st_size, info.st_mtime_ns)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (released by the kernel if the holder dies)."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic replace still keeps the index whole
        yield
        return
    with open(path, "a+b") as handle:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        yield


def clean(folder: Path) -> bool:
    """Remove the cache folder; False if there was none."""
    if folder.is_symlink():
        folder.unlink()
        return True
    if not folder.is_dir():
        return False
    import shutil

    shutil.rmtree(folder)
    return True
