"""ruff's configuration vocabulary: `extend-select`, `extend-ignore`, `extend` (another
configuration file, its patterns relative to itself) and the nearest configuration per
file in a tree of several projects."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_formats import BUGGY

from torchlint.cli import main
from torchlint.config import ConfigError, load_config

VIEW = "def flat(x):\n    return x.transpose(0, 1).view(-1)\n"
BOTH = BUGGY + "\n\n" + VIEW


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", "--format", "concise", "-q", *args])


def codes(result: Result) -> list[tuple[str, str]]:
    return [(line.split(":")[0], line.split(": ")[1].split()[0]) for line in result.stdout.splitlines()]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_extend_select_and_extend_ignore_add_to_select_and_ignore(tmp_path: Path) -> None:
    path = write(tmp_path / "torchlint.toml", 'select = ["TL001"]\nextend-select = ["TL003", "TL900"]\n')
    assert load_config(path).select == ("TL001", "TL003", "TL900")
    path = write(tmp_path / "torchlint.toml", 'ignore = ["TL001"]\nextend-ignore = ["view-after-transpose"]\n')
    assert load_config(path).ignore == ("TL001", "view-after-transpose")
    path = write(tmp_path / "torchlint.toml", 'extend-select = ["TL0999"]\n')
    with pytest.raises(ConfigError, match="extend-select: unknown rule code or name 'TL0999'"):
        load_config(path)


def test_extend_inherits_and_the_nearer_file_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.torchlint]\nselect = ["TL001"]\nignore = ["TL002"]\nextend-exclude = ["old"]\n'
        '[tool.torchlint.per-file-ignores]\n"pkg/gen/*.py" = ["TL001"]\n',
    )
    child = write(
        tmp_path / "pkg" / "pyproject.toml",
        '[tool.torchlint]\nextend = "../pyproject.toml"\nextend-select = ["TL003"]\nextend-exclude = ["tmp"]\n',
    )
    config = load_config(child)
    assert config.select == ("TL001", "TL003") and config.ignore == ("TL002",)
    assert config.extend_exclude == ("old", "tmp")
    # The parent's pattern named pkg/gen/ from its own folder; from pkg/ that is gen/.
    assert config.per_file_ignores == (("gen/*.py", ("TL001",)),)
    assert config.root == tmp_path / "pkg" and config.extends == (tmp_path / "pyproject.toml",)
    write(tmp_path / "pkg" / "gen" / "a.py", BOTH)
    write(tmp_path / "pkg" / "b.py", BOTH)
    monkeypatch.chdir(tmp_path / "pkg")
    result = check(".")
    assert sorted(codes(result)) == [("b.py", "TL001"), ("b.py", "TL003"), ("gen/a.py", "TL003")]
    assert "# extends: " in CliRunner().invoke(main, ["check", "--show-settings", "."]).stdout


def test_a_nearer_select_replaces_the_extended_one(tmp_path: Path) -> None:
    write(tmp_path / "base.toml", 'select = ["TL001"]\nextend-select = ["TL002"]\n')
    child = write(tmp_path / "torchlint.toml", 'extend = "base.toml"\nselect = ["TL003"]\n')
    assert load_config(child).select == ("TL003",)


@pytest.mark.parametrize(
    "files, message",
    [
        ({"torchlint.toml": 'extend = "missing.toml"\n'}, "no such configuration file"),
        ({"torchlint.toml": 'extend = "b.toml"\n', "b.toml": 'extend = "torchlint.toml"\n'}, "extends itself"),
        ({"torchlint.toml": "extend = 3\n"}, "must be the path of another configuration file"),
        # Another tool's settings only: the unknown key is `tool` itself.
        ({"torchlint.toml": 'extend = "other.toml"\n', "other.toml": "[tool.other]\nx = 1\n"}, "unknown key 'tool';"),
    ],
)
def test_bad_extend_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict, message: str) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    write(tmp_path / "a.py", BUGGY)
    monkeypatch.chdir(tmp_path)
    result = check(".")
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


@pytest.fixture
def monorepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The top project ignores TL003; project `vision/` checks only TL003 and excludes gen/."""
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nignore = ["TL003"]\n')
    write(tmp_path / "vision" / "pyproject.toml", '[tool.torchlint]\nselect = ["TL003"]\nextend-exclude = ["gen"]\n')
    write(tmp_path / "top.py", BOTH)
    write(tmp_path / "vision" / "model.py", BOTH)
    write(tmp_path / "vision" / "gen" / "out.py", BOTH)
    write(tmp_path / "plain" / "x.py", BOTH)  # no project of its own: the top one
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_file_gets_its_nearest_configuration(monorepo: Path) -> None:
    result = check(".")
    assert codes(result) == [("plain/x.py", "TL001"), ("top.py", "TL001"), ("vision/model.py", "TL003")]
    # Named on the command line, a file of an excluded folder is still checked, with its project's settings.
    assert codes(check("vision/gen/out.py")) == [("vision/gen/out.py", "TL003")]
    # --isolated and --config mean one configuration for every file.
    assert len(codes(check("--isolated", "."))) == 8
    assert ("vision/model.py", "TL001") in codes(check("--config", "pyproject.toml", "."))
    # Flags apply on top of every project's settings.
    assert codes(check("--ignore", "TL003", "vision")) == []


def test_fix_uses_each_files_configuration(monorepo: Path) -> None:
    check("--fix", ".")
    assert ".contiguous()" in (monorepo / "vision" / "model.py").read_text()
    assert ".contiguous()" not in (monorepo / "top.py").read_text()


def test_extend_select_and_extend_ignore_flags_add_to_each_projects_settings(monorepo: Path) -> None:
    # vision/ selects only TL003; --extend-select adds TL001 there, and the top keeps its own.
    result = check("--extend-select", "TL001", "vision/model.py", "top.py")
    assert codes(result) == [("top.py", "TL001"), ("vision/model.py", "TL001"), ("vision/model.py", "TL003")]
    assert codes(check("--extend-ignore", "TL001", "top.py", "plain")) == []
    write(monorepo / "unused.py", "x = 1  # noqa: TL003\n")
    assert codes(check("--isolated", "unused.py")) == []
    assert codes(check("--isolated", "--extend-select", "TL900", "unused.py")) == [("unused.py", "TL900")]
    bad = check("--extend-select", "TL0999", ".")
    assert bad.exit_code == 2 and "extend-select: unknown rule code or name 'TL0999'" in bad.stderr
    assert "toml" not in bad.stderr  # the flag is wrong, not a configuration file
