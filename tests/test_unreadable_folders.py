"""Folders that cannot be read: found while walking, or above a named path. Permissions do
not bind root, so these run the CLI as the unprivileged user `nobody` (through `setpriv`)
and are skipped where that is not possible."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

TORCHLINT = str(Path(sys.executable).with_name("torchlint"))
BUGGY = "import torch\nfor x in loader:\n    loss.backward()\n    opt.step()\n"


def _can_drop_privileges() -> bool:
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "true"])
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _can_drop_privileges(), reason="needs root and setpriv to run as nobody")


@pytest.fixture
def tree() -> Iterator[Path]:
    # Under /tmp with open permissions: pytest's own tmp_path is private to root.
    root = Path(tempfile.mkdtemp(prefix="torchlint-perm-"))
    root.chmod(0o755)
    (root / "proj" / "locked").mkdir(parents=True)
    (root / "proj" / "ok.py").write_text(BUGGY)
    (root / "proj" / "locked" / "hidden.py").write_text(BUGGY)
    (root / "proj").chmod(0o755)
    yield root
    (root / "proj" / "locked").chmod(0o755)
    shutil.rmtree(root)


def as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", TORCHLINT, *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, "HOME": "/tmp"})


@pytest.mark.parametrize("mode", [0o000, 0o311], ids=["no access", "searchable but not listable"])
def test_a_folder_found_while_walking_that_cannot_be_read_is_a_tl000(tree: Path, mode: int) -> None:
    (tree / "proj" / "locked").chmod(mode)
    result = as_nobody("check", "--no-cache", "proj", cwd=tree)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "proj/locked:1:1: TL000" in result.stdout
    assert "cannot read this folder (permission denied): the files in it are not checked" in result.stdout
    assert "proj/ok.py" in result.stdout  # the readable file is still checked
    assert result.returncode == 1


def test_a_named_file_below_a_folder_that_cannot_be_searched_is_an_error(tree: Path) -> None:
    (tree / "proj" / "locked").chmod(0o000)
    result = as_nobody("check", "--no-cache", "proj/locked/hidden.py", cwd=tree)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "cannot read proj/locked/hidden.py: permission denied on the folder" in result.stderr
    assert "no such file" not in result.stderr
