"""`--changed-since REF`: the files git sees as changed since a revision.

Changed means: different in the working tree from where the current branch left REF
(the merge base of REF and HEAD, so that commits made on REF since do not count), which
covers commits since then, staged and unstaged edits; plus untracked files that are not
ignored. Deleted files are left out: there is nothing left to check.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence


class ChangesError(Exception):
    """Why the changed files cannot be listed, in words for the user."""


class _GitFailed(Exception):
    pass


def _git(args: Sequence[str], cwd: Path) -> str:
    import subprocess  # here: `check` imports this module for its error type only

    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape"
        )
    except FileNotFoundError:
        raise ChangesError("--changed-since needs git, which is not installed or not on PATH") from None
    if done.returncode != 0:
        raise _GitFailed(done.stderr.strip())
    return done.stdout


def changed_files(ref: str, cwd: Path) -> set[Path]:
    """Absolute, resolved paths of the files changed since `ref` in the work tree at `cwd`."""
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    except _GitFailed:
        raise ChangesError(f"--changed-since needs a git work tree, and {cwd} is not inside one") from None
    if ref.startswith("-"):
        raise ChangesError(f"unknown git revision {ref!r}")
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    except _GitFailed:
        raise ChangesError(f"unknown git revision {ref!r} (try a branch, a tag or a commit hash)") from None
    try:
        base = _git(["merge-base", ref, "HEAD"], top).strip()
    except _GitFailed:  # no common history (or no HEAD yet): compare with REF itself
        base = ref
    try:
        names = _git(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", base, "--"], top).split("\0")
        names += _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0")
    except _GitFailed as exc:
        raise ChangesError(f"git could not list the changes since {ref!r}: {exc}") from None
    root = top.resolve()
    return {Path(os.path.realpath(root / name)) for name in names if name}


def keep_changed(files: Sequence[Path], ref: str, cwd: Path) -> list[Path]:
    """The `files` (as discovered) that changed since `ref`, in their order."""
    changed = changed_files(ref, cwd)
    return [path for path in files if Path(os.path.realpath(path)) in changed]
