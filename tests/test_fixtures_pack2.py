"""Fixtures: the checker finds exactly the marked lines, and the marked bugs show at run time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, expected_findings

from torchlint import engine
from torchlint.registry import all_rules

SCRIPTS = sorted(FIXTURES.glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    findings = engine.check_source(source, path.name, [rule() for rule in all_rules()])
    got = {(f.line, f.code) for f in findings}
    assert got == expected_findings(source), [f"{f.line}: {f.code} {f.message}" for f in findings]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_fixture_has_a_twin(path: Path) -> None:
    """Every buggy fixture has a corrected `_fixed` twin, and the twin carries no markers."""
    if path.stem.endswith("_fixed"):
        assert not expected_findings(path.read_text(encoding="utf-8"))
    elif any(FIXTURES.glob(f"{path.stem}_fixed.py")):
        assert expected_findings(path.read_text(encoding="utf-8"))


RUNTIME_PAIRS = (
    "tl008_eval_never_reset",
    "tl009_missing_eval_mode",
    "tl010_fp16_without_scaler",
    "tl010_scaler_never_updated",
)


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every runtime fixture and its twin, run once and concurrently (each one imports torch)."""
    pytest.importorskip("torch")
    names = [f"{stem}{suffix}.py" for stem in RUNTIME_PAIRS for suffix in ("", "_fixed")]
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(FIXTURES / name)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name in names
    }
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        results[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return results


@pytest.mark.slow
def test_eval_mode_never_reset_shows_at_runtime(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    buggy, fixed = runs["tl008_eval_never_reset.py"], runs["tl008_eval_never_reset_fixed.py"]
    assert buggy.returncode == fixed.returncode == 0, buggy.stderr + fixed.stderr
    assert "epoch 1: training with model.training=False" in buggy.stdout
    assert "model.training=False" not in fixed.stdout


@pytest.mark.slow
def test_missing_eval_mode_shows_at_runtime(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    def evaluations(out: str) -> list[tuple[str, str]]:
        lines = [line for line in out.splitlines() if "val loss" in line]
        return [(line.split("val loss ")[1].split(" ")[0], line.rsplit(": ", 1)[1].rstrip(")")) for line in lines]

    buggy, fixed = runs["tl009_missing_eval_mode.py"], runs["tl009_missing_eval_mode_fixed.py"]
    assert buggy.returncode == fixed.returncode == 0, buggy.stderr + fixed.stderr
    assert any(first != again for first, again in evaluations(buggy.stdout))
    assert all(first == again for first, again in evaluations(fixed.stdout))


@pytest.mark.slow
def test_fp16_without_scaler_shows_at_runtime(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    buggy, fixed = runs["tl010_fp16_without_scaler.py"], runs["tl010_fp16_without_scaler_fixed.py"]
    assert buggy.returncode == fixed.returncode == 0, buggy.stderr + fixed.stderr
    assert "exactly zero: 0.0%" not in buggy.stdout
    assert fixed.stdout.count("exactly zero: 0.0%") == 5


@pytest.mark.slow
def test_scaler_never_updated_shows_at_runtime(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    buggy, fixed = runs["tl010_scaler_never_updated.py"], runs["tl010_scaler_never_updated_fixed.py"]
    assert buggy.returncode != 0 and "since the last update()" in buggy.stderr
    assert fixed.returncode == 0, fixed.stderr
