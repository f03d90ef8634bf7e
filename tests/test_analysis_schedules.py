"""Unit tests of `torchlint.rules._analysis.schedules`: which calls step a learning-rate
schedule, of which optimizer, and which calls update an optimizer (its steps, an engine's
step, a project helper that steps one)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchlint import api
from torchlint.project import Project, ProjectView
from torchlint.rule import FileContext
from torchlint.rules import _analysis as an

PROJECT = Path(__file__).parent / "data" / "projects" / "schedules"


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node).strip()


def test_schedule_steps_and_the_optimizer_of_each() -> None:
    ctx = context(
        """
        import warnings
        from torch.optim import lr_scheduler as ls
        from transformers import get_cosine_schedule_with_warmup
        decay = ls.StepLR(opt, 10)
        warm = get_cosine_schedule_with_warmup(other, 10, 100)
        positioned = ls.StepLR(opt, 10)
        positioned.last_epoch = 4
        decay.step()
        warm.step()
        lr_scheduler.step()
        noise_scheduler.step()
        plateau_sched.step(val_loss)
        lr = sched.step()
        positioned.step()
        with warnings.catch_warnings():
            sched.step()
        """
    )
    schedules = an.schedules(ctx)
    assert [code(ctx, s) for s in schedules.steps] == ["decay.step()", "warm.step()", "lr_scheduler.step()"]
    assert [schedules.optimizer_of(s) for s in schedules.steps] == ["opt", "other", None]


def test_a_local_class_with_its_own_step_is_no_torch_schedule() -> None:
    ctx = context(
        """
        class Warmup:
            def step(self):
                self.n += 1
        scheduler = Warmup()
        scheduler.step()
        """
    )
    assert an.schedules(ctx).steps == []


def test_updates_are_optimizer_steps_and_engine_steps() -> None:
    ctx = context(
        """
        engine.backward(loss)
        engine.step()
        optimizer.step()
        scaler.step(opt_g)
        """
    )
    schedules = an.schedules(ctx)
    assert [code(ctx, u) for u in schedules.updates] == ["optimizer.step()", "scaler.step(opt_g)", "engine.step()"]
    optimizer_step, scaler_step, engine_step = schedules.updates
    assert schedules.updates_optimizer(optimizer_step, "optimizer")
    assert not schedules.updates_optimizer(optimizer_step, "opt_g")
    assert schedules.updates_optimizer(scaler_step, "opt_g")
    assert schedules.updates_optimizer(engine_step, "anything")


@pytest.mark.parametrize(
    ("name", "says"),
    [("lr_scheduler", True), ("sched", True), ("warmupScheduler", True), ("noise_scheduler", False), ("wd_sched", False), ("bnm_scheduler", False), ("bn_scheduler", False), ("optimizer", False)],
)
def test_says_scheduler(name: str, says: bool) -> None:
    assert an.says_scheduler(name) is says


def project_context(name: str) -> FileContext:
    path = PROJECT / name
    text = path.read_text()
    ctx = FileContext(str(path), text, cst.parse_module(text))
    ctx.project = ProjectView.of(Project(api.summarize_text), path)
    return ctx


def test_project_helpers_that_step_a_schedule_or_an_optimizer() -> None:
    ctx = project_context("run_methods.py")
    schedules = an.schedules(ctx)
    assert [code(ctx, s) for s in schedules.steps] == ["runner.advance_schedules()"]
    assert [code(ctx, u) for u in schedules.updates] == ["runner.learn(features, labels)"]


def test_a_project_helper_updates_the_optimizer_it_is_given() -> None:
    ctx = project_context("run_epochs.py")
    schedules = an.schedules(ctx)
    first, second = schedules.updates
    assert schedules.updates_optimizer(first, "opt")
    assert not schedules.updates_optimizer(first, "other")
    assert schedules.updates_optimizer(first, None)


def test_items_of_a_container_of_schedules_are_schedules() -> None:
    ctx = context(
        """
        from torch.optim.lr_scheduler import StepLR
        policies = {"lr": StepLR(opt, 10)}
        schedulers = [make(opt)]
        losses = {"lr": compute(opt)}
        policies["lr"].step()
        schedulers[0].step()
        losses["lr"].step()
        """
    )
    sched = an.schedules(ctx)
    assert [code(ctx, s) for s in sched.steps] == ['policies["lr"].step()', "schedulers[0].step()"]
