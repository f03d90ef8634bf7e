"""What the training loop has done so far, for the checks that judge the order of its
calls: backward passes, optimizer steps (and GradScaler steps that skipped the update),
and which parameters each optimizer trains. Counters only: nothing here looks at a
tensor's values."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import torch


@dataclass
class OptimizerRecord:
    name: str
    steps: int = 0
    # Steps plus `scaler.step(optimizer)` calls that skipped the update (inf/NaN gradients):
    # the script did call for an update.
    attempts: int = 0
    # `Loop.backwards` when it last stepped.
    backwards: int = -1
    _params: frozenset[int] = field(default=frozenset(), repr=False)
    _size: int = -1


def _size(optimizer: torch.optim.Optimizer) -> int:
    return sum(len(group["params"]) for group in optimizer.param_groups)


class Loop:
    def __init__(self) -> None:
        self.backwards = 0
        # `backwards` when any optimizer last stepped.
        self.backwards_at_step = 0
        self.total_steps = 0
        # By id: a WeakKeyDictionary lookup makes a weak reference each time, on every step.
        self._optimizers: dict[int, OptimizerRecord] = {}
        # Parameters (by id) of the optimizers that have stepped, and a counter that changes
        # whenever the set grows.
        self.trained: set[int] = set()
        self.trained_version = 0

    def record(self, optimizer: torch.optim.Optimizer) -> OptimizerRecord:
        record = self._optimizers.get(id(optimizer))
        if record is None:
            record = self._optimizers[id(optimizer)] = OptimizerRecord(type(optimizer).__name__)
            weakref.finalize(optimizer, self._optimizers.pop, id(optimizer), None)
        return record

    def on_backward(self) -> None:
        self.backwards += 1

    def after_step(self, optimizer: torch.optim.Optimizer) -> int:
        """Count a completed step; returns how many steps `optimizer` has made."""
        record = self.record(optimizer)
        record.steps += 1
        record.attempts += 1
        record.backwards = self.backwards_at_step = self.backwards
        self.total_steps += 1
        if record.steps == 1 or record._size != _size(optimizer):
            params = self.params(optimizer)
            if not params <= self.trained:
                self.trained |= params
                self.trained_version += 1
        return record.steps

    def skipped(self, optimizer: torch.optim.Optimizer) -> None:
        self.record(optimizer).attempts += 1

    def steps(self, optimizer: torch.optim.Optimizer) -> int:
        record = self._optimizers.get(id(optimizer))
        return record.steps if record else 0

    def attempts(self, optimizer: torch.optim.Optimizer) -> int:
        record = self._optimizers.get(id(optimizer))
        return record.attempts if record else 0

    def step_counts(self) -> dict[int, int]:
        """Steps made so far, by optimizer id."""
        return {key: record.steps for key, record in self._optimizers.items()}

    def params(self, optimizer: torch.optim.Optimizer) -> frozenset[int]:
        """Ids of the parameters `optimizer` updates (cached until its groups change)."""
        record = self.record(optimizer)
        size = _size(optimizer)
        if size != record._size:
            record._params = frozenset(id(p) for group in optimizer.param_groups for p in group["params"])
            record._size = size
        return record._params


def parameter_ids(module: torch.nn.Module) -> frozenset[int]:
    return frozenset(id(p) for p in module.parameters())


def describe_steps(steps: list[int]) -> str:
    return f"step {steps[0]}" if len(steps) == 1 else f"{len(steps)} steps ({steps[0]}-{steps[-1]})"
