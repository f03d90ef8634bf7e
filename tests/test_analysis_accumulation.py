"""The analysis library's `accumulation`: clears between the passes of a loop whose step
counts iterations across those passes."""

from __future__ import annotations

import libcst as cst
import pytest

from analysis_support import code, context

from torchlint.rules import _analysis as an


def between_passes(source: str) -> list[str]:
    ctx = context(source)
    train = an.training(ctx)
    idx = an.index(ctx)
    nodes = [*train.backward, *train.steps, *train.clears]
    found: list[str] = []
    for scope in an.running_scopes(idx, an.functions(ctx), train.steps):
        events = an.flow(ctx).events(scope, nodes)
        for step in (e for e in events if any(e.node is s for s in train.steps)):
            clears = an.clears_between_passes(idx, events, step, {id(n) for n in train.clears}, {id(n) for n in train.backward})
            found.extend(code(ctx, e.node) for e in clears)
    return found


def test_a_clear_per_epoch_with_a_counter_kept_across_epochs() -> None:
    source = """
        def fit(net, opt, loader, accum):
            done = -1
            n = 0
            opt.zero_grad()
            while n < 10_000:
                opt.zero_grad(set_to_none=True)
                for x in loader:
                    net(x).sum().backward()
                    n += 1
                    if n - done >= accum:
                        apply(opt)
                        done = n
                opt.zero_grad(set_to_none=False)

        def apply(opt):
            opt.step()
            opt.zero_grad()
        """
    assert between_passes(source) == ["opt.zero_grad(set_to_none=True)", "opt.zero_grad(set_to_none=False)"]


def test_no_clear_between_passes_when_the_period_restarts_or_the_clear_is_guarded() -> None:
    restarting = """
        def fit(net, opt, loader, accum):
            for epoch in range(3):
                opt.zero_grad()
                for i, x in enumerate(loader):
                    net(x).sum().backward()
                    if (i + 1) % accum == 0:
                        opt.step()
        """
    guarded = """
        def fit(net, opt, loader, accum):
            step = 0
            for epoch in range(3):
                if epoch == 0:
                    opt.zero_grad()
                for x in loader:
                    net(x).sum().backward()
                    step += 1
                    if step % accum == 0:
                        opt.step()
                        opt.zero_grad()
        """
    every_iteration = """
        def fit(net, opt, loader, accum):
            step = 0
            for epoch in range(3):
                opt.zero_grad()
                for x in loader:
                    step += 1
                    if step % accum == 0:
                        net(x).sum().backward()
                        opt.step()
        """
    assert between_passes(restarting) == []
    assert between_passes(guarded) == []
    assert between_passes(every_iteration) == []


def test_loss_divisors_leave_out_floor_divisions_that_count_steps() -> None:
    ctx = context(
        """
        update = (i + epoch * n_batches) // accum
        avg = total / n_seen
        loss /= args.k
        scaled = torch.div(loss, ratio)
        """
    )
    assert an.loss_divisors(an.index(ctx)) == {"n_seen", "args.k", "k", "ratio"}


def test_helpers_named_for_rescaling_gradients() -> None:
    for name in ("scale_grads", "normalize_gradients", "rescaleGrads", "div_grad"):
        assert an.says_gradient_scaling(name), name
    for name in ("clip_grad_norm_", "unscale_", "scale", "zero_grad", None):
        assert not an.says_gradient_scaling(name), name


def test_runs_every_iteration_of_a_loop() -> None:
    ctx = context(
        """
        for i, batch in enumerate(loader):
            opt.zero_grad()
            if flag:
                model.zero_grad()
            for p in params:
                p.grad = None
            if (i + 1) % n != 0:
                log(i)
                continue
            net.zero_grad()
        """
    )
    idx = an.index(ctx)
    loop = idx.nodes(cst.For)[0]
    events = an.flow(ctx).events(loop.body, an.training(ctx).clears)
    assert [(code(ctx, e.node).strip(), an.runs_every_iteration_of(idx, loop, e)) for e in events] == [
        ("opt.zero_grad()", True),
        ("model.zero_grad()", False),
        ("p.grad = None", False),
        ("net.zero_grad()", False),
    ]


@pytest.mark.parametrize(
    ("loop", "clear"),
    [
        # the clear went into the logging branch; the step runs on every iteration
        ("    loss.backward()\n    opt.step()\n    if i % 100 == 0:\n        opt.zero_grad()\n", "opt.zero_grad()"),
        # through a flag named for the condition
        ("    loss.backward()\n    opt.step()\n    flush = (i + 1) % k == 0\n    if flush:\n        opt.zero_grad()\n", "opt.zero_grad()"),
        # accumulation: the step runs under the same condition as the clear
        ("    loss.backward()\n    if (i + 1) % k == 0:\n        opt.step()\n        opt.zero_grad()\n", None),
        # one clear runs on every iteration
        ("    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    if i % 100 == 0:\n        opt.zero_grad()\n", None),
        # both branches of the period clear
        (
            "    loss.backward()\n    opt.step()\n    if i % 100 == 0:\n        opt.zero_grad()\n"
            "    else:\n        opt.zero_grad(set_to_none=False)\n",
            None,
        ),
        # a clear under a condition that is no period
        ("    loss.backward()\n    opt.step()\n    if retain:\n        opt.zero_grad()\n", None),
        # the discriminator's clear and step every 5 iterations; the generator's every iteration
        (
            "    loss.backward()\n    opt_g.step()\n    opt_g.zero_grad()\n"
            "    if i % 5 == 0:\n        opt_d.step()\n        opt_d.zero_grad()\n",
            None,
        ),
    ],
)
def test_periodic_clear(loop: str, clear: str | None) -> None:
    ctx = context(
        "opt_g = torch.optim.Adam(gen.parameters())\nopt_d = torch.optim.Adam(disc.parameters())\n"
        f"for i, batch in enumerate(loader):\n    loss = model(batch)\n{loop}"
    )
    found = an.periodic_clear(ctx, an.index(ctx).nodes(cst.For)[0], an.training(ctx).steps[0])
    assert (code(ctx, found.clear) if found is not None else None) == clear


def test_no_periodic_clear_where_accelerate_accumulates() -> None:
    ctx = context(
        """
        for i, batch in enumerate(loader):
            with accelerator.accumulate(model):
                accelerator.backward(model(batch))
            opt.step()
            if (i + 1) % 2 == 0:
                opt.zero_grad()
        """
    )
    assert an.periodic_clear(ctx, an.index(ctx).nodes(cst.For)[0], an.training(ctx).steps[0]) is None
