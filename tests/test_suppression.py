from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.api import check_source
from torchlint.cli import main

LOOP = textwrap.dedent(
    """
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step(){comment}
    """
)


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("", False),
        ("  # torchlint: disable=TL001", True),
        ("  # torchlint: disable=TL002, TL001", True),
        ("  # torchlint: disable=missing-zero-grad", True),
        ("  # torchlint: disable=TL002", False),
        ("  # torchlint: disable", True),
        ("  # noqa: TL001", True),
        ("  # noqa:TL001,TL003", True),
        ("  # noqa", True),
        ("  # NOQA", True),
        ("  # noqa: E501", False),
    ],
)
def test_line_suppressions(comment: str, suppressed: bool) -> None:
    findings = check_source(LOOP.format(comment=comment))
    assert (findings == []) is suppressed


@pytest.mark.parametrize(
    "header, suppressed",
    [
        ("# torchlint: disable-file=TL001\n", True),
        ("# torchlint: disable-file=TL003,TL001\n", True),
        ("# torchlint: disable-file=TL003\n", False),
        ("# torchlint: disable-file\n", True),
    ],
)
def test_file_suppressions(header: str, suppressed: bool) -> None:
    findings = check_source(header + LOOP.format(comment=""))
    assert (findings == []) is suppressed


def test_suppression_on_another_line_does_not_apply() -> None:
    source = "# noqa\n" + LOOP.format(comment="")
    assert [f.code for f in check_source(source)] == ["TL001"]


EPOCH_LOOP = textwrap.dedent(
    """
    for epoch in range(3):{header}
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step(){body}
        model.eval()
        evaluate(model)
    """
)


@pytest.mark.parametrize("comment", ["  # noqa", "  # noqa: TL008", "  # torchlint: disable=TL008"])
def test_suppression_inside_a_multi_line_finding_does_not_apply(comment: str) -> None:
    # TL008 reports the epoch loop (lines 2-8); a comment on a line of its body is no
    # comment on the finding, as in flake8 and ruff.
    findings = check_source(EPOCH_LOOP.format(header="", body=comment))
    assert [(f.code, f.line, f.end_line) for f in findings] == [("TL008", 2, 8)]


@pytest.mark.parametrize("comment", ["  # noqa", "  # noqa: TL008", "  # torchlint: disable=TL008"])
def test_suppression_on_the_reported_line_of_a_multi_line_finding(comment: str) -> None:
    assert check_source(EPOCH_LOOP.format(header=comment, body="")) == []


def test_a_bare_noqa_in_the_body_of_the_epoch_loop_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bundled TL008 fixture, with a bare `# noqa` on `model.eval()` inside the loop.
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "tl008_eval_never_reset.py"
    text = fixture.read_text().replace("        model.eval()\n", "        model.eval()  # noqa\n")
    assert "model.eval()  # noqa" in text
    (tmp_path / "train.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "-q", "train.py"])
    assert result.exit_code == 1
    assert result.stdout.startswith("train.py:32:5: TL008 [eval-mode-never-reset] error:")
    moved = text.replace("  # noqa\n", "\n").replace("in range(epochs):  # expect: TL008", "in range(epochs):  # noqa")
    (tmp_path / "train.py").write_text(moved)
    assert CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "train.py"]).exit_code == 0
