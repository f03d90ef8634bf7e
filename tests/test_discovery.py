from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.config import Config
from torchlint.discovery import MissingPathError, discover, display_path, parse_pattern


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def found(root: Path, paths: list[str] | None = None, config: Config | None = None) -> list[str]:
    return [display_path(p, root) for p in discover(paths or ["."], config or Config(), root)]


def test_walks_folders_and_skips_tool_folders(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "train.py",
        "pkg/model.py",
        "pkg/notes.txt",
        "nb.ipynb",
        ".git/hooks/x.py",
        ".venv/lib/site.py",
        "build/lib/m.py",
        "dist/m.py",
        "pkg/__pycache__/m.py",
        "lib/site-packages/torch/x.py",
        "env/pyvenv.cfg",
        "env/lib/x.py",
    )
    assert found(tmp_path) == ["nb.ipynb", "pkg/model.py", "train.py"]


def test_gitignore_is_respected_with_negation_and_nesting(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("# comment\nout/\n*_generated.py\n!keep_generated.py\n/rootonly.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.py\n")
    touch(
        tmp_path,
        "a.py",
        "out/b.py",
        "x_generated.py",
        "keep_generated.py",
        "rootonly.py",
        "sub/rootonly.py",
        "sub/local.py",
        "sub/c.py",
    )
    assert found(tmp_path) == ["a.py", "keep_generated.py", "sub/c.py", "sub/rootonly.py"]
    assert "out/b.py" in found(tmp_path, config=Config(respect_gitignore=False))


def test_gitignore_of_a_parent_applies_to_a_subfolder_argument(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("gen_*.py\n")
    touch(tmp_path, "pkg/gen_a.py", "pkg/b.py")
    assert found(tmp_path, ["pkg"]) == ["pkg/b.py"]


def test_explicit_files_are_always_checked(tmp_path: Path) -> None:
    touch(tmp_path, "build/script", ".venv/x.py")
    assert found(tmp_path, ["build/script", ".venv/x.py"]) == [".venv/x.py", "build/script"]


def test_excludes_are_glob_patterns(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "legacy/b.py", "pkg/legacy/c.py", "pkg/d_test.py")
    config = Config(extend_exclude=("legacy", "*_test.py"))
    assert found(tmp_path, config=config) == ["a.py"]


def test_missing_paths_are_reported_together(tmp_path: Path) -> None:
    with pytest.raises(MissingPathError) as info:
        discover(["nope.py", "also/nope"], Config(), tmp_path)
    assert info.value.paths == ["nope.py", "also/nope"]


def test_no_duplicates_and_sorted(tmp_path: Path) -> None:
    touch(tmp_path, "b.py", "a/z.py")
    assert found(tmp_path, [".", "b.py", "a"]) == ["a/z.py", "b.py"]


def test_symlink_loops_do_not_hang(tmp_path: Path) -> None:
    touch(tmp_path, "pkg/a.py")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    assert found(tmp_path) == ["pkg/a.py"]


@pytest.mark.parametrize(
    "pattern, path, is_dir, expected",
    [
        ("*.py", "a/b.py", False, True),
        ("/a.py", "a.py", False, True),
        ("/a.py", "x/a.py", False, False),
        ("docs/", "docs", True, True),
        ("docs/", "docs", False, False),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("**/gen", "x/gen", True, True),
        ("f[0-9].py", "f3.py", False, True),
    ],
)
def test_gitignore_patterns(tmp_path: Path, pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    parsed = parse_pattern(pattern, tmp_path)
    assert parsed is not None
    assert parsed.matches(tmp_path / path, is_dir) is expected


# (patterns, whether they can be matched by name alone)
PATTERN_LISTS = [
    (list(Config().exclude), True),
    (["*.log", "build/", "data?", "[abc]x", "{tmp,scratch}", "[!x]y"], True),
    (["*.py", "!keep.py"], False),  # an un-ignore: matched pattern by pattern
    (["/top", "sub/*.py", "cache/**", "**/gen", "*.txt"], False),  # anchored
]
NAMES = ["train.py", "keep.py", ".venv", "build", "x.egg-info", "data1", "ax", "zy", "xy", "tmp", "gen", "top", "a.log", "notes.txt", "cache"]


@pytest.mark.parametrize(("texts", "by_name"), PATTERN_LISTS)
def test_a_walk_ignores_the_entries_that_its_patterns_ignore_one_by_one(tmp_path: Path, texts: list[str], by_name: bool) -> None:
    from torchlint.discovery import _ignored, _Ignores

    patterns = [p for p in (parse_pattern(text, tmp_path) for text in texts) if p is not None]
    ignores = _Ignores(patterns)
    assert ignores.by_name == by_name
    decided = set()
    for name in NAMES:
        for is_dir in (False, True):
            path = tmp_path / name
            decided.add(expected := _ignored(patterns, path, is_dir))
            assert ignores.ignored(path, is_dir) == expected, (name, is_dir)
    assert decided == {True, False}
