"""The pre-commit hook, for real: `pre-commit try-repo` installs this repository into
its own environment and runs the hook on a throwaway project.

`try-repo` on a local path uses the repository's HEAD plus changes to tracked files,
but not untracked ones; so the test commits a copy of the working tree (tracked and
untracked, minus ignored files) and points `try-repo` at that copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")
if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)

BUGGY = """\
import torch

for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    opt.step()
"""
FIXED = BUGGY.replace("for x, y in loader:\n", "for x, y in loader:\n    opt.zero_grad()\n")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def snapshot(repo: Path, dest: Path) -> Path:
    """A committed copy of the working tree, as it is now."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=repo).split("\0")
    for name in filter(None, listed):
        source = repo / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot", cwd=dest)
    return dest


def notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def try_repo(hooks: Path, project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "torchlint", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_pre_commit_hook_fails_on_the_bug_and_passes_once_fixed(repo: Path, tmp_path: Path) -> None:
    hooks = snapshot(repo, tmp_path / "hooks")
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / "train.py").write_text(BUGGY)
    (project / "explore.ipynb").write_text(notebook("%matplotlib inline\nimport torch", "!nvidia-smi\n" + BUGGY))
    # Deliberately buggy fixtures that the project excludes: pre-commit names them
    # explicitly, and the hook's --force-exclude keeps them out.
    (project / "fixtures").mkdir()
    (project / "fixtures" / "bug.py").write_text(BUGGY)
    (project / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["fixtures"]\n')
    (project / "README.md").write_text("not python\n")
    git("add", "-A", cwd=project)

    failed = try_repo(hooks, project, tmp_path / "home")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "torchlint" in failed.stdout and "Failed" in failed.stdout
    assert "train.py:6:5: TL001 [missing-zero-grad]" in failed.stdout
    assert "explore.ipynb:cell 2:7:5: TL001 [missing-zero-grad]" in failed.stdout
    assert "fixtures/bug.py" not in failed.stdout
    # One torchlint process for all the files: one summary, not one per CPU.
    assert failed.stdout.count("Found ") == 1, failed.stdout

    (project / "train.py").write_text(FIXED)
    (project / "explore.ipynb").write_text(notebook("import torch", FIXED))
    git("add", "-A", cwd=project)
    passed = try_repo(hooks, project, tmp_path / "home")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_the_hook_runs_one_process(repo: Path) -> None:
    """pre-commit starts one process per CPU unless a hook asks to run serially: their
    summaries interleave, and each would save the result cache on its own."""
    from pre_commit.clientlib import load_manifest

    [hook] = load_manifest(str(repo / ".pre-commit-hooks.yaml"))
    assert hook["require_serial"] is True
