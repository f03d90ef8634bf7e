"""Unit tests of `training_evaluations.unmoded_evaluations`: evaluation passes written in
training code (loops over evaluation data inside or beside a training loop, batches drawn
from it) that run a trained network still in training mode."""

from __future__ import annotations

import libcst as cst

from analysis_support import code, context
from torchlint.rules import _analysis as an

TRAIN = """
for x, y in train_loader:
    optimizer.zero_grad()
    criterion(net(x), y).backward()
    optimizer.step()
"""


def passes(source: str) -> list[tuple[str, str, str, bool, bool]]:
    """(the first line of the pass's node, its data, its call, in training, grad-free)."""
    ctx = context(source)
    return [
        (code(ctx, e.node).splitlines()[0], code(ctx, e.data), code(ctx, e.call), e.in_training, e.grad_free)
        for e in an.training_evaluations(ctx).unmoded_evaluations()
    ]


def test_a_gradient_free_loop_over_validation_data_inside_training() -> None:
    source = TRAIN + "    with torch.no_grad():\n        for xv, yv in enumerate(val_loader):\n            acc(net(xv), yv)\n"
    assert passes(source) == [("for xv, yv in enumerate(val_loader):", "val_loader", "net(xv)", True, True)]


def test_a_loop_over_validation_data_with_gradients_counts_when_it_back_propagates_nothing() -> None:
    # Code from before `torch.no_grad()` (PyTorch 0.3 and older) evaluates with gradients on.
    source = TRAIN + "    for xv, yv in val_loader:\n        acc(net(xv), yv)\n"
    assert passes(source) == [("for xv, yv in val_loader:", "val_loader", "net(xv)", True, False)]
    beside = TRAIN + "for xt, yt in test_loader:\n    acc(net(xt), yt)\n"
    assert passes(beside) == [("for xt, yt in test_loader:", "test_loader", "net(xt)", False, False)]


def test_a_loop_over_validation_data_that_back_propagates_is_not_one() -> None:
    source = TRAIN + "    for xv, yv in val_loader:\n        criterion(net(xv), yv).backward()\n"
    assert passes(source) == []


def test_a_final_test_loop_beside_training() -> None:
    source = TRAIN + "with torch.no_grad():\n    for xt, yt in test_loader:\n        acc(net(xt), yt)\n"
    assert passes(source) == [("for xt, yt in test_loader:", "test_loader", "net(xt)", False, True)]


def test_a_batch_drawn_every_n_steps_without_backward() -> None:
    source = TRAIN + "    if step % 20 == 0:\n        xb, yb = next(iter(holdout_test_set))\n        log(net(xb))\n"
    assert passes(source) == [("xb, yb = next(iter(holdout_test_set))", "holdout_test_set", "net(xb)", True, False)]


def test_a_drawn_batch_only_counts_for_calls_after_it() -> None:
    source = TRAIN + "    if step % 20 == 0:\n        log(net(warmup))\n        xb, yb = next(val_iter)\n"
    assert passes(source) == []


def test_a_drawn_batch_that_the_block_back_propagates_needs_no_grad_to_count() -> None:
    trained = TRAIN + "    xb, yb = next(dev_iter)\n    criterion(net(xb), yb).backward()\n"
    assert passes(trained) == []
    grad_free = TRAIN + "    xb, yb = next(dev_iter)\n    with torch.no_grad():\n        log(net(xb))\n"
    assert passes(grad_free) == [("xb, yb = next(dev_iter)", "dev_iter", "net(xb)", True, True)]


def test_an_eval_switch_in_the_loop_ends_the_search() -> None:
    source = TRAIN + "    if step % 20 == 0:\n        net.eval()\n        xb, yb = next(iter(val_loader))\n        log(net(xb))\n"
    assert passes(source) == []


def test_drawn_batch_names_the_data() -> None:
    for text, data in (
        ("next(iter(loader))", "loader"),
        ("next(enumerate(test_loader, 0))", "test_loader"),
        ("next(self.val_iter)", "self.val_iter"),
    ):
        ctx = context(f"x = {text}\n")
        value = an.index(ctx).nodes(cst.Assign)[0].value
        found = an.drawn_batch(value)
        assert found is not None and code(ctx, found) == data
    ctx = context("x = iter(loader)\ny = next\n")
    assert [an.drawn_batch(a.value) for a in an.index(ctx).nodes(cst.Assign)] == [None, None]
