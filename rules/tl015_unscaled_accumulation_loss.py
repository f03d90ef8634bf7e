from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an


class UnscaledAccumulationLoss(Rule):
    """
    ## What it does
    Finds gradient accumulation (a backward pass every iteration, an optimizer step every
    N iterations: under `if (i + 1) % N == 0:`, or after a `for _ in range(accum_steps):`
    micro-step loop) where the back-propagated loss is not divided by N (nor by the
    accumulation count) anywhere between its computation and `backward()`, and no helper
    named for it rescales the summed gradients before the step (`scale_grads(model, 1 /
    num_tokens)`). A floor division by N (`update = i // N`) counts steps; it does not
    normalise the loss.

    ## Why is this bad?
    Gradients add up over the N backward passes: without dividing the loss by N, each step
    applies the sum of N batch gradients instead of their mean, an N-times larger update.
    The learning rate tuned for one batch is then N times too large, and changing N changes
    the training dynamics instead of only the effective batch size.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```
    `accelerator.backward()` inside `accelerator.accumulate(model)` (and DeepSpeed's
    `engine.backward`) divide by the accumulation count for you.

    ## Fix safety
    The fix back-propagates `loss / N`. It is unsafe: it changes the size of every update,
    which is the point, but a learning rate tuned against the summed gradients must be
    re-tuned.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation
    """

    CODE = "TL015"
    NAME = "unscaled-accumulation-loss"
    SUMMARY = "Gradient accumulation without dividing the loss by the number of steps"
    SEVERITY = Severity.WARNING
    TRIGGERS = (("backward",), ("step(",), ("%", "acc", "micro"))
    CONFIRMED_BY = ()

    VALID = [
        # The summed gradients are divided by the tokens seen before the step (torchtune).
        """
        for i, batch in enumerate(loader):
            loss = token_loss_sum(model(batch), batch)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                training.scale_grads(model, 1 / num_tokens)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # The loss divided where it is computed.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Divided in place, conditionally (the old Hugging Face scripts).
        """
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch)[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                model.zero_grad()
        """,
        # Divided inside the backward call, with a GradScaler.
        """
        for i, batch in enumerate(loader):
            with torch.autocast("cuda"):
                loss = model(batch)
            scaler.scale(loss / accum).backward()
            if (i + 1) % accum == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """,
        # nanoGPT: micro-steps with a divided loss.
        """
        while True:
            for micro_step in range(gradient_accumulation_steps):
                logits, loss = model(X, Y)
                loss = loss / gradient_accumulation_steps
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # accelerate scales the loss in accumulate().
        """
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # accelerator.backward divides by its gradient_accumulation_steps.
        """
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if step % args.gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A framework's own backward (fairseq's optimizer, DeepSpeed's engine) handles accumulation.
        """
        for i, sample in enumerate(itr):
            loss = criterion(model, sample)
            self.optimizer.backward(loss)
            model_engine.backward(loss)
            if (i + 1) % update_freq == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
        """,
        # WGAN: the generator trains every n_critic iterations with its own backward.
        """
        for i, (imgs, _) in enumerate(dataloader):
            optimizer_D.zero_grad()
            loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
            loss_D.backward()
            optimizer_D.step()
            if i % n_critic == 0:
                optimizer_G.zero_grad()
                loss_G = -torch.mean(discriminator(generator(z)))
                loss_G.backward()
                optimizer_G.step()
        """,
        # apex's scale_loss context: the scaled loss comes from the `with` target.
        """
        for i, (video, caption) in enumerate(data_loader):
            loss = model(video, caption)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A helper computes the already divided loss.
        """
        def compute_loss(model, batch):
            return model(batch).loss / ACCUM

        for i, batch in enumerate(loader):
            loss = compute_loss(model, batch)
            loss.backward()
            if (i + 1) % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A backward pass only on the stepping iterations (a periodic auxiliary update).
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if i % n_aux == 0:
                aux = aux_loss(model)
                aux.backward()
                aux_optimizer.step()
                aux_optimizer.zero_grad()
        """,
        # Step every iteration, logging every N.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if i % log_every == 0:
                print(loss.item())
        """,
        # A micro-step loop over chunks whose losses are normalised by the token count.
        """
        for batch in loader:
            for chunk in batch.split(micro_batch):
                loss = model(chunk).sum() / n_tokens
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # Scaled by multiplication with an inverse count.
        """
        for i, batch in enumerate(loader):
            loss = model(batch) * inv_accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    ]

    INVALID = [
        # The count divides only a step counter (a floor division), never the loss.
        """
        for epoch in range(epochs):
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()  # expect: TL015
                if (i + 1) % args.accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
                    update = (i + epoch * len(loader)) // args.accum
                    writer.add_scalar("loss", loss.item(), update)
        """,
        Example(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()  # expect: TL015
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            fixed="""
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()  # expect: TL015
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # A GradScaler and an attribute count.
        Example(
            """
            for step, batch in enumerate(loader):
                with torch.autocast("cuda"):
                    loss = model(**batch).loss
                scaler.scale(loss).backward()  # expect: TL015
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
            fixed="""
            for step, batch in enumerate(loader):
                with torch.autocast("cuda"):
                    loss = model(**batch).loss
                scaler.scale(loss / args.gradient_accumulation_steps).backward()  # expect: TL015
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
        ),
        # A literal count, and a loss summed from parts.
        """
        for i, (x, y) in enumerate(loader):
            out = model(x)
            loss = ce(out, y) + 0.1 * reg(model)
            loss.backward()  # expect: TL015
            if i % 4 == 3:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Micro-steps named like accumulation, without dividing.
        """
        for it in range(max_iters):
            for micro_step in range(grad_accum_steps):
                x, y = get_batch()
                logits, loss = model(x, y)
                loss.backward()  # expect: TL015
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # Skip the step with `continue` until N batches are in.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()  # expect: TL015
            if (i + 1) % accumulation_steps != 0:
                continue
            optimizer.step()
            optimizer.zero_grad()
        """,
        # The step condition kept in a flag (timm's need_update), without dividing.
        """
        for batch_idx, (x, y) in enumerate(loader):
            last_batch = batch_idx == last_batch_idx
            need_update = last_batch or (batch_idx + 1) % accum_steps == 0
            loss = loss_fn(model(x), y)
            loss.backward()  # expect: TL015
            if need_update:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A global step counter and a step helper.
        """
        class Trainer:
            def optimizer_step(self):
                self.optimizer.step()
                self.optimizer.zero_grad()

            def train(self):
                for batch in self.loader:
                    loss = self.model(batch)
                    loss.backward()  # expect: TL015
                    self.global_step += 1
                    if self.global_step % self.accum == 0:
                        self.optimizer_step()
        """,
        # torch.autograd.backward.
        """
        import torch
        for i, batch in enumerate(loader):
            loss = model(batch)
            torch.autograd.backward(loss)  # expect: TL015
            if (i + 1) % n_accum == 0 or i + 1 == len(loader):
                opt.step()
                opt.zero_grad()
        """,
        # A mean over the batch is not a mean over the accumulated batches.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y).mean()
            loss.backward()  # expect: TL015
            if ((i + 1) % update_freq) == 0:
                clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # DDP: no gradient sync on the accumulating micro-steps, the last one steps.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(ddp_model(x), y)
            if (i + 1) % accum != 0:
                with ddp_model.no_sync():
                    loss.backward()  # expect: TL015
            else:
                loss.backward()  # expect: TL015
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Backward through a direct chain, in a while loop.
        """
        it = 0
        while it < iters:
            criterion(model(next(data)), target).backward()  # expect: TL015
            it += 1
            if it % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        if not train.steps or not train.backward or an.uses_framework_accumulation(ctx):
            return
        idx = an.index(ctx)
        funcs = an.functions(ctx)
        divisors = an.loss_divisors(idx)
        reported: set[int] = set()
        for found in an.loop_accumulations(ctx):
            acc = found.accumulation
            if id(acc.backward) in reported or an.divides_loss(ctx, idx, funcs, acc, divisors):
                continue
            reported.add(id(acc.backward))
            yield self._report(ctx, acc)

    def _report(self, ctx: FileContext, acc: an.Accumulation) -> Report:
        code = ctx.module.code_for_node
        count = code(acc.count)
        loss = an.backpropagated(acc.backward, an.imports(ctx))
        message = (
            f"`{code(acc.backward)}` runs every iteration but `{code(acc.step)}` only once every `{count}`, "
            f"and the loss is not divided by `{count}`: each step applies the sum of `{count}` gradients; "
            f"back-propagate the loss divided by `{count}`"
        )
        if loss is None:
            return self.report(acc.backward, message)
        divided = cst.BinaryOperation(left=loss, operator=cst.Divide(), right=_atom(acc.count))
        if loss is an.receiver(acc.backward):
            divided = divided.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        fix = FixSpec(f"back-propagate `{code(loss)} / {count}`", ((loss, divided),), safe=False)
        return self.report(acc.backward, message, fix)


def _atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Integer, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


