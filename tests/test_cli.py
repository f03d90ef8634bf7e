"""The `torchlint check` command line: flags, output, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import main

BUGGY = textwrap.dedent(
    """
    import torch
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step()
    """
).lstrip()
CLEAN = "import torch\nx = torch.zeros(3)\n"
JSON_KEYS = {"code", "name", "message", "severity", "filename", "line", "column", "end_line", "end_column", "fix"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_findings_exit_1_with_location_source_and_summary(project: Path) -> None:
    result = invoke("check", ".")
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith("train.py:5:5: TL001 [missing-zero-grad] error: `optimizer.step()`")
    assert "    optimizer.step()" in result.output
    assert "^^^^" in result.output
    assert "Found 1 finding (1 error) in 1 of 2 files checked." in result.output


def test_clean_tree_exits_0(project: Path) -> None:
    result = invoke("check", "clean.py")
    assert result.exit_code == 0
    assert "All checks passed (1 file checked)." in result.output


def test_default_path_is_current_folder(project: Path) -> None:
    assert invoke("check").exit_code == 1


def test_json_has_exactly_the_documented_keys(project: Path) -> None:
    result = invoke("check", "--format", "json", ".")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert len(data) == 1
    finding = data[0]
    assert set(finding) == JSON_KEYS
    assert finding["code"] == "TL001"
    assert finding["filename"] == "train.py"
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (5, 5, 5, 21)
    assert finding["severity"] == "error"
    assert finding["fix"] is None


def test_json_filename_is_absolute_outside_the_working_folder(project: Path, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("elsewhere") / "t.py"
    other.write_text(BUGGY)
    data = json.loads(invoke("check", "--format", "json", str(other)).output)
    assert data[0]["filename"] == str(other)


def test_select_and_ignore(project: Path) -> None:
    assert invoke("check", "--select", "TL002", ".").exit_code == 0
    assert invoke("check", "--select", "TL00", ".").exit_code == 1
    assert invoke("check", "--select", "missing-zero-grad", ".").exit_code == 1
    assert invoke("check", "--ignore", "TL001", ".").exit_code == 0
    assert invoke("check", "--ignore", "TL002,TL001", ".").exit_code == 0
    assert invoke("check", "--select", "TL001", "--ignore", "TL0", ".").exit_code == 0


def test_unknown_code_is_a_usage_error(project: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--select", "TL777", "."])
    assert result.exit_code == 2
    assert "TL777" in result.output


def test_output_file(project: Path) -> None:
    result = invoke("check", "--format", "json", "--output", "report.json", ".")
    assert result.exit_code == 1
    assert result.output == ""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "TL001"


def test_exit_zero(project: Path) -> None:
    result = invoke("check", "--exit-zero", ".")
    assert result.exit_code == 0
    assert "TL001" in result.output


def test_statistics(project: Path) -> None:
    result = invoke("check", "--statistics", ".")
    assert any(line.split() == ["1", "TL001", "missing-zero-grad", "error"] for line in result.output.splitlines())
    assert any(line.split() == ["1", "error"] for line in result.output.splitlines())


def test_quiet_prints_findings_only(project: Path) -> None:
    result = invoke("check", "--quiet", ".")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "train.py:5:5: TL001 [missing-zero-grad] error: " + json.loads(invoke("check", "--format", "json").output)[0]["message"]
    ]


def test_missing_path_is_exit_2(project: Path) -> None:
    result = CliRunner().invoke(main, ["check", "nope.py"])
    assert result.exit_code == 2
    assert "no such file or folder: nope.py" in result.output


def test_unknown_format_is_exit_2(project: Path) -> None:
    assert CliRunner().invoke(main, ["check", "--format", "xml", "."]).exit_code == 2


def test_rules_lists_every_rule() -> None:
    from torchlint.registry import all_rules

    result = invoke("rules")
    for rule in all_rules():
        assert any(line.split()[:2] == [rule.CODE, rule.NAME] for line in result.output.splitlines())


def test_explain_prints_the_doc() -> None:
    result = invoke("explain", "TL001")
    assert result.exit_code == 0
    assert "# TL001 missing-zero-grad" in result.output
    assert "## Why is this bad?" in result.output
    assert invoke("explain", "missing-zero-grad").output == result.output
    assert CliRunner().invoke(main, ["explain", "TL777"]).exit_code == 2


def test_python_dash_m_and_console_script(project: Path) -> None:
    for command in ([sys.executable, "-m", "torchlint"], [str(Path(sys.executable).parent / "torchlint")]):
        proc = subprocess.run([*command, "check", "--format", "json", "."], capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        assert json.loads(proc.stdout)[0]["code"] == "TL001"


def test_a_large_report_through_the_fast_exit_is_complete(tmp_path: Path) -> None:
    for i in range(60):
        (tmp_path / f"train_{i}.py").write_text(BUGGY * 4)
    proc = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--jobs", "2", "--format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert proc.returncode == 1, proc.stderr
    assert len(json.loads(proc.stdout)) == 240


LEAVE = """
import atexit, sys, threading, time
from pathlib import Path
from torchlint.cli import leave
atexit.register(lambda: print("exit handler ran", file=sys.stderr))
print("written before leaving", end="")
if sys.argv[1] == "thread":
    def late() -> None:
        time.sleep(0.3)
        Path("thread-finished").write_text("yes")
    threading.Thread(target=late).start()
