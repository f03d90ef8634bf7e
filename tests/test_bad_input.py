"""Bad input yields a clear TL000 finding, never a traceback, and never stops other files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.api import check_paths, check_source
from torchlint.cli import main

BUGGY = "for x in loader:\n    model(x).backward()\n    optimizer.step()\n"


def test_syntax_error_has_location_and_reason() -> None:
    [finding] = check_source("def f(:\n    optimizer.step()\n    loss.backward()\n")
    assert finding.code == "TL000" and finding.name == "parse-error"
    assert finding.line == 1
    assert "SyntaxError" in finding.message


def test_files_that_match_no_trigger_are_not_parsed() -> None:
    # Not Python, but no rule could match: nothing to report, nothing parsed.
    assert check_source("this is not python (") == []


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("latin1.py", b"# step backward\nx = '\xff\xfe'\n", "not valid utf-8 text: byte 0xff at line 2, column 6"),
        ("nul.py", b"loss.backward()\noptimizer.step()\x00\n", "NUL byte"),
        ("cookie.py", b"# -*- coding: klingon -*-\nloss.backward()\n", "encoding"),
    ],
)
def test_undecodable_files(tmp_path: Path, name: str, data: bytes, reason: str) -> None:
    (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text(BUGGY)
    result = check_paths([tmp_path], cwd=tmp_path)
    codes = {(f.filename, f.code) for f in result.findings}
    assert (name, "TL000") in codes
    assert ("good.py", "TL001") in codes
    message = next(f.message for f in result.findings if f.filename == name)
    assert reason.lower() in message.lower()


def test_latin1_with_a_coding_cookie_is_fine(tmp_path: Path) -> None:
    (tmp_path / "l.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n" + BUGGY.encode())
    assert [f.code for f in check_paths([tmp_path], cwd=tmp_path).findings] == ["TL001"]


def test_empty_and_whitespace_files(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "blank.py").write_text("\n\n   \n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BUGGY.encode())
    (tmp_path / "crlf.py").write_bytes(BUGGY.replace("\n", "\r\n").encode())
    result = check_paths([tmp_path], cwd=tmp_path)
    assert result.files_checked == 4
    assert sorted((f.filename, f.line) for f in result.findings) == [("bom.py", 3), ("crlf.py", 3)]


def test_deeply_nested_code_is_a_parse_error_not_a_crash() -> None:
    source = "loss.backward()\noptimizer.step()\nx = " + "-" * 50_000 + "1\n"
    [finding] = check_source(source)
    assert finding.code == "TL000"
    assert "nested too deeply" in finding.message


def test_cli_reports_syntax_error_and_continues(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad.py").write_text("optimizer.step(\nloss.backward()\n")
    (tmp_path / "good.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--format", "json", "."])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert sorted(f["code"] for f in json.loads(result.output)) == ["TL000", "TL001"]


def test_parse_errors_can_be_ignored(tmp_path: Path) -> None:
    from torchlint.config import Config

    (tmp_path / "bad.py").write_text("optimizer.step(\nloss.backward()\n")
    assert check_paths([tmp_path], Config(ignore=("TL000",)), cwd=tmp_path).findings == []
