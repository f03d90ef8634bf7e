from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an


class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Finds a learning-rate scheduler's `scheduler.step()` that runs before the optimizer's
    `optimizer.step()` within one iteration of a training loop: at the top of the batch
    loop, or at the top of the epoch loop for a per-epoch schedule. A scheduler is a name
    bound to a `torch.optim.lr_scheduler` class (however imported) or to a Hugging Face
    `get_*_schedule*` factory, or a name that says scheduler (`lr_scheduler`, `sched`), also
    as an item of a dict or list of them (`scheds["lr"]`).

    ## Why is this bad?
    Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it first moves
    the schedule one position ahead before the first update: the first learning rate of
    the schedule (the warm-up start, the initial value) is never used, and every later
    update uses the next epoch's (or step's) value. PyTorch warns about it at runtime
    ("Detected call of `lr_scheduler.step()` before `optimizer.step()`").

    ## Example
    ```python
    for epoch in range(epochs):
        scheduler.step()
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    ```

    ## Fix safety
    No automatic fix: moving the call changes what code between the two steps (logging
    the learning rate, warm-up logic) sees, and the right place depends on whether the
    schedule is per step or per epoch.

    ## Runtime confirmation
    `torchlint probe` confirms it when a scheduler's first `step()` runs before any step of
    its optimizer (a GradScaler step that skipped the update counts as a step), with the
    learning rate before and after.

    ## References
    - https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate
    """

    CODE = "TL007"
    NAME = "scheduler-before-optimizer"
    SUMMARY = "Learning-rate scheduler steps before the optimizer in an iteration"
    SEVERITY = Severity.WARNING
    # A schedule's step, or a project helper named for the learning rate it updates.
    TRIGGERS = (("sched", "learning_rate", "_lr("),)
    CONFIRMED_BY = ("TL007",)

    VALID = [
        # A DeepSpeed engine's step() steps the optimizer, then the schedule: stepping after it
        # follows an update, whatever else the driver loop runs later.
        """
        def train_engine(engine, lr_scheduler, loader):
            for batch in loader:
                engine.backward(engine(batch))
                engine.step()
                lr_scheduler.step()

        def train_plain(model, optimizer, lr_scheduler, loader):
            for batch in loader:
                model(batch).backward()
                optimizer.step()
                lr_scheduler.step()

        for stage in (1, 2, 3):
            train_engine(engine, lr_scheduler, loader)
            train_plain(model, optimizer, lr_scheduler, loader)
        """,
        # Per-iteration schedule after the step.
        """
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            scheduler.step()
        """,
        # Per-epoch schedule after the inner loop.
        """
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            scheduler.step()
        """,
        # ReduceLROnPlateau with a metric, and an explicit epoch argument.
        """
        for epoch in range(epochs):
            plateau.step(val_loss)
            lr_scheduler.step(epoch)
            train_one_epoch(model, optimizer)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
        """,
        # Skipping the first epoch: the step then follows the previous epoch's updates.
        """
        for epoch in range(start_epoch, epochs):
            if epoch > start_epoch:
                scheduler.step()
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
        """,
        # Fast-forwarding the schedule when resuming, before training starts.
        """
        for _ in range(start_epoch):
            scheduler.step()
        for epoch in range(start_epoch, epochs):
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            scheduler.step()
        """,
        # A diffusion sampler's step() is not a learning-rate schedule.
        """
        for t in noise_scheduler.timesteps:
            noise_pred = unet(latents, t)
            latents = noise_scheduler.step(noise_pred, t, latents).prev_sample
        for batch in loader:
            loss.backward()
            optimizer.step()
        """,
        # GAN: the discriminator's scheduler steps after its optimizer, before G's step.
        """
        from torch.optim.lr_scheduler import StepLR
        sched_d = StepLR(opt_d, step_size=10)
        for real in loader:
            d_loss.backward()
            opt_d.step()
            sched_d.step()
            g_loss.backward()
            opt_g.step()
        """,
        # A custom schedule object that returns the learning rate it sets (I-JEPA).
        """
        for itr, batch in enumerate(loader):
            _new_lr = scheduler.step()
            _new_wd = wd_scheduler.step()
            loss.backward()
            optimizer.step()
        """,
        # A scheduler step in another branch than the optimizer step.
        """
        for x, y in loader:
            if warmup:
                scheduler.step()
            else:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
        """,
        # A local schedule class with its own step() semantics.
        """
        class WarmupSchedule:
            def step(self):
                self.n += 1
                for g in self.optimizer.param_groups:
                    g["lr"] = self.base * min(1.0, self.n / self.warmup)

        scheduler = WarmupSchedule()
        for x, y in loader:
            scheduler.step()
            criterion(model(x), y).backward()
            optimizer.step()
        """,
        # PyTorch's warning about the order read and silenced on purpose (ultralytics).
        """
        import warnings
        for epoch in range(start_epoch, epochs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler.step()
            for batch in loader:
                loss.backward()
                optimizer.step()
        """,
        # The schedule positioned by hand so that stepping first lands on the right value.
        """
        scheduler.last_epoch = start_epoch - 1
        for epoch in range(start_epoch, epochs):
            scheduler.step()
            for batch in loader:
                loss.backward()
                optimizer.step()
        """,
        # timm-style per-update schedules have their own method name.
        """
        for batch in loader:
            loss.backward()
            optimizer.step()
            lr_scheduler.step_update(num_updates=num_updates)
        """,
        # SWALR is a schedule, not an optimizer: its step alone is no optimizer step (composer's
        # SWA callback, whose optimizer is `state.optimizers[0]`).
        """
        from torch.optim.swa_utils import SWALR, AveragedModel
        class SWA:
            def init(self, state):
                self.swa_scheduler = SWALR(state.optimizers[0], swa_lr=self.swa_lr)
                self.swa_model = AveragedModel(state.model)

            def apply(self, state):
                self.swa_model.update_parameters(state.model)
                if self.schedule_swa_lr:
                    self.swa_scheduler.step()
        """,
        # A test that misuses the order on purpose to check PyTorch's warning: in the function
        # handed to `assertWarnsRegex`, and under `pytest.warns`.
        """
        import unittest
        import pytest
        import torch

        class OrderWarningTest(unittest.TestCase):
            def test_warns(self):
                opt = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))])
                def wrong_order():
                    decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
                    decay.step()
                    opt.step()
                self.assertWarnsRegex(UserWarning, "before", wrong_order)

        def check_warning(opt, decay):
            with pytest.warns(UserWarning, match="optimizer.step"):
                decay.step()
                opt.step()
        """,
        # No loop: code that runs once (a script's top level, a test) has no iteration.
        """
        import torch
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        cosine.step()
        net(batch).sum().backward()
        opt.step()

        def test_one_update():
            cosine.step()
            opt.step()
        """,
    ]

    INVALID = [
        # A schedule kept in a dict under a name that does not say scheduler.
        """
        from torch.optim.lr_scheduler import StepLR

        def fit(model, loader, opt):
            policies = {"lr": StepLR(opt, 10)}
            for epoch in range(10):
                policies["lr"].step()  # expect: TL007
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
        """,
        # A DeepSpeed engine steps its optimizer in step(): the schedule steps before it.
        """
        for batch in loader:
            loss = engine(batch)
            engine.backward(loss)
            lr_scheduler.step()  # expect: TL007
            engine.step()
        """,
        # Both steps under one accumulation period, the schedule first (pytorch-transformers
        # 1.x examples, ThilinaRajapakse/pytorch-transformers-classification#21).
        """
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch)[0] / accumulation_steps
            loss.backward()
            if (step + 1) % accumulation_steps == 0:
                scheduler.step()  # expect: TL007
                optimizer.step()
                model.zero_grad()
        """,
        """
        for x, y in loader:
            scheduler.step()  # expect: TL007
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        """,
        # Per-epoch, at the top of the epoch (the pre-1.1 habit).
        """
        import torch
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
        for epoch in range(90):
            scheduler.step()  # expect: TL007
            for images, target in train_loader:
                loss = criterion(model(images), target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
        # Bound through an aliased import, with a name that does not say scheduler.
        """
        from torch.optim import lr_scheduler as ls
        decay = ls.CosineAnnealingLR(opt, T_max=100)
        for x, y in loader:
            opt.zero_grad()
            loss = criterion(net(x), y)
            loss.backward()
            decay.step()  # expect: TL007
            opt.step()
        """,
        # A Hugging Face schedule.
        """
        from transformers import get_linear_schedule_with_warmup
        warmup = get_linear_schedule_with_warmup(optimizer, 100, 1000)
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            warmup.step()  # expect: TL007
            optimizer.step()
            optimizer.zero_grad()
        """,
        # With a GradScaler.
        """
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            lr_scheduler.step()  # expect: TL007
            scaler.step(optimizer)
            scaler.update()
        """,
        # The epoch function steps the optimizer; the scheduler steps before calling it.
        """
        def train_one_epoch(model, loader, optimizer):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()

        for epoch in range(args.epochs):
            scheduler.step()  # expect: TL007
            train_one_epoch(model, train_loader, optimizer)
            validate(model, val_loader)
        """,
        # A warm-up scheduler stepped at the top of the batch loop (pytorch-cifar100).
        """
        for batch_index, (images, labels) in enumerate(training_loader):
            if epoch <= args.warm:
                warmup_scheduler.step()  # expect: TL007
            optimizer.zero_grad()
            loss = loss_function(net(images), labels)
            loss.backward()
            optimizer.step()
        """,
        # A method of a trainer class.
        """
        class Trainer:
            def fit(self):
                for epoch in range(self.epochs):
                    for batch in self.loader:
                        self.sched.step()  # expect: TL007
                        loss = self.model(batch)
                        loss.backward()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
        """,
        # A step function: the order holds every time it is called.
        """
        def train_step(batch):
            optimizer.zero_grad()
            loss = model(batch)
            loss.backward()
            lr_scheduler.step()  # expect: TL007
            optimizer.step()
        """,
        # GAN with schedulers bound to their optimizers.
        """
        import torch.optim as optim
        sched_g = optim.lr_scheduler.ExponentialLR(opt_g, 0.99)
        for real in loader:
            d_loss.backward()
            opt_d.step()
            sched_g.step()  # expect: TL007
            g_loss.backward()
            opt_g.step()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        schedules = an.schedules(ctx)
        if not schedules.steps or not schedules.updates:
            return
        idx = an.index(ctx)
        flow = an.flow(ctx)
        is_scheduled = {id(c) for c in schedules.steps}
        reported: set[int] = set()
        interesting = [*schedules.steps, *schedules.updates]
        funcs = an.functions(ctx)
        for scope in an.running_scopes(idx, funcs, interesting):
            events = flow.events(scope, interesting)
            # Code that runs once has no iterations: only a loop of it makes one.
            looped_only = an.runs_once(idx, funcs, scope)
            for i, event in enumerate(events):
                if id(event.node) not in is_scheduled or id(event.node) in reported:
                    continue
                step = self._step_after(flow, schedules, is_scheduled, events, i, looped_only)
                if step is not None:
                    reported.add(id(event.node))
                    yield self._report(ctx, event.node, step.node)

    def _step_after(
        self,
        flow: an.Flow,
        schedules: an.Schedules,
        is_scheduled: set[int],
        events: list[an.Event],
        i: int,
        looped_only: bool,
    ) -> an.Event | None:
        """The optimizer update that `events[i]` (a schedule step) runs before in one
        iteration, if no update of that optimizer ran earlier in the same iteration. With
        `looped_only`, outside the scope's loops there is no iteration."""
        sched = events[i]
        optimizer = schedules.optimizer_of(sched.node)

        def updates_it(e: an.Event) -> bool:
            return id(e.node) not in is_scheduled and schedules.updates_optimizer(e.node, optimizer)

        for step in events[i + 1 :]:
            if not updates_it(step) or not flow.reaches(sched, step):
                continue
            shared, loop = an.shared_iteration(sched, step)
            if not shared or (loop is None and looped_only) or (loop is not None and an.skips_first_iteration(sched, step, loop, schedules.number)):
                continue
            earlier = [
                e for e in events[:i] if updates_it(e) and (loop is None or loop in e.loops) and flow.reaches(e, sched)
            ]
            return None if earlier else step
        return None

    def _report(self, ctx: FileContext, sched: cst.CSTNode, step: cst.CSTNode) -> Report:
        def code(node: cst.CSTNode) -> str:
            text = ctx.module.code_for_node(node)
            return f"{ctx.module.code_for_node(node.func)}(...)" if "\n" in text and isinstance(node, cst.Call) else text

        sched_code, step_code = code(sched), code(step)
        message = (
            f"`{sched_code}` runs before `{step_code}` in the same iteration: the schedule skips its "
            f"first value and every update uses the next one; call `{sched_code}` after `{step_code}`"
        )
        return self.report(sched, message)