leave(int(sys.argv[2]) if sys.argv[2].isdigit() else sys.argv[2])
"""


@pytest.mark.parametrize("status, code", [("0", 0), ("1", 1), ("2", 2), ("no such file", 1)])
def test_leaving_flushes_output_runs_exit_handlers_and_keeps_the_status(tmp_path: Path, status: str, code: int) -> None:
    proc = subprocess.run([sys.executable, "-c", LEAVE, "alone", status], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == code
    assert proc.stdout == "written before leaving"
    assert "exit handler ran" in proc.stderr
    assert ("no such file" in proc.stderr) == (status == "no such file")


def test_leaving_while_a_thread_runs_waits_for_it_as_an_ordinary_exit_does(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", LEAVE, "thread", "1"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == "written before leaving"
    assert (tmp_path / "thread-finished").read_text() == "yes"


def test_deterministic_sorted_output(project: Path) -> None:
    for i in range(5):
        (project / f"m{i}.py").write_text(BUGGY)
    outputs = {invoke("check", "--format", "json", "--jobs", str(j), ".").output for j in (1, 2)}
    assert len(outputs) == 1
    names = [f["filename"] for f in json.loads(outputs.pop())]
    assert names == sorted(names)


NO_FILES_WARNING = "warning: No Python files found under the given path(s)"


def test_an_empty_folder_warns_that_nothing_was_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "empty"])
    assert result.exit_code == 0
    assert NO_FILES_WARNING in result.stderr
    assert NO_FILES_WARNING not in result.stdout


def test_a_folder_whose_files_are_all_excluded_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["*.py"]\n')
    (tmp_path / "train.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "."])
    assert (result.exit_code, result.stderr.strip()) == (0, NO_FILES_WARNING)


def test_a_run_that_checks_files_does_not_warn(project: Path) -> None:
    result = CliRunner().invoke(main, ["check", "clean.py"])
    assert result.exit_code == 0 and result.stderr == ""


def test_a_dangling_symlink_is_exit_2_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.py").symlink_to(tmp_path / "gone.py")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "train.py"])
    assert result.exit_code == 2
    assert "cannot read train.py: a symbolic link to" in result.stderr
    assert "gone.py, which does not exist" in result.stderr


def test_a_symlink_loop_is_exit_2_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "a.py"])
    assert result.exit_code == 2
    assert "cannot read a.py: a symbolic link loop" in result.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files without permission")
def test_a_file_without_read_permission_is_exit_2_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "train.py"
    secret.write_text(BUGGY)
    secret.chmod(0)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "train.py"])
    assert result.exit_code == 2
    assert "cannot read train.py: permission denied" in result.stderr


def test_a_file_without_read_permission_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated: the suite runs as root, which reads any file, so os.access is made to
    # answer as it does for an unprivileged user on a file with mode 000.
    secret = tmp_path / "train.py"
    secret.write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == secret else real_access(path, mode))
    result = CliRunner().invoke(main, ["check", "--isolated", "train.py"])
    assert result.exit_code == 2
    assert "cannot read train.py: permission denied" in result.stderr
