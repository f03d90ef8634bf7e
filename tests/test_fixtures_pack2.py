"""The device rules' fixtures (TL011, TL014, TL016, TL017): every rule's findings match the
`# expect:` markers, and the TL014 fixture shows its bug (and its twin the cure) at runtime."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conftest import FIXTURES, expected_findings

from torchlint import engine
from torchlint.registry import all_rules

CODES = ("tl011", "tl014", "tl016", "tl017")
SCRIPTS = sorted(p for p in FIXTURES.glob("tl0*.py") if p.name.startswith(CODES))


def test_each_device_rule_with_a_runtime_bug_has_a_fixture_and_a_fixed_twin() -> None:
    names = {p.stem for p in SCRIPTS}
    for stem in names:
        twin = stem[: -len("_fixed")] if stem.endswith("_fixed") else stem + "_fixed"
        assert twin in names, f"{stem} has no twin"
    assert any(n.startswith("tl011") for n in names) and any(n.startswith("tl014") for n in names)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    findings = engine.check_source(source, path.name, [rule() for rule in all_rules()])
    got = {(f.line, f.code) for f in findings}
    assert got == expected_findings(source), [f"{f.line}: {f.code} {f.message}" for f in findings]
    if path.stem.endswith("_fixed"):
        assert got == set()
    else:
        assert got, "a buggy fixture marks at least one finding"


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
