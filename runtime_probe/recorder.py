"""The child's record of one probed process: steps, memory samples, lines reached, and
the checks that turn what they observed into events. Written to the output folder at
the end, on SIGTERM, and every few seconds in between (a hard kill keeps the last one)."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from typing import Any, Callable, Protocol, TypeVar

from torchlint.runtime_probe.protocol import ChildSettings, Crash, Event, RankReport, report_path, write_atomically

FLUSH_SECONDS = 2.0
MAX_PROBE_ERRORS = 20
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
F = TypeVar("F", bound=Callable[..., Any])


class StopProbe(BaseException):
    """Raised from the optimizer hook once the step limit is reached: a BaseException, so
    that the script's own `except Exception` does not swallow it."""


class Check(Protocol):
    def events(self, final: bool) -> list[Event]: ...


class Recorder:
    def __init__(self, settings: ChildSettings, rank: int) -> None:
        self.settings = settings
        self.rank = rank
        self.reached: set[int] = set()
        self.steps = 0
        self.memory: list[dict[str, Any]] = []
        self.checks: list[Check] = []
        self.errors: list[str] = []
        self.cuda = False
        self.stopped: str | None = None
        self.exit_code: int | None = None
        self.crash: Crash | None = None
        # Set when CUDA is simulated: the simulator's lists of what it could not do, and
        # how C++ messages naming its backend read in CUDA's words.
        self.simulated = False
        self.unsupported: list[str] = []
        self.unverified: list[str] = []
        self.clean_message: Callable[[str], str] = str
        self._last_flush = time.monotonic()

    def guard(self, func: F) -> F:
        """Make an observer fail soft: a probe bug is recorded, never raised into the script."""

        @functools.wraps(func)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the probe must never break the script
                if len(self.errors) < MAX_PROBE_ERRORS:
                    self.errors.append(f"{func.__qualname__}: {type(exc).__name__}: {exc}")
                return None

        return guarded  # type: ignore[return-value]

    def sample(self, values: dict[str, Any]) -> None:
        rss = rss_bytes()
        if rss is not None:
            values["rss_bytes"] = rss
        self.memory.append(values)
        now = time.monotonic()
        if now - self._last_flush > FLUSH_SECONDS:
            self._last_flush = now
            self.write(final=False)

    def report(self, final: bool) -> RankReport:
        events: list[Event] = []
        for check in self.checks:
            try:
                events.extend(check.events(final))
            except Exception as exc:  # noqa: BLE001
                self.errors.append(f"{type(check).__name__}.events: {type(exc).__name__}: {exc}")
        if self.simulated:
            events = [_cleaned(e, self.clean_message) for e in events]
        return RankReport(
            rank=self.rank,
            pid=os.getpid(),
            cuda=self.cuda,
            steps=self.steps,
            memory=tuple(self.memory),
            events=tuple(events),
            reached=tuple(sorted(self.reached)),
            stopped=self.stopped,
            exit_code=self.exit_code,
            crash=self.crash,
            probe_errors=tuple(self.errors),
            simulated=self.simulated,
            unsupported=tuple(self.unsupported),
            unverified=tuple(self.unverified),
        )

    def write(self, final: bool) -> None:
        path = report_path(self.settings.out_dir, self.rank)
        write_atomically(path, json.dumps(self.report(final).to_dict()))


def _cleaned(event: Event, clean: Callable[[str], str]) -> Event:
    evidence = {k: clean(v) if isinstance(v, str) else v for k, v in event.evidence.items()}
    if isinstance(evidence.get("devices"), list):
        evidence["devices"] = [clean(d) if isinstance(d, str) else d for d in evidence["devices"]]
    return dataclasses.replace(event, message=clean(event.message), evidence=evidence)


_statm: int | None = None


def rss_bytes() -> int | None:
    """Resident memory of this process; a kept-open /proc file, read in a few microseconds."""
    global _statm
    try:
        if _statm is None:
            _statm = os.open("/proc/self/statm", os.O_RDONLY)
        return int(os.pread(_statm, 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None
