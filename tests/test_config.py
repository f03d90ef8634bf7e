"""`[tool.torchlint]` in pyproject.toml: every key, strict validation, CLI overrides."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import main
from torchlint.config import Config, ConfigError, discover_config, load_config

BUGGY = textwrap.dedent(
    """
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step()
    """
).lstrip()


def write_project(root: Path, config: str) -> None:
    (root / "pyproject.toml").write_text(textwrap.dedent(config))
    (root / "pkg").mkdir()
    (root / "pkg" / "train.py").write_text(BUGGY)
    (root / "scripts").mkdir()
    (root / "scripts" / "train.py").write_text(BUGGY)


def run(root: Path, *args: str):
    import os

    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, ["check", "--format", "json", *args])
    finally:
        os.chdir(old)


def codes_by_file(result) -> dict[str, list[str]]:
    import json

    out: dict[str, list[str]] = {}
    for f in json.loads(result.output):
        out.setdefault(f["filename"], []).append(f["code"])
    return out


def test_defaults_without_a_config(tmp_path: Path) -> None:
    assert discover_config(tmp_path) == Config()


def test_select_and_ignore_keys(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nselect = ["TL002"]\n')
    assert run(tmp_path).exit_code == 0
    write_project_again = tmp_path / "pyproject.toml"
    write_project_again.write_text('[tool.torchlint]\nignore = ["missing-zero-grad"]\n')
    assert run(tmp_path).exit_code == 0


def test_cli_flags_override_the_file(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nselect = ["TL002"]\n')
    assert run(tmp_path, "--select", "TL001").exit_code == 1


def test_exclude_and_extend_exclude(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nextend-exclude = ["scripts"]\n')
    assert set(codes_by_file(run(tmp_path))) == {"pkg/train.py"}
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nexclude = ["pkg"]\n')
    assert set(codes_by_file(run(tmp_path))) == {"scripts/train.py"}


def test_explicit_file_is_checked_even_if_excluded(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nextend-exclude = ["scripts"]\n')
    assert set(codes_by_file(run(tmp_path, "scripts/train.py"))) == {"scripts/train.py"}


def test_per_file_ignores(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nper-file-ignores = { "scripts/*.py" = ["TL001"] }\n')
    assert set(codes_by_file(run(tmp_path))) == {"pkg/train.py"}


def test_config_found_from_a_subfolder(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nselect = ["TL002"]\n')
    assert run(tmp_path / "pkg", ".").exit_code == 0


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    write_project(tmp_path, '[tool.torchlint]\nselect = ["TL002"]\n')
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert run(tmp_path / "pkg", ".").exit_code == 0


@pytest.mark.parametrize(
    "body, words",
    [
        ('slect = ["TL001"]', ["tool.torchlint.slect", "pyproject.toml"]),
        ('select = ["TL777"]', ["TL777", "tool.torchlint.select"]),
        ('ignore = "TL001,,TLX"', ["TLX"]),
        ("select = 3", ["must be a list of strings", "the integer 3"]),
        ('ignore = "TL001"', ["tool.torchlint.ignore must be a list of strings", 'ignore = ["TL001"]']),
        ('exclude = "build"', ["tool.torchlint.exclude must be a list of strings", 'exclude = ["build"]']),
        ('select = ["TL001", 1]', ["tool.torchlint.select", "a list holding the integer 1"]),
        ('per-file-ignores = { "a.py" = "TL001" }', ['tool.torchlint.per-file-ignores."a.py"', "list of strings"]),
        ('per-file-ignores = { "src/t.py" = "TL001" }', ['write "src/t.py" = ["TL001"]']),
        ('per-file-ignores = ["a.py"]', ["tool.torchlint.per-file-ignores must be a table", "not a list"]),
        ('max-file-size = "8MB"', ["tool.torchlint.max-file-size", "the string '8MB'"]),
        ('respect-gitignore = "yes"', ["tool.torchlint.respect-gitignore", "true or false"]),
        ('probe = { max-steps = "5" }', ["tool.torchlint.probe.max-steps", "positive integer"]),
        ('extend-exclud = ["x"]', ["unknown key 'tool.torchlint.extend-exclud'", "did you mean 'tool.torchlint.extend-exclude'"]),
        ('per-file-ignore = {}', ["did you mean 'tool.torchlint.per-file-ignores'"]),
        ("probe = { max_steps = 3 }", ["unknown key 'tool.torchlint.probe.max_steps'", "did you mean 'tool.torchlint.probe.max-steps'"]),
        ('per-file-ignores = { "a.py" = ["NOPE"] }', ["NOPE"]),
        ("respect-gitignore = 1", ["true or false"]),
        ("max-file-size = -1", ["positive integer"]),
        ('max-file-tokens = "many"', ["tool.torchlint.max-file-tokens", "positive integer"]),
        ('probe = { device = "tpu" }', ["device"]),
        ("probe = { timeouts = 3 }", ["timeouts"]),
        ("select = [", ["invalid TOML"]),
    ],
)
def test_bad_config_is_exit_2_naming_file_and_key(tmp_path: Path, body: str, words: list[str]) -> None:
    write_project(tmp_path, f"[tool.torchlint]\n{body}\n")
    result = run(tmp_path)
    assert result.exit_code == 2
    for word in words:
        assert word in result.output
    assert "Traceback" not in result.output


def test_probe_settings_are_loaded(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        textwrap.dedent(
            """
            [tool.torchlint.probe]
            max-steps = 5
            timeout = 60
            device = "cpu"
            [tool.torchlint.probe.scripts."scripts/train.py"]
            args = ["--epochs", "1"]
            env = { SEED = "0" }
            max-steps = 2
            """
        )
    )
    probe = load_config(path).probe
    assert (probe.max_steps, probe.timeout, probe.device) == (5, 60.0, "cpu")
    script = probe.for_script("scripts/train.py")
    assert script is not None
    assert script.args == ("--epochs", "1") and script.env == (("SEED", "0"),) and script.max_steps == 2
    assert probe.for_script("other.py") is None


def test_torchlint_toml_without_tool_table(tmp_path: Path) -> None:
    (tmp_path / "torchlint.toml").write_text('select = ["TL002"]\n')
    assert discover_config(tmp_path).select == ("TL002",)
    (tmp_path / "torchlint.toml").write_text('bogus = 1\n')
    with pytest.raises(ConfigError, match="bogus"):
        discover_config(tmp_path)
