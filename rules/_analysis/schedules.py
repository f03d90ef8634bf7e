"""Learning-rate schedules: which calls of a module advance a schedule (the `step()` of a
`torch.optim.lr_scheduler` class, of a Hugging Face `get_*_schedule*` factory's result or of
a name that says scheduler, also as an item of a container of them (`scheds["lr"].step()`),
and the call of a project helper that steps one), the optimizer
each schedule was built on, and which calls update an optimizer: its steps, the `step()` of
a DeepSpeed-style engine (the optimizer, then the engine's schedule) and the call of a
project helper that steps one. Their order within an iteration is `flow`'s.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import method_name, positional, receiver
from torchlint.rules._analysis.expected_warnings import expected_warnings
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import dotted, imports
from torchlint.rules._analysis.training import engine_steps, training
from torchlint.rules._vocabulary import says_scheduler

# `torch.optim.lr_scheduler` classes and the Hugging Face factories that build one.
TORCH_SCHEDULERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.SWALR")
SCHEDULE_FACTORY = re.compile(r"^get_(\w+_)?schedule(r|_with_warmup)?\w*$")
FACTORY_PACKAGES = ("transformers", "diffusers")
# How the name of an item of a container of schedules ends (`scheds[]`).
ITEM = "[]"


class Schedules:
    """The schedule steps and optimizer updates of one module."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = idx = index(ctx)
        imps = imports(ctx)
        funcs = functions(ctx)
        self.train = training(ctx)
        self.warned = expected_warnings(ctx)
        # Schedule name -> the optimizer it was built on, where the code shows it.
        self.bound: dict[str, str | None] = {}
        self.custom: set[str] = set()
        for assign in idx.nodes(cst.Assign):
            if isinstance(assign.value, (cst.Dict, cst.List, cst.Tuple)):
                # `{"lr": StepLR(opt, 10)}`: its items, `scheds["lr"]`, are schedules.
                held = [v for v in _container_values(assign.value) if isinstance(v, cst.Call)]
                if any((imps.callee(v) or "").startswith(TORCH_SCHEDULERS) for v in held):
                    for target in assign.targets:
                        name = dotted(target.target)
                        if name is not None:
                            self.bound[name + ITEM] = None
            if not isinstance(assign.value, cst.Call):
                continue
            callee = imps.callee(assign.value) or ""
            short = callee.rsplit(".", 1)[-1]
            for target in assign.targets:
                name = dotted(target.target)
                if name is None:
                    continue
                if callee.startswith(TORCH_SCHEDULERS) or (
                    callee.startswith(FACTORY_PACKAGES) and SCHEDULE_FACTORY.match(short)
                ):
                    args = positional(assign.value)
                    self.bound[name] = dotted(args[0].value) if args else None
                elif funcs.method(short, "step") is not None:
                    self.custom.add(name)
        # `scheduler.last_epoch = start_epoch - 1`: the code positions the schedule itself, so
        # that stepping first lands on the right value (ultralytics).
        self.positioned = {
            name.rsplit(".", 1)[0]
            for assign in idx.nodes(cst.Assign)
            for target in assign.targets
            if (name := dotted(target.target)) is not None and name.endswith(".last_epoch")
        }
        self.engines = {id(call) for call in engine_steps(ctx)}
        # Calls of project helpers, by id, to whether they step an optimizer (True) or only a
        # schedule (False); a helper that does both keeps its own order.
        self.helpers: dict[int, bool] = {}
        if ctx.project is not None:
            for call in idx.nodes(cst.Call):
                done = sm.call_effects(ctx, call)
                if "steps" in done or "schedules" in done:
                    self.helpers[id(call)] = "steps" in done
        self.steps = [
            call for call in idx.nodes(cst.Call) if self.is_schedule_step(call) or self.helpers.get(id(call)) is False
        ]
        updates = {id(c): c for c in (*self.train.steps, *engine_steps(ctx))}
        updates.update({id(c): c for c in idx.nodes(cst.Call) if self.helpers.get(id(c))})
        self.updates = [c for c in updates.values() if not self.is_schedule_step(c)]

    def number(self, expr: cst.BaseExpression) -> float | None:
        """A number literal, or a number that a project module defines (a config value)."""
        return sm.number(self.ctx, expr)

    def is_schedule_step(self, call: cst.Call) -> bool:
        """A plain `scheduler.step()` statement of a learning-rate schedule. With an argument
        (`plateau.step(val_loss)`, `step(epoch)`), or with its result used, it is a schedule of
        another kind; where a warning is expected (`with warnings.catch_warnings():`, a test's
        `assertWarns`/`pytest.warns`) PyTorch's warning about the order is read on purpose."""
        owner = receiver(call)
        if method_name(call) != "step" or call.args or owner is None or not isinstance(self.idx.parent(call), cst.Expr):
            return False
        name = schedule_name(owner)
        if name is None or name in self.custom or name in self.positioned or self.warned.covers(call):
            return False
        return name in self.bound or says_scheduler(name.removesuffix(ITEM).rsplit(".", 1)[-1])

    def optimizer_of(self, schedule_step: cst.CSTNode) -> str | None:
        """The optimizer a schedule step's schedule was built on, where the code shows it."""
        owner = receiver(schedule_step) if isinstance(schedule_step, cst.Call) else None
        name = schedule_name(owner) if owner is not None else None
        return self.bound.get(name) if name is not None else None

    def updates_optimizer(self, call: cst.CSTNode, optimizer: str | None) -> bool:
        """`call` (one of `updates`) may update `optimizer` (None: any optimizer). An engine's
        step updates its own optimizer; a project helper the optimizer it is given."""
        if id(call) in self.engines or optimizer is None:
            return True
        if id(call) in self.helpers:
            return isinstance(call, cst.Call) and any(dotted(arg.value) == optimizer for arg in call.args)
        return dotted(self.train.optimizer_of(call)) == optimizer  # type: ignore[arg-type]


def schedule_name(owner: cst.BaseExpression) -> str | None:
    """The name a schedule is known by: `scheduler`, `self.sched`, or `scheds[]` for an item
    of a container (`scheds["lr"]`, `schedulers[0]`)."""
    if isinstance(owner, cst.Subscript):
        container = dotted(owner.value)
        return container + ITEM if container is not None else None
    return dotted(owner)


def _container_values(literal: cst.Dict | cst.List | cst.Tuple) -> list[cst.BaseExpression]:
    if isinstance(literal, cst.Dict):
        return [e.value for e in literal.elements if isinstance(e, cst.DictElement)]
    return [e.value for e in literal.elements]


def schedules(ctx: FileContext) -> Schedules:
    return ctx.analysis(Schedules)
