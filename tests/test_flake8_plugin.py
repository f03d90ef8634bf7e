"""The flake8 plugin, driven through real flake8 in a subprocess: `--select TL`, flake8's
own `# noqa` handling, and the same findings as `torchlint check` (one engine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_formats import BUGGY

VIEW = "def flat(x):\n    return x.transpose(0, 1).view(-1)\n"


def flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_flake8_select_tl_reports_torchlint_findings(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BUGGY)
    done = flake8(tmp_path, "--select", "TL", "train.py")
    assert done.returncode == 1, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("train.py:5:5: TL001 [missing-zero-grad] `opt.step()`")


def test_the_plugin_is_registered() -> None:
    done = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60)
    assert "torchlint" in done.stdout


def test_flake8_applies_noqa_itself(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa: TL001"))
    assert flake8(tmp_path, "--select", "TL", "t.py").stdout == ""
    # With flake8's noqa handling off, the finding is back: the plugin leaves `# noqa` to flake8.
    assert "TL001" in flake8(tmp_path, "--select", "TL", "--disable-noqa", "t.py").stdout
    (tmp_path / "t.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa: E501"))
    assert "TL001" in flake8(tmp_path, "--select", "TL", "t.py").stdout


def test_flake8_selection_and_torchlint_comments(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(BUGGY)
    assert flake8(tmp_path, "--select", "TL", "--extend-ignore", "TL001", "t.py").stdout == ""
    assert flake8(tmp_path, "--select", "TL003", "t.py").stdout == ""
    (tmp_path / "t.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # torchlint: disable=TL001"))
    assert flake8(tmp_path, "--select", "TL", "t.py").stdout == ""


def test_the_same_findings_as_torchlint_check(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(BUGGY + "\n\n" + VIEW)
    via_flake8 = flake8(tmp_path, "--select", "TL", "a.py").stdout.splitlines()
    done = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--format", "concise", "-q", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    ours = done.stdout.splitlines()
    assert len(ours) == 2
    assert [line.replace(" [missing-zero-grad]", "").replace(" [view-after-transpose]", "") for line in via_flake8] == ours


def test_importing_the_plugin_imports_neither_libcst_nor_the_rules() -> None:
    code = "import sys, torchlint.flake8_plugin; print([m for m in ('libcst', 'torchlint.engine', 'torchlint.rules') if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_when_flake8_selects_no_tl_code_the_plugin_does_no_work(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(BUGGY)
    selected = flake8(tmp_path, "-j", "1", "--select", "TL", "t.py")
    assert "TL001" in selected.stdout
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "flake8", "--isolated", "-j", "1", "--select", "E,F,W", "t.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "TL001" not in done.stdout
    assert "libcst" not in done.stderr and "torchlint.engine" not in done.stderr
    # By default flake8 selects every installed plugin's codes, TL included.
    assert "TL001" in flake8(tmp_path, "t.py").stdout
