"""TL102 gradients-carried-over: an optimizer step consumes gradients that an earlier step
of the same optimizer already applied.

Decided at step time, from facts gathered at each backward call: right after a step, the
gradients it applied are recorded (tensor identity and version counter). At the next
backward call, a gradient that is still exactly the applied one (same tensor, same version,
not zeroed since) is about to receive new gradients on top. If it is still that tensor,
has grown, and was never replaced or zeroed when the optimizer steps again, the step is
carrying over. Deciding at backward time alone would false-alarm on GANs, where the
generator's backward flows into the discriminator's gradients after the discriminator's
step and before its `zero_grad()`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch

from torchlint.runtime_probe.loop import describe_steps
from torchlint.runtime_probe.protocol import Event, Frame


class Resets:
    """A clock of in-place gradient resets (`zero_()`, `fill_(0)`, `mul_(0)`, `*= 0`), keyed by
    storage address. In-place ops on the gradient itself already change its version
    counter; `p.grad.data.zero_()` does not (`.data` has a counter of its own), hence this."""

    def __init__(self) -> None:
        self.clock = 0
        self.watched: set[int] = set()
        self._at: dict[int, int] = {}

    def mark(self, tensor: torch.Tensor) -> None:
        ptr = tensor.data_ptr()
        if ptr in self.watched:
            self.clock += 1
            self._at[ptr] = self.clock

    def since(self, tensor: torch.Tensor, clock: int) -> bool:
        return self._at.get(tensor.data_ptr(), -1) > clock

    def watch(self, pointers: Iterable[frozenset[int]]) -> None:
        # In place: the zeroing wrappers hold this very set.
        self.watched.clear()
        self.watched.update(*pointers)
        if self._at:
            self._at = {ptr: c for ptr, c in self._at.items() if ptr in self.watched}


@dataclass
class _Applied:
    """A gradient as an optimizer step left it."""

    param: torch.Tensor
    grad: weakref.ref[torch.Tensor]
    version: int

    def kept(self, resets: Resets, clock: int) -> torch.Tensor | None:
        """The gradient, if it is still the applied tensor and was not zeroed since `clock`."""
        grad = self.param.grad
        if grad is None or self.grad() is not grad or resets.since(grad, clock):
            return None
        return grad

    def unchanged(self, resets: Resets, clock: int) -> bool:
        grad = self.kept(resets, clock)
        return grad is not None and grad._version == self.version

    def grown(self, resets: Resets, clock: int) -> bool:
        grad = self.kept(resets, clock)
        return grad is not None and grad._version > self.version


@dataclass
class _OptimizerState:
    applied: list[_Applied] = field(default_factory=list)
    pointers: frozenset[int] = frozenset()
    step_clock: int = 0
    # Applied gradients found untouched when a backward pass began, with the reset clock then.
    stale: list[_Applied] = field(default_factory=list)
    stale_clock: int = 0
    checked: bool = True
    baseline: tuple[int, torch.Tensor] | None = None
    carried_steps: list[int] = field(default_factory=list)
    norms: list[tuple[int, torch.Tensor]] = field(default_factory=list)
    parameters: tuple[int, int] = (0, 0)
    stack: tuple[Frame, ...] = ()
    name: str = "optimizer"


def grad_norm(grads: list[torch.Tensor]) -> torch.Tensor:
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(g.detach().float()).to(grads[0].device) for g in grads]
        total: torch.Tensor = torch.linalg.vector_norm(torch.stack(norms))
        return total


def _grads(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]


class GradCheck:
    def __init__(self, resets: Resets) -> None:
        self.resets = resets
        # By id: a WeakKeyDictionary lookup makes a weak reference each time, on every step.
        self._states: dict[int, _OptimizerState] = {}
        # Findings outlive their optimizer (a `main()` that returned).
        self._finished: list[_OptimizerState] = []
        # Parameter id -> (its gradient as the last step left it, the reset clock then);
        # built when asked, dropped at every step.
        self._applied_index: dict[int, tuple[_Applied, int]] | None = None

    def _state(self, optimizer: torch.optim.Optimizer) -> _OptimizerState:
        state = self._states.get(id(optimizer))
        if state is None:
            state = self._states[id(optimizer)] = _OptimizerState(name=type(optimizer).__name__)
            weakref.finalize(optimizer, self._finish, id(optimizer))
        return state

    def _finish(self, key: int) -> None:
        # Let the parameters go with their optimizer; keep what was found.
        state = self._states.pop(key)
        state.applied, state.stale, state.pointers = [], [], frozenset()
        self._applied_index = None
        self._finished.append(state)

    def on_backward(self) -> None:
        clock = self.resets.clock
        for state in self._states.values():
            if not state.checked:
                state.checked = True
                state.stale = [a for a in state.applied if a.unchanged(self.resets, state.step_clock)]
                state.stale_clock = clock
            elif state.stale:
                state.stale = [a for a in state.stale if a.kept(self.resets, state.stale_clock) is not None]

    def before_step(self, optimizer: torch.optim.Optimizer, step: int, has_closure: bool, stack: Callable[[], tuple[Frame, ...]]) -> None:
        state = self._state(optimizer)
        if has_closure:
            # The closure (LBFGS and friends) clears and recomputes gradients inside step().
            state.stale = []
            return
        if state.baseline is None:
            grads = _grads(optimizer)
            if grads:
                state.baseline = (step, grad_norm(grads))
        carried = [a for a in state.stale if a.grown(self.resets, state.stale_clock)]
        if not carried:
            return
        state.carried_steps.append(step)
        state.norms.append((step, grad_norm([a.param.grad for a in carried if a.param.grad is not None])))
        state.parameters = (len(carried), len(_grads(optimizer)))
        if not state.stack:
            state.stack = stack()

    def after_step(self, optimizer: torch.optim.Optimizer) -> None:
        state = self._state(optimizer)
        grads = [(p, p.grad) for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        state.applied = [_Applied(p, weakref.ref(g), g._version) for p, g in grads]
        state.pointers = frozenset(g.data_ptr() for _, g in grads)
        state.stale = []
        state.checked = False
        state.step_clock = self.resets.clock
        self.resets.watch(s.pointers for s in self._states.values())
        self._applied_index = None

    def still_applied(self, params: list[torch.Tensor]) -> int:
        """How many of `params` still hold, unchanged, the gradient their optimizer's last
        step applied."""
        index = self._applied_index
        if index is None:
            index = self._applied_index = {
                id(a.param): (a, state.step_clock) for state in self._states.values() for a in state.applied
            }
        count = 0
        for param in params:
            found = index.get(id(param))
            if found is not None and found[0].param is param and found[0].unchanged(self.resets, found[1]):
                count += 1
        return count

    def events(self, final: bool) -> list[Event]:
        states = [*self._finished, *self._states.values()]
        return [_event(state) for state in states if state.carried_steps and state.stack]


def _event(state: _OptimizerState) -> Event:
    steps = state.carried_steps
    norms = [(step, float(norm)) for step, norm in state.norms]
    first_norm = (state.baseline[0], float(state.baseline[1])) if state.baseline else norms[0]
    last_norm = norms[-1]
    span = describe_steps(steps)
    message = (
        f"`{state.name}.step()` applied gradients that its previous step had already applied, on {span}: "
        f"they were not cleared in between, and the gradient norm grew from {first_norm[1]:.3g} at step "
        f"{first_norm[0]} to {last_norm[1]:.3g} at step {last_norm[0]}; call `optimizer.zero_grad()` once per step"
    )
    evidence: dict[str, Any] = {
        "optimizer": state.name,
        "steps_carried_over": len(steps),
        "steps": steps,
        "grad_norm": {str(step): round(value, 6) for step, value in [first_norm, *norms]},
        "parameters_carried_over": state.parameters[0],
        "parameters_with_grad": state.parameters[1],
    }
    return Event("TL102", state.stack, message, evidence)
