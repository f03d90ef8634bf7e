"""The fixtures' bugs really show at run time on a CPU, and their corrected twins cure them.
(Findings against `# expect:` markers are checked for every fixture in test_fixtures.py.)"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import FIXTURES


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


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sampler_fixture_repeats_its_order_and_the_fix_does_not() -> None:
    pytest.importorskip("torch")
    buggy = _load(FIXTURES / "tl014_sampler_same_order.py").train(epochs=3)
    fixed = _load(FIXTURES / "tl014_sampler_same_order_fixed.py").train(epochs=3)
    assert all(order == buggy[0] for order in buggy)
    assert any(order != fixed[0] for order in fixed[1:])
    assert len(buggy[0]) == len(fixed[1]) == 128  # half the data: this rank's shard
