"""Which files to check: folders are walked (skipping excluded and git-ignored paths),
explicit file arguments are always checked."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from torchlint.config import Config
from torchlint.globs import PathPattern, PatternError, compile_pattern, names_regex

SOURCE_SUFFIXES = (".py", ".ipynb")


class PathError(Exception):
    """A path named on the command line that cannot be checked; the message names it."""


class MissingPathError(PathError):
    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"no such file or folder: {', '.join(paths)}")
        self.paths = paths


class UnreadablePathError(PathError):
    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"cannot read {path}: {reason}" for path, reason in problems))
        self.problems = problems


def unreadable_reason(path: Path) -> str | None:
    """Why a path named on the command line cannot be read, or None when it can.

    A named path that "passes" because it could not be read would tell the user that it
    was checked: a dangling symlink, a symlink loop and a file without read permission
    are errors, like a missing path.
    """
    try:
        info = path.stat()
    except OSError as exc:
        if path.is_symlink():
            if exc.errno == errno.ELOOP:
                return "a symbolic link loop"
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        return exc.strerror or str(exc)
    wanted = os.R_OK | (os.X_OK if stat.S_ISDIR(info.st_mode) else 0)
    if not os.access(path, wanted):
        return "permission denied"
    return None


@dataclass(frozen=True)
class IgnorePattern:
    """One exclude or gitignore pattern, relative to the folder `base`."""

    base: Path
    pattern: PathPattern

    @property
    def negated(self) -> bool:
        return self.pattern.negated

    def matches(self, path: Path, is_dir: bool) -> bool:
        if not self.pattern.anchored:
            return self.pattern.matches(path.name, is_dir)
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return self.pattern.matches(rel, is_dir)


def parse_pattern(line: str, base: Path) -> IgnorePattern | None:
    pattern = compile_pattern(line)
    return IgnorePattern(base, pattern) if pattern is not None else None


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


class _Ignores:
    """`_ignored` for the entries of one folder: where every pattern matches a name at any
    depth and none un-ignores (the default excludes, most `.gitignore` files), one regex
    per kind of entry answers for all of them."""

    def __init__(self, patterns: list[IgnorePattern]) -> None:
        self.patterns = patterns
        self.by_name = not any(p.pattern.anchored or p.negated for p in patterns)
        names = [p.pattern for p in patterns] if self.by_name else []
        self.files = names_regex(names, is_dir=False)
        self.folders = names_regex(names, is_dir=True)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if not self.by_name:
            return _ignored(self.patterns, path, is_dir)
        regex = self.folders if is_dir else self.files
        return regex is not None and regex.fullmatch(path.name) is not None


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


def _blocked_by(path: Path) -> Path | None:
    """The nearest folder above a path that does not exist as far as we can see, when that
    folder exists but cannot be searched: the path may well be there."""
    for folder in path.parents:
        if os.path.isdir(folder):
            return None if os.access(folder, os.X_OK) else folder
    return None


def _is_virtualenv(folder: Path) -> bool:
    try:
        return (folder / "pyvenv.cfg").is_file()
    except OSError:  # a folder that cannot be searched (Python 3.11 raises here)
        return False


def discover(paths: list[str], config: Config, cwd: Path | None = None) -> list[Path]:
    """Files to check under `paths`, sorted and without duplicates. Raises `PathError`
    for a path that does not exist or cannot be read."""
    cwd = cwd or Path.cwd()
    missing = [p for p in paths if not os.path.lexists(cwd / p) and _blocked_by(cwd / p) is None]
    if missing:
        raise MissingPathError(missing)
    blocked = [(p, f"permission denied on the folder {folder}") for p in paths if (folder := _blocked_by(cwd / p))]
    if blocked:
        raise UnreadablePathError(blocked)
    unreadable = [(p, reason) for p in paths if (reason := unreadable_reason(cwd / p)) is not None]
    if unreadable:
        raise UnreadablePathError(unreadable)
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
    excluded = _Ignores(excludes)
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
            # Reported, not skipped: the files in it are not checked (sources.read_bytes says why).
            if folder != start:
                found[folder] = None
            continue
        folder_resolved = folder.resolve()
        ignores = _Ignores(patterns)
        for entry in entries:
            path = Path(entry.path)
            resolved = folder_resolved / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if excluded.ignored(resolved, is_dir) or ignores.ignored(resolved, is_dir):
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
