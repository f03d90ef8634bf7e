from __future__ import annotations

import os
import re
from collections import defaultdict
from functools import cached_property
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an

# `autocast` callables whose `dtype` defaults to the device's fast type (float16 on CUDA).
GENERIC_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
# `autocast` callables that always default to float16.
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
FLOAT16 = frozenset({"torch.float16", "torch.half"})
# Whoever scales the loss: a GradScaler, timm's NativeScaler, apex, or a framework that does it.
SCALED = re.compile(r"(?i)scaler|scale_loss|loss_scale|accelerat|fabric|deepspeed|lightning|apex")
# Benchmarks time fp16 steps; what the weights learn does not matter there.
BENCHMARK = re.compile(r"(?i)bench|profil|throughput|speed")
MAX_RESOLVE_DEPTH = 3


class Fp16WithoutGradScaler(Rule):
    """
    ## What it does
    Finds float16 autocast regions (`torch.autocast(..., dtype=torch.float16)`,
    `torch.cuda.amp.autocast()`, `torch.autocast("cuda")` / `torch.amp.autocast("cuda")`
    without a `dtype`, whose default on CUDA is float16) around a forward pass whose loss is
    back-propagated, in a file where no `GradScaler` (or framework that scales the loss)
    appears. Also finds the mirror mistake: `scaler.step(optimizer)` in a loop that never
    calls `scaler.update()`.

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
        amp = _Amp(ctx, idx, train)
        if not _scales_loss(idx) and not BENCHMARK.search(os.path.basename(ctx.filename)):
            for call in idx.nodes(cst.Call):
                if amp.is_fp16_autocast(call) and amp.backpropagated(call):
                    yield self.report(call, amp.autocast_message(call))
        for step in train.steps:
            if amp.steps_without_update(step):
                yield self.report(step, amp.update_message(step))


class _Amp:
    def __init__(self, ctx: FileContext, idx: an.Index, train: an.Training) -> None:
        self.ctx = ctx
        self.idx = idx
        self.imps = an.imports(ctx)
        self.funcs = an.functions(ctx)
        self.train = train

    @cached_property
    def _backward_by_scope(self) -> dict[int, list[cst.Call]]:
        found: dict[int, list[cst.Call]] = defaultdict(list)
        for backward in self.train.backward:
            found[id(self.idx.scope(backward))].append(backward)
        return found

    @cached_property
    def _updates(self) -> list[cst.Call]:
        return [c for c in self.idx.nodes(cst.Call) if an.method_name(c) == "update"]

    @cached_property
    def _loops_running_steps(self) -> dict[int, list[cst.For | cst.While]]:
        return self.train.loops_running(self.train.steps, self.funcs)

    # -- float16 autocast ----------------------------------------------------------------

    def is_fp16_autocast(self, call: cst.Call) -> bool:
        name = self.imps.callee(call) or ""
        if name not in GENERIC_AUTOCAST and name not in CUDA_AUTOCAST:
            return False
        generic = name in GENERIC_AUTOCAST
        args = an.positional(call)
        enabled = an.keyword(call, "enabled") or (args[2] if generic and len(args) > 2 else None)
        if not generic and args:
            enabled = args[0]
        if enabled is not None and an.is_false(enabled.value):
            return False
        dtype = an.keyword(call, "dtype") or (args[1] if len(args) > 1 else None)
        if dtype is not None:
            return self._float16(dtype.value)
        if not generic:
            return True
        device = an.keyword(call, "device_type") or (args[0] if args else None)
        return device is not None and self._may_be_cuda(device.value)

    def _float16(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if (self.imps.qualify(expr) or "") in FLOAT16:
            return True
        if isinstance(expr, cst.Name) and depth < MAX_RESOLVE_DEPTH:
            values = self.assigned(expr.value)
            return bool(values) and all(self._float16(v, depth + 1) for v in values)
        return False

    def _may_be_cuda(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """The device-type expression can evaluate to "cuda" (literally, or through variables)."""
        if depth > MAX_RESOLVE_DEPTH:
            return False
        for string in self.idx.within(expr, cst.SimpleString):
            if "cuda" in string.value:
                return True
        for part in self.idx.within(expr, cst.FormattedStringText):
            if "cuda" in part.value:
                return True
        if isinstance(expr, cst.Attribute) and expr.attr.value == "type":
            return self._may_be_cuda(expr.value, depth + 1)
        if isinstance(expr, cst.Call):  # `str(device)`, `torch.device(name)`
            return any(self._may_be_cuda(arg.value, depth + 1) for arg in expr.args)
        if isinstance(expr, cst.Name):
            return any(self._may_be_cuda(v, depth + 1) for v in self.assigned(expr.value))
        return False

    def assigned(self, name: str) -> list[cst.BaseExpression]:
        """Values assigned to the plain name `name` anywhere in the module."""
        return an.assigned_values(self.ctx).get(name, [])

    def backpropagated(self, autocast: cst.Call) -> bool:
        """The autocast region runs a forward pass whose loss a backward pass of the same
        iteration consumes: in the same function, or in a loop that calls the function."""
        for region in self._regions(autocast):
            scope = self.idx.scope(region)
            if self._inference_only(region, scope) or not self._computes_with_gradients(region):
                continue
            if self._backward_follows(region, scope):
                return True
            if isinstance(scope, cst.FunctionDef):
                for site in self.funcs.call_sites(scope):
                    caller = self.idx.scope(site)
                    if not self._inference_only(site, caller) and self._backward_follows(site, caller):
                        return True
        return False

    def _regions(self, autocast: cst.Call) -> list[cst.CSTNode]:
        """The `with` statements that enter this autocast: directly or through a variable."""
        parent = self.idx.parent(autocast)
        if isinstance(parent, cst.WithItem):
            with_ = self.idx.parent(parent)
            return [with_] if with_ is not None else []
        statement = self.idx.statement(autocast)
        if not isinstance(statement, cst.Assign):
            return []
        names = {an.dotted(t.target) for t in statement.targets} - {None}
        return [
            with_
            for with_ in self.idx.nodes(cst.With)
            if any(an.dotted(item.item) in names for item in with_.items)
        ]

    def _computes_with_gradients(self, region: cst.CSTNode) -> bool:
        """Some call in the autocast block runs with gradients (not all of it is under `no_grad`)."""
        body = region.body if isinstance(region, cst.With) else region
        return any(
            not an.in_grad_free_block(self.idx, call, self.imps) and not an.is_grad_free_call(call, self.imps)
            for call in self.idx.within(body, cst.Call)
        )

    def _inference_only(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        if an.in_grad_free_block(self.idx, node, self.imps, stop_at_function=False):
            return True
        # A function named like an evaluation that runs its own backward pass trains (a
        # `test_*` repro script, pytorch/pytorch#115785).
        return (
            isinstance(scope, cst.FunctionDef)
            and an.name_says_evaluation(scope.name.value)
            and not any(self.idx.scope(backward) is scope for backward in self.train.backward)
        )

    def _backward_follows(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """A backward pass of `scope` runs inside `node` or after it within the same iteration."""
        loops = {id(loop) for loop in an.enclosing_loops(self.idx, node)}
        for backward in self._backward_by_scope.get(id(scope), []):
            if an.in_grad_free_block(self.idx, backward, self.imps):
                continue
            if an.receiver(backward) is not None and an.positional(backward):
                continue  # `optimizer.backward(loss)`: an fp16 optimizer or engine scales the loss
            if self.idx.contains(node, backward):
                return True
            if self.idx.order(backward) > self.idx.end(node) and all(
                id(loop) in loops for loop in an.enclosing_loops(self.idx, backward)
            ):
                return True
        return False

    def autocast_message(self, call: cst.Call) -> str:
        code = self.ctx.module.code_for_node(call)
        return (
            f"`{code}` runs the forward pass in float16 and its loss is back-propagated, but no "
            f"`GradScaler` scales the loss: small gradients underflow to zero in float16; use "
            f"`scaler = torch.amp.GradScaler(\"cuda\")` with `scaler.scale(loss).backward()`, "
            f"`scaler.step(optimizer)` and `scaler.update()`, or autocast to `dtype=torch.bfloat16`"
        )

    # -- scaler.step() without scaler.update() ---------------------------------------------

    def steps_without_update(self, step: cst.Call) -> bool:
        """`scaler.step(optimizer)` runs in a loop, and either no loop that runs it updates the
        scaler, or the training loop around it (the loop whose own body runs the backward pass)
        does not. A loop over optimizers steps each one and updates once after it: not a bug."""
        scaler = an.receiver(step)
        if scaler is None or self.train.optimizer_of(step) is scaler:
            return False  # an optimizer's own step(), not `scaler.step(optimizer)`
        updates = [c for c in self._updates if _same_scaler(an.receiver(c), scaler)]
        loops = self._loops_running_steps.get(id(step), [])
        if not loops:
            return False
        if not any(self.train.events_in(updates, loop.body, self.funcs) for loop in loops):
            return True
        training = [loop for loop in loops if self._runs_backward_itself(loop) and not _over_optimizers(loop)]
        ids = {id(loop) for loop in training}
        innermost = [
            loop
            for loop in training
            if not any(id(inner) in ids for inner in an.loops_run_by(self.idx, self.funcs, loop.body))
        ]
        return any(not self.train.events_in(updates, loop.body, self.funcs) for loop in innermost)

    def _runs_backward_itself(self, loop: cst.For | cst.While) -> bool:
        scope = self.idx.scope(loop)
        return any(
            self.idx.contains(loop.body, b) and self.idx.scope(b) is scope for b in self.train.backward
        )

    def update_message(self, step: cst.Call) -> str:
        scaler = self.ctx.module.code_for_node(an.receiver(step))  # type: ignore[arg-type]
        return (
            f"`{scaler}.step()` runs in this loop but `{scaler}.update()` does not: the loss scale never "
            f"adapts, and the next `{scaler}.step()` raises \"step() has already been called since the "
            f"last update()\"; call `{scaler}.update()` right after `{scaler}.step(...)`"
        )


def _scales_loss(idx: an.Index) -> bool:
    """Some identifier of the module names a loss scaler or a framework that scales the loss."""
    return any(SCALED.search(name) for name in {n.value for n in idx.nodes(cst.Name)})


def _over_optimizers(loop: cst.For | cst.While) -> bool:
    """`for opt in optimizers:`: one pass per optimizer within a training step."""
    if not isinstance(loop, cst.For):
        return False
    names = [an.last_name(loop.target) or "", an.last_name(loop.iter) or ""]
    if isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Attribute):
        names.append(an.last_name(loop.iter.func.value) or "")
    return any(an.name_says_optimizer(name) for name in names)


def _same_scaler(a: cst.BaseExpression | None, b: cst.BaseExpression) -> bool:
    name = (an.last_name(a) or "") if a is not None else ""
    return bool(name) and (name == an.last_name(b) or "scaler" in name.lower())
