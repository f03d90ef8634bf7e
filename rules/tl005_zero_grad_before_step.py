from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, Report, Rule
from torchlint.rules import _analysis as an

class ZeroGradBeforeStep(Rule):
    """
    ## What it does
    Finds a gradient clear (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`,
    `p.grad.zero_()`) that runs after the backward pass and before the optimizer step of
    the same iteration, for the parameters that step updates (directly or in a helper of
    the same module that the training code calls). Inside Accelerate's
    `with accelerator.accumulate(model):`, where the prepared optimizer's `step()` and
    `zero_grad()` wait for the batch that syncs gradients, it also finds clears that do not
    wait: `model.zero_grad()` or `p.grad = None` on every micro-batch. And, in gradient
    accumulation with the step under `if (i + 1) % N == 0:`, a clear that runs on every
    iteration (`optimizer.zero_grad()` at the top of the loop): it throws the accumulated
    gradients away, so each step applies only the last micro-batch's.

    ## Why is this bad?
    `optimizer.step()` applies whatever is in `.grad` at that moment. Clearing between
    `backward()` and `step()` throws the fresh gradients away: the step applies nothing
    (plain SGD) or only momentum and weight decay (Adam, SGD with momentum). The loss
    stays flat, with no error.

    ## Example
    ```python
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: the clear belongs before the forward pass or after the step, and
    moving it can change what code in between (clipping, logging) sees.

    ## Runtime confirmation
    `torchlint probe` confirms it when an optimizer step, after a backward pass, finds all
    of its gradients cleared by a `zero_grad()` that ran after that backward pass; it reports
    the steps and the norm of the gradients thrown away.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
    - https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html
    """

    CODE = "TL005"
    NAME = "zero-grad-before-step"
    SUMMARY = "Gradients are cleared between backward() and the optimizer step"
    TRIGGERS = (("backward",), ("step(",), ("grad",))
    CONFIRMED_BY = ("TL005",)

    VALID = [
        # Accumulation that clears only with the step, after an early `continue`, or once
        # per step of a loop of micro-steps.
        """
        for step, batch in enumerate(loader):
            (model(batch) / accum).backward()
            if (step + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        for i, batch in enumerate(loader):
            (model(batch) / accum).backward()
            if (i + 1) % accum != 0:
                seen += 1
                continue
            optimizer.step()
            optimizer.zero_grad()
        while True:
            for micro in range(accum):
                (model(next_batch()) / accum).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # accumulation over a counter kept across epochs, cleared only right after the step
        """
        updates = 0
        seen = 0
        for epoch in range(epochs):
            for x, y in loader:
                criterion(net(x), y).backward()
                seen += 1
                if seen - updates * accum_steps >= accum_steps:
                    opt.step()
                    opt.zero_grad()
                    updates += 1
        """,
        # a period on the inner loop's own index ends with the epoch: the epoch's clear is its start
        """
        for epoch in range(epochs):
            opt.zero_grad()
            for k, (x, y) in enumerate(loader):
                (criterion(net(x), y) / accum_steps).backward()
                if (k + 1) % accum_steps == 0:
                    opt.step()
                    opt.zero_grad()
        """,
        """
        class Trainer:
            def backward(self, loss):
                self.model.zero_grad()
                loss.backward()

            def fit(self, loader):
                for x, y in loader:
                    self.backward(self.model(x, y))
                    self.optimizer.step()
        """,
        # clearing through the prepared optimizer, or only on the step that syncs gradients
        """
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                if accelerator.sync_gradients:
                    model.zero_grad()
        """,
        # micro-batches that each step, and a clear of the first micro-batch only
        """
        for batch in loader:
            for micro in batch.chunk(4):
                optimizer.zero_grad()
                criterion(model(micro)).backward()
                optimizer.step()
        for batch in loader:
            for i, micro in enumerate(batch.chunk(4)):
                if i == 0:
                    optimizer.zero_grad()
                (criterion(model(micro)) / 4).backward()
            optimizer.step()
        """,
        # a CUDA graph whose capture ran the backward: each replay writes fresh gradients
        """
        import torch
        g = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            static_loss = model(static_x).sum()
            static_loss.backward()
        for data in loader:
            static_x.copy_(data)
            optimizer.zero_grad()
            g.replay()
            optimizer.step()
        """,
        # The usual order: clear, forward, backward, step.
        """
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # Clearing right after the step is just as good.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # DCGAN: each network clears its own gradients before its own backward.
        """
        for i, data in enumerate(dataloader):
            netD.zero_grad()
            errD_real = criterion(netD(real), label)
            errD_real.backward()
            errD_fake = criterion(netD(fake.detach()), label)
            errD_fake.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(fake), label)
            errG.backward()
            optimizerG.step()
        """,
        # GAN: the generator's backward also fills D's gradients; clearing D's (another
        # network) before G's step is right.
        """
        opt_g = torch.optim.Adam(gen.parameters())
        opt_d = torch.optim.Adam(disc.parameters())
        for real in loader:
            g_loss = criterion(disc(gen(z)), ones)
            g_loss.backward()
            disc.zero_grad()
            opt_g.step()
            opt_g.zero_grad()
        """,
        # Clearing another optimizer between this one's backward and step.
        """
        for batch in loader:
            loss_d = d_loss(batch)
            loss_d.backward()
            opt_g.zero_grad()
            opt_d.step()
        """,
        # Accumulation: backward in a micro-step loop, clear after the step (nanoGPT).
        """
        while True:
            for micro_step in range(gradient_accumulation_steps):
                loss = model(X, Y) / gradient_accumulation_steps
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # Accumulation with a modulo: the clear after the step, inside the same `if`.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A clear in another branch than the backward.
        """
        for x, y in loader:
            if train_mode:
                loss = criterion(model(x), y)
                loss.backward()
            else:
                optimizer.zero_grad()
            optimizer.step()
        """,
        # A non-finite loss: clear and skip the step.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            if not torch.isfinite(loss):
                optimizer.zero_grad()
                continue
            optimizer.step()
        """,
        # A conditional clear that deliberately voids one update.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            if skip_update:
                optimizer.zero_grad()
            optimizer.step()
        """,
        # A second backward after the clear (gradient of a penalty computed separately).
        """
        for x, y in loader:
            penalty = grad_penalty(model, x)
            penalty.backward()
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # A helper clears at its start; the caller backprops only inside it.
        """
        def train_step(batch):
            optimizer.zero_grad()
            loss = model(batch)
            loss.backward()
            optimizer.step()

        for batch in loader:
            train_step(batch)
        """,
        # Gradient surgery: per-task gradients, a clear, then combined gradients written back.
        """
        for batch in loader:
            grads = []
            for task_loss in task_losses(batch):
                optimizer.zero_grad()
                task_loss.backward(retain_graph=True)
                grads.append([p.grad.clone() for p in params])
            optimizer.zero_grad()
            for p, g in zip(params, combine(grads)):
                p.grad = g
            optimizer.step()
        """,
        # The optimizer updates an input image; the model's gradients are cleared.
        """
        image = torch.randn(1, 3, 224, 224, requires_grad=True)
        optimizer = torch.optim.Adam([image], lr=0.05)
        for i in range(steps):
            optimizer.zero_grad()
            loss = -model(image)[0, target]
            loss.backward()
            model.zero_grad()
            optimizer.step()
        """,
        # Rescaling gradients in place is not clearing them.
        """
        for x, y in loader:
            criterion(model(x), y).backward()
            for p in model.parameters():
                p.grad.mul_(1.0 / world_size)
            optimizer.step()
            optimizer.zero_grad()
        """,
        # Clearing the gradients of a frozen teacher (its parameters are not stepped).
        """
        student_opt = torch.optim.SGD(student.parameters(), lr=0.1)
        for x in loader:
            loss = distill(student(x), teacher(x))
            loss.backward()
            teacher.zero_grad()
            student_opt.step()
        """,
    ]

    INVALID = [
        # Accumulation whose clear still runs on every micro-batch.
        """
        for step, batch in enumerate(loader):
            optimizer.zero_grad()  # expect: TL005
            loss = model(batch) / accum
            loss.backward()
            if (step + 1) % accum == 0:
                optimizer.step()
                scheduler.step()
        """,
        # a step counter kept across epochs, and a clear at the start of every epoch
        """
        global_step = 0
        for epoch in range(epochs):
            opt.zero_grad()  # expect: TL005
            for x, y in loader:
                (criterion(net(x), y) / accum_steps).backward()
                global_step += 1
                if global_step % accum_steps == 0:
                    opt.step()
                    opt.zero_grad()
        """,
        # The trainer's own backward() wrapper clears right after back-propagating.
        """
        class Trainer:
            def backward(self, loss):
                loss.backward()
                self.model.zero_grad()  # expect: TL005

            def fit(self, loader):
                for x, y in loader:
                    self.backward(self.model(x, y))
                    self.optimizer.step()
        """,
        # The clear goes through another name for the stepped optimizer.
        """
        def fit(model, loader, opt):
            o = opt
            for x, y in loader:
                model(x, y).backward()
                o.zero_grad()  # expect: TL005
                opt.step()
        """,
        # Accelerate holds back the prepared optimizer's step and zero_grad, not the model's
        """
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                model.zero_grad()  # expect: TL005
        """,
        # zero_grad inside the loop of micro-batches: only the last one's gradients are stepped
        Example(
            """
            for batch in loader:
                for micro in batch.chunk(4):
                    optimizer.zero_grad()  # expect: TL005
                    loss = criterion(model(micro)) / 4
                    loss.backward()
                optimizer.step()
            """
        ),
        # the clear comes after the replay that wrote the gradients
        Example(
            """
            import torch
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_loss = model(static_x).sum()
                static_loss.backward()
            for data in loader:
                static_x.copy_(data)
                g.replay()
                optimizer.zero_grad()  # expect: TL005
                optimizer.step()
            """
        ),
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.zero_grad()  # expect: TL005
            optimizer.step()
        """,
        # The model's gradients, with the only optimizer of the file.
        """
        import torch as T
        opt = T.optim.Adam(model.parameters(), lr=1e-3)
        for x, y in loader:
            out = model(x)
            loss = T.nn.functional.cross_entropy(out, y)
            loss.backward()
            model.zero_grad()  # expect: TL005
            opt.step()
        """,
        # With a GradScaler.
        """
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            optimizer.zero_grad(set_to_none=True)  # expect: TL005
            scaler.step(optimizer)
            scaler.update()
        """,
        # Clearing by hand.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            for p in model.parameters():
                p.grad = None  # expect: TL005
            optimizer.step()
        """,
        # Inside a helper that the loop calls.
        """
        class Trainer:
            def train_step(self, batch):
                loss = self.model(batch)
                loss.backward()
                self.optimizer.zero_grad()  # expect: TL005
                self.optimizer.step()

            def fit(self, loader):
                for batch in loader:
                    self.train_step(batch)
        """,
        # A helper that clears, called between backward and step.
        """
        def reset(optimizer):
            optimizer.zero_grad()  # expect: TL005

        for x, y in loader:
            criterion(model(x), y).backward()
            reset(optimizer)
            optimizer.step()
        """,
        # The model an optimizer was built from (through a filter), by hand.
        """
        import torch
        optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1)
        for x, y in loader:
            criterion(net(x), y).backward()
            for p in net.parameters():
                p.grad.zero_()  # expect: TL005
            optimizer.step()
        """,
        # Gradient accumulation broken: the clear sits before the step in the `if`.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.zero_grad()  # expect: TL005
                optimizer.step()
        """,
        # Micro-steps, then a clear before the step.
        """
        for batch in loader:
            for chunk in batch.chunk(4):
                (model(chunk).mean() / 4).backward()
            optimizer.zero_grad()  # expect: TL005
            optimizer.step()
        """,
        # A GAN whose discriminator update clears its own gradients too early.
        """
        for real in loader:
            optimizer_D.zero_grad()
            d_loss = adversarial_loss(discriminator(real), valid)
            d_loss.backward()
            optimizer_D.zero_grad()  # expect: TL005
            optimizer_D.step()
            optimizer_G.zero_grad()
            g_loss = adversarial_loss(discriminator(generator(z)), valid)
            g_loss.backward()
            optimizer_G.step()
        """,
        # A train function with no loop of its own.
        """
        def train_step(model, batch, opt):
            loss = model(batch).loss
            loss.backward()
            opt.zero_grad()  # expect: TL005
            opt.step()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        if not (train.backward and train.steps and train.clears):
            return
        idx = an.index(ctx)
        flow = an.flow(ctx)
        # A CUDA graph replay runs its captured backward again: it refills what a clear emptied.
        writes = an.gradient_writes(ctx)
        kinds = {id(n): "backward" for n in train.backward}
        kinds.update({id(n): "step" for n in train.steps})
        kinds.update({id(n): "clear" for n in train.clears})
        kinds.update({id(n): "refill" for n in writes})
        optimizers = an.optimized_parameters(ctx)
        interesting = [*train.backward, *train.steps, *train.clears, *writes]
        reported: set[int] = set()
        clear_ids = {id(n) for n in train.clears}
        backward_ids = {id(n) for n in train.backward}
        for unheld in an.unheld_clears(idx, train):
            reported.add(id(unheld.clear))
            yield self._report_unheld(ctx, unheld)
        for scope in an.running_scopes(idx, an.functions(ctx), train.steps):
            events = flow.events(scope, interesting)
            for i, step in enumerate(events):
                if kinds[id(step.node)] != "step":
                    continue
                for clear, inner in self._clears_before(flow, optimizers, kinds, events[:i], step):
                    if id(clear.node) not in reported:
                        reported.add(id(clear.node))
                        yield self._report(ctx, clear.node, step.node, inner is not None)
                for clear in an.clears_between_passes(idx, events, step, clear_ids, backward_ids):
                    if id(clear.node) not in reported and optimizers.clears_what_step_applies(clear.node, step.node):
                        reported.add(id(clear.node))
                        yield self._report_between_passes(ctx, clear.node, step)
        if an.uses_framework_accumulation(ctx):
            return
        for found in an.loop_accumulations(ctx):
            period = an.every_n(idx, found.loop, found.step)
            if period is None or period.guard is None:
                continue  # micro-steps in a loop of their own, or steps after `if ...: continue`
            for clear in flow.events(found.loop.body, train.clears):
                if id(clear.node) in reported or not an.runs_every_iteration_of(idx, found.loop, clear):
                    continue
                if optimizers.clears_what_step_applies(clear.node, found.accumulation.step):
                    reported.add(id(clear.node))
                    yield self._report_every_iteration(ctx, clear.node, found.accumulation)

    def _clears_before(
        self, flow: an.Flow, optimizers: an.OptimizedParameters, kinds: dict[int, str], before: list[an.Event], step: an.Event
    ) -> Iterator[tuple[an.Event, cst.For | cst.While | None]]:
        """Clears of `step`'s gradients after the last backward pass before it, with no
        gradient written back in between (gradient surgery sets `p.grad` itself); each with the
        inner loop whose later passes run it after an earlier pass's backward, if that is how."""
        backward = next(
            (e for e in reversed(before) if kinds[id(e.node)] == "backward" and flow.reaches(e, step)), None
        )
        if backward is None:
            return
        start = before.index(backward)
        step_guards = {(id(s), branch) for s, branch in step.guards}

        def clears_for_step(j: int, clear: an.Event) -> bool:
            return (
                kinds[id(clear.node)] == "clear"
                # A clear under a condition of its own is a deliberate skip of one update.
                and all((id(s), branch) in step_guards for s, branch in clear.guards)
                and flow.reaches(clear, step)
                and not any(kinds[id(e.node)] == "refill" and flow.reaches(e, step) for e in before[j + 1 :])
                and optimizers.clears_what_step_applies(clear.node, step.node)
            )

        for j, clear in enumerate(before[start + 1 :], start + 1):
            if clears_for_step(j, clear) and flow.reaches(backward, clear):
                yield clear, None
        # A loop of micro-batches that clears and back-propagates, with the step after it: from
        # its second pass on, the clear runs after the previous pass's backward.
        repeated = [loop for loop in backward.loops if loop not in step.loops]
        for j, clear in enumerate(before[:start]):
            inner = next((loop for loop in repeated if loop in clear.loops), None)
            if inner is not None and clears_for_step(j, clear):
                yield clear, inner

    def _report_unheld(self, ctx: FileContext, unheld: an.UnheldClear) -> Report:
        code = ctx.module.code_for_node
        cleared = code(unheld.clear).strip()
        context = code(unheld.block.items[0].item)
        return self.report(
            unheld.clear,
            f"`{cleared}` inside `with {context}:` runs on every micro-batch, but Accelerate applies the "
            f"optimizer's step (and its `zero_grad()`) only on the batch that syncs gradients: this clear "
            f"throws away the gradients of every micro-batch but the last; clear through the prepared "
            f"optimizer's `zero_grad()` instead",
        )

    def _report_every_iteration(self, ctx: FileContext, clear: cst.CSTNode, acc: an.Accumulation) -> Report:
        code = ctx.module.code_for_node
        return self.report(
            clear,
            f"`{code(clear).strip()}` runs every iteration, but `{code(acc.step)}` only once every "
            f"`{code(acc.count)}`: each clear throws away the gradients accumulated since the last step, "
            f"so the step applies only the last iteration's; clear right after `{code(acc.step)}` instead",
        )

    def _report_between_passes(self, ctx: FileContext, clear: cst.CSTNode, step: an.Event) -> Report:
        code = ctx.module.code_for_node
        cleared = code(clear).strip()
        return self.report(
            clear,
            f"`{cleared}` runs once per pass of this loop, but `{code(step.node)}` runs only when its "
            f"counter says so, and that counter carries over from pass to pass: the clear throws away "
            f"the gradients back-propagated since the last step; clear only right after the step",
        )

    def _report(self, ctx: FileContext, clear: cst.CSTNode, step: cst.CSTNode, repeated: bool) -> Report:
        code = ctx.module.code_for_node
        cleared = code(clear).strip() if not isinstance(clear, cst.Call) else code(clear)
        step_code = code(step)
        if repeated:
            message = (
                f"`{cleared}` runs in every pass of this loop, after the previous pass's backward and "
                f"before `{step_code}`: the step applies only the last pass's gradients; clear "
                f"gradients once, before the loop"
            )
        else:
            message = (
                f"`{cleared}` runs after the backward pass and before `{step_code}`: the step applies no "
                f"gradient; clear gradients before the forward pass or after `{step_code}`"
            )
        return self.report(clear, message)
