"""Unit tests of `torchlint.rules._analysis.totals`: running totals kept across the
iterations of a loop."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node).strip()


def first_loop(ctx: FileContext) -> cst.For:
    return an.index(ctx).nodes(cst.For)[0]


def test_each_kind_of_running_total_with_what_it_adds() -> None:
    ctx = context(
        """
        meter = AverageMeter()
        for x, y in loader:
            total += loss
            total = total + loss * n
            acc = acc + (w * loss.item())
            losses.append(loss)
            meter.update(loss, n)
            other.update(loss)
            total += self.step(x)
            total += out.loss
            losses.append(out.loss)
            losses.append(out.loss.data)
            for inner in parts:
                nested += inner
        """
    )
    found = [(code(ctx, t.accumulator), code(ctx, t.value)) for t in an.running_totals(ctx, first_loop(ctx))]
    assert found == [
        ("total", "loss"),
        ("total", "loss"),
        ("losses", "loss"),
        ("meter", "loss"),
        ("total", "self.step(x)"),
        ("total", "out.loss"),
        ("losses", "out.loss"),
    ]


def test_meters_by_class_name_or_by_an_update_that_sums_its_argument() -> None:
    ctx = context(
        """
        class Running:
            def update(self, val, n=1):
                self.sum += val * n

        class Last:
            def update(self, val):
                self.val = val

        a = AverageMeter()
        b = Running()
        c = Last()
        """
    )
    assert an.running_meters(ctx) == {"a", "b"}


def test_added_operand() -> None:
    def operand(text: str) -> str | None:
        found = an.added_operand(cst.parse_expression(text))
        return an.dotted(found) if found is not None else None

    assert operand("loss") == "loss"
    assert operand("loss * x.size(0)") == "loss"
    assert operand("loss / n") == "loss"
    assert operand("w * loss.item()") is None
    assert operand("loss + 1") is None
    assert operand("output.loss") == "output.loss" and operand("output.loss / n") == "output.loss"
    assert operand("loss.data") is None and operand("outputs[0]") is None


def test_a_total_restarted_inside_the_iteration() -> None:
    ctx = context(
        """
        for x in loader:
            window = 0
            window += loss
            kept += loss
            stats["loss"] += loss
        """
    )
    loop = first_loop(ctx)
    restarted = {code(ctx, t.accumulator): an.restarted_in_iteration(an.index(ctx), loop, t) for t in an.running_totals(ctx, loop)}
    assert restarted == {"window": True, "kept": False, 'stats["loss"]': False}


def test_the_binding_before_a_statement_in_the_loop_body() -> None:
    ctx = context(
        """
        for x in loader:
            loss = first(x)
            loss, extra = second(x)
            total += loss
            loss = third(x)
        """
    )
    idx = an.index(ctx)
    loop = first_loop(ctx)
    (total,) = an.running_totals(ctx, loop)
    binding = an.binding_before(idx, loop, "loss", total.statement)
    assert binding is not None and code(ctx, binding.value) == "second(x)" and binding.unpacked
    assert an.binding_before(idx, loop, "missing", total.statement) is None


def test_a_container_whose_elements_a_loop_backpropagates_flows_into_the_backward_pass() -> None:
    ctx = context(
        """
        def schedule(chunks):
            outputs, logged = [], []
            for chunk in chunks:
                loss = stage(chunk)
                outputs.append(loss)
                logged.append(loss)
            for loss in reversed(outputs):
                loss.backward()
            for loss in logged:
                print(loss)
        """
    )
    func = an.index(ctx).nodes(cst.FunctionDef)[0]
    flowing = an.backpropagated_names(ctx, an.index(ctx), func).flowing
    assert "outputs" in flowing
    assert "logged" not in flowing


def test_a_conditional_that_starts_the_total_once_and_then_adds_to_it() -> None:
    ctx = context(
        """
        for x in loader:
            if isinstance(losses, tuple):
                total = losses if total is None else tuple(map(sum, zip(total, losses)))
            else:
                total = losses if total is None else total + losses
            window = loss if window is None else window + loss
            kept = kept + loss if kept is not None else loss
        """
    )
    loop = first_loop(ctx)
    found = list(an.running_totals(ctx, loop))
    assert [(code(ctx, t.accumulator), code(ctx, t.value), code(ctx, t.start)) for t in found if t.start is not None] == [
        ("total", "losses", "losses"),
        ("window", "loss", "loss"),
        ("kept", "loss", "loss"),
    ]
    restarted = {code(ctx, t.accumulator): an.restarted_in_iteration(an.index(ctx), loop, t) for t in found}
    # The tuple branch starts the total while it is None and otherwise builds on it.
    assert restarted == {"total": False, "window": False, "kept": False}


def test_a_conditional_that_drops_the_total_restarts_it() -> None:
    ctx = context(
        """
        for x in loader:
            total = loss if total is None else total + loss
            total = None if step % 10 == 0 else total
        """
    )
    loop = first_loop(ctx)
    (found,) = an.running_totals(ctx, loop)
    assert an.restarted_in_iteration(an.index(ctx), loop, found)


def test_summed() -> None:
    def addition(text: str) -> str | None:
        found = an.summed(cst.parse_expression(text))
        return cst.Module([]).code_for_node(found) if found is not None else None

    assert addition("total + loss") == "total + loss"
    assert addition("loss if total is None else total + loss") == "total + loss"
    assert addition("total * 0.9") is None and addition("a if b else c") is None


def test_per_step_methods_are_the_loop_free_methods_a_loop_calls_through_self() -> None:
    ctx = context(
        """
        class Trainer:
            def train_step(self, x, y):
                self.total += loss
            def log_epoch(self):
                print(self.total)
            def evaluate(self, loader):
                for x, y in loader:
                    self.total += loss
            def fit(self, loader, epochs):
                for epoch in range(epochs):
                    for x, y in loader:
                        self.train_step(x, y)
                    self.evaluate(val_loader)
                self.log_epoch()

        def helper(x):
            return x
        for x in data:
            helper(x)
        """
    )
    # Not the method that loops itself, nor the one called once after the loops.
    assert [m.name.value for m in an.per_step_methods(ctx)] == ["train_step"]


def test_a_per_step_methods_totals_are_those_kept_on_its_object() -> None:
    ctx = context(
        """
        class Trainer:
            def train_step(self, x, y):
                local += loss
                self.total += loss
                self.sums["loss"] += loss * x.size(0)
                self.sums["kl"] = self.sums["kl"] + kl
                self.history.append(loss)
                with_items += loss.item()
            def fit(self, loader):
                for x, y in loader:
                    self.train_step(x, y)
        """
    )
    (method,) = an.per_step_methods(ctx)
    found = [(code(ctx, t.accumulator), code(ctx, t.value)) for t in an.running_totals(ctx, method)]
    assert found == [
        ("self.total", "loss"),
        ('self.sums["loss"]', "loss"),
        ('self.sums["kl"]', "kl"),
        ("self.history", "loss"),
    ]
