"""Severities: shown in every format, counted by --statistics, and `--fail-on` (or
`fail-on` in the configuration) picks the lowest one that fails the run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import main

INFO_ONLY = textwrap.dedent(
    """
    import torch
    from torch.utils.data import DataLoader

    model = torch.nn.Linear(4, 2).cuda()
    loader = DataLoader(dataset, batch_size=64)
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
    """
).lstrip()
WARNING_ONLY = textwrap.dedent(
    """
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    """
).lstrip()
ERROR = textwrap.dedent(
    """
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step()
    """
).lstrip()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str):
    return CliRunner().invoke(main, ["check", "--no-cache", *args], catch_exceptions=False)


def write(folder: Path, **files: str) -> None:
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)


def test_an_info_finding_is_shown_but_does_not_fail_the_run(folder: Path) -> None:
    write(folder, loader=INFO_ONLY)
    result = check("--isolated", "loader.py")
    assert result.exit_code == 0
    assert "loader.py:5:10: TL017 [dataloader-starves-gpu] info: " in result.stdout
    assert "Found 1 finding (1 info) in 1 of 1 file checked; none is at or above --fail-on warning" in result.stdout


def test_fail_on_info_fails_on_an_info_finding(folder: Path) -> None:
    write(folder, loader=INFO_ONLY)
    assert check("--isolated", "--fail-on", "info", "loader.py").exit_code == 1


def test_fail_on_in_the_configuration(folder: Path) -> None:
    write(folder, loader=INFO_ONLY)
    (folder / "pyproject.toml").write_text('[tool.torchlint]\nfail-on = "info"\n')
    assert check("loader.py").exit_code == 1
    assert check("--fail-on", "warning", "loader.py").exit_code == 0, "the flag overrides the file"


@pytest.mark.parametrize(
    "fail_on, exit_code", [(None, 1), ("warning", 1), ("error", 0), ("info", 1)]
)
def test_fail_on_with_a_warning(folder: Path, fail_on: str | None, exit_code: int) -> None:
    write(folder, accumulate=WARNING_ONLY)
    flags = ["--fail-on", fail_on] if fail_on else []
    result = check("--isolated", *flags, "accumulate.py")
    assert result.exit_code == exit_code
    assert "TL006 [loss-accumulated-with-graph] warning: " in result.stdout


def test_fail_on_error_still_fails_on_an_error(folder: Path) -> None:
    write(folder, train=ERROR)
    assert check("--isolated", "--fail-on", "error", "train.py").exit_code == 1


def test_a_bad_fail_on_is_a_usage_error(folder: Path) -> None:
    write(folder, train=ERROR)
    assert check("--isolated", "--fail-on", "fatal", "train.py").exit_code == 2
    (folder / "pyproject.toml").write_text('[tool.torchlint]\nfail-on = "warn"\n')
    result = check("train.py")
    assert result.exit_code == 2
    assert "tool.torchlint.fail-on must be one of" in result.stderr


def test_statistics_count_by_rule_and_severity(folder: Path) -> None:
    write(folder, loader=INFO_ONLY, accumulate=WARNING_ONLY, train=ERROR)
    lines = [line.split() for line in check("--isolated", "--statistics", ".").stdout.splitlines()]
    assert ["1", "TL017", "dataloader-starves-gpu", "info"] in lines
    assert ["1", "TL006", "loss-accumulated-with-graph", "warning"] in lines
    assert ["1", "error"] in lines and ["1", "warning"] in lines and ["1", "info"] in lines
    assert ["Found", "3", "findings", "(1", "error,", "1", "warning,", "1", "info)", "in", "3", "of", "3", "files", "checked."] in lines


def test_every_format_carries_the_severity(folder: Path) -> None:
    write(folder, loader=INFO_ONLY, accumulate=WARNING_ONLY, train=ERROR)
    by_file = {f["filename"]: f["severity"] for f in json.loads(check("--isolated", "--format", "json", ".").stdout)}
    assert by_file == {"accumulate.py": "warning", "loader.py": "info", "train.py": "error"}
    sarif = json.loads(check("--isolated", "--format", "sarif", ".").stdout)
    levels = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["level"] for r in sarif["runs"][0]["results"]
    }
    assert levels == {"accumulate.py": "warning", "loader.py": "note", "train.py": "error"}
    github = check("--isolated", "--format", "github", ".").stdout.splitlines()
    assert sorted(line.split(" ", 1)[0] for line in github) == ["::error", "::notice", "::warning"]
    junit = check("--isolated", "--format", "junit", ".").stdout
    assert 'failures="2"' in junit and "TL017 [dataloader-starves-gpu] info:" in junit


def test_a_file_over_max_file_size_is_an_info_notice_that_says_how_to_raise_it(folder: Path) -> None:
    write(folder, train=ERROR + "# padding\n" * 200)
    size = (folder / "train.py").stat().st_size
    (folder / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 1000\n")
    result = check("train.py")
    assert result.exit_code == 0, "a file left unchecked is no failure by itself"
    assert "train.py:1:1: TL998 [file-too-large] info: not checked: the file is 0.0 MB, over" in result.stdout
    assert f"raise the limit in [tool.torchlint]: max-file-size = {size}" in result.stdout
    assert check("--fail-on", "info", "train.py").exit_code == 1
    (folder / "pyproject.toml").write_text(f"[tool.torchlint]\nmax-file-size = {size}\n")
    assert "TL001" in check("train.py").stdout



def test_a_file_denser_than_max_file_tokens_is_an_info_notice_too(folder: Path) -> None:
    # Memory follows tokens, not bytes: a generated table under max-file-size can still be
    # more than the parser should be given.
    table = "table = [" + ", ".join(["1"] * 3000) + "]\n"
    write(folder, train=ERROR + table)
    (folder / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-tokens = 2000\n")
    result = check("train.py")
    assert result.exit_code == 0
    assert "train.py:1:1: TL998 [file-too-large] info: not checked: the file has about" in result.stdout
    tokens = int(result.stdout.split("max-file-tokens = ")[1].split()[0])
    assert tokens > 6000
    (folder / "pyproject.toml").write_text(f"[tool.torchlint]\nmax-file-tokens = {tokens}\n")
    assert "TL001" in check("train.py").stdout


def test_the_probe_skips_a_script_left_unchecked_for_its_size(folder: Path) -> None:
    from torchlint.config import Config
    from torchlint.runtime_probe.api import ProbeOptions, plan

    write(folder, train=ERROR + "# padding\n" * 200)
    chosen = plan(["train.py"], Config(max_file_size=1000), ProbeOptions(), folder)
    assert chosen.scripts == ()
    assert [(s.path, s.reason) for s in chosen.skipped] == [("train.py", "over max-file-size, not checked")]
