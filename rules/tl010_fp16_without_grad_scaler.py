from __future__ import annotations

import os
import re
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an

# Benchmarks time fp16 steps; what the weights learn does not matter there.
BENCHMARK = re.compile(r"(?i)bench|profil|throughput|speed")


class Fp16WithoutGradScaler(Rule):
    """
    ## What it does
    Finds float16 autocast regions (`torch.autocast(..., dtype=torch.float16)`,
    `torch.cuda.amp.autocast()`, `torch.autocast("cuda")` / `torch.amp.autocast("cuda")`
    without a `dtype`, whose default on CUDA is float16) around a forward pass whose loss is
    back-propagated, in a file where no `GradScaler` (or framework that scales the loss)
    appears. Also finds the mirror mistakes: `scaler.step(optimizer)` in a loop that never
    calls `scaler.update()`, and `scaler.unscale_(optimizer)` followed by an `update()` that
    an `if` skips (a step skipped when the gradient norm is too large, with the update inside
    the skipped branch).

    ## Why is this bad?
    float16 cannot represent magnitudes below about 6e-8: in the backward pass of a float16
    forward, small gradients underflow to zero and the affected weights silently stop
    learning. `GradScaler` multiplies the loss before `backward()` so the gradients stay
    representable, then unscales them before the step. Without `scaler.update()`, the scale
    never adapts, and the next `scaler.step()` raises
    `RuntimeError: step() has already been called since the last update()`.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```
    or autocast to `dtype=torch.bfloat16`, whose range matches float32 and needs no scaler.

    Not reported: bfloat16 autocast, `torch.autocast("cpu")` (bfloat16 by default),
    autocast used only for inference, and Accelerate, Lightning, DeepSpeed or apex, which
    scale the loss themselves.

    ## Fix safety
    No automatic fix. A missing scaler needs a scaler object and three edits, and switching
    to bfloat16 depends on the hardware; a missing `scaler.update()` belongs right after
    `scaler.step(...)`, a line of its own outside the reported statement.

    ## Runtime confirmation
    `torchlint probe` confirms a missing scaler when the gradients of a float16 autocast
    step show underflow (exact zeros scattered through live weight gradients) or overflow
    (inf/NaN), and a missing `scaler.update()` when a second `scaler.step()` raises.

    ## References
    - https://pytorch.org/docs/stable/amp.html#gradient-scaling
    - https://pytorch.org/docs/stable/notes/amp_examples.html
    """

    CODE = "TL010"
    NAME = "fp16-without-grad-scaler"
    SUMMARY = "Float16 autocast with a backward pass but no GradScaler, or a GradScaler never updated"
    TRIGGERS = (("autocast", "caler"), ("backward", ".step("))
    CONFIRMED_BY = ("TL010",)

    VALID = [
        # the precision picked from a table is bfloat16: no scaler needed
        """
        import torch
        precision = "bf16"
        amp_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
        for x, y in loader:
            with torch.autocast("cuda", dtype=amp_dtype):
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # unscale_ and update under the same condition, or an update on both branches
        """
        scaler = torch.amp.GradScaler("cuda")
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda"):
                loss = criterion(model(x), y) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scaler.unscale_(optimizer)
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if norm < 100:
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    scaler.update()
                optimizer.zero_grad()
        """,
        # The documented recipe.
        """
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """,
        # bfloat16 needs no scaler.
        """
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # CPU autocast defaults to bfloat16.
        """
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cpu"):
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # Inference-only autocast.
        """
        @torch.no_grad()
        def evaluate(model, loader):
            with torch.autocast("cuda"):
                return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        evaluate(model, val_loader)
        """,
        # Accelerate scales the loss itself.
        """
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="fp16")
        for batch in loader:
            with torch.autocast("cuda"):
                loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        """,
        # A dtype picked at run time (nanoGPT) and a scaler created with `enabled=`.
        """
        ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
        while True:
            with ctx:
                logits, loss = model(X, Y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # A scaler handed in by the caller (timm's NativeScaler style).
        """
        def train_one_epoch(model, loader, optimizer, loss_scaler):
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = criterion(model(x), y)
                loss_scaler(loss, optimizer, parameters=model.parameters())
                optimizer.zero_grad()
        """,
        # autocast explicitly disabled.
        """
        for x, y in loader:
            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=False):
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # update() once per optimizer step, under gradient accumulation.
        """
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda"):
                loss = loss_fn(model(x), y) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """,
        # update() in a helper the loop calls.
        """
        class Trainer:
            def optimizer_step(self):
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad()

            def fit(self):
                for x, y in self.loader:
                    with torch.autocast("cuda"):
                        loss = self.model(x, y)
                    self.scaler.scale(loss).backward()
                    self.optimizer_step()
        """,
        # A backward that belongs to an earlier training phase, then fp16 inference.
        """
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        with torch.autocast("cuda"):
            predictions = model(test_x)
        """,
        # Only a frozen encoder runs under autocast (and no_grad); the trained loss is float32.
        """
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                with torch.no_grad():
                    emb = text_encoder(batch["ids"])
            loss = denoiser(batch["x"], emb.float())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # The device type is a variable that is only ever "cpu".
        """
        device_type = "cpu"
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast(device_type=device_type):
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    ]

    INVALID = [
        # the precision picked from a table is float16, and nothing scales the loss
        """
        import torch
        precision = "fp16"
        amp_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
        for x, y in loader:
            with torch.autocast("cuda", dtype=amp_dtype):  # expect: TL010
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # the update is skipped with the step, after unscale_ already ran
        """
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)  # expect: TL010
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if norm < 100:
                scaler.step(optimizer)
                scaler.update()
            optimizer.zero_grad()
        """,
        # A repro named like a test that optimizes under float16 (pytorch/pytorch#115785).
        """
        import torch
        def test_arctan2_grads(optim):
            inp = torch.randn((2, 384, 384), requires_grad=True, device="cuda")
            optim = optim(params=[inp], lr=1e-5)
            for i in range(100):
                optim.zero_grad()
                with torch.autocast(device_type="cuda"):  # expect: TL010
                    loss = torch.arctan2(inp[0], inp[1]).sum()
                loss.backward()
                optim.step()
        """,
        """
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):  # expect: TL010
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # torch.cuda.amp.autocast() defaults to float16.
        """
        from torch.cuda.amp import autocast
        for x, y in loader:
            optimizer.zero_grad()
            with autocast():  # expect: TL010
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # torch.autocast("cuda") without dtype is float16 on CUDA.
        """
        import torch as T
        for x, y in loader:
            optimizer.zero_grad()
            with T.autocast(device_type="cuda"):  # expect: TL010
                out = model(x)
                loss = T.nn.functional.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
        """,
        # torch.amp.autocast with the device type from a variable that can be "cuda".
        """
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        for x, y in loader:
            optimizer.zero_grad()
            with torch.amp.autocast(device.type):  # expect: TL010
                loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
        """,
        # The device type spelled through str() of a device that is CUDA when there is one
        # (Open-Rig3R #35); the validation autocast under no_grad is fine.
        """
        from torch.amp import autocast
        device = torch.device(cfg.get("device", "cuda") if torch.cuda.is_available() else "cpu")
        for epoch in range(num_epochs):
            model.train()
            for batch in train_loader:
                optimizer.zero_grad()
                with autocast(device_type=str(device)):  # expect: TL010
                    outputs = model(batch["images"].to(device))
                loss = criterion(outputs, batch["target"].to(device))
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for batch in val_loader:
                    with autocast(device_type=str(device)):
                        outputs = model(batch["images"].to(device))
        """,
        # A float16 dtype held in a variable, and the context stored before the loop.
        """
        amp_dtype = torch.half
        amp_ctx = torch.autocast("cuda", dtype=amp_dtype)  # expect: TL010
        for x, y in loader:
            optimizer.zero_grad()
            with amp_ctx:
                loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # The forward in a helper; backward in the calling loop.
        """
        def compute_loss(model, batch):
            with torch.cuda.amp.autocast():  # expect: TL010
                return model(**batch).loss

        for batch in loader:
            loss = compute_loss(model, batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # One epoch function for training and validation: gradients follow the flag, and the
        # backward pass inside the flag's block shows that it trains when the flag is true.
        """
        def run_epoch(model, loader, optimizer, training):
            model.train(training)
            with torch.set_grad_enabled(training):
                for x, y in loader:
                    with torch.autocast("cuda"):  # expect: TL010
                        loss = criterion(model(x), y)
                    if training:
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
        """,
        # Gradient accumulation inside the autocast block.
        """
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda", torch.float16):  # expect: TL010
                loss = loss_fn(model(x), y) / accum
                loss.backward()
            if (step + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # The mirror: scaler.step without scaler.update raises on the next step.
        """
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # expect: TL010
        """,
        # The mirror with an update only after the loop.
        """
        from torch.cuda.amp import GradScaler
        grad_scaler = GradScaler()
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                with torch.autocast("cuda"):
                    loss = loss_fn(model(x), y)
                grad_scaler.scale(loss).backward()
                grad_scaler.step(optimizer)  # expect: TL010
            grad_scaler.update()
        """,
        # The mirror in a method reached through self, with an attribute scaler.
        """
        class Trainer:
            def step(self, x, y):
                with torch.autocast("cuda"):
                    loss = self.model(x, y)
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)  # expect: TL010
                self.optimizer.zero_grad()

            def fit(self):
                for x, y in self.loader:
                    self.step(x, y)
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        idx = an.index(ctx)
        train = an.training(ctx)
        if not train.backward:
            return
        amp = an.amp(ctx)
        if not an.scales_loss(idx) and not BENCHMARK.search(os.path.basename(ctx.filename)):
            for call in idx.nodes(cst.Call):
                if amp.is_fp16_autocast(call) and amp.backpropagated(call):
                    yield self.report(call, autocast_message(ctx, call))
        for step in train.steps:
            if amp.steps_without_update(step):
                yield self.report(step, update_message(ctx, step))
        for call in idx.nodes(cst.Call):
            guard = amp.skipped_update(call)
            if guard is not None:
                yield self.report(call, skipped_update_message(ctx, call, guard))


def autocast_message(ctx: FileContext, call: cst.Call) -> str:
    code = ctx.module.code_for_node(call)
    return (
        f"`{code}` runs the forward pass in float16 and its loss is back-propagated, but no "
        f"`GradScaler` scales the loss: small gradients underflow to zero in float16; use "
        f"`scaler = torch.amp.GradScaler(\"cuda\")` with `scaler.scale(loss).backward()`, "
        f"`scaler.step(optimizer)` and `scaler.update()`, or autocast to `dtype=torch.bfloat16`"
    )


def update_message(ctx: FileContext, step: cst.Call) -> str:
    scaler = ctx.module.code_for_node(an.receiver(step))  # type: ignore[arg-type]
    return (
        f"`{scaler}.step()` runs in this loop but `{scaler}.update()` does not: the loss scale never "
        f"adapts, and the next `{scaler}.step()` raises \"step() has already been called since the "
        f"last update()\"; call `{scaler}.update()` right after `{scaler}.step(...)`"
    )


def skipped_update_message(ctx: FileContext, unscale: cst.Call, guard: cst.If) -> str:
    scaler = ctx.module.code_for_node(an.receiver(unscale))  # type: ignore[arg-type]
    test = ctx.module.code_for_node(guard.test)
    return (
        f"`{scaler}.update()` runs only when `{test}`, but `{ctx.module.code_for_node(unscale)}` runs "
        f"either way: when it is false, the next `{scaler}.unscale_()` raises \"unscale_() has already "
        f"been called on this optimizer since the last update()\"; call `{scaler}.update()` whenever "
        f"`unscale_` ran (outside `if {test}:`)"
    )
