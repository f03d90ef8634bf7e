"""Confirmations of the loop-order rules, from the order of the script's calls:

- TL005: a gradient clear (`optimizer.zero_grad()`, `model.zero_grad()`) after the latest
  backward pass, then an optimizer step that finds all of its gradients cleared (None or
  zero): the step applies nothing. Decided at step time, so a GAN that clears one network's
  gradients after the other network's backward pass is not a finding.
- TL007: a scheduler's first `step()` before any step (or GradScaler step attempt) of its
  optimizer: the schedule's first value is never used. The scheduler's own initial step in
  its constructor, and schedulers stepped by other schedulers, do not count.
- TL013: `clip_grad_norm_` / `clip_grad_value_` on gradients still multiplied by a
  GradScaler's loss scale (a scaler scaled a loss and did not unscale it), on gradients
  the last optimizer step already applied (clipping after the step), or on no gradients
  at all (before the backward pass; a weak event).
"""

from __future__ import annotations

import functools
import math
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch

from torchlint.runtime_probe.amp import AmpCheck
from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.grads import GradCheck, grad_norm
from torchlint.runtime_probe.loop import Loop, describe_steps
from torchlint.runtime_probe.protocol import Event, Frame

Guard = Callable[[Callable[..., Any]], Callable[..., Any]]


def _key(stack: tuple[Frame, ...]) -> tuple[str, int]:
    return stack[0].filename, stack[0].line


# --- TL005 -----------------------------------------------------------------------------


@dataclass
class _Clear:
    backwards: int
    stack: tuple[Frame, ...]
    call: str
    discarded_norm: float
    # Ids of the parameters whose gradients it cleared.
    cleared: frozenset[int]


@dataclass
class _ClearSite:
    stack: tuple[Frame, ...]
    call: str
    optimizer: str
    discarded_norm: float
    parameters: int
    steps: list[int] = field(default_factory=list)


class ClearCheck:
    def __init__(self, loop: Loop, guard: Guard) -> None:
        self._loop = loop
        self._guard = guard
        # The latest clear that ran after a backward pass with no optimizer step in between.
        self._clear: _Clear | None = None
        self._sites: dict[tuple[str, int], _ClearSite] = {}

    def wrap_zero_grad(self, original: Callable[..., Any], parameters: Callable[[Any], Iterable[torch.Tensor]]) -> Callable[..., Any]:
        note = self._guard(self._note)
        loop = self._loop

        @functools.wraps(original)
        def zero_grad(owner: Any, *args: Any, **kwargs: Any) -> Any:
            if loop.backwards > loop.backwards_at_step:
                note(owner, parameters)
            return original(owner, *args, **kwargs)

        return zero_grad

    def _note(self, owner: Any, parameters: Callable[[Any], Iterable[torch.Tensor]]) -> None:
        with_grad = [p for p in parameters(owner) if p.grad is not None]
        if not with_grad:
            return
        norm = float(grad_norm([p.grad for p in with_grad if p.grad is not None]))
        if norm > 0:
            call = f"{type(owner).__name__}.zero_grad()"
            stack = user_stack(sys._getframe())
            self._clear = _Clear(self._loop.backwards, stack, call, norm, frozenset(id(p) for p in with_grad))

    def before_step(self, optimizer: torch.optim.Optimizer) -> None:
        clear = self._clear
        loop = self._loop
        if clear is None or clear.backwards != loop.backwards or not clear.stack:
            return
        if loop.record(optimizer).backwards >= loop.backwards:
            return  # no backward pass since this optimizer's previous step
        params = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
        if not any(id(p) in clear.cleared for p in params):
            return  # it cleared another optimizer's gradients
        if any(p.grad is not None and bool(p.grad.any()) for p in params):
            return
        site = self._sites.get(_key(clear.stack))
        if site is None:
            site = self._sites[_key(clear.stack)] = _ClearSite(
                clear.stack, clear.call, type(optimizer).__name__, clear.discarded_norm, len(params)
            )
        site.steps.append(loop.steps(optimizer) + 1)

    def events(self, final: bool) -> list[Event]:
        events = []
        for site in self._sites.values():
            message = (
                f"`{site.call}` ran after the backward pass and before `{site.optimizer}.step()`: on "
                f"{describe_steps(site.steps)} the step found all {site.parameters} gradients cleared, throwing away "
                f"gradients of norm {site.discarded_norm:.3g}, so it applied nothing; clear the gradients before the "
                "forward pass or after the step"
            )
            evidence = {
                "optimizer": site.optimizer,
                "steps": site.steps,
                "parameters": site.parameters,
                "discarded_grad_norm": site.discarded_norm,
            }
            events.append(Event("TL005", site.stack, message, evidence))
        return events


