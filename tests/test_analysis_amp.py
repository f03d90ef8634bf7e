"""Unit tests of `_analysis.amp` and the gradient-mode blocks of `_analysis.modes` that it
reads: which autocast regions train, and when a `set_grad_enabled(flag)` block trains."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules._analysis.modes import grad_free_blocks, grad_mode_flag


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def call(ctx: FileContext, text: str) -> cst.Call:
    return next(c for c in an.index(ctx).nodes(cst.Call) if ctx.module.code_for_node(c) == text)


class TestGradModeBlocks:
    def test_blocks_innermost_first_and_flag_blocks(self) -> None:
        ctx = context(
            """
            import torch
            with torch.set_grad_enabled(phase == "train"):
                with torch.no_grad():
                    probe(x)
            with torch.set_grad_enabled(False):
                fixed(x)
            with torch.set_grad_enabled(train), torch.no_grad():
                frozen(x)
            """
        )
        idx, imps = an.index(ctx), an.imports(ctx)
        blocks = list(grad_free_blocks(idx, call(ctx, "probe(x)"), imps))
        assert [ctx.module.code_for_node(b.items[0].item) for b in blocks] == [  # type: ignore[union-attr]
            "torch.no_grad()",
            'torch.set_grad_enabled(phase == "train")',
        ]
        assert [grad_mode_flag(b, imps) for b in blocks] == [False, True]
        (literal,) = grad_free_blocks(idx, call(ctx, "fixed(x)"), imps)
        assert not grad_mode_flag(literal, imps)
        (both,) = grad_free_blocks(idx, call(ctx, "frozen(x)"), imps)
        assert not grad_mode_flag(both, imps)

    def test_blocks_stop_at_the_function_unless_asked(self) -> None:
        ctx = context(
            """
            import torch
            with torch.no_grad():
                def inner():
                    work(x)
            """
        )
        idx, imps = an.index(ctx), an.imports(ctx)
        work = call(ctx, "work(x)")
        assert list(grad_free_blocks(idx, work, imps)) == []
        assert len(list(grad_free_blocks(idx, work, imps, stop_at_function=False))) == 1


class TestWithoutGradients:
    def test_flag_block_trains_when_it_runs_a_backward_pass(self) -> None:
        ctx = context(
            """
            import torch
            def run_epoch(model, loader, train):
                with torch.set_grad_enabled(train):
                    for x, y in loader:
                        loss = model(x, y)
                        if train:
                            loss.backward()

            def predict(model, x, grad):
                with torch.set_grad_enabled(grad):
                    return model(x)

            def evaluate(model, x):
                with torch.no_grad():
                    loss = model(x)
                    loss.backward()
            """
        )
        amp = an.amp(ctx)
        assert not amp.without_gradients(call(ctx, "model(x, y)"))
        # A flag block that runs no backward pass may be an inference pass.
        assert amp.without_gradients(call(ctx, "model(x)"))
        # `no_grad` stays gradient-free whatever runs inside it.
        backwards = [c for c in an.index(ctx).nodes(cst.Call) if ctx.module.code_for_node(c) == "loss.backward()"]
        assert [amp.without_gradients(b) for b in backwards] == [False, True]

    def test_autocast_in_a_shared_epoch_function_is_backpropagated(self) -> None:
        ctx = context(
            """
            import torch
            def run_epoch(model, loader, train):
                with torch.set_grad_enabled(train):
                    for x, y in loader:
                        with torch.autocast("cuda"):
                            loss = model(x, y)
                        if train:
                            loss.backward()

            def predict(model, loader, grad):
                with torch.set_grad_enabled(grad):
                    for x in loader:
                        with torch.autocast("cuda"):
                            out = model(x)
                return out
            """
        )
        amp = an.amp(ctx)
        first, second = [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "autocast"]
        assert amp.is_fp16_autocast(first) and amp.backpropagated(first)
        assert not amp.backpropagated(second)


def test_disabled_scaler_only_with_a_literal_false() -> None:
    ctx = context(
        """
        import torch
        from torch.amp import GradScaler
        off = torch.cuda.amp.GradScaler(enabled=False)
        self.off = GradScaler("cuda", enabled=False)
        flag = torch.cuda.amp.GradScaler(enabled=args.amp)
        on = GradScaler()
        rebound = GradScaler(enabled=False)
        rebound = GradScaler()
        """
    )
    amp = an.amp(ctx)
    disabled = {
        name for name in ("off", "self.off", "flag", "on", "rebound", "unknown")
        if amp.disabled_scaler(cst.parse_expression(name))
    }
    assert disabled == {"off", "self.off"}


def test_an_update_that_an_if_skips_after_unscale() -> None:
    ctx = context(
        """
        def skipped(scaler, optimizer, ok):
            scaler.unscale_(optimizer)
            if ok:
                scaler.step(optimizer)
                scaler.update()

        def both_branches(scaler, optimizer, ok):
            scaler.unscale_(optimizer)
            if ok:
                scaler.step(optimizer)
                scaler.update()
            else:
                scaler.update()

        def together(scaler, optimizer, step):
            if step:
                scaler.unscale_(optimizer)
                scaler.step(optimizer)
                scaler.update()

        def always(scaler, optimizer):
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()

        def same_flag(scaler, optimizer, args):
            if args.fp16:
                if args.amp == "pytorch":
                    scaler.unscale_(optimizer)
            if args.fp16 and args.amp == "pytorch":
                scaler.step(optimizer)
                scaler.update()

        def every_micro_batch(scaler, optimizer, args, step):
            if args.amp:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
            if step % args.accumulation_steps == 0:
                scaler.step(optimizer)
                scaler.update()
        """
    )
    amp = an.amp(ctx)
    unscales = [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "unscale_"]
    guards = {an.index(ctx).scope(c).name.value: amp.skipped_update(c) for c in unscales}
    assert [name for name, guard in guards.items() if guard is not None] == ["skipped", "every_micro_batch"]
    assert ctx.module.code_for_node(guards["skipped"].test) == "ok"


def test_an_exit_stack_that_enters_a_gradient_free_context() -> None:
    ctx = context(
        """
        import contextlib, torch
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.no_grad())
            model(a)
        managers = [torch.no_grad()] + list(observers)
        with contextlib.ExitStack() as stack:
            for manager in managers:
                stack.enter_context(manager)
            model(b)
        with contextlib.ExitStack() as stack:
            stack.enter_context(open(path))
            model(c)
        """
    )
    idx, imps = an.index(ctx), an.imports(ctx)
    runs = {code(ctx, c.args[0].value): an.in_grad_free_block(idx, c, imps) for c in idx.nodes(cst.Call) if an.callee_name(c) == "model"}
    assert runs == {"a": True, "b": True, "c": False}


class TestDtypeChosenFromATable:
    """`{'float16': torch.float16, ...}[name]`: the entry the key's strings pick decides."""

    @staticmethod
    def fp16(setting: str, table: str = "{'fp32': torch.float32, 'bf16': torch.bfloat16, 'fp16': torch.float16}") -> bool:
        ctx = context(
            f"""
            import torch
            {setting}
            chosen = {table}[precision]
            with torch.autocast(device_type="cuda", dtype=chosen):
                y = model(x)
            """
        )
        return an.amp(ctx).is_fp16_autocast(call(ctx, 'torch.autocast(device_type="cuda", dtype=chosen)'))

    def test_a_key_that_picks_float16(self) -> None:
        assert self.fp16("precision = 'fp16'")
        assert self.fp16("precision = 'fp16'", "{'fp16': torch.half, 'fp32': torch.float32}")

    def test_keys_that_pick_bfloat16_or_float32(self) -> None:
        assert not self.fp16("precision = 'bf16'")
        assert not self.fp16("precision = 'fp32'")

    def test_a_key_of_unknown_or_mixed_value(self) -> None:
        assert not self.fp16("precision = args.precision")
        assert not self.fp16("precision = 'fp16'; precision = 'bf16'")
        assert not self.fp16("precision = 'int8'")
