"""TL900 unused-suppression: suppression comments that suppress nothing or name no rule,
opt-in through `select`, with a fix that removes them; and `check --add-noqa`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_formats import BUGGY
from test_notebook import SETUP, TRAIN, cell, write_notebook

from torchlint.api import check_source
from torchlint.cli import main
from torchlint.config import Config

TL900 = Config(select=("ALL", "TL900"))


def unused(source: str, config: Config = TL900) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in check_source(source, "t.py", config) if f.code == "TL900"]


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "-j", "1", *args])


def test_an_unused_noqa_code_is_reported() -> None:
    source = BUGGY.replace("loss.backward()", "loss.backward()  # noqa: TL003")
    ((line, message),) = unused(source)
    assert line == 4
    assert message == "unused suppression `# noqa: TL003`: TL003 suppresses no finding on this line; remove the comment"


def test_used_suppressions_and_other_tools_codes_are_not_reported() -> None:
    source = BUGGY.replace("opt.step()", "opt.step()  # noqa: TL001, E501").replace(
        "import torch", "import torch  # noqa: F401"
    )
    assert unused(source) == []
    # A bare `# noqa` may serve flake8 or ruff: not torchlint's to judge.
    assert unused("x = 1  # noqa\n") == []
    # Text in a string that looks like a comment is no comment.
    assert unused('s = "# noqa: TL003"\n') == []


def test_it_is_opt_in_through_select() -> None:
    source = "x = 1  # noqa: TL003\n"
    assert unused(source, Config()) == []
    assert unused(source, Config(select=("ALL",))) == []
    assert len(unused(source, Config(select=("TL9",)))) == 1
    assert len(unused(source, Config(select=("unused-suppression",)))) == 1
    assert unused(source, Config(select=("ALL", "TL900"), ignore=("TL900",))) == []


def test_unknown_codes_and_torchlint_comments() -> None:
    ((_, message),) = unused("x = 1  # noqa: TL0999\n")
    assert "TL0999 is no torchlint rule" in message
    ((_, message),) = unused("x = 1  # torchlint: disable\n")
    assert "it suppresses no finding on this line" in message
    ((_, message),) = unused("# torchlint: disable-file=TL001\nx = 1\n")
    assert "TL001 suppresses no finding in this file" in message
    # In torchlint's own comment every name is torchlint's.
    ((_, message),) = unused("x = 1  # torchlint: disable=missing-zero-grads\n")
    assert "missing-zero-grads is no torchlint rule" in message


@pytest.mark.parametrize(
    "before, after",
    [
        ("x = 1  # noqa: TL003\n", "x = 1\n"),
        ("x = 1  # noqa: TL003, E501\n", "x = 1  # noqa: E501\n"),
        ("x = 1  # noqa: E501,TL003\n", "x = 1  # noqa: E501\n"),
        ("x = 1  # noqa: TL003  # type: ignore\n", "x = 1  # type: ignore\n"),
        ("# torchlint: disable=TL003\nx = 1\n", "x = 1\n"),
        (
            BUGGY.replace("opt.step()", "opt.step()  # noqa: TL003, TL001, TL004"),
            BUGGY.replace("opt.step()", "opt.step()  # noqa: TL001"),
        ),
    ],
)
def test_the_fix_removes_what_is_unused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str, after: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path("t.py").write_text(before)
    check("--select", "ALL,TL900", "--fix", "t.py")
    assert Path("t.py").read_text() == after
    # The fixed file has nothing unused left.
    assert "TL900" not in check("--select", "ALL,TL900", "t.py").stdout


def test_add_noqa_then_a_rerun_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    view = "def flat(x):\n    return x.transpose(0, 1).view(-1)  # why\n"
    Path("a.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa: E501") + "\n\n" + view)
    Path("b.py").write_bytes(BUGGY.replace("\n", "\r\n").encode())
    assert check(".").exit_code == 1
    result = check("--add-noqa", ".")
    assert result.exit_code == 0 and "Added 3 noqa directives to 2 files." in result.stderr
    text = Path("a.py").read_text()
    assert "    opt.step()  # noqa: E501, TL001\n" in text
    assert "view(-1)  # why  # noqa: TL003\n" in text
    assert Path("b.py").read_bytes() == BUGGY.replace("opt.step()", "opt.step()  # noqa: TL001").replace("\n", "\r\n").encode()
    rerun = check(".")
    assert rerun.exit_code == 0, rerun.stdout
    # And none of the added comments is unused.
    assert check("--select", "ALL,TL900", ".").exit_code == 0
    # A second --add-noqa has nothing to add.
    assert "Added 0 noqa directives" in check("--add-noqa", ".").stderr


def test_add_noqa_in_a_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(TRAIN))
    assert check("--add-noqa", ".").exit_code == 0
    assert '"    opt.step()  # noqa: TL001"' in path.read_text(encoding="utf-8")
    assert check(".").exit_code == 0


def test_add_noqa_leaves_a_line_that_ends_inside_a_string_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = 'def doc(x):\n    y = f"""{x.transpose(0, 1).view(-1)}\n    """\n    return y\n'
    Path("t.py").write_text(source)
    result = check("--add-noqa", "t.py")
    assert result.exit_code == 1 and "t.py:2: no comment can go on this line" in result.stderr
    assert Path("t.py").read_text() == source


@pytest.mark.parametrize("args", [["--fix"], ["--diff"], ["-"]])
def test_add_noqa_refuses_what_it_cannot_combine_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("t.py").write_text(BUGGY)
    result = check("--add-noqa", *args)
    assert Path("t.py").read_text() == BUGGY
    assert result.exit_code == 2 and "--add-noqa edits files" in result.stderr
