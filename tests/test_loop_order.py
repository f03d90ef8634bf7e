"""The shared per-iteration event order (`_analysis.Flow`) that the pack-2 loop rules use."""

from __future__ import annotations

import inspect

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str) -> FileContext:
    source = inspect.cleandoc(source) + "\n"
    return FileContext("example.py", source, cst.parse_module(source))


def calls_named(ctx: FileContext, *names: str) -> list[cst.Call]:
    return [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) in names]


def loop_events(ctx: FileContext, *names: str) -> list[an.Event]:
    loop = an.index(ctx).nodes(cst.For)[0]
    return an.flow(ctx).events(loop.body, calls_named(ctx, *names))


def spelled(ctx: FileContext, events: list[an.Event]) -> list[str]:
    return [ctx.module.code_for_node(e.node) for e in events]


def test_events_follow_execution_order_through_local_helpers() -> None:
    ctx = context(
        """
        def update(opt):
            clip(model)
            opt.step()

        for x in loader:
            model(x).backward()
            update(opt)
            sched.step()
        """
    )
    events = loop_events(ctx, "backward", "clip", "step")
    assert spelled(ctx, events) == ["model(x).backward()", "clip(model)", "opt.step()", "sched.step()"]
    assert [len(e.path) for e in events] == [1, 2, 2, 1]


def test_operands_run_before_the_call_that_uses_them() -> None:
    ctx = context(
        """
        for x in loader:
            scaler.scale(loss_fn(model(x))).backward()
        """
    )
    assert spelled(ctx, loop_events(ctx, "backward", "scale", "loss_fn")) == [
        "loss_fn(model(x))",
        "scaler.scale(loss_fn(model(x)))",
        "scaler.scale(loss_fn(model(x))).backward()",
    ]


def test_inner_loops_and_if_branches_are_recorded() -> None:
    ctx = context(
        """
        for i, x in enumerate(loader):
            for chunk in x.chunk(2):
                chunk.backward()
            if i % 4 == 0:
                opt.step()
            else:
                opt.zero_grad()
        """
    )
    backward, step, clear = loop_events(ctx, "backward", "step", "zero_grad")
    assert len(backward.loops) == 1 and not step.loops
    assert [branch for _, branch in step.guards] == [True]
    assert [branch for _, branch in clear.guards] == [False]
    flow = an.flow(ctx)
    assert flow.exclusive(step, clear)
    assert not flow.exclusive(backward, step)


def test_a_jump_after_an_event_keeps_later_events_from_running() -> None:
    ctx = context(
        """
        for x in loader:
            loss.backward()
            if bad(loss):
                opt.zero_grad()
                continue
            opt.step()
        """
    )
    backward, clear, step = loop_events(ctx, "backward", "zero_grad", "step")
    flow = an.flow(ctx)
    assert flow.exits_between(clear, step)
    assert not flow.reaches(clear, step)
    assert flow.reaches(backward, step)


def test_a_break_leaves_only_the_loop_it_breaks() -> None:
    ctx = context(
        """
        def train():
            for x in loader:
                loss.backward()
                if done:
                    opt.zero_grad()
                    break
                opt.step()
            opt.step()
        """
    )
    func = an.index(ctx).nodes(cst.FunctionDef)[0]
    clear, inside, after = an.flow(ctx).events(func, calls_named(ctx, "zero_grad", "step"))
    flow = an.flow(ctx)
    assert flow.exits_between(clear, inside)
    assert not flow.exits_between(clear, after)


def test_running_scopes_reach_the_callers_of_a_helper() -> None:
    ctx = context(
        """
        def step(opt):
            opt.step()

        def epoch(opt):
            for x in loader:
                step(opt)

        def unrelated():
            pass
        """
    )
    idx = an.index(ctx)
    scopes = an.running_scopes(idx, an.functions(ctx), calls_named(ctx, "step")[:1])
    names = [s.name.value if isinstance(s, cst.FunctionDef) else "<module>" for s in scopes]
    assert names == ["<module>", "step", "epoch"]


def test_backpropagated_names_the_tensor_not_the_framework() -> None:
    ctx = context(
        """
        import torch
        loss.backward()
        scaler.scale(total).backward()
        accelerator.backward(acc_loss)
        t.backward(grad)
        torch.autograd.backward(auto)
        """
    )
    imps = an.imports(ctx)
    found = [an.backpropagated(c, imps) for c in calls_named(ctx, "backward")]
    assert [ctx.module.code_for_node(e) if e is not None else None for e in found] == [
        "loss",
        "total",
        "acc_loss",
        "t",
        "auto",
    ]


def test_execution_home_is_the_scope_whose_execution_order_lists_the_call() -> None:
    ctx = context(
        """
        start = clock()

        @decorate(clock())
        def run(x, default=clock()):
            inner = lambda: clock()
            def nested():
                return clock()
            return clock()

        class Trainer:
            at_class = clock()
            def fit(self):
                return clock()
        """
    )
    idx = an.index(ctx)
    scopes = [ctx.module, *an.functions(ctx).all]
    listed = {id(step.node): scope for scope in scopes for step in an.execution_order(scope)}
    calls = idx.nodes(cst.Call)
    assert len(calls) == 9
    for call_node in calls:
        assert an.execution_home(idx, call_node) is listed.get(id(call_node))
    # `decorate(...)` and its `clock()`, the default, the lambda's and the class body's.
    assert sum(an.execution_home(idx, c) is None for c in calls) == 5