def optimizer_parameters(optimizer: torch.optim.Optimizer) -> Iterable[torch.Tensor]:
    return (p for group in optimizer.param_groups for p in group["params"])


def module_parameters(module: torch.nn.Module) -> Iterable[torch.Tensor]:
    return module.parameters()


# --- TL007 -----------------------------------------------------------------------------


@dataclass
class _EarlyStep:
    stack: tuple[Frame, ...]
    scheduler: str
    optimizer: str
    lr_before: float | None
    lr_after: float | None = None


def _lr(optimizer: torch.optim.Optimizer) -> float | None:
    try:
        return float(optimizer.param_groups[0]["lr"])
    except (IndexError, KeyError, TypeError, ValueError, RuntimeError):
        return None


class SchedulerCheck:
    def __init__(self, loop: Loop, guard: Guard) -> None:
        self._loop = loop
        self._guard = guard
        self._depth = 0
        # Schedulers whose first step from the script was judged, by id.
        self._judged: dict[int, weakref.ref[Any]] = {}
        self._early: dict[tuple[str, int], _EarlyStep] = {}

    def wrap_initial(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """`LRScheduler._initial_step`: the constructor's own step, not the script's."""

        @functools.wraps(original)
        def _initial_step(scheduler: Any) -> Any:
            self._depth += 1
            try:
                return original(scheduler)
            finally:
                self._depth -= 1

        return _initial_step

    def wrap_step(self, original: Callable[..., Any]) -> Callable[..., Any]:
        judge = self._guard(self._judge)
        done = self._guard(self._done)

        @functools.wraps(original)
        def step(scheduler: Any, *args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return original(scheduler, *args, **kwargs)
            early = judge(scheduler)
            self._depth += 1
            try:
                result = original(scheduler, *args, **kwargs)
            finally:
                self._depth -= 1
            if early is not None:
                done(early, scheduler)
            return result

        return step

    def _judge(self, scheduler: Any) -> _EarlyStep | None:
        ref = self._judged.get(id(scheduler))
        if ref is not None and ref() is scheduler:
            return None
        self._judged[id(scheduler)] = weakref.ref(scheduler)
        optimizer = getattr(scheduler, "optimizer", None)
        if not isinstance(optimizer, torch.optim.Optimizer) or self._loop.attempts(optimizer):
            return None
        stack = user_stack(sys._getframe())
        if not stack or _key(stack) in self._early:
            return None
        early = _EarlyStep(stack, type(scheduler).__name__, type(optimizer).__name__, _lr(optimizer))
        self._early[_key(stack)] = early
        return early

    def _done(self, early: _EarlyStep, scheduler: Any) -> None:
        early.lr_after = _lr(scheduler.optimizer)

    def events(self, final: bool) -> list[Event]:
        events = []
        for early in self._early.values():
            if early.lr_before is not None and early.lr_after is not None and early.lr_before != early.lr_after:
                effect = (
                    f"the learning rate went from {early.lr_before:.4g} to {early.lr_after:.4g} before the first update, "
                    "so the schedule's first value was never used"
                )
            else:
                effect = "the schedule moved one position ahead before the first update"
            message = (
                f"`{early.scheduler}.step()` ran before any `{early.optimizer}.step()`: {effect}; "
                "call `scheduler.step()` after `optimizer.step()`"
            )
            evidence = {
                "scheduler": early.scheduler,
                "optimizer": early.optimizer,
                "lr_before": early.lr_before,
                "lr_after": early.lr_after,
            }
            events.append(Event("TL007", early.stack, message, evidence))
        return events


# --- TL013 -----------------------------------------------------------------------------


@dataclass
class _ClipSite:
    stack: tuple[Frame, ...]
    function: str
    problem: str
    calls: int = 0
    evidence: dict[str, Any] = field(default_factory=dict)


SCALED, AFTER_STEP, NO_GRADIENTS = "scaled", "after-step", "no-gradients"


class ClipCheck:
    def __init__(self, grads: GradCheck, amp: AmpCheck, guard: Guard) -> None:
        self._grads = grads
        self._amp = amp
        self._guard = guard
        self._sites: dict[tuple[str, int, str], _ClipSite] = {}

    def wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        judge = self._guard(self._judge)
        record = self._guard(self._record)

        @functools.wraps(original)
        def clip(parameters: Any, *args: Any, **kwargs: Any) -> Any:
            params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
            verdict = judge(params, _limit(args, kwargs))
            result = original(params, *args, **kwargs)
            if verdict is not None:
                record(original.__name__, verdict, result, args, kwargs)
            return result

        return clip

    def _judge(self, params: list[torch.Tensor], limit: float | None) -> tuple[str, dict[str, Any]] | None:
        if limit is not None and math.isinf(limit):
            return None  # `clip_grad_norm_(params, inf)` only measures the norm
        trainable = [p for p in params if isinstance(p, torch.Tensor) and p.requires_grad]
        if not trainable:
            return None
        with_grad = [p for p in trainable if p.grad is not None]
        if not with_grad:
            return NO_GRADIENTS, {"parameters": len(trainable)}
        scaler = self._amp.pending_scaler()
        if scaler is not None:
            return SCALED, {"loss_scale": scaler.get_scale()}
        applied = self._grads.still_applied(with_grad)
        if applied == len(with_grad):
            return AFTER_STEP, {"parameters": len(trainable), "already_applied": applied}
        return None

    def _record(self, function: str, verdict: tuple[str, dict[str, Any]], result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        stack = user_stack(sys._getframe())
        if not stack:
            return
        problem, evidence = verdict
        site = self._sites.get((*_key(stack), problem))
        if site is None:
            site = self._sites[(*_key(stack), problem)] = _ClipSite(stack, function, problem)
            evidence["function"] = function
            limit = _limit(args, kwargs)
            if limit is not None:
                evidence["limit"] = limit
            if isinstance(result, torch.Tensor):
                evidence["total_norm"] = float(result)
            site.evidence = evidence
        site.calls += 1

    def events(self, final: bool) -> list[Event]:
        return [_clip_event(site) for site in self._sites.values()]


def _limit(args: tuple[Any, ...], kwargs: dict[str, Any]) -> float | None:
    """The clipping threshold (`max_norm` or `clip_value`)."""
    limit = args[0] if args else kwargs.get("max_norm", kwargs.get("clip_value"))
    return float(limit) if isinstance(limit, (int, float)) else None


def _calls(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def _clip_event(site: _ClipSite) -> Event:
    evidence = {**site.evidence, "problem": site.problem, "calls": site.calls}
    call = f"`{site.function}`"
    if site.problem == SCALED:
        scale = site.evidence.get("loss_scale")
        norm = site.evidence.get("total_norm")
        measured = ""
        if isinstance(scale, float) and scale and isinstance(norm, float):
            measured = f": it measured a total norm of {norm:.3g} (about {norm / scale:.3g} unscaled)"
            if "limit" in site.evidence:
                measured += f" against a limit of {site.evidence['limit']:g}"
        message = (
            f"{call} clipped gradients still multiplied by the GradScaler's loss scale {scale:g}{measured}, so it "
            "clipped far harder than meant; call `scaler.unscale_(optimizer)` before clipping"
        )
        return Event("TL013", site.stack, message, evidence)
    if site.problem == AFTER_STEP:
        message = (
            f"{call} clipped gradients that the optimizer step had already applied ({_calls(site.calls)}): the "
            "clipping changes nothing; clip after `backward()` and before `optimizer.step()`"
        )
        return Event("TL013", site.stack, message, evidence)
    message = (
        f"{call} ran when none of its {site.evidence.get('parameters')} parameters had a gradient "
        f"({_calls(site.calls)}): it clipped nothing; clip after `backward()` and before `optimizer.step()`"
    )
    return Event("TL013", site.stack, message, evidence, weak=True)
