"""How the engine builds and lets go of a file's tree: the parser's nodes are not validated
one by one, the cyclic collector waits while a tree is alive, and the tree is freed by
reference counting as soon as the file is checked (no cycle keeps it for the collector)."""

from __future__ import annotations

import gc
import textwrap
from typing import Iterator

import libcst as cst
import pytest

from torchlint import engine
from torchlint.config import Config
from torchlint.api import enabled_rules

SOURCE = textwrap.dedent(
    """
    import torch

    def train(model, loader, optimizer):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
        start = time.time()
        model(x)
        print(time.time() - start)
    """
)


@pytest.fixture
def name_validations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[cst.Name]]:
    seen: list[cst.Name] = []
    validate = cst.Name._validate

    def counting(self: cst.Name) -> None:
        seen.append(self)
        validate(self)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    yield seen


def test_the_parser_s_nodes_are_not_validated_one_by_one(name_validations: list[cst.Name]) -> None:
    module = engine.parse(SOURCE)
    assert name_validations == []
    assert module.deep_equals(cst.parse_module(SOURCE)) and module.code == SOURCE
    assert name_validations, "LibCST's own parse validates each node"


def test_nodes_built_after_a_parse_are_validated() -> None:
    engine.parse(SOURCE)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_nodes_built_after_a_failed_parse_are_validated() -> None:
    with pytest.raises(engine.ParseFailure):
        engine.parse("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_collections_pause_inside_and_resume_after() -> None:
    assert gc.isenabled()
    with engine.collections_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), engine.collections_paused():
        raise KeyError
    assert gc.isenabled()


def test_a_caller_that_stopped_collections_keeps_them_stopped() -> None:
    gc.disable()
    try:
        with engine.collections_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_checked_file_leaves_no_tree_for_the_collector() -> None:
    rules = enabled_rules(Config())
    engine.check_source(SOURCE, "warm.py", rules)  # imports, compiled patterns
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        findings = engine.check_source(SOURCE, "train.py", rules)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert findings, "the rules ran on the tree"
    assert left == []
