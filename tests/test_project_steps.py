"""A training step in another module that back-propagates the loss and returns it (TL006):
the caller's running total of that loss keeps every iteration's graph."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "stepengine"


def test_summaries_say_which_functions_return_their_back_propagated_loss() -> None:
    source = """
    def step(model, x):
        loss = model(x).sum()
        loss.backward()
        return loss
    def step_value(model, x):
        loss = model(x).sum()
        loss.backward()
        return loss.item()
    def forward_only(model, x):
        loss = model(x).sum()
        return loss
    """
    defs = summarize(ast.parse(textwrap.dedent(source)))["defs"]
    assert defs["step"]["returns_backpropagated"]
    assert not defs["step_value"]["returns_backpropagated"]
    assert not defs["forward_only"]["returns_backpropagated"]


def test_the_total_of_a_loss_returned_by_another_modules_step_is_reported() -> None:
    result = api.check_paths([PROJECT], Config(), cwd=PROJECT, jobs=1, cache_dir=None)
    found = [(Path(f.filename).name, f.line) for f in result.findings if f.code == "TL006"]
    assert found == [("train.py", 12)]
    (finding,) = [f for f in result.findings if f.code == "TL006"]
    assert "`running` accumulates `loss`" in finding.message and "loss.detach()" in finding.message


def test_alone_the_training_script_cannot_know_what_the_step_returns() -> None:
    alone = api.check_source((PROJECT / "stepengine" / "train.py").read_text(), "train.py")
    assert not [f for f in alone if f.code == "TL006"]
