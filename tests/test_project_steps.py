"""A training step in another module that back-propagates the loss and returns it (TL006):
the caller's running total of that loss keeps every iteration's graph."""

from __future__ import annotations

from project_support import PROJECTS, check, check_alone, findings, summary

PROJECT = PROJECTS / "stepengine"


def test_summaries_say_which_functions_return_their_back_propagated_loss() -> None:
    defs = summary(
        """
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
    )["defs"]
    assert defs["step"]["returns_backpropagated"]
    assert not defs["step_value"]["returns_backpropagated"]
    assert not defs["forward_only"]["returns_backpropagated"]


def test_the_total_of_a_loss_returned_by_another_modules_step_is_reported() -> None:
    result = check(PROJECT)
    assert findings(result, "TL006") == [("stepengine/train.py", 12, "TL006")]
    (finding,) = [f for f in result.findings if f.code == "TL006"]
    assert "`running` accumulates `loss`" in finding.message and "loss.detach()" in finding.message


def test_alone_the_training_script_cannot_know_what_the_step_returns() -> None:
    assert check_alone(PROJECT, "stepengine/train.py", "TL006") == []
