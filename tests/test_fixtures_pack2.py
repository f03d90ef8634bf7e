"""The TL014 fixture shows its bug at runtime on a CPU, and its corrected twin the cure.
(Findings against `# expect:` markers are checked for every fixture in test_fixtures.py.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conftest import FIXTURES


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
