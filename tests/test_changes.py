"""`--changed-since REF`, on a throwaway git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint import api
from torchlint.changes import ChangesError, changed_files
from torchlint.cli import main
from torchlint.config import Config

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BUGGY = "for x in loader:\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: a, b, c, ignored/ in .gitignore; branch `work` forked from it, then:
    d committed on work, a edited (unstaged), b deleted, e untracked, c staged,
    f committed on main after the fork (not a change of ours)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name in ("a.py", "b.py", "c.py", "same.py"):
        (root / name).write_text(BUGGY)
    (root / ".gitignore").write_text("ignored/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "work")
    (root / "sub").mkdir()
    (root / "sub" / "d.py").write_text(BUGGY)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "d")
    git(root, "checkout", "-q", "main")
    (root / "f.py").write_text(BUGGY)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "f on main")
    git(root, "checkout", "-q", "work")
    (root / "a.py").write_text(BUGGY + "# edited\n")
    (root / "b.py").unlink()
    (root / "c.py").write_text(BUGGY + "# staged\n")
    git(root, "add", "c.py")
    (root / "e.py").write_text(BUGGY)
    (root / "ignored").mkdir()
    (root / "ignored" / "g.py").write_text(BUGGY)
    return root


def test_changed_files(repo: Path) -> None:
    names = {p.relative_to(repo.resolve()).as_posix() for p in changed_files("main", repo)}
    assert names == {"a.py", "c.py", "e.py", "sub/d.py"}


def test_changed_since_a_commit_of_the_branch(repo: Path) -> None:
    names = {p.relative_to(repo.resolve()).as_posix() for p in changed_files("HEAD", repo / "sub")}
    assert names == {"a.py", "c.py", "e.py"}


def test_check_only_changed_files(repo: Path) -> None:
    result = api.check_paths(["."], Config(), cwd=repo, jobs=1, changed_since="main")
    assert result.files == ["a.py", "c.py", "e.py", "sub/d.py"]
    assert {f.filename for f in result.findings} == {"a.py", "c.py", "e.py", "sub/d.py"}
    # Paths still narrow the check.
    result = api.check_paths(["sub"], Config(), cwd=repo, jobs=1, changed_since="main")
    assert result.files == ["sub/d.py"]


def test_cli(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--changed-since", "main", "."])
    assert result.exit_code == 1
    assert "a.py" in result.output and "same.py" not in result.output
    assert "4 files checked" in result.output


def test_unknown_revision(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    for ref in ("no-such-branch", "--output=x"):
        result = CliRunner().invoke(main, ["check", "--changed-since", ref, "."])
        assert result.exit_code == 2
        assert f"unknown git revision {ref!r}" in result.output
        assert "Traceback" not in result.output
    assert not (repo / "x").exists()


def test_outside_a_git_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(BUGGY)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--changed-since", "main", "."])
    assert result.exit_code == 2
    assert "needs a git work tree" in result.output
    with pytest.raises(ChangesError):
        changed_files("main", tmp_path)


def test_nothing_changed_warns_that_no_file_was_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "train.py").write_text(BUGGY)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "--changed-since", "HEAD", "."])
    assert result.exit_code == 0
    assert result.stderr.strip() == "warning: No Python files changed since HEAD under the given path(s)"
