from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

class MissingZeroGrad(Rule):
    """
    ## What it does
    Finds training loops that run a backward pass and an optimizer step but never clear
    the gradients in that same loop: no `optimizer.zero_grad()`, `model.zero_grad()`,
    `p.grad = None` or `p.grad.zero_()`, directly or in a helper of the same module that
    the loop calls (by name, through `functools.partial`, or as the closure a factory
    returns), or in a helper of another module of the project that the loop gives the
    optimizer (`train_one_batch(model, optimizer, x, y)`); also a step in a function that a
    framework runs once per batch (a Lightning `training_step` under manual optimization,
    the update function of an ignite `Engine`) that clears nothing. A `zero_grad()` that runs only outside the stepping loop (once per
    epoch for many steps) is reported too, and so is one that runs only every N iterations
    (`if i % log_every == 0:`) while the step runs on every iteration (not where Accelerate
    accumulates: its prepared optimizer skips the steps between syncs).

    ## Why is this bad?
    `backward()` adds into `.grad`; it never overwrites it. Without a clear, every step
    applies the sum of all gradients computed so far: the effective learning rate grows
    with the step count and training diverges or stalls, usually without any error.

    ## Example
    ```python
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```
    Gradient accumulation is fine: clear once per optimizer step, for example inside
    `if (i + 1) % accum_steps == 0:` right after `optimizer.step()`.

    ## Fix safety
    No automatic fix: where the clear belongs depends on whether gradients are meant to
    be accumulated over several batches.

    ## Runtime confirmation
    `torchlint probe` confirms it as TL102 gradients-carried-over: it sees an optimizer
    step consume gradients that an earlier step already applied.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
    - https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html
    """

    CODE = "TL001"
    NAME = "missing-zero-grad"
    SUMMARY = "Training loop steps the optimizer but never clears gradients"
    # Or "opt" instead of "step(" and "backward": a helper of another module, given the
    # optimizer (`train_one_batch(model, optimizer, x)`), may run both.
    TRIGGERS = (("step(", "opt"), ("backward", "opt"))
    CONFIRMED_BY = ("TL102",)

    VALID = [
        # Accumulation: the step and the clear run under the same period.
        """
        def train(model, loader, optimizer, accum):
            for i, (x, y) in enumerate(loader):
                (F.cross_entropy(model(x), y) / accum).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
        """,
        """
        def fit(net, head, loader, opts):
            for x, y in loader:
                for o in opts:
                    o.zero_grad()
                head(net(x)).sum().backward()
                for o in opts:
                    o.step()
        """,
        """
        from ignite.engine import Engine

        def create_trainer(model, optimizer, loss_fn):
            def update(engine, batch):
                optimizer.zero_grad()
                x, y = batch
                loss_fn(model(x), y).backward()
                optimizer.step()
            return Engine(update)
        """,
        """
        import functools

        def step(net, opt, batch):
            opt.zero_grad()
            net(batch).mean().backward()
            opt.step()

        def make_update(net, opt):
            def update(batch):
                opt.zero_grad()
                net(batch).mean().backward()
                opt.step()
            return update

        def fit(net, opt, loader):
            run = functools.partial(step, net, opt)
            for batch in loader:
                run(batch)
            update = make_update(net, opt)
            for batch in loader:
                update(batch)
        """,
        # The helper clears when asked, and its call asks.
        """
        class Learner:
            def apply_update(self, clear=False):
                self.opt.step()
                if clear:
                    self.opt.zero_grad()

            def fit(self, loader):
                for x, y in loader:
                    self.loss_fn(self.net(x), y).backward()
                    self.apply_update(clear=True)
        """,
        # manual optimization that clears, and automatic optimization (Lightning steps and clears)
        """
        import lightning as L
        class Manual(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.automatic_optimization = False
            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                opt.zero_grad()
                self.manual_backward(self.net(batch).sum())
                opt.step()
        class Automatic(L.LightningModule):
            def training_step(self, batch, batch_idx):
                return self.net(batch).sum()
        """,
        # Zero at the top of the loop.
        """
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
        """,
        # Zero after the step, with set_to_none.
        """
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # Gradient accumulation that clears once per step.
        """
        for i, (x, y) in enumerate(loader):
            loss = model(x, y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Clearing by hand.
        """
        for x, y in loader:
            for p in model.parameters():
                p.grad = None
            model(x, y).backward()
            optimizer.step()
        """,
        """
        for x, y in loader:
            model(x, y).backward()
            optimizer.step()
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.detach_()
                    p.grad.zero_()
        """,
        # A helper of the same module clears (a method reached through self).
        """
        class Trainer:
            def reset(self):
                self.optimizer.zero_grad()

            def fit(self, loader):
                for batch in loader:
                    self.reset()
                    self.model(batch).backward()
                    self.optimizer.step()
        """,
        # A train_step helper that zeroes, called from the loop.
        """
        def train_step(model, optimizer, batch):
            optimizer.zero_grad()
            loss = model(batch)
            loss.backward()
            optimizer.step()

        for epoch in range(10):
            for batch in loader:
                train_step(model, optimizer, batch)
        """,
        # A function with backward + step that nothing in the file loops over.
        """
        def train_step(model, optimizer, batch):
            loss = model(batch)
            loss.backward()
            optimizer.step()
        """,
        # Lightning: no explicit backward; the framework steps and clears.
        """
        import lightning as L
        class Model(L.LightningModule):
            def training_step(self, batch, batch_idx):
                return self.loss(batch)

            def configure_optimizers(self):
                return torch.optim.Adam(self.parameters())
        """,
        # DeepSpeed engines clear gradients in engine.step().
        """
        import deepspeed
        model_engine, optimizer, _, _ = deepspeed.initialize(model=model, config=cfg)
        for batch in loader:
            loss = model_engine(batch)
            model_engine.backward(loss)
            model_engine.step()
        """,
        # Schedulers, environments and diffusion samplers also have step().
        """
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            lr_scheduler.step()
            obs, reward, done, info = env.step(action)
            latents = noise_scheduler.step(noise_pred, t, latents).prev_sample
        """,
        # GAN: each network clears its own gradients (the DCGAN example).
        """
        for i, data in enumerate(dataloader):
            netD.zero_grad()
            errD = criterion(netD(real), label)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(fake), label)
            errG.backward()
            optimizerG.step()
        """,
        # Two optimizers over one model's parameters, cleared through the model.
        """
        opt_a = torch.optim.SGD(model.encoder.parameters(), lr=0.1)
        opt_b = torch.optim.Adam(model.head.parameters())
        for x, y in loader:
            model.zero_grad()
            loss_fn(model(x), y).backward()
            opt_a.step()
            opt_b.step()
        """,
        # Accumulation over micro-steps with one clear per outer step (nanoGPT).
        """
        while True:
            for micro_step in range(gradient_accumulation_steps):
                loss = model(X, Y) / gradient_accumulation_steps
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # LBFGS closure that clears, passed to step().
        """
        def closure():
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            return loss

        for i in range(20):
            optimizer.step(closure)
        """,
        # Closures built with `functools.partial` over a helper that clears the optimizer it is
        # given, one per optimizer (comparing an optimizer with its twin); the nested `closure`
        # of another function is not the one these steps run.
        """
        import functools
        import torch

        def first_step(model, opt, x):
            def closure():
                loss = model(x).sum()
                loss.backward()
                return loss
            opt.zero_grad()
            opt.step(closure)

        def compare(weight, make_opt):
            def loss_closure(optimizer, w):
                optimizer.zero_grad()
                loss = w.pow(2).sum()
                loss.backward()
                return loss

            optimizer = make_opt([weight])
            twin = torch.nn.Parameter(weight.detach().clone())
            optimizer_twin = make_opt([twin])
            closure = functools.partial(loss_closure, optimizer, weight)
            closure_twin = functools.partial(loss_closure, optimizer=optimizer_twin, w=twin)
            for _ in range(10):
                optimizer.step(closure)
                optimizer_twin.step(closure_twin)
        """,
        # A project helper returns the optimizer and its schedule: the schedule's step is no
        # optimizer step.
        """
        def setup_optimizers(net, total_steps):
            adam = torch.optim.AdamW(net.parameters(), lr=3e-4)
            warm = torch.optim.lr_scheduler.LinearLR(adam, 0.1, total_iters=total_steps)
            return adam, warm

        optim, lr_scheduler = setup_optimizers(net, 1000)
        for images in loader:
            optim.zero_grad()
            net(images).mean().backward()
            optim.step()
            lr_scheduler.step()
        """,
        # Accelerate: backward through the accelerator, clear in the loop.
        """
        from accelerate import Accelerator
        accelerator = Accelerator()
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for batch in loader:
            with accelerator.accumulate(model):
                accelerator.backward(model(**batch).loss)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A fresh optimizer over a fresh tensor every iteration (latent optimization).
        """
        for t in timesteps:
            x_in = latents.detach().clone().requires_grad_(True)
            opt = torch.optim.SGD([x_in], lr=0.1)
            loss = guidance_loss(unet(x_in, t))
            loss.backward()
            opt.step()
        """,
        # Distributed autograd: each context holds fresh gradients of its own.
        """
        import torch.distributed.autograd as dist_autograd
        from torch.distributed.optim import DistributedOptimizer
        opt = DistributedOptimizer(torch.optim.SGD, model.parameter_rrefs(), lr=0.05)
        for x, y in loader:
            with dist_autograd.context() as context_id:
                loss = loss_fn(model(x), y)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)
        """,
        # A project helper that clears gradients, imported from elsewhere.
        """
        from utils import zero_grads
        for x, y in loader:
            zero_grads(model)
            model(x, y).backward()
            optimizer.step()
        """,
    ]

    INVALID = [
        # The clear went into the logging branch: between two logs, every step applies the
        # gradients summed since the last one.
        """
        def train(model, loader, optimizer, log_every):
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()  # expect: TL001
                if i % log_every == 0:
                    print(i, loss.item())
                    optimizer.zero_grad()
        """,
        # Each optimizer of a tuple steps; none is cleared.
        """
        def fit(net, head, loader, opts):
            for x, y in loader:
                head(net(x)).sum().backward()
                for o in opts:
                    o.step()  # expect: TL001
        """,
        # ignite runs the update function once per batch.
        """
        from ignite.engine import Engine

        def create_trainer(model, optimizer, loss_fn):
            def update(engine, batch):
                x, y = batch
                loss_fn(model(x), y).backward()
                optimizer.step()  # expect: TL001
            return Engine(update)
        """,
        # A step function the loop runs through `functools.partial`, or as the closure a
        # factory returns: neither clears.
        """
        import functools

        def step(net, opt, batch):
            net(batch).mean().backward()
            opt.step()  # expect: TL001

        def make_update(net, opt):
            def update(batch):
                net(batch).mean().backward()
                opt.step()  # expect: TL001
            return update

        def fit(net, opt, loader):
            run = functools.partial(step, net, opt)
            for batch in loader:
                run(batch)

        def fit_closure(net, opt, loader):
            update = make_update(net, opt)
            for batch in loader:
                update(batch)
        """,
        # The helper clears only when asked, and its only call does not ask.
        """
        class Learner:
            def apply_update(self, clear=False):
                self.opt.step()  # expect: TL001
                if clear:
                    self.opt.zero_grad()

            def fit(self, loader):
                for x, y in loader:
                    self.loss_fn(self.net(x), y).backward()
                    self.apply_update()
        """,
        # The clear runs in one branch, the step in the other: the stepping iterations never clear.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            if warming_up:
                optimizer.zero_grad()
                loss.backward()
                warmup_step(model)
            else:
                loss.backward()
                optimizer.step()  # expect: TL001
        """,
        # Lightning's manual optimization: `training_step` runs once per batch
        Example(
            """
            import lightning as L
            class Model(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False
                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    loss = self.net(batch).sum()
                    self.manual_backward(loss)
                    opt.step()  # expect: TL001
            """
        ),
        """
        import torch
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()  # expect: TL001
        """,
        # Aliased imports: the optimizer is recognised by its class, not its name.
        """
        import torch as T
        from torch import optim
        adam = optim.AdamW(net.parameters())
        for x, y in loader:
            T.nn.functional.mse_loss(net(x), y).backward()
            adam.step()  # expect: TL001
        """,
        # zero_grad once per epoch, many steps per epoch.
        """
        for epoch in range(epochs):
            optimizer.zero_grad()
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()  # expect: TL001
        """,
        # zero_grad once before training.
        """
        def train(model, loader, optimizer):
            optimizer.zero_grad()
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                optimizer.step()  # expect: TL001
        """,
        # AMP with a GradScaler.
        """
        scaler = torch.cuda.amp.GradScaler()
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # expect: TL001
            scaler.update()
        """,
        # A helper that steps without clearing, called from a loop.
        """
        def train_step(model, optimizer, batch):
            loss = model(batch)
            loss.backward()
            optimizer.step()  # expect: TL001

        for epoch in range(10):
            for batch in loader:
                train_step(model, optimizer, batch)
        """,
        # A method reached through self.
        """
        class Trainer:
            def step(self, batch):
                loss = self.model(batch)
                loss.backward()
                self.optimizer.step()  # expect: TL001

            def fit(self, loader):
                for batch in loader:
                    self.step(batch)
        """,
        # Accelerate without a clear.
        """
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()  # expect: TL001
            lr_scheduler.step()
        """,
        # torch.autograd.backward.
        """
        from torch.optim import SGD
        sgd = SGD(params, lr=0.01)
        while step < max_steps:
            torch.autograd.backward(loss_fn(params))
            sgd.step()  # expect: TL001
            step += 1
        """,
        # A GAN that clears only the discriminator.
        """
        opt_g = torch.optim.Adam(gen.parameters())
        opt_d = torch.optim.Adam(disc.parameters())
        for real in loader:
            disc.zero_grad()
            bce(disc(real), ones).backward()
            opt_d.step()
            bce(disc(gen(z)), ones).backward()
            opt_g.step()  # expect: TL001
        """,
        # A GAN with two optimizers and no clear at all.
        """
        for real in loader:
            d_loss = criterion(disc(real), ones)
            d_loss.backward()
            opt_d.step()  # expect: TL001
            g_loss = criterion(disc(gen(z)), ones)
            g_loss.backward()
            opt_g.step()  # expect: TL001
        """,
        # An attribute optimizer inside a method loop.
        """
        class Runner:
            def train(self):
                for epoch in range(self.epochs):
                    for x, y in self.loader:
                        out = self.net(x)
                        self.criterion(out, y).backward()
                        self.optim.step()  # expect: TL001
        """,
        # Gradient accumulation that forgets to clear after stepping.
        """
        for i, (x, y) in enumerate(loader):
            loss = model(x, y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()  # expect: TL001
        """,
        # A clear that only happens after training.
        """
        for x, y in loader:
            model(x, y).backward()
            optimizer.step()  # expect: TL001
        optimizer.zero_grad()
        """,
        # The optimizer comes from a factory.
        """
        opt = build_optimizer(cfg, model)
        for it, batch in enumerate(loader):
            loss = model(batch)["loss"]
            loss.backward()
            opt.step()  # expect: TL001
        """,
        # The closure passed here is a variable; the nested `closure` that clears belongs to
        # another function and is not the one this step runs.
        """
        import torch

        def pretrain(model, batches):
            opt = torch.optim.LBFGS(model.parameters())
            def closure():
                opt.zero_grad()
                model(batches[0]).sum().backward()
            for _ in range(3):
                opt.step(closure)

        def finetune(model, batches, make_closure):
            opt = torch.optim.LBFGS(model.parameters())
            closure = make_closure(model)
            for batch in batches:
                model(batch).sum().backward()
                opt.step(closure)  # expect: TL001
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        reach = an.training_loops(ctx)
        if not train.steps or not train.backward:
            yield from self._helper_steps(ctx, reach)
            return
        for step in train.steps:
            bad = [
                loop
                for loop in reach.stepping_loops(step)
                if not reach.clears_with_step(loop, step)
                and not reach.builds_optimizer(loop, train.optimizer_of(step))
                and not reach.fresh_gradients(loop)
                and not reach.project_clear(loop)
            ]
            if bad:
                yield self.report(step, self._message(ctx, train, step, bad[0], reach))
                continue
            for loop in reach.stepping_loops(step):
                periodic = an.periodic_clear(ctx, loop, step)
                if periodic is not None:
                    yield self.report(step, self._periodic_message(ctx, step, loop, periodic, reach))
                    break
        yield from self._helper_steps(ctx, reach)
        yield from self._framework_steps(ctx, train, reach.funcs)

    def _framework_steps(self, ctx: FileContext, train: an.Training, funcs: an.Functions) -> Iterator[Report]:
        """Steps in a function that a framework runs once per batch (Lightning's manual
        optimization, an ignite `Engine`'s update function), with no clear of their gradients in it."""
        for iteration in an.framework_iterations(ctx):
            func = iteration.func
            if not train.events_in(train.backward, func, funcs):
                continue
            clears = train.events_in(train.clears, func, funcs)
            for step in train.events_in(train.steps, func, funcs):
                if any(train.clears_gradients_of(clear, step) for clear in clears):
                    continue
                optimizer = ctx.module.code_for_node(train.optimizer_of(step))
                yield self.report(
                    step,
                    f"`{ctx.module.code_for_node(step)}` runs in `{func.name.value}`, which {iteration.runner} runs "
                    f"once per batch{' under manual optimization' if iteration.runner == 'Lightning' else ''}, but its gradients are never cleared: they "
                    f"accumulate across batches; call `{optimizer}.zero_grad()` in `{func.name.value}`",
                )

    def _helper_steps(self, ctx: FileContext, reach: an.TrainingLoops) -> Iterator[Report]:
        """A loop whose only training step is a call of a project function (in another
        module), given the optimizer, that back-propagates and steps without clearing."""
        for loop in reach.idx.nodes(cst.For, cst.While):
            if reach.events(loop, "steps") or reach.events(loop, "clears"):
                continue
            given = reach.calls_given_optimizer(loop)
            if not given or reach.project_clear(loop):
                continue
            for call in given:
                done = sm.call_effects(ctx, call)
                # A helper with a training loop of its own is checked where it is defined.
                if {"backward", "steps"} <= done and not {"clears_grads", "steps_in_loop"} & done and not reach.fresh_gradients(loop):
                    code = ctx.module.code_for_node(call.func)
                    yield self.report(
                        call,
                        f"`{code}()` back-propagates and steps the optimizer, and nothing in this loop "
                        f"or in `{code}` clears the gradients: they accumulate across iterations; call "
                        f"`optimizer.zero_grad()` once per step (in the loop or in `{code}`)",
                    )

    def _periodic_message(
        self, ctx: FileContext, step: cst.Call, loop: cst.For | cst.While, periodic: an.PeriodicClear, reach: an.TrainingLoops
    ) -> str:
        code = ctx.module.code_for_node
        guard = periodic.period.guard
        when = f"when `{code(guard.test)}`" if guard is not None else f"every `{code(periodic.period.count)}` iterations"
        return (
            f"`{code(step)}` runs {_where(reach, loop, step)} on every iteration but `{code(periodic.clear)}` only "
            f"{when}: each step applies the gradients summed since the last clear; clear them on "
            f"every iteration (or, to accumulate, step under the same condition)"
        )

    def _message(
        self, ctx: FileContext, train: an.Training, step: cst.Call, loop: cst.For | cst.While, reach: an.TrainingLoops
    ) -> str:
        code = ctx.module.code_for_node
        call = code(step.func) + "()" if not step.args else code(step.func) + "(" + code(step.args[0].value) + ")"
        optimizer = code(train.optimizer_of(step))
        where = _where(reach, loop, step)
        if reach.clears_outside(loop):
            return (
                f"`{call}` runs {where} but `zero_grad()` only runs outside that loop (once per "
                f"outer iteration): gradients accumulate across steps; call `{optimizer}.zero_grad()` "
                f"inside the loop, once per step"
            )
        return (
            f"`{call}` runs {where} but its gradients are never cleared: gradients accumulate "
            f"across iterations; call `{optimizer}.zero_grad()` once per step"
        )


def _where(reach: an.TrainingLoops, loop: cst.For | cst.While, step: cst.Call) -> str:
    """Where the loop that runs `step` is, as the message at `step` names it."""
    if reach.idx.contains(loop, step):
        return "in this loop"
    scope = reach.idx.scope(loop)
    return f"in the loop of `{scope.name.value}()`" if isinstance(scope, cst.FunctionDef) else "in a loop"
