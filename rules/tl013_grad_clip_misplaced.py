from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

# Objects whose own clipping unscales mixed-precision gradients first.
_SELF_UNSCALING = frozenset({"accelerator", "fabric", "trainer", "engine", "deepspeed", "strategy"})
_INFINITE = frozenset({"inf", "math.inf", "np.inf", "numpy.inf", "torch.inf"})


class GradClipMisplaced(Rule):
    """
    ## What it does
    Finds gradient clipping (`torch.nn.utils.clip_grad_norm_`, `clip_grad_value_`) that
    cannot affect the update it is meant for: clipping before `backward()` (it clips the
    previous gradients, or zeros), clipping after `optimizer.step()` (the update already
    happened), and clipping with a `GradScaler` (`scaler.scale(loss).backward()`,
    `scaler.step(optimizer)`) without `scaler.unscale_(optimizer)` first.

    ## Why is this bad?
    Clipping bounds the gradients that the next `step()` applies. Before the backward pass
    there is nothing to clip yet; after the step the update is done. With a `GradScaler`
    the gradients are still multiplied by the loss scale (often 65536): a threshold meant
    for true gradients clips almost everything to a tiny norm, and the model barely moves.
    Training runs without an error in all three cases, just without the clipping it relies on.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```
    Without a scaler: `loss.backward()`, then clip, then `optimizer.step()`.

    ## Fix safety
    With a `GradScaler`, the fix inserts `scaler.unscale_(optimizer)` before the clip; it
    is safe (`scaler.step()` then skips its own unscaling). A clip before the backward
    pass or after the step is not fixed automatically.

    ## Runtime confirmation
    `torchlint probe` confirms it when clipping runs on gradients still multiplied by the
    GradScaler's loss scale (with the scaled and unscaled norms), on gradients the optimizer
    step already applied, or on parameters without gradients.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping
    - https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html
    """

    CODE = "TL013"
    NAME = "grad-clip-misplaced"
    SUMMARY = "Gradient clipping runs before backward, after the step, or on scaled gradients"
    # `clip`: a project helper may do the clipping (`clip(model, max_norm)`).
    TRIGGERS = (("clip",), ("step",))
    CONFIRMED_BY = ("TL013",)

    VALID = [
        # Backward, clip, step.
        """
        import torch
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """,
        # A GradScaler with unscale_ first.
        """
        from torch.nn.utils import clip_grad_norm_
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        """,
        # Accumulation: clip once per step, inside the `if`.
        """
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            if (i + 1) % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # nanoGPT: micro-steps, unscale, clip, step.
        """
        while True:
            for micro_step in range(gradient_accumulation_steps):
                loss = model(X, Y) / gradient_accumulation_steps
                scaler.scale(loss).backward()
            if grad_clip != 0.0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # accelerate unscales in its own clip_grad_norm_.
        """
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # GAN: D clips before its own step; G's backward comes after.
        """
        for real in loader:
            d_loss.backward()
            torch.nn.utils.clip_grad_norm_(disc.parameters(), 1.0)
            opt_d.step()
            g_loss.backward()
            torch.nn.utils.clip_grad_norm_(gen.parameters(), 1.0)
            opt_g.step()
        """,
        # Measuring the gradient norm after the step with an infinite threshold.
        """
        import math
        for x, y in loader:
            loss.backward()
            optimizer.step()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)
            optimizer.zero_grad()
        """,
        # Step of the previous accumulation at the top of the iteration.
        """
        for i, batch in enumerate(loader):
            if i > 0 and i % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
            (model(batch) / accum).backward()
        """,
        # A deferred step: the clip bounds this iteration's gradients for the next step.
        """
        for i, batch in enumerate(loader):
            if i > 0:
                optimizer.step()
                optimizer.zero_grad()
            model(batch).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """,
        # A helper that unscales before clipping.
        """
        class Trainer:
            def clip(self):
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)

            def train_step(self, batch):
                self.scaler.scale(self.model(batch)).backward()
                self.clip()
                self.scaler.step(self.optimizer)
                self.scaler.update()
        """,
        # WGAN weight clipping is not gradient clipping.
        """
        for real in loader:
            loss_d.backward()
            opt_d.step()
            for p in netD.parameters():
                p.data.clamp_(-0.01, 0.01)
        """,
        # A clip in another branch than the step.
        """
        for x, y in loader:
            loss = criterion(model(x), y)
            if use_scaler:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
        """,
        # A GradScaler built disabled: `scale()` returns the loss as it is, nothing to unscale.
        """
        import torch
        class Trainer:
            def __init__(self, net, opt):
                self.net, self.opt = net, opt
                self.scaler = torch.amp.GradScaler("cuda", enabled=False)

            def step(self, batch):
                self.opt.zero_grad()
                self.scaler.scale(self.net(batch).mean()).backward()
                torch.nn.utils.clip_grad_value_(self.net.parameters(), 0.5)
                self.scaler.step(self.opt)
                self.scaler.update()
        """,
    ]

    INVALID = [
        Example(
            """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013
                scaler.step(optimizer)
                scaler.update()
            """,
            fixed="""
            import torch
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013
                scaler.step(optimizer)
                scaler.update()
            """,
        ),
        # Aliased import, attribute scaler and optimizer.
        Example(
            """
            from torch.nn.utils import clip_grad_norm_ as clip
            class Trainer:
                def step(self, batch):
                    self.scaler.scale(self.model(batch)).backward()
                    clip(self.model.parameters(), self.max_norm)  # expect: TL013
                    self.scaler.step(self.optim)
                    self.scaler.update()
            """,
            fixed="""
            from torch.nn.utils import clip_grad_norm_ as clip
            class Trainer:
                def step(self, batch):
                    self.scaler.scale(self.model(batch)).backward()
                    self.scaler.unscale_(self.optim)
                    clip(self.model.parameters(), self.max_norm)  # expect: TL013
                    self.scaler.step(self.optim)
                    self.scaler.update()
            """,
        ),
        # Clipping before the backward pass.
        """
        import torch
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)  # expect: TL013
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        # Clipping after the step.
        """
        import torch.nn as nn
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: TL013
        """,
        # clip_grad_value_ after the step, in a train function.
        """
        import torch
        def train(model, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                model(x, y).backward()
                opt.step()
                torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)  # expect: TL013
        """,
        # A helper clips; the loop steps before calling it.
        """
        import torch
        def clip_gradients(model):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013

        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            clip_gradients(model)
        """,
        # Accumulation: the clip sits after the step in the `if`.
        """
        import torch
        for i, (x, y) in enumerate(loader):
            (criterion(model(x), y) / accum).backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013
                optimizer.zero_grad()
        """,
        # A GradScaler in a helper train step, with unscale only after the clip.
        """
        import torch
        def train_step(model, batch, optimizer, scaler):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(batch)
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        """,
        # A clip at the top of the iteration, before this iteration's backward pass.
        """
        import torch
        for x, y in loader:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL013
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        """,
        # Both optimizers of a GAN share one scaler; the clip of D comes unscaled.
        """
        import torch
        for real in loader:
            scaler.scale(d_loss).backward()
            torch.nn.utils.clip_grad_norm_(netD.parameters(), 1.0)  # expect: TL013
            scaler.step(opt_d)
            scaler.scale(g_loss).backward()
            scaler.unscale_(opt_g)
            torch.nn.utils.clip_grad_norm_(netG.parameters(), 1.0)
            scaler.step(opt_g)
            scaler.update()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        if not train.steps:
            return
        idx = an.index(ctx)
        imps = an.imports(ctx)
        clips = [c for c in idx.nodes(cst.Call) if _is_clip(imps, c)]
        # A project helper that clips without unscaling first (`clip(model, 1.0)` of a utils module).
        clipping = {id(c) for c in clips}
        clips += [
            c
            for c in idx.nodes(cst.Call)
            if id(c) not in clipping and {"clips_grads"} == sm.call_effects(ctx, c) & {"clips_grads", "unscales"}
        ]
        if not clips:
            return
        unscales = [c for c in idx.nodes(cst.Call) if "unscale" in (an.callee_name(c) or "")]
        kinds = {id(n): "clip" for n in clips}
        kinds.update({id(n): "backward" for n in train.backward})
        kinds.update({id(n): "step" for n in train.steps})
        kinds.update({id(n): "unscale" for n in unscales})
        interesting = [*clips, *train.backward, *train.steps, *unscales]
        flow = an.flow(ctx)
        reported: set[int] = set()
        for scope in an.running_scopes(idx, an.functions(ctx), clips):
            events = flow.events(scope, interesting)
            for i, clip in enumerate(events):
                if kinds[id(clip.node)] != "clip" or id(clip.node) in reported:
                    continue
                report = self._misplaced(ctx, idx, imps, flow, train, kinds, events, i)
                if report is not None:
                    reported.add(id(clip.node))
                    yield report

    def _misplaced(
        self,
        ctx: FileContext,
        idx: an.Index,
        imps: an.Imports,
        flow: an.Flow,
        train: an.Training,
        kinds: dict[int, str],
        events: list[an.Event],
        i: int,
    ) -> Report | None:
        clip = events[i]
        node: cst.Call = clip.node  # type: ignore[assignment]
        code = ctx.module.code_for_node
        name = code(node.func)
        after = [e for e in events[i + 1 :] if flow.reaches(clip, e)]
        before = [e for e in events[:i] if flow.reaches(e, clip)]
        step = next((e for e in after if kinds[id(e.node)] == "step"), None)
        if step is None:
            done = next((e for e in reversed(before) if kinds[id(e.node)] == "step" and e.loops == clip.loops), None)
            if done is None or not any(kinds[id(e.node)] == "backward" for e in before[: before.index(done)]):
                return None
            if any(kinds[id(e.node)] == "backward" for e in before[before.index(done) + 1 :]):
                return None  # new gradients since the step: clipped for the next one
            return self.report(
                node,
                f"`{name}(...)` runs after `{code(done.node)}`: the update was applied unclipped; clip "
                f"after the backward pass and before `{code(done.node)}`",
            )
        between = after[: after.index(step)]
        backward = next(
            (e for e in between if kinds[id(e.node)] == "backward" and e.loops == clip.loops and flow.reaches(e, step)),
            None,
        )
        if backward is not None:
            return self.report(
                node,
                f"`{name}(...)` runs before `{code(backward.node)}`: it clips old gradients and "
                f"`{code(step.node)}` applies unclipped ones; clip after the backward pass, just before the step",
            )
        if (
            _scaled_step(train, step.node)
            and not _unscales_itself(imps, node)
            and not an.amp(ctx).disabled_scaler(an.receiver(step.node))  # type: ignore[arg-type]
        ):
            last_backward = next((e for e in reversed(before) if kinds[id(e.node)] == "backward"), None)
            if last_backward is None or not _scaled_backward(last_backward.node):
                return None
            if any(kinds[id(e.node)] == "unscale" for e in before):
                return None
            return self._unscale_report(ctx, idx, node, step.node)  # type: ignore[arg-type]
        return None

    def _unscale_report(self, ctx: FileContext, idx: an.Index, clip: cst.Call, step: cst.Call) -> Report:
        code = ctx.module.code_for_node
        scaler = an.receiver(step)
        optimizer = an.positional(step)[0].value
        call = f"{code(scaler)}.unscale_({code(optimizer)})"  # type: ignore[arg-type]
        message = (
            f"`{code(clip.func)}(...)` clips gradients that the GradScaler still multiplies by the loss "
            f"scale: the threshold is meaningless; call `{call}` before clipping"
        )
        insertion = an.insert_before(idx, clip, call)
        fix = FixSpec(f"insert `{call}` before clipping", (insertion,)) if insertion is not None else None
        return self.report(clip, message, fix)


def _is_clip(imps: an.Imports, call: cst.Call) -> bool:
    """A gradient clip, also through `from torch.nn.utils import clip_grad_norm_ as clip`;
    not one with an infinite threshold (that only measures the norm)."""
    qualified = (imps.callee(call) or "").rsplit(".", 1)[-1]
    if an.callee_name(call) not in an.CLIP_NAMES and qualified not in an.CLIP_NAMES:
        return False
    threshold = an.keyword(call, "max_norm") or an.keyword(call, "clip_value")
    if threshold is None:
        args = an.positional(call)
        threshold = args[1] if len(args) > 1 else None
    return threshold is None or _dotted_or_call(threshold.value) not in _INFINITE


def _dotted_or_call(expr: cst.BaseExpression) -> str | None:
    """`math.inf`, or `inf` for `float("inf")`."""
    if isinstance(expr, cst.Call) and an.callee_name(expr) == "float" and expr.args:
        value = expr.args[0].value
        if isinstance(value, cst.SimpleString) and value.value.strip("'\"").lower() in ("inf", "infinity"):
            return "inf"
    return an.dotted(expr)


def _unscales_itself(imps: an.Imports, call: cst.Call) -> bool:
    """`accelerator.clip_grad_norm_` and friends unscale mixed-precision gradients first."""
    owner = an.receiver(call)
    if owner is None or imps.is_imported(owner):
        return False
    return any(t in _SELF_UNSCALING for t in an.name_tokens(an.last_name(owner) or ""))


def _scaled_step(train: an.Training, step: cst.CSTNode) -> bool:
    """`scaler.step(optimizer)`: the optimizer is the argument, not the receiver."""
    return isinstance(step, cst.Call) and bool(step.args) and train.optimizer_of(step) is step.args[0].value


def _scaled_backward(backward: cst.CSTNode) -> bool:
    """`scaler.scale(loss).backward()`."""
    owner = an.receiver(backward) if isinstance(backward, cst.Call) else None
    return isinstance(owner, cst.Call) and an.method_name(owner) == "scale"
