"""Unit tests of `torchlint.rules._analysis.gradients`: whose gradients a clear empties, which
parameters an optimizer updates, and code that writes gradients by hand."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node).strip()


@pytest.mark.parametrize(
    ("source", "cleared"),
    [
        ("opt.zero_grad()", "opt"),
        ("self.model.zero_grad()", "self.model"),
        ("zero_grads(net)", "net"),
        ("for p in net.parameters():\n    p.grad = None", "net"),
        ("for p in net.parameters():\n    p.grad.zero_()", "net"),
        ("for p in net.parameters():\n    p.grad.mul_(0.5)", None),  # rescales, does not clear
        ("for p in params:\n    p.grad = None", None),  # whose parameters is unknown
    ],
)
def test_the_object_a_clear_empties(source: str, cleared: str | None) -> None:
    ctx = context(source)
    (clear,) = an.training(ctx).clears
    assert an.cleared_object(an.index(ctx), clear) == cleared


def test_gradient_writes_are_assignments_in_place_writes_and_graph_replays() -> None:
    ctx = context(
        """
        import torch
        for p, g in zip(params, grads):
            p.grad = g
            p.grad += g
            p.grad.copy_(g)
            p.grad = None
        with torch.cuda.graph(graph):
            loss.backward()
        graph.replay()
        """
    )
    found = [code(ctx, n) for n in an.gradient_writes(ctx)]
    assert found == ["p.grad = g", "p.grad += g", "p.grad.copy_(g)", "graph.replay()"]


def test_a_clear_empties_what_a_step_applies_only_with_evidence() -> None:
    ctx = context(
        """
        opt_g = Adam(gen.encoder.parameters())
        opt_d = Adam(disc.parameters())
        gen.zero_grad()
        disc.zero_grad()
        opt_d.zero_grad()
        other.zero_grad()
        opt_g.step()
        opt_d.step()
        """
    )
    train = an.training(ctx)
    params = an.optimized_parameters(ctx)
    step_g, step_d = train.steps
    gen, disc, opt_d, other = train.clears
    assert params.clears_what_step_applies(gen, step_g)
    assert not params.clears_what_step_applies(disc, step_g)
    assert params.clears_what_step_applies(opt_d, step_d)
    assert not params.clears_what_step_applies(opt_d, step_g)  # another optimizer
    assert not params.clears_what_step_applies(other, step_d)


def test_a_plain_model_clear_counts_for_the_only_optimizer_built_elsewhere() -> None:
    ctx = context(
        """
        model.zero_grad()
        loss.backward()
        optimizer.step()
        """
    )
    train = an.training(ctx)
    assert an.optimized_parameters(ctx).clears_what_step_applies(train.clears[0], train.steps[0])


def test_mentioned_prefixes() -> None:
    call = cst.parse_expression("Adam(model.encoder.parameters(), lr=lr)")
    assert isinstance(call, cst.Call)
    assert an.mentioned_prefixes(call.args) == {"model", "model.encoder", "model.encoder.parameters", "lr"}


def test_a_renamed_optimizer_is_the_optimizer_it_names() -> None:
    ctx = context(
        """
        o = opt
        oo = o
        other = opt if fast else opt2
        for x in loader:
            model(x).backward()
            oo.zero_grad()
            other.zero_grad()
            opt.step()
            opt2.step()
        """
    )
    train = an.training(ctx)
    optimizers = an.optimized_parameters(ctx)
    step = next(s for s in train.steps if code(ctx, s) == "opt.step()")
    clears = {code(ctx, c): optimizers.clears_what_step_applies(c, step) for c in train.clears}
    assert clears == {"oo.zero_grad()": True, "other.zero_grad()": False}
    assert optimizers.original("oo") == "opt" and optimizers.original("other") == "other"
