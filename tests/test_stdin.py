"""`check --stdin-filename PATH -`: source from stdin, reported as PATH, with PATH's
configuration and per-file-ignores; `--fix` prints the fixed source, `--diff` the diff."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_formats import BUGGY
from test_notebook import SETUP, TRAIN, cell, notebook_text

from torchlint.cli import main

VIEW = "def flat(x):\n    return x.transpose(0, 1).view(-1)\n"
VIEW_FIXED = "def flat(x):\n    return x.transpose(0, 1).contiguous().view(-1)\n"


def check(source: str | bytes, *args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", *args], input=source)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tree whose sub-project ignores TL001 in `gen/` and TL003 everywhere."""
    monkeypatch.chdir(tmp_path)
    sub = tmp_path / "sub"
    (sub / "gen").mkdir(parents=True)
    (sub / "pyproject.toml").write_text(
        '[tool.torchlint]\nignore = ["TL003"]\n[tool.torchlint.per-file-ignores]\n"gen/*.py" = ["TL001"]\n'
    )
    return tmp_path


def test_stdin_is_reported_as_the_given_path(project: Path) -> None:
    result = check(BUGGY, "--stdin-filename", "src/train.py", "-")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("src/train.py:5:5: TL001 [missing-zero-grad]")
    # The snippet comes from stdin, not from a file on disk (there is none).
    assert lines[1] == "    opt.step()"
    assert not (project / "src").exists()


def test_a_plain_dash_reads_stdin_too(project: Path) -> None:
    result = check(BUGGY, "--isolated", "--format", "json", "-")
    (found,) = json.loads(result.stdout)
    assert result.exit_code == 1 and found["filename"] == "-" and found["code"] == "TL001"
    assert check("import torch\n", "--isolated", "-").exit_code == 0


def test_the_configuration_and_per_file_ignores_of_the_path_apply(project: Path) -> None:
    assert check(BUGGY, "--stdin-filename", "sub/gen/model.py", "-").exit_code == 0
    other = check(BUGGY, "--stdin-filename", "sub/model.py", "-")
    assert other.exit_code == 1 and "sub/model.py:5:5: TL001" in other.stdout
    # The sub-project's ignore = ["TL003"] applies to stdin named into it, not outside it.
    assert check(VIEW, "--stdin-filename", "sub/view.py", "-").exit_code == 0
    assert check(VIEW, "--stdin-filename", "elsewhere/view.py", "-").exit_code == 1


def test_fix_prints_the_fixed_source(project: Path) -> None:
    result = check(VIEW, "--isolated", "--fix", "--stdin-filename", "view.py", "-")
    assert result.exit_code == 0
    assert result.stdout == VIEW_FIXED
    assert "Fixed 1 finding" in result.stderr
    assert not (project / "view.py").exists()


def test_fix_with_nothing_to_fix_prints_the_source_unchanged_and_reports_what_is_left(project: Path) -> None:
    source = BUGGY.replace("\n", "\r\n")
    result = check(source.encode(), "--isolated", "--fix", "--stdin-filename", "train.py", "-")
    assert result.exit_code == 1
    assert result.stdout_bytes == source.encode()
    assert "train.py:5:5: TL001" in result.stderr


def test_fix_keeps_crlf_newlines(project: Path) -> None:
    result = check(VIEW.replace("\n", "\r\n").encode(), "--isolated", "--fix", "-")
    assert result.stdout_bytes == VIEW_FIXED.replace("\n", "\r\n").encode()


def test_diff_from_stdin(project: Path) -> None:
    result = check(VIEW, "--isolated", "--diff", "--stdin-filename", "view.py", "-")
    assert result.exit_code == 1
    assert "-    return x.transpose(0, 1).view(-1)" in result.stdout
    assert "+    return x.transpose(0, 1).contiguous().view(-1)" in result.stdout


def test_a_notebook_on_stdin(project: Path) -> None:
    result = check(notebook_text(cell(SETUP), cell(TRAIN)), "--isolated", "--stdin-filename", "nb.ipynb", "-")
    assert result.exit_code == 1 and result.stdout.startswith("nb.ipynb:cell 2:4:5: TL001")


def test_undecodable_stdin_is_a_parse_error_not_a_traceback(project: Path) -> None:
    result = check(b"x = '\xff'\n", "--isolated", "--stdin-filename", "bad.py", "-")
    assert result.exit_code == 1 and "bad.py:1:6: TL000" in result.stdout


@pytest.mark.parametrize("args", [["-", "other.py"], ["--stdin-filename", "x.py", "other.py"]])
def test_stdin_must_be_the_only_path(project: Path, args: list[str]) -> None:
    result = check(BUGGY, "--isolated", *args)
    assert result.exit_code == 2 and "from stdin (`-` or --stdin-filename) or from PATHS, not both" in result.stderr


def test_stdin_through_a_real_pipe(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--stdin-filename", "t.py", "-"],
        input=BUGGY,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout.startswith("t.py:5:5: TL001")
