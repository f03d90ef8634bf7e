"""Confirmations of the data-loading rules:

- TL014: a shuffling `DistributedSampler` whose `set_epoch()` is never called starts a new
  pass over its data, after training steps, with the same `epoch` as an earlier pass:
  the same order again. (Two passes within one epoch, such as a statistics pass before
  training, have no steps in between and are not counted.)
- TL017: on CUDA, the share of the training loop's time spent waiting for batches from
  a `DataLoader` that loads in the main process (`num_workers=0`): time inside the
  single-process iterator's `_next_data` against the time between optimizer steps, after
  a few warm-up steps. A weak event at the loader's construction (where the static
  finding is): benign below `MIN_WAIT_SHARE`.
"""

from __future__ import annotations

import functools
import sys
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.loop import Loop
from torchlint.runtime_probe.protocol import Event, Frame

Guard = Callable[[Callable[..., Any]], Callable[..., Any]]


# --- TL014 -----------------------------------------------------------------------------


@dataclass
class _Sampler:
    ref: weakref.ref[Any]
    # Epoch value -> `Loop.total_steps` when the first pass with it started.
    passes: dict[int, int] = field(default_factory=dict)
    set_epoch: bool = False
    repeats: int = 0
    samples: int = 0
    epoch: int = 0
    stack: tuple[Frame, ...] = ()


