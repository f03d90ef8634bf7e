"""TL010 confirmation, both halves, and the GradScaler bookkeeping other checks use.

- float16 autocast without a GradScaler: when a float16 `autocast` region ran before a
  backward pass and no enabled scaler scaled a loss, the gradients the next optimizer step
  applies are inspected (the first few such steps only): exact zeros scattered inside
  weight gradients whose row and column are otherwise alive are values that underflowed in
  float16 (unused embedding rows and dead units zero whole rows or columns and are not
  counted); inf/NaN gradients are overflow. A weak event: it confirms a static finding on
  the autocast line, never stands alone.
- `scaler.step()` again without `scaler.update()`: the second call raises inside torch;
  the wrapper sees the stage that makes it raise and reports the call.

The scaler wrappers also record which scalers have scaled a loss and not unscaled it yet
(for TL013) and count a `scaler.step()` that skipped the update as an attempt (for TL007).
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.loop import Loop, describe_steps
from torchlint.runtime_probe.protocol import Event, Frame

# The smallest normal float16 number: below it values lose precision, below 6e-8 they are 0.
FP16_TINY = 6.103515625e-05
CHECKED_STEPS = 5
MIN_UNDERFLOW_SHARE = 0.01
STEPPED = "STEPPED"


@dataclass
class _ScalerState:
    ref: weakref.ref[Any]
    # A loss was scaled since the last `update()` and not unscaled since.
    scaled: bool = False


@dataclass
class _AutocastSite:
    stack: tuple[Frame, ...]
    steps: list[int] = field(default_factory=list)
    entries: int = 0
    zeros: int = 0
    tiny: int = 0
    nonfinite: int = 0


@dataclass
class _UpdateSite:
    stack: tuple[Frame, ...]
    calls: int = 0
    error: str = ""


class AmpCheck:
    def __init__(self, loop: Loop, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._loop = loop
        self._guard = guard
        self._scalers: dict[int, _ScalerState] = {}
        # A loss was scaled by an enabled scaler since the last optimizer step.
        self._scaled_since_step = False
        # float16 autocast sites entered since the last optimizer step, with `Loop.backwards` then.
        self._fp16: dict[tuple[str, int], int] = {}
        self._sites: dict[tuple[str, int], _AutocastSite] = {}
        self._updates: dict[tuple[str, int], _UpdateSite] = {}

    # --- GradScaler -------------------------------------------------------------------

    def _state(self, scaler: Any) -> _ScalerState:
        state = self._scalers.get(id(scaler))
        if state is None or state.ref() is not scaler:
            state = self._scalers[id(scaler)] = _ScalerState(weakref.ref(scaler))
        return state

    def wrap_scale(self, original: Callable[..., Any]) -> Callable[..., Any]:
        scaled = self._guard(self._scaled)

        @functools.wraps(original)
        def scale(scaler: Any, outputs: Any) -> Any:
            result = original(scaler, outputs)
            scaled(scaler)
            return result

        return scale

    def _scaled(self, scaler: Any) -> None:
        if scaler.is_enabled():
            self._state(scaler).scaled = True
            self._scaled_since_step = True

    def wrap_unscale(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def unscale_(scaler: Any, optimizer: torch.optim.Optimizer) -> Any:
            result = original(scaler, optimizer)
            state = self._scalers.get(id(scaler))
            if state is not None:
                state.scaled = False
            return result

        return unscale_

    def wrap_update(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def update(scaler: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(scaler, *args, **kwargs)
            state = self._scalers.get(id(scaler))
            if state is not None:
                state.scaled = False
            return result

        return update

    def wrap_step(self, original: Callable[..., Any]) -> Callable[..., Any]:
        before = self._guard(self._before_scaler_step)
        after = self._guard(self._after_scaler_step)

        @functools.wraps(original)
        def step(scaler: Any, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
            site = before(scaler, optimizer)
            steps = self._loop.steps(optimizer)
            try:
                result = original(scaler, optimizer, *args, **kwargs)
            except RuntimeError as error:
                if site is not None:
                    site.error = site.error or str(error).splitlines()[0]
                raise
            after(scaler, optimizer, steps)
            return result

        return step

    def _before_scaler_step(self, scaler: Any, optimizer: torch.optim.Optimizer) -> _UpdateSite | None:
        """The call site, when this call is a second step since the last `update()`."""
        if not scaler.is_enabled():
            return None
        stage = scaler._per_optimizer_states[id(optimizer)]["stage"]
        if getattr(stage, "name", None) != STEPPED:
            return None
        stack = user_stack(sys._getframe())
        if not stack:
            return None
        site = self._updates.get((stack[0].filename, stack[0].line))
        if site is None:
            site = self._updates[stack[0].filename, stack[0].line] = _UpdateSite(stack)
        site.calls += 1
        return site

    def _after_scaler_step(self, scaler: Any, optimizer: torch.optim.Optimizer, steps_before: int) -> None:
        if self._loop.steps(optimizer) == steps_before:
            self._loop.skipped(optimizer)

    def pending_scaler(self) -> Any | None:
        """A live scaler that scaled a loss and has not unscaled it, if any."""
        for state in self._scalers.values():
            scaler = state.ref()
            if state.scaled and scaler is not None:
                return scaler
        return None

    # --- autocast ---------------------------------------------------------------------

    def wrap_enter(self, original: Callable[..., Any]) -> Callable[..., Any]:
        entered = self._guard(self._entered)

        @functools.wraps(original)
        def __enter__(region: Any) -> Any:
            result = original(region)
            entered(region)
            return result

        return __enter__

    def _entered(self, region: Any) -> None:
        if not (region.fast_dtype == torch.float16 and region._enabled):
            return
        stack = user_stack(sys._getframe())
        if not stack:
            return
        key = (stack[0].filename, stack[0].line)
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _AutocastSite(stack)
        if len(site.steps) < CHECKED_STEPS:
            self._fp16.setdefault(key, self._loop.backwards)

    def before_step(self, optimizer: torch.optim.Optimizer) -> None:
        if not self._fp16 or self._scaled_since_step:
            return
        sites = [self._sites[key] for key, backwards in self._fp16.items() if self._loop.backwards > backwards]
        if not sites:
            return
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        entries, zeros, tiny, nonfinite = gradient_underflow(grads)
        step = self._loop.steps(optimizer) + 1
        for site in sites:
            site.steps.append(step)
            site.entries += entries
            site.zeros += zeros
            site.tiny += tiny
            site.nonfinite += nonfinite

    def after_step(self) -> None:
        self._fp16.clear()
        self._scaled_since_step = False

    # --- events -----------------------------------------------------------------------

    def events(self, final: bool) -> list[Event]:
        events = [_underflow_event(site) for site in self._sites.values() if site.steps]
        for site in self._updates.values():
            again = "again" if site.calls == 1 else f"again {site.calls} times"
            raised = f" and raised `{site.error}`" if site.error else ""
            message = (
                f"`scaler.step()` ran {again} without a `scaler.update()` since the previous step{raised}: "
                "call `scaler.update()` after every `scaler.step(optimizer)`"
            )
            events.append(Event("TL010", site.stack, message, {"steps_without_update": site.calls, "error": site.error}))
        return events


def gradient_underflow(grads: list[torch.Tensor]) -> tuple[int, int, int, int]:
    """(entries, zeros, tiny, nonfinite) over the weight gradients (2-D and more) in `grads`:
    entries counts the cells of rows and columns that hold a nonzero value, zeros the exact
    zeros among them, tiny the nonzero values below float16's normal range; nonfinite counts
    inf/NaN values in all of `grads`."""
    entries = zeros = tiny = nonfinite = 0
    for grad in grads:
        if grad.is_sparse:
            continue
        nonfinite += int((~torch.isfinite(grad)).sum())
        if grad.dim() < 2:
            continue
        rows = grad.reshape(grad.shape[0], -1)
        nonzero = rows != 0
        alive = nonzero.any(dim=1)[:, None] & nonzero.any(dim=0)[None, :]
        entries += int(alive.sum())
        zeros += int((alive & ~nonzero).sum())
        tiny += int((nonzero & (rows.abs() < FP16_TINY)).sum())
    return entries, zeros, tiny, nonfinite


def _underflow_event(site: _AutocastSite) -> Event:
    share = site.zeros / site.entries if site.entries else 0.0
    tiny = site.tiny / site.entries if site.entries else 0.0
    span = describe_steps(site.steps)
    evidence: dict[str, Any] = {
        "steps": site.steps,
        "weight_gradient_entries": site.entries,
        "underflowed_to_zero": site.zeros,
        "underflow_share": round(share, 4),
        "below_float16_normal": site.tiny,
        "nonfinite": site.nonfinite,
    }
    found = share >= MIN_UNDERFLOW_SHARE or site.nonfinite > 0
    measured = (
        f"{share:.1%} of the live weight-gradient entries were exactly zero (underflow) and {tiny:.1%} below "
        f"float16's normal range ({FP16_TINY:.2g})"
    )
    if site.nonfinite:
        measured += f", and {site.nonfinite} gradient values were inf/NaN (overflow)"
    if not found:
        message = f"float16 autocast ran without a GradScaler on {span}, but the gradients did not underflow: {measured}"
        return Event("TL010", site.stack, message, evidence, benign=True)
    message = (
        f"float16 autocast ran without a GradScaler on {span}: {measured}; scale the loss with "
        "`torch.amp.GradScaler`, or autocast to `torch.bfloat16`"
    )
    return Event("TL010", site.stack, message, evidence, weak=True)
