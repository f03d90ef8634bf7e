"""`torchlint explain` knows every code the output can show, and `check` / `explain`
never import torch to say so."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from torchlint.cli import main
from torchlint.registry import all_rules, known_codes
from torchlint.runtime_probe.protocol import RUNTIME_DOCS, RUNTIME_NAMES


def explain(code: str):
    return CliRunner().invoke(main, ["explain", code])


@pytest.mark.parametrize("code", sorted({*known_codes(), *RUNTIME_NAMES}))
def test_every_code_is_explained(code: str) -> None:
    result = explain(code)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"# {code} ")
    assert len(result.output.splitlines()) > 8


def test_every_code_the_output_can_show_is_known() -> None:
    # Rules, the file problems of `check`, unused suppressions and the probe's runtime codes.
    from torchlint.finding import FILE_PROBLEMS, UNUSED_SUPPRESSION_CODE

    assert set(known_codes()) == {rule.CODE for rule in all_rules()} | set(FILE_PROBLEMS) | {UNUSED_SUPPRESSION_CODE}
    assert set(RUNTIME_DOCS) == set(RUNTIME_NAMES)


def test_explain_a_runtime_code_says_what_it_means_and_what_evidence_it_carries() -> None:
    result = explain("TL102")
    assert result.exit_code == 0
    assert result.output.startswith("# TL102 gradients-carried-over\n")
    assert "runtime finding of `torchlint probe`" in result.output
    for key in ("## What it means", "## Evidence", "`steps_carried_over`", "`grad_norm`", "Confirms TL001"):
        assert key in result.output
    assert explain("memory-growth").output.startswith("# TL103 memory-growth\n")


def test_explain_tl000_says_what_is_and_is_not_reported() -> None:
    text = explain("TL000").output
    assert "Severity: error." in text
    assert "## What is not reported" in text
    assert "A file that contains no enabled rule's trigger words is never parsed" in text
    assert "a code cell that does not parse on its own" in text


def test_explain_tl998_says_how_to_raise_the_limit_and_that_it_does_not_fail() -> None:
    text = explain("file-too-large").output
    assert text.startswith("# TL998 file-too-large\n") and "Severity: info." in text
    assert "max-file-size = " in text and "--fail-on info" in text


def test_an_unknown_code_is_exit_2() -> None:
    result = explain("TL555")
    assert result.exit_code == 2 and "unknown rule or code 'TL555'" in result.stderr


def test_explain_and_check_do_not_import_torch(tmp_path) -> None:
    (tmp_path / "train.py").write_text("for x in loader:\n    loss(x).backward()\n    opt.step()\n")
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from torchlint.cli import main\n"
        "for args in (['explain', 'TL102'], ['explain', 'TL000'], ['check', '--isolated', '--no-cache', sys.argv[1]]):\n"
        "    CliRunner().invoke(main, args)\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
