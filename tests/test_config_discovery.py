"""Configuration discovery like ruff: the nearest torchlint.toml / .torchlint.toml /
pyproject.toml with [tool.torchlint] above the checked path, `--config`, `--isolated`,
`--show-settings`, and `force-exclude` for files named on the command line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from torchlint.cli import main

BUGGY = "for x, y in loader:\n    model(x).sum().backward()\n    opt.step()\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str, cwd: Path) -> Result:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """proj/ with a buggy script in proj/src/pkg/ and a neutral working folder elsewhere/."""
    write(tmp_path / "proj" / "src" / "pkg" / "train.py", BUGGY)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def codes(result: Result) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in result.output.splitlines() if ": TL" in line]


def test_nearest_pyproject_relative_to_the_checked_path_not_the_cwd(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", '[project]\nname = "p"\n\n[tool.torchlint]\nignore = ["TL001"]\n')
    result = run("check", str(project / "proj" / "src"), cwd=project / "elsewhere")
    assert result.exit_code == 0, result.output
    # Without the setting the finding is there.
    assert run("check", "--isolated", str(project / "proj" / "src"), cwd=project / "elsewhere").exit_code == 1


def test_pyproject_without_a_torchlint_table_is_passed_over(project: Path) -> None:
    write(project / "proj" / "torchlint.toml", 'ignore = ["TL001"]\n')
    write(project / "proj" / "src" / "pyproject.toml", '[project]\nname = "p"\n')
    result = run("check", "--show-settings", "proj/src/pkg/train.py", cwd=project)
    assert f"# settings file: {project / 'proj' / 'torchlint.toml'}" in result.output.splitlines()


@pytest.mark.parametrize(
    "files, chosen",
    [
        ({"proj/torchlint.toml": "", "proj/pyproject.toml": "[tool.torchlint]\n"}, "proj/torchlint.toml"),
        ({"proj/.torchlint.toml": "", "proj/pyproject.toml": "[tool.torchlint]\n"}, "proj/.torchlint.toml"),
        ({"proj/torchlint.toml": "", "proj/src/pyproject.toml": "[tool.torchlint]\n"}, "proj/src/pyproject.toml"),
        ({"torchlint.toml": "", "proj/src/pkg/.torchlint.toml": ""}, "proj/src/pkg/.torchlint.toml"),
    ],
    ids=["torchlint.toml-first", "dot-torchlint.toml", "nearer-folder-wins", "nearest"],
)
def test_which_file_is_used(project: Path, files: dict[str, str], chosen: str) -> None:
    for name, text in files.items():
        write(project / name, text)
    result = run("check", "--show-settings", "proj/src/pkg", cwd=project)
    assert result.exit_code == 0, result.output
    assert f"# settings file: {project / chosen}" in result.output.splitlines()


def test_torchlint_toml_may_use_a_tool_table(project: Path) -> None:
    write(project / "proj" / "torchlint.toml", '[tool.torchlint]\nignore = ["missing-zero-grad"]\n')
    assert run("check", "proj", cwd=project).exit_code == 0


def test_config_option_overrides_discovery(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", '[tool.torchlint]\nignore = ["TL001"]\n')
    other = write(project / "strict.toml", 'select = ["TL001"]\n')
    result = run("check", "--config", str(other), "proj", cwd=project)
    assert result.exit_code == 1 and codes(result) == ["TL001"]
    shown = run("check", "--config", str(other), "--show-settings", "proj", cwd=project)
    assert f"# settings file: {other}" in shown.output


def test_config_option_with_a_missing_file_is_a_clear_error(project: Path) -> None:
    result = run("check", "--config", "nope.toml", "proj", cwd=project)
    assert result.exit_code == 2
    assert "nope.toml" in result.output and "Traceback" not in result.output


def test_isolated_ignores_every_configuration_file(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", '[tool.torchlint]\nignore = ["TL001"]\n')
    result = run("check", "--isolated", "proj", cwd=project)
    assert result.exit_code == 1 and codes(result) == ["TL001"]
    shown = run("check", "--isolated", "--show-settings", "proj", cwd=project)
    assert "# settings file: none (defaults)" in shown.output


def test_isolated_still_honours_flags(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", "[tool.torchlint]\n")
    assert run("check", "--isolated", "--ignore", "missing-zero-grad", "proj", cwd=project).exit_code == 0


def test_invalid_configuration_names_the_file_and_key(project: Path) -> None:
    config = write(project / "proj" / "pyproject.toml", '[tool.torchlint]\nselct = ["TL001"]\n')
    result = run("check", "proj", cwd=project)
    assert result.exit_code == 2
    assert str(config) in result.output and "tool.torchlint.selct" in result.output


def test_show_settings_prints_the_effective_settings(project: Path) -> None:
    write(
        project / "proj" / "pyproject.toml",
        "[tool.torchlint]\n"
        'select = ["TL0"]\n'
        'extend-exclude = ["generated"]\n'
        '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL002"]\n',
    )
    result = run("check", "--show-settings", "--ignore", "TL002", "proj", cwd=project)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert f"# settings file: {project / 'proj' / 'pyproject.toml'}" in lines
    assert f"# root of relative patterns: {project / 'proj'}" in lines
    assert 'select = ["TL0"]' in lines
    assert 'ignore = ["TL002"]' in lines
    assert 'extend-exclude = ["generated"]' in lines
    assert 'per-file-ignores = {"tests/*" = ["TL002"]}' in lines
    assert "force-exclude = false" in lines
    enabled = lines[lines.index(next(line for line in lines if line.startswith("# enabled rules"))) + 1 :]
    assert enabled and all(line.startswith("#   TL0") for line in enabled)
    assert not any("TL002" in line for line in enabled)
    assert "Found" not in result.output, "--show-settings checks nothing"


def test_per_file_ignores_are_relative_to_the_config_file(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", '[tool.torchlint.per-file-ignores]\n"src/pkg/*.py" = ["TL001"]\n')
    assert run("check", str(project / "proj" / "src"), cwd=project / "elsewhere").exit_code == 0


def test_force_exclude_applies_excludes_to_named_files(project: Path) -> None:
    write(project / "proj" / "pyproject.toml", '[tool.torchlint]\nextend-exclude = ["src/pkg"]\n')
    named = "proj/src/pkg/train.py"
    # A walked folder skips the excluded file; a named file is checked unless forced.
    assert run("check", "proj", cwd=project).exit_code == 0
    assert run("check", named, cwd=project).exit_code == 1
    forced = run("check", "--force-exclude", named, cwd=project)
    assert forced.exit_code == 0 and "0 files checked" in forced.output
    write(project / "proj" / "pyproject.toml", '[tool.torchlint]\nextend-exclude = ["train.py"]\nforce-exclude = true\n')
    assert run("check", named, cwd=project).exit_code == 0
