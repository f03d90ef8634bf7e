from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an

# `torch.optim.lr_scheduler` classes and the Hugging Face factories that build one.
_TORCH_SCHEDULERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.SWALR")
_SCHEDULE_FACTORY = re.compile(r"^get_(\w+_)?schedule(r|_with_warmup)?\w*$")
_FACTORY_PACKAGES = ("transformers", "diffusers")
# `.step()` of these is not a learning-rate schedule (diffusion samplers, EMA or
# weight-decay schedules, curricula).
_NOT_LR_WORDS = frozenset(
    "noise ddpm ddim pndm dpm euler diffusion sampler beta momentum ema wd weight decay teacher "
    "temperature temp tau mask drop dropout kl curriculum data batch alpha sigma".split()
)


class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Finds a learning-rate scheduler's `scheduler.step()` that runs before the optimizer's
    `optimizer.step()` within one iteration of a training loop: at the top of the batch
    loop, or at the top of the epoch loop for a per-epoch schedule. A scheduler is a name
    bound to a `torch.optim.lr_scheduler` class (however imported) or to a Hugging Face
    `get_*_schedule*` factory, or a name that says scheduler (`lr_scheduler`, `sched`).

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
    TRIGGERS = (("sched",), ("step(",))
    CONFIRMED_BY = ("TL007",)

    VALID = [
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
    ]

    INVALID = [
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
        train = an.training(ctx)
        if not train.steps:
            return
        idx = an.index(ctx)
        imps = an.imports(ctx)
        schedulers = _Schedulers(ctx, idx, imps)
        scheduled = [call for call in idx.nodes(cst.Call) if schedulers.is_schedule_step(call)]
        if not scheduled:
            return
        flow = an.flow(ctx)
        is_scheduled = {id(c) for c in scheduled}
        reported: set[int] = set()
        interesting = [*scheduled, *train.steps]
        for scope in an.running_scopes(idx, an.functions(ctx), interesting):
            events = flow.events(scope, interesting)
            for i, event in enumerate(events):
                if id(event.node) not in is_scheduled or id(event.node) in reported:
                    continue
                step = self._step_after(flow, train, schedulers, events, i)
                if step is not None:
                    reported.add(id(event.node))
                    yield self._report(ctx, event.node, step.node)

    def _step_after(
        self, flow: an.Flow, train: an.Training, schedulers: _Schedulers, events: list[an.Event], i: int
    ) -> an.Event | None:
        """The optimizer step that `events[i]` (a scheduler step) runs before in one iteration,
        if no step of that optimizer ran earlier in the same iteration."""
        sched = events[i]
        optimizer = schedulers.optimizer_of(sched.node)

        def steps_it(e: an.Event) -> bool:
            # A scheduler's own `step()` never counts as the optimizer's, whatever its name says.
            if id(e.node) not in train.stepped or schedulers.is_schedule_step(e.node):  # type: ignore[arg-type]
                return False
            return optimizer is None or an.dotted(train.optimizer_of(e.node)) == optimizer  # type: ignore[arg-type]

        for step in events[i + 1 :]:
            if not steps_it(step) or not flow.reaches(sched, step):
                continue
            shared, loop = _shared_iteration(sched, step)
            if not shared or (loop is not None and _skips_first_iteration(sched, step, loop)):
                continue
            earlier = [
                e for e in events[:i] if steps_it(e) and (loop is None or loop in e.loops) and flow.reaches(e, sched)
            ]
            return None if earlier else step
        return None

    def _report(self, ctx: FileContext, sched: cst.CSTNode, step: cst.CSTNode) -> Report:
        code = ctx.module.code_for_node
        sched_code, step_code = code(sched), code(step)
        message = (
            f"`{sched_code}` runs before `{step_code}` in the same iteration: the schedule skips its "
            f"first value and every update uses the next one; call `{sched_code}` after `{step_code}`"
        )
        return self.report(sched, message)


class _Schedulers:
    """Which `.step()` calls advance a learning-rate schedule, and of which optimizer."""

    def __init__(self, ctx: FileContext, idx: an.Index, imps: an.Imports) -> None:
        funcs = an.functions(ctx)
        self.idx = idx
        self.bound: dict[str, str | None] = {}
        self.custom: set[str] = set()
        for assign in idx.nodes(cst.Assign):
            if not isinstance(assign.value, cst.Call):
                continue
            callee = imps.callee(assign.value) or ""
            short = callee.rsplit(".", 1)[-1]
            for target in assign.targets:
                name = an.dotted(target.target)
                if name is None:
                    continue
                if callee.startswith(_TORCH_SCHEDULERS) or (
                    callee.startswith(_FACTORY_PACKAGES) and _SCHEDULE_FACTORY.match(short)
                ):
                    args = an.positional(assign.value)
                    self.bound[name] = an.dotted(args[0].value) if args else None
                elif funcs.method(short, "step") is not None:
                    self.custom.add(name)
        # `scheduler.last_epoch = start_epoch - 1`: the code positions the schedule itself, so
        # that stepping first lands on the right value (ultralytics).
        self.positioned = {
            name.rsplit(".", 1)[0]
            for assign in idx.nodes(cst.Assign)
            for target in assign.targets
            if (name := an.dotted(target.target)) is not None and name.endswith(".last_epoch")
        }

    def _warning_silenced(self, call: cst.Call) -> bool:
        """Inside `with warnings.catch_warnings():`: PyTorch's warning about this order was
        read and silenced on purpose."""
        return any(
            isinstance(a, cst.With) and any("warnings" in (an.dotted(_callee(i.item)) or "") for i in a.items)
            for a in self.idx.ancestors(call)
        )

    def is_schedule_step(self, call: cst.Call) -> bool:
        owner = an.receiver(call)
        # The result of torch's `step()` is None: code that uses it has a schedule of its own.
        if (
            an.method_name(call) != "step"
            or call.args
            or owner is None
            or not isinstance(self.idx.parent(call), cst.Expr)
        ):
            return False
        name = an.dotted(owner)
        if name is None or name in self.custom or name in self.positioned or self._warning_silenced(call):
            return False
        if name in self.bound:
            return True
        tokens = an.name_tokens(an.last_name(owner) or "")
        return any(t.startswith("sched") for t in tokens) and not any(t in _NOT_LR_WORDS for t in tokens)

    def optimizer_of(self, call: cst.CSTNode) -> str | None:
        owner = an.receiver(call)  # type: ignore[arg-type]
        name = an.dotted(owner) if owner is not None else None
        return self.bound.get(name) if name is not None else None


def _callee(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.func if isinstance(expr, cst.Call) else expr


def _shared_iteration(sched: an.Event, step: an.Event) -> tuple[bool, cst.For | cst.While | None]:
    """Whether both run in one iteration, and the innermost loop whose iteration that is:
    (True, None) when neither runs in a loop of the scope (a step function), (False, None)
    when they share no iteration (a schedule fast-forwarded before the training loop)."""
    shared = [loop for loop, other in zip(sched.loops, step.loops) if loop is other]
    if shared:
        return True, shared[-1]
    return not sched.loops and not step.loops, None


def _skips_first_iteration(sched: an.Event, step: an.Event, loop: cst.For | cst.While) -> bool:
    """`if epoch > 0: scheduler.step()`: a guard on the shared loop's own variable that the
    optimizer step does not share (an accumulation period `if (i + 1) % n == 0:` around both
    steps skips nothing between them)."""
    if not isinstance(loop, cst.For):
        return False
    variables = {n.value for n in _names_in(loop.target)}
    shared = {(id(stmt), branch) for stmt, branch in step.guards}
    return any(
        variables & {n.value for n in _names_in(stmt.test)}
        for stmt, branch in sched.guards
        if (id(stmt), branch) not in shared
    )


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        stack.extend(an.children(current))
    return found
