from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an

_EVAL_FUNCTION = re.compile(r"(?i)(eval|valid|test|infer|predict)")


class LossAccumulatedWithGraph(Rule):
    """
    ## What it does
    Finds a running total of a tensor that requires grad, kept across the iterations of a
    loop: `total_loss += loss`, `total = total + loss`, `total = loss if total is None else
    total + loss`, `losses.append(loss)`,
    `meter.update(loss, n)` of an `AverageMeter`-like running average, where
    `loss` is back-propagated in that iteration (or is part of what is, or is returned by a
    step function of this module or another project module that back-propagated it), or is a loss
    computed with gradients enabled in an evaluation loop, and is added without
    `.item()`, `.detach()` or `float()`. Also a total that a per-step method keeps in an
    attribute of its object (`self.epoch_loss += loss` in the `train_step` that a loop of
    `fit` calls once per batch), which outlives each call as a loop's total outlives each
    iteration.

    ## Why is this bad?
    Adding a tensor that requires grad to a total records the addition in the autograd
    graph: the total keeps a reference to every iteration's graph, so memory grows with
    every step until the epoch ends (or the process runs out of memory), and each step
    gets slower. The PyTorch FAQ calls this "accumulating history across your training loop".

    ## Example
    ```python
    total_loss = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    ```

    ## Use instead
    ```python
    total_loss = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()  # or loss.item() for a Python float
    ```
    Summing losses on purpose to back-propagate the total (several heads, several
    chunks) is fine: the total itself is back-propagated.

    ## Fix safety
    The fix accumulates `loss.detach()`: the total stays a tensor (so later tensor code
    keeps working) and carries no graph. It is safe unless the total is meant to be
    back-propagated somewhere this rule cannot see.

    ## Runtime confirmation
    `torchlint probe` confirms it as TL103 memory-growth: allocated memory rises with
    every iteration.

    ## References
    - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
    """

    CODE = "TL006"
    NAME = "loss-accumulated-with-graph"
    SUMMARY = "A running total keeps the autograd graph of every iteration alive"
    SEVERITY = Severity.WARNING
    # A loss handed to a project tracker that totals it shows no `+` here: the usual names of
    # such methods stand in for it.
    TRIGGERS = (("+", "append", "update", "add", "track", "record"), ("backward", "loss", "criterion"))
    CONFIRMED_BY = ("TL103",)

    VALID = [
        # a per-step method that restarts the attribute each call, or adds a number into it
        """
        import torch.nn.functional as F
        class Trainer:
            def train_step(self, x, y):
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                self.last_loss = 0.0
                self.last_loss += loss
                self.epoch_loss += loss.item()

            def fit(self, loader):
                for x, y in loader:
                    self.train_step(x, y)
        """,
        # a model output's loss read as a number, and a count carried by the batch
        """
        for batch in loader:
            output = model(**batch)
            output.loss.backward()
            optimizer.step()
            train_loss += output.loss.item()
            seen += batch.num_graphs
            losses.append(output.loss.data)
        """,
        # Outputs kept so that a later pass of the schedule back-propagates them (a pipeline
        # schedule that runs `lag` chunks ahead).
        """
        import torch
        outputs = []
        for i in range(len(chunks) + lag):
            if i < len(chunks):
                loss = criterion(stage(chunks[i]), targets[i])
                outputs.append(loss)
            if i >= lag:
                for loss in outputs[i - lag : i - lag + 1]:
                    loss.backward()
        """,
        # helpers that return a number, or a detached loss
        """
        import torch
        class Trainer:
            def training_step(self, model, inputs):
                loss = model(**inputs)[0]
                loss.backward()
                return loss.item()

            def eval_step(self, model, inputs):
                loss = model(**inputs)[0]
                loss.backward()
                return loss.detach()

            def train(self, model, loader):
                tr_loss, ev_loss = 0.0, 0.0
                for inputs in loader:
                    tr_loss += self.training_step(model, inputs)
                    ev_loss += self.eval_step(model, inputs)
                    tr_loss += len(inputs)
                    self.optimizer.step()
        """,
        # A Python float.
        """
        total_loss = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        """,
        # Detached tensors.
        """
        losses = []
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
            running = running + float(loss)
        """,
        # The loss was already turned into a number.
        """
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            loss = loss.item()
            total += loss
        """,
        # Deliberate: summing losses of several chunks, then back-propagating the total.
        """
        for batch in loader:
            total = 0
            for chunk in batch.chunk(4):
                total += criterion(model(chunk), target)
            total.backward()
            optimizer.step()
        """,
        # Deliberate: a list of losses stacked and back-propagated.
        """
        losses = []
        for task, (x, y) in tasks:
            loss = heads[task](x, y)
            losses.append(loss)
        torch.stack(losses).sum().backward()
        """,
        # Within one iteration: adding an auxiliary loss before backward.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss = loss + 0.1 * aux_loss(model)
            loss.backward()
            optimizer.step()
        """,
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            for reg in regularizers:
                loss += reg(model)
            loss.backward()
        """,
        # Evaluation under no_grad.
        """
        import torch
        def evaluate(model, loader):
            total = 0
            with torch.no_grad():
                for x, y in loader:
                    loss = criterion(model(x), y)
                    total += loss
            return total / len(loader)
        """,
        # Evaluation under inference_mode as a decorator.
        """
        import torch
        @torch.inference_mode()
        def validate(model, loader):
            losses = []
            for x, y in loader:
                losses.append(criterion(model(x), y))
                val_loss = criterion(model(x), y)
                losses.append(val_loss)
            return sum(losses)
        """,
        # NumPy code: no autograd graph at all.
        """
        import numpy as np
        def test(model, batches):
            total_loss = 0.0
            for X, y in batches:
                loss = cross_entropy_loss(model.forward(X), y)
                total_loss += loss
            return total_loss

        print(test(model, val_batches))
        """,
        # An evaluation function that is only called under no_grad.
        """
        import torch
        def evaluate(model, loader):
            total = 0
            for x, y in loader:
                loss = criterion(model(x), y)
                total += loss
            return total

        with torch.no_grad():
            evaluate(model, val_loader)
        """,
        # Summing under no_grad keeps no graph.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                total_loss += loss
        """,
        # An evaluation helper returning (loss, metrics, predictions): which is a tensor with
        # history is unknown (poutyne converts predictions to NumPy).
        """
        def _validate(self, steps):
            pred_list = []
            for step, (x, y) in steps:
                loss, metrics, pred_loss = self._compute_loss_and_metrics(x, y)
                pred_list.append(pred_loss)
            return pred_list

        def evaluate(self, loader):
            return self._validate(enumerate(loader))
        """,
        # Weights, counts and already-detached products.
        """
        for x, y in loader:
            loss_sum = criterion(model(x), y)
            loss = lam * loss_sum / n_tokens
            loss.backward()
            optimizer.step()
            total_tokens += n_tokens
            total_lam = total_lam + lam
            weighted += lam * loss.item()
        """,
        # `t.backward(grad)` back-propagates `t`, not the gradient it is given.
        """
        loss = 0.0
        for idx in dims:
            weight = weights[idx]
            loss += weight * fn(reps)
            for t, d in zip(truncated, detached):
                t.backward(weight * d.grad)
        """,
        # Predictions (not losses) and labels.
        """
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            labels.append(y)
            total_count += y.size(0)
        """,
        # A meter fed `.item()`, and a metric's update with predictions (not a loss).
        """
        from utils import AverageMeter
        losses = AverageMeter()
        for images, target in train_loader:
            output = model(images)
            loss = criterion(output, target)
            losses.update(loss.item(), images.size(0))
            accuracy.update(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
    ]

    INVALID = [
        # a trainer's per-step method keeps the total on its object, across the calls of fit's loop
        Example(
            """
            import torch.nn.functional as F
            class Trainer:
                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    loss = F.cross_entropy(self.model(x), y)
                    loss.backward()
                    self.optimizer.step()
                    self.epoch_loss += loss  # expect: TL006

                def fit(self, loader):
                    for x, y in loader:
                        self.train_step(x, y)
            """,
            fixed="""
            import torch.nn.functional as F
            class Trainer:
                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    loss = F.cross_entropy(self.model(x), y)
                    loss.backward()
                    self.optimizer.step()
                    self.epoch_loss += loss.detach()  # expect: TL006

                def fit(self, loader):
                    for x, y in loader:
                        self.train_step(x, y)
            """,
        ),
        # the loss field of a model's output (Hugging Face models return one)
        Example(
            """
            for batch in loader:
                output = model(**batch)
                output.loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                train_loss += output.loss  # expect: TL006
            """,
            fixed="""
            for batch in loader:
                output = model(**batch)
                output.loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                train_loss += output.loss.detach()  # expect: TL006
            """,
        ),
        # a total started by the first iteration and summed by the others (RecBole's trainer)
        Example(
            """
            total_loss = None
            for batch in loader:
                losses = loss_func(batch)
                losses.backward()
                optimizer.step()
                optimizer.zero_grad()
                total_loss = losses if total_loss is None else total_loss + losses  # expect: TL006
            """,
            fixed="""
            total_loss = None
            for batch in loader:
                losses = loss_func(batch)
                losses.backward()
                optimizer.step()
                optimizer.zero_grad()
                total_loss = losses.detach() if total_loss is None else total_loss + losses.detach()  # expect: TL006
            """,
        ),
        # the loss that a step function back-propagated, kept in a name before it is summed
        Example(
            """
            import torch
            def train_step(model, optimizer, x, y):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            def fit(model, optimizer, loader):
                epoch_loss = 0
                for x, y in loader:
                    loss = train_step(model, optimizer, x, y)
                    epoch_loss += loss  # expect: TL006
                return epoch_loss
            """,
            fixed="""
            import torch
            def train_step(model, optimizer, x, y):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            def fit(model, optimizer, loader):
                epoch_loss = 0
                for x, y in loader:
                    loss = train_step(model, optimizer, x, y)
                    epoch_loss += loss.detach()  # expect: TL006
                return epoch_loss
            """,
        ),
        # a loss call summed directly in a validation function that records gradients
        Example(
            """
            import torch
            def evaluate(net, loader, loss_fn):
                net.eval()
                total = 0
                for images, targets in loader:
                    total += loss_fn(net(images), targets)  # expect: TL006
                return total / len(loader)
            print(evaluate(net, val_loader, loss_fn))
            """,
            fixed="""
            import torch
            def evaluate(net, loader, loss_fn):
                net.eval()
                total = 0
                for images, targets in loader:
                    total += loss_fn(net(images), targets).detach()  # expect: TL006
                return total / len(loader)
            print(evaluate(net, val_loader, loss_fn))
            """,
        ),
        # the loss comes back from the method that back-propagated it (Hugging Face's old Trainer)
        Example(
            """
            import torch
            class Trainer:
                def training_step(self, model, inputs):
                    loss = model(**inputs)[0]
                    loss.backward()
                    return loss

                def train(self, model, loader):
                    tr_loss = torch.tensor(0.0)
                    for inputs in loader:
                        tr_loss += self.training_step(model, inputs)  # expect: TL006
                        self.optimizer.step()
                        model.zero_grad()
            """,
            fixed="""
            import torch
            class Trainer:
                def training_step(self, model, inputs):
                    loss = model(**inputs)[0]
                    loss.backward()
                    return loss

                def train(self, model, loader):
                    tr_loss = torch.tensor(0.0)
                    for inputs in loader:
                        tr_loss += self.training_step(model, inputs).detach()  # expect: TL006
                        self.optimizer.step()
                        model.zero_grad()
            """,
        ),
        Example(
            """
            total_loss = 0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss  # expect: TL006
            """,
            fixed="""
            total_loss = 0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss.detach()  # expect: TL006
            """,
        ),
        Example(
            """
            losses = []
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss)  # expect: TL006
            """,
            fixed="""
            losses = []
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.detach())  # expect: TL006
            """,
        ),
        # `total = total + loss` and a loss weighted by the batch size.
        """
        for epoch in range(epochs):
            epoch_loss = 0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss = epoch_loss + loss * x.size(0)  # expect: TL006
                doubled += 2 * loss  # expect: TL006
        """,
        # A GradScaler, and an attribute accumulator.
        """
        class Trainer:
            def train_epoch(self):
                for batch in self.loader:
                    with torch.autocast("cuda"):
                        loss = self.model(batch).loss
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad()
                    self.running_loss += loss  # expect: TL006
        """,
        # A component of the back-propagated loss.
        """
        for x, y in loader:
            optimizer.zero_grad()
            ce = criterion(model(x), y)
            kl = kl_term(model)
            loss = ce + 0.01 * kl
            loss.backward()
            optimizer.step()
            kl_total += kl  # expect: TL006
        """,
        # A dictionary of running totals.
        """
        stats = {"loss": 0.0}
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            stats["loss"] += loss  # expect: TL006
        """,
        # GAN: both losses kept.
        """
        G_losses, D_losses = [], []
        for real in loader:
            netD.zero_grad()
            errD = criterion(netD(real), label)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(netG(noise)), label)
            errG.backward()
            optimizerG.step()
            G_losses.append(errG)  # expect: TL006
            D_losses.append(errD)  # expect: TL006
        """,
        # An evaluation loop without no_grad: the graphs are never freed by a backward pass.
        """
        import torch.nn.functional as F
        def validate(model, loader):
            model.eval()
            val_loss = 0
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                val_loss += loss  # expect: TL006
            return val_loss / len(loader)

        for epoch in range(10):
            train(model)
            print(validate(model, val_loader))
        """,
        # A while loop over steps.
        """
        step = 0
        total = 0.
        while step < max_steps:
            x, y = next(it)
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            total += loss  # expect: TL006
            step += 1
        """,
        # nanoGPT-style unpacking of the model's outputs.
        """
        losses = []
        for it in range(max_iters):
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss)  # expect: TL006
        """,
        # Accumulated by an aliased import's loss, then summed.
        """
        import torch.nn as nn
        criterion = nn.MSELoss()
        history = []
        for epoch in range(100):
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            history.append(loss)  # expect: TL006
        """,
        # The loss tensor fed to a running-average meter (the ImageNet example's `AverageMeter`
        # without `.item()`; horovod#641).
        Example(
            """
            class AverageMeter:
                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

            losses = AverageMeter()
            for images, target in train_loader:
                loss = criterion(model(images), target)
                losses.update(loss, images.size(0))  # expect: TL006
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            class AverageMeter:
                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

            losses = AverageMeter()
            for images, target in train_loader:
                loss = criterion(model(images), target)
                losses.update(loss.detach(), images.size(0))  # expect: TL006
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
        ),
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        idx = an.index(ctx)
        loops: list[cst.For | cst.While] = [*idx.nodes(cst.For), *idx.nodes(cst.While)]
        for loop in loops:
            for total in an.running_totals(ctx, loop):
                if self._keeps_graph(ctx, idx, loop, total):
                    yield self._report(ctx, total)
            if idx.holds_any(loop.body, an.training(ctx).backward):
                handed = an.backpropagated_names(ctx, idx, idx.scope(loop)).direct
                for total in an.helper_totals(ctx, loop, handed):
                    if self._keeps_graph(ctx, idx, loop, total):
                        yield self._report(ctx, total)
        for method in an.per_step_methods(ctx):
            for total in an.running_totals(ctx, method):
                if self._keeps_graph(ctx, idx, method, total):
                    yield self._report(ctx, total)

    def _keeps_graph(self, ctx: FileContext, idx: an.Index, loop: an.Iteration, acc: an.RunningTotal) -> bool:
        imps = an.imports(ctx)
        if an.in_grad_free_block(idx, acc.statement, imps):
            return False
        scope = loop if isinstance(loop, cst.FunctionDef) else idx.scope(loop)
        backpropagated = an.backpropagated_names(ctx, idx, scope)
        accumulator = an.dotted(an.container(acc.accumulator))
        if accumulator is not None and accumulator in backpropagated.flowing:
            return False  # the total itself is back-propagated: summed on purpose
        if an.restarted_in_iteration(idx, loop, acc):
            # Reset in the loop: not carried across iterations, or only over a bounded window
            # (a logging interval, one accumulation cycle) whose graphs backward already freed.
            return False
        if isinstance(acc.value, cst.Call):
            # `val_loss += criterion(out, y)` in an evaluation loop that records gradients.
            return an.helper_backpropagated_loss(ctx, acc.value) or (
                imps.mentions("torch") and an.is_loss_call(imps, acc.value) and _grad_enabled_eval(ctx, idx, imps, scope)
            )
        name = acc.added_name
        if name is None:
            return False
        # `output.loss` holds a graph when `output` was computed in the loop.
        binding = an.binding_before(idx, loop, name.partition(".")[0], acc.statement)
        if binding is None or an.no_graph(binding.value):
            return False
        if isinstance(binding.value, cst.Call) and not binding.unpacked and an.helper_backpropagated_loss(ctx, binding.value):
            return True
        in_loop = [b for b in backpropagated.calls if idx.contains(loop.body, b)]
        if in_loop:
            # A term added into the loss (`kl` in `loss = ce + kl`) holds a graph when it was
            # computed by a call; a weight or a count (`lam = args.lam`) does not.
            return name in backpropagated.direct or (
                name in backpropagated.terms and isinstance(binding.value, cst.Call)
            )
        return (
            imps.mentions("torch")
            and isinstance(acc.value, cst.Name)
            and "loss" in an.name_tokens(name)
            # One element of an unpacked tuple may be anything: `loss, metrics, preds = f(x)`.
            and not binding.unpacked
            and an.is_loss_call(imps, binding.value)
            and _grad_enabled_eval(ctx, idx, imps, scope)
        )

    def _report(self, ctx: FileContext, acc: an.RunningTotal) -> Report:
        code = ctx.module.code_for_node
        name = code(acc.value)
        total = code(acc.accumulator)
        if acc.in_helper:
            # No automatic fix: the value may be a container of tensors (a dict of losses).
            return self.report(
                acc.statement,
                f"`{total}` adds `{name}` (tensors that require grad) into totals its object keeps: "
                f"every iteration's autograd graph stays alive and memory grows; hand it detached "
                f"values (`.item()` or `.detach()` of each tensor)",
            )
        what = "a loss tensor that requires grad" if isinstance(acc.value, cst.Call) else "a tensor that requires grad"
        message = (
            f"`{total}` accumulates `{name}`, {what}: every iteration's autograd "
            f"graph stays alive and memory grows; accumulate `{name}.detach()` or `{name}.item()`"
        )
        edits = tuple(
            (value, cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach"))))
            for value in (acc.value, acc.start)
            if value is not None
        )
        return self.report(acc.statement, message, FixSpec(f"accumulate `{name}.detach()`", edits))


def _grad_enabled_eval(ctx: FileContext, idx: an.Index, imps: an.Imports, scope: cst.CSTNode) -> bool:
    """An evaluation function, called in this file, never under a gradient-free context."""
    if not isinstance(scope, cst.FunctionDef) or not _EVAL_FUNCTION.search(scope.name.value):
        return False
    if an.grad_free_decorated(scope, imps) or _disables_grad(idx, imps, scope):
        return False
    sites = an.functions(ctx).call_sites(scope)
    return bool(sites) and not any(an.in_grad_free_block(idx, site, imps) for site in sites)


def _disables_grad(idx: an.Index, imps: an.Imports, scope: cst.CSTNode) -> bool:
    """`torch.set_grad_enabled(False)` (or another gradient-free call) as a plain statement."""
    return any(
        isinstance(idx.parent(call), cst.Expr) and an.is_grad_free_call(call, imps)
        for call in idx.within(scope, cst.Call)
    )
