"""TL002 confirmation, on CUDA: the script reads the wall clock while the current CUDA
stream still has queued work, so the time it measures is the time to queue kernels, not
to run them. The clock functions of `time` are wrapped; only reads from the user's code
with CUDA initialised query the stream (a non-blocking `cudaStreamQuery`). So is
`torch.cuda.Event.elapsed_time`: an end event that has not completed (`query()`), because
nothing waited for it, measures nothing yet. On simulated CUDA the stream is the
simulator's model of what was launched since the last synchronization."""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

from torchlint.runtime_probe.frames import is_user_file, user_stack
from torchlint.runtime_probe.protocol import Event, Frame

CLOCKS = ("time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns", "monotonic_ns")
ELAPSED = "Event.elapsed_time"


@dataclass
class _Site:
    stack: tuple[Frame, ...]
    clock: str
    reads: int = 0
    busy: int = 0


class TimingCheck:
    def __init__(self, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._guard = guard
        self._check = guard(self._check_read)
        self._sites: dict[tuple[str, int], _Site] = {}

    def install(self) -> None:
        for name in CLOCKS:
            setattr(time, name, self._wrap(getattr(time, name)))
        event = torch.cuda.Event
        event.elapsed_time = self._wrap_elapsed(event.elapsed_time)  # type: ignore[method-assign]

    def _wrap_elapsed(self, original: Callable[..., Any]) -> Callable[..., Any]:
        check = self._guard(self._check_event)

        @functools.wraps(original)
        def elapsed_time(start: Any, end: Any) -> Any:
            caller = sys._getframe(1)
            if is_user_file(caller.f_code.co_filename):
                check(caller, end)
            return original(start, end)

        return elapsed_time

    def _check_event(self, caller: Any, end: Any) -> None:
        site = self._site(caller, ELAPSED)
        site.reads += 1
        if not end.query():
            site.busy += 1

    def _wrap(self, clock: Callable[[], Any]) -> Callable[[], Any]:
        @functools.wraps(clock)
        def read() -> Any:
            value = clock()
            if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
                caller = sys._getframe(1)
                if is_user_file(caller.f_code.co_filename):
                    self._check(caller, clock.__name__)
            return value

        return read

    def _site(self, caller: Any, clock: str) -> _Site:
        key = (caller.f_code.co_filename, caller.f_lineno)
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _Site(user_stack(caller), clock)
        return site

    def _check_read(self, caller: Any, clock: str) -> None:
        site = self._site(caller, clock)
        site.reads += 1
        if not torch.cuda.current_stream().query():
            site.busy += 1

    def events(self, final: bool) -> list[Event]:
        events = []
        for site in self._sites.values():
            if not site.busy:
                continue
            if site.clock == ELAPSED:
                message = (
                    f"`Event.elapsed_time()` was read before the end event completed ({site.busy} of {site.reads} "
                    "reads): call `end.synchronize()` (or `torch.cuda.synchronize()`) before `elapsed_time`"
                )
            else:
                message = (
                    f"`time.{site.clock}()` read the clock while the CUDA stream still had queued work "
                    f"({site.busy} of {site.reads} reads): call `torch.cuda.synchronize()` before reading the clock, "
                    "or time with `torch.cuda.Event(enable_timing=True)`"
                )
            evidence = {"clock": site.clock, "reads": site.reads, "reads_with_queued_work": site.busy}
            events.append(Event("TL002", site.stack, message, evidence))
        return events
