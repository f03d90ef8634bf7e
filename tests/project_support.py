"""Helpers shared by the tests of multi-module projects: a project written from a dict of
files or copied from tests/data/projects, checked as a whole (with or without the result
cache, on all of it or on given paths), a file of it checked alone, an edit, the findings
as (path, line, code), and the project summary of a snippet."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path
from typing import Any, Sequence

from torchlint import api
from torchlint.config import Config
from torchlint.finding import Finding
from torchlint.rules._summarize import summarize

PROJECTS = Path(__file__).parent / "data" / "projects"

Found = tuple[str, int, str]


def copy_project(name: str, tmp_path: Path) -> Path:
    """A copy of tests/data/projects/`name` at `tmp_path`/`name`, for a test that edits it."""
    copy = tmp_path / name
    shutil.copytree(PROJECTS / name, copy)
    return copy


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Writes each file (relative path -> text, dedented; folders made as needed) below
    `root`, and returns `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def check(root: Path, paths: Sequence[Path] | None = None, cache: Path | None = None) -> api.CheckResult:
    """Checks `paths` (by default `root` itself) with `root` as the working folder, in this
    process; with `cache`, through the result cache kept in that folder."""
    return api.check_paths(list(paths) if paths is not None else [root], Config(), cwd=root, jobs=1, cache_dir=cache)


def findings(result: api.CheckResult | list[Finding], *codes: str) -> list[Found]:
    """(path as reported, relative to the working folder; line; code) of each finding, of
    the given codes only when any are given, sorted."""
    found = result.findings if isinstance(result, api.CheckResult) else result
    return sorted((Path(f.filename).as_posix(), f.line, f.code) for f in found if not codes or f.code in codes)


def check_alone(root: Path, name: str, *codes: str) -> list[Found]:
    """The findings of `root`/`name` checked as source text, without the rest of its project."""
    return findings(api.check_source((root / name).read_text(), name), *codes)


def edit(path: Path, old: str, new: str) -> None:
    """Replaces `old`, which the file must contain, by `new`."""
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new))


def summary(source: str) -> dict[str, Any]:
    """The project summary of a (dedented) snippet."""
    return summarize(ast.parse(textwrap.dedent(source)))
