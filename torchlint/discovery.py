"""Which files to check: folders are walked (skipping excluded and git-ignored paths),
explicit file arguments are always checked."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from torchlint.config import Config

SOURCE_SUFFIXES = (".py", ".ipynb")


class MissingPathError(Exception):
    def __init__(self, paths: list[str]) -> None:
        super().__init__(", ".join(paths))
        self.paths = paths


@dataclass(frozen=True)
class IgnorePattern:
    """One gitignore-style pattern, relative to the folder `base`."""

    base: Path
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool

    def matches(self, path: Path, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if not self.anchored:
            return self.regex.fullmatch(path.name) is not None
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return rel != "." and self.regex.fullmatch(rel) is not None


def parse_pattern(line: str, base: Path) -> IgnorePattern | None:
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    return IgnorePattern(base, _glob_regex(line), negated, dir_only, anchored)


@lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            close = pattern.find("]", i + 2)
            if close < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


def _read_gitignore(folder: Path) -> list[IgnorePattern]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [p for p in (parse_pattern(line, folder) for line in text.splitlines()) if p is not None]


def _ignored(patterns: list[IgnorePattern], path: Path, is_dir: bool) -> bool:
    result = False
    for pattern in patterns:
        if pattern.matches(path, is_dir):
            result = not pattern.negated
    return result


def _git_root(start: Path) -> Path | None:
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _inherited_gitignores(folder: Path) -> list[IgnorePattern]:
    """Patterns from .gitignore files of the folders above `folder`, up to its git root."""
    root = _git_root(folder)
    if root is None:
        return []
    chain = [folder, *folder.parents]
    chain = chain[: chain.index(root) + 1] if root in chain else [folder]
    patterns: list[IgnorePattern] = []
    for parent in reversed(chain[1:]):
        patterns.extend(_read_gitignore(parent))
    return patterns


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover(paths: list[str], config: Config, cwd: Path | None = None) -> list[Path]:
    """Files to check under `paths`, sorted and without duplicates."""
    cwd = cwd or Path.cwd()
    missing = [p for p in paths if not os.path.lexists(cwd / p)]
    if missing:
        raise MissingPathError(missing)
    root = (config.root or cwd).resolve()
    excludes = _excludes(config, root)
    found: dict[Path, None] = {}
    for arg in paths:
        start = Path(cwd / arg)
        if start.is_dir():
            _walk(start, excludes, config.respect_gitignore, found)
        elif not (config.force_exclude and _excluded_file(start.resolve(), excludes, root)):
            # Explicit files are checked whatever their name, unless `force-exclude`
            # says otherwise.
            found[start] = None
    return sorted(found, key=lambda p: _sort_key(p, cwd))


def _excludes(config: Config, root: Path) -> list[IgnorePattern]:
    patterns = (parse_pattern(pattern, root) for pattern in (*config.exclude, *config.extend_exclude))
    return [p for p in patterns if p is not None]


def excluded_by(config: Config, path: Path, cwd: Path) -> bool:
    """Whether `config`'s excludes skip this file (or a folder of it below its root)."""
    root = (config.root or cwd).resolve()
    return _excluded_file(path.resolve(), _excludes(config, root), root)


def _excluded_file(path: Path, excludes: list[IgnorePattern], root: Path) -> bool:
    """Whether an exclude pattern matches the file or one of its folders below `root`."""
    if _ignored(excludes, path, False):
        return True
    folders = path.parents[: len(path.parents) - len(root.parents) - 1] if root in path.parents else ()
    return any(_ignored(excludes, folder, True) for folder in folders)


def _sort_key(path: Path, cwd: Path) -> str:
    return display_path(path, cwd)


def _walk(start: Path, excludes: list[IgnorePattern], gitignore: bool, found: dict[Path, None]) -> None:
    start_resolved = start.resolve()
    base_patterns = _inherited_gitignores(start_resolved) if gitignore else []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, list[IgnorePattern]]] = [(start, base_patterns)]
    while stack:
        folder, inherited = stack.pop()
        try:
            info = folder.stat()
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        patterns = inherited + _read_gitignore(folder) if gitignore else inherited
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        folder_resolved = folder.resolve()
        for entry in entries:
            path = Path(entry.path)
            resolved = folder_resolved / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if _ignored(excludes, resolved, is_dir) or _ignored(patterns, resolved, is_dir):
                continue
            if is_dir:
                if not _is_virtualenv(path):
                    stack.append((path, patterns))
            elif is_file and path.suffix in SOURCE_SUFFIXES:
                found[path] = None


def display_path(path: Path, cwd: Path | None = None) -> str:
    """The path as the user would type it: relative to the working folder when below it."""
    cwd = cwd or Path.cwd()
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return str(path)
    if rel.startswith(".."):
        return str(path)
    return Path(rel).as_posix()
