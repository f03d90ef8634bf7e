"""The simulator's process-wide state: the stream model, the memory tracker, and what the
simulation could not do (reported to the probe so that its checks say `inconclusive`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from torchlint.runtime_probe.simcuda.memory import MemoryTracker

# Set on exceptions raised by the simulator's own device rules.
SIMULATED_ERROR = "_torchlint_simulated"
# Set on exceptions for what the simulator cannot do (no CPU kernel, torch.compile, ...).
INCONCLUSIVE_ERROR = "_torchlint_inconclusive"
MAX_RECORDED = 20
# Bound now: the probe wraps `time.perf_counter` later, and events must not count as reads.
perf_counter = time.perf_counter


class StreamModel:
    """The one CUDA stream: kernels launched since the host last waited for it.

    Every operator on a simulated tensor is a launch (dispatch counts it in `launched`);
    an operator whose result the host reads (`.item()`, a blocking copy to the CPU,
    `nonzero`) or an explicit synchronization completes everything launched before it."""

    def __init__(self) -> None:
        self.launched = 0
        self.completed = 0

    def synchronize(self) -> None:
        self.completed = self.launched

    @property
    def idle(self) -> bool:
        return self.completed >= self.launched


@dataclass
class SimulationState:
    stream: StreamModel = field(default_factory=StreamModel)
    memory: MemoryTracker | None = None
    # Reasons the simulation could not stand in for CUDA, in order, without repeats.
    unsupported: list[str] = field(default_factory=list)
    # Operators that mixed simulated and CPU tensors under a rule the simulator does not know.
    unverified: list[str] = field(default_factory=list)

    def unsupported_feature(self, reason: str) -> None:
        if reason not in self.unsupported and len(self.unsupported) < MAX_RECORDED:
            self.unsupported.append(reason)

    def unverified_mix(self, op: str) -> None:
        if op not in self.unverified and len(self.unverified) < MAX_RECORDED:
            self.unverified.append(op)


STATE = SimulationState()


class SimulationUnsupported(RuntimeError):
    """Something the simulated CUDA device cannot do; the probe reports it as inconclusive."""


def inconclusive(reason: str) -> SimulationUnsupported:
    STATE.unsupported_feature(reason)
    error = SimulationUnsupported(f"simulated CUDA: {reason} (the probe reports this run as inconclusive)")
    setattr(error, INCONCLUSIVE_ERROR, True)
    return error


def refusal(reason: str) -> Callable[..., Any]:
    """A stand-in for a feature the simulation does not have: raises `inconclusive`."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise inconclusive(reason)

    return refuse