class SamplerCheck:
    def __init__(self, loop: Loop, guard: Guard) -> None:
        self._loop = loop
        self._guard = guard
        self._samplers: dict[int, _Sampler] = {}
        self._finished: list[_Sampler] = []

    def _state(self, sampler: Any) -> _Sampler:
        state = self._samplers.get(id(sampler))
        if state is None or state.ref() is not sampler:
            key = id(sampler)
            state = self._samplers[key] = _Sampler(weakref.ref(sampler, lambda _: self._finish(key)))
        return state

    def _finish(self, key: int) -> None:
        state = self._samplers.pop(key, None)
        if state is not None and state.repeats:
            self._finished.append(state)

    def wrap_iter(self, original: Callable[..., Any]) -> Callable[..., Any]:
        started = self._guard(self._started)

        @functools.wraps(original)
        def __iter__(sampler: Any) -> Any:
            started(sampler)
            return original(sampler)

        return __iter__

    def wrap_set_epoch(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def set_epoch(sampler: Any, epoch: int) -> Any:
            self._state(sampler).set_epoch = True
            return original(sampler, epoch)

        return set_epoch

    def _started(self, sampler: Any) -> None:
        if not sampler.shuffle:
            return
        state = self._state(sampler)
        if state.set_epoch:
            return
        steps = self._loop.total_steps
        epoch = int(sampler.epoch)
        first = state.passes.setdefault(epoch, steps)
        if steps > first:
            state.repeats += 1
            state.epoch = epoch
            state.samples = int(getattr(sampler, "num_samples", 0))
            state.stack = state.stack or user_stack(sys._getframe())

    def events(self, final: bool) -> list[Event]:
        events = []
        for state in [*self._finished, *self._samplers.values()]:
            if not (state.repeats and state.stack):
                continue
            message = (
                f"a shuffling `DistributedSampler` started {state.repeats + 1} passes over its {state.samples} samples "
                f"with `epoch` {state.epoch} each time, with training steps in between: `set_epoch()` is never called, "
                "so every epoch visits the data in the same order; call `sampler.set_epoch(epoch)` at the start of each epoch"
            )
            evidence = {"passes": state.repeats + 1, "epoch": state.epoch, "samples": state.samples}
            events.append(Event("TL014", state.stack, message, evidence))
        return events


# --- TL017 -----------------------------------------------------------------------------

WARMUP_STEPS = 2
MIN_MEASURED_STEPS = 3
MIN_WAIT_SHARE = 0.2


@dataclass
class _Loader:
    stack: tuple[Frame, ...]
    # Seconds spent loading since the last step, and in the measured steps.
    pending: float = 0.0
    waited: float = 0.0
    batches: int = 0


class LoaderWaitCheck:
    """`active` says whether the loop runs on a GPU (`torch.cuda.is_initialized` in the
    probe); `clock` is `time.perf_counter` except in tests."""

    def __init__(self, guard: Guard, active: Callable[[], bool], clock: Callable[[], float] = time.perf_counter) -> None:
        self._guard = guard
        self._active = active
        self._clock = clock
        self._sites: dict[int, tuple[weakref.ref[Any], tuple[Frame, ...]]] = {}
        self._iterators: dict[int, _Loader] = {}
        self._loaders: dict[tuple[str, int], _Loader] = {}
        self._last_step: float | None = None
        self._steps = 0
        self.loop_time = 0.0

    def wrap_loader_init(self, original: Callable[..., Any]) -> Callable[..., Any]:
        created = self._guard(self._created)

        @functools.wraps(original)
        def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
            original(loader, *args, **kwargs)
            created(loader)

        return __init__

    def _created(self, loader: Any) -> None:
        stack = user_stack(sys._getframe())
        if stack:
            self._sites[id(loader)] = (weakref.ref(loader), stack)

    def wrap_iterator_init(self, original: Callable[..., Any]) -> Callable[..., Any]:
        opened = self._guard(self._opened)

        @functools.wraps(original)
        def __init__(iterator: Any, loader: Any, *args: Any, **kwargs: Any) -> None:
            original(iterator, loader, *args, **kwargs)
            opened(iterator, loader)

        return __init__

    def _opened(self, iterator: Any, loader: Any) -> None:
        site = self._sites.get(id(loader))
        if site is None or site[0]() is not loader:
            return
        stack = site[1]
        key = (stack[0].filename, stack[0].line)
        self._iterators[id(iterator)] = self._loaders.setdefault(key, _Loader(stack))
        weakref.finalize(iterator, self._iterators.pop, id(iterator), None)

    def wrap_next_data(self, original: Callable[..., Any]) -> Callable[..., Any]:
        clock = self._clock

        @functools.wraps(original)
        def _next_data(iterator: Any) -> Any:
            loader = self._iterators.get(id(iterator))
            if loader is None:
                return original(iterator)
            start = clock()
            try:
                return original(iterator)
            finally:
                loader.pending += clock() - start
                loader.batches += 1

        return _next_data

    def after_step(self) -> None:
        now = self._clock()
        self._steps += 1
        measured = self._last_step is not None and self._steps > WARMUP_STEPS
        if measured:
            self.loop_time += now - (self._last_step or now)
        for loader in self._loaders.values():
            if measured:
                loader.waited += loader.pending
            loader.pending = 0.0
        self._last_step = now

    def events(self, final: bool) -> list[Event]:
        measured = self._steps - WARMUP_STEPS
        if measured < MIN_MEASURED_STEPS or self.loop_time <= 0 or not self._active():
            return []
        events = []
        for loader in self._loaders.values():
            if not loader.batches:
                continue
            share = loader.waited / self.loop_time
            evidence = {
                "wait_share": round(share, 4),
                "waited_seconds": round(loader.waited, 4),
                "loop_seconds": round(self.loop_time, 4),
                "measured_steps": measured,
            }
            measurement = (
                f"the training loop spent {share:.0%} of its time ({loader.waited:.2f} s of {self.loop_time:.2f} s over "
                f"{measured} steps) waiting for batches from this `DataLoader`, which loads in the main process"
            )
            if share < MIN_WAIT_SHARE:
                events.append(Event("TL017", loader.stack, f"{measurement}: not enough to matter", evidence, benign=True))
            else:
                message = f"{measurement}: set `num_workers` (and `pin_memory=True`) so that loading overlaps with the GPU"
                events.append(Event("TL017", loader.stack, message, evidence, weak=True))
        return events
