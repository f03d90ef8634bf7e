"""Unit tests of `torchlint.rules._analysis.iterations` (the loops that train, what clears
each iteration's gradients) and of the path-aware parts of `flow` they build on: guards that
the arguments on a path make false, shared iterations and guards that skip the first one."""

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


def loop_of(ctx: FileContext, head: str) -> cst.For | cst.While:
    return next(loop for loop in an.index(ctx).nodes(cst.For, cst.While) if code(ctx, loop).startswith(head))


HELPER = """
class Learner:
    def apply_update(self, clear=False, keep=True):
        self.opt.step()
        if clear:
            self.opt.zero_grad()
        if not keep:
            self.opt.zero_grad()

    def fit(self, loader):
        for x in loader:
            self.net(x).backward()
            self.apply_update({arguments})
"""


@pytest.mark.parametrize(
    ("arguments", "clears"),
    [
        ("", False),  # clear=False by default, keep=True by default
        ("clear=True", True),
        ("True", True),
        ("keep=False", True),
        ("clear=flag", True),  # unknown: may clear
        ("*options", True),
        ("clear=0", False),
    ],
)
def test_a_clear_counts_unless_the_arguments_on_its_path_rule_it_out(arguments: str, clears: bool) -> None:
    ctx = context(HELPER.format(arguments=arguments))
    loops = an.training_loops(ctx)
    (step,) = an.training(ctx).steps
    (loop,) = loops.stepping_loops(step)
    assert loops.clears_with_step(loop, step) is clears


def test_a_clear_in_the_other_branch_than_the_step_does_not_count() -> None:
    ctx = context(
        """
        for x in loader:
            loss = model(x)
            if warm:
                optimizer.zero_grad()
                loss.backward()
            else:
                loss.backward()
                optimizer.step()
        for x in loader:
            if warm:
                optimizer.zero_grad()
            model(x).backward()
            optimizer.step()
        """
    )
    loops = an.training_loops(ctx)
    first, second = an.training(ctx).steps
    assert not loops.clears_with_step(loops.stepping_loops(first)[0], first)
    assert loops.clears_with_step(loops.stepping_loops(second)[0], second)


def test_a_clear_in_a_closure_given_to_the_step_counts() -> None:
    ctx = context(
        """
        for x in loader:
            def closure():
                optimizer.zero_grad()
                loss = model(x)
                loss.backward()
                return loss
            optimizer.step(closure)
        """
    )
    loops = an.training_loops(ctx)
    (step,) = an.training(ctx).steps
    assert loops.clears_with_step(loops.stepping_loops(step)[0], step)


def test_the_innermost_stepping_loop_and_what_resets_gradients() -> None:
    ctx = context(
        """
        import torch.distributed.autograd as dist_autograd
        optimizer.zero_grad()
        for epoch in range(3):
            for x in loader:
                with dist_autograd.context() as cid:
                    model(x).backward()
                    optimizer.step()
            for z in latents:
                opt = SGD([z])
                model(z).backward()
                opt.step()
                run(model, opt)
        """
    )
    loops = an.training_loops(ctx)
    first, second = an.training(ctx).steps
    (inner,) = loops.stepping_loops(first)
    assert code(ctx, inner).startswith("for x in loader")
    assert loops.fresh_gradients(inner)
    assert loops.clears_outside(inner)
    (latent,) = loops.stepping_loops(second)
    assert loops.builds_optimizer(latent, an.training(ctx).optimizer_of(second))
    assert not loops.builds_optimizer(inner, an.training(ctx).optimizer_of(first))
    assert [code(ctx, c) for c in loops.calls_given_optimizer(latent)] == ["run(model, opt)"]


def test_never_runs_without_a_call_on_the_path_asks_every_call_site() -> None:
    ctx = context(
        """
        def update(opt, clear=False):
            if clear:
                opt.zero_grad()
            opt.step()

        update(a)
        update(b, clear=False)
        """
    )
    funcs = an.functions(ctx)
    flow = an.flow(ctx)
    func = an.index(ctx).nodes(cst.FunctionDef)[0]
    (clear,) = [e for e in flow.events(func, an.training(ctx).clears)]
    assert an.never_runs(funcs, clear)
    other = context(textwrap.dedent(ctx.source) + "update(c, clear=True)\n")
    func = an.index(other).nodes(cst.FunctionDef)[0]
    (clear,) = an.flow(other).events(func, an.training(other).clears)
    assert not an.never_runs(an.functions(other), clear)


@pytest.mark.parametrize(
    ("text", "truth"),
    [("True", True), ("False", False), ("None", False), ("0", False), ("2", True), ("''", False), ("x", None)],
)
def test_literal_truth(text: str, truth: bool | None) -> None:
    assert an.literal_truth(cst.parse_expression(text)) is truth


def test_shared_iterations_and_guards_that_skip_the_first_one() -> None:
    ctx = context(
        """
        sched.step()
        for epoch in range(start, epochs):
            if epoch > start:
                sched.step()
            if (epoch + 1) % 2 == 0:
                sched.step()
                for x in loader:
                    opt.step()
        """
    )
    flow = an.flow(ctx)
    nodes = [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "step"]
    before, guarded, periodic, step = flow.events(ctx.module, nodes)
    assert an.shared_iteration(before, step) == (False, None)
    shared, loop = an.shared_iteration(guarded, step)
    assert shared and loop is not None and code(ctx, loop).startswith("for epoch")
    assert an.skips_first_iteration(guarded, step, loop)
    assert not an.skips_first_iteration(periodic, step, loop)


def test_a_guard_that_holds_from_the_first_count_on_skips_nothing() -> None:
    ctx = context(
        """
        for epoch in range(epochs):
            if epoch > -1:
                sched.step()
            if 0 <= epoch:
                sched.step()
            if epoch > LIMIT:
                sched.step()
            opt.step()
        """
    )
    flow = an.flow(ctx)
    nodes = [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "step"]
    minus_one, zero, limit, step = flow.events(ctx.module, nodes)
    loop = step.loops[0]
    assert not an.skips_first_iteration(minus_one, step, loop)
    assert not an.skips_first_iteration(zero, step, loop)
    assert an.skips_first_iteration(limit, step, loop)
    assert not an.skips_first_iteration(limit, step, loop, lambda e: -1.0)
    assert an.skips_first_iteration(limit, step, loop, lambda e: 3.0)


def test_skipped_by_a_call_that_makes_the_guarding_parameter_false_or_none() -> None:
    ctx = context(
        """
        def run_epoch(loader, model, optimizer=None, train=True):
            for x, y in loader:
                loss = model(x, y)
                if optimizer is not None:
                    loss.backward()
                if train:
                    step()
                if optimizer is None:
                    log()

        run_epoch(val, model)
        run_epoch(val, model, opt, train=False)
        run_epoch(val, model, None, False)
        run_epoch(val, model, *extra)
        """
    )
    idx = an.index(ctx)
    func = idx.nodes(cst.FunctionDef)[0]
    backward, step, log = [c for c in idx.within(func, cst.Call) if code(ctx, c) in ("loss.backward()", "step()", "log()")]
    sites = [c for c in idx.nodes(cst.Call) if code(ctx, c).startswith("run_epoch")]
    funcs = an.functions(ctx)
    skipped = [[an.skipped_by(funcs, func, site, node) for node in (backward, step, log)] for site in sites]
    assert skipped == [
        [True, False, False],  # no optimizer: no backward; train defaults to True; the None branch runs
        [False, True, False],  # `opt` may be anything: only `train=False` is known
        [True, True, False],
        [False, False, False],  # *extra: unknown
    ]
