"""`torch.cuda`'s Python API on the simulated device: availability, one device, streams
and events on the stream model, device properties, RNG and nvtx stand-ins, and the
memory functions answered by the allocator model."""

from __future__ import annotations

from typing import Any, Callable, Literal

import torch

from torchlint.runtime_probe.simcuda.state import STATE, inconclusive, perf_counter, refusal


class SimEvent:
    """`torch.cuda.Event`: completed once the host has waited for the work launched before
    `record()`; `elapsed_time` is host time between the two records."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, external: bool = False) -> None:
        self.enable_timing = enable_timing
        self._launched: int | None = None
        self._time = 0.0

    def record(self, stream: Any = None) -> None:
        self._launched = STATE.stream.launched
        self._time = perf_counter()

    def query(self) -> bool:
        return self._launched is None or STATE.stream.completed >= self._launched

    def synchronize(self) -> None:
        if self._launched is not None:
            STATE.stream.completed = max(STATE.stream.completed, self._launched)

    def wait(self, stream: Any = None) -> None:
        return None

    def elapsed_time(self, end_event: SimEvent) -> float:
        return (end_event._time - self._time) * 1000.0


class SimStream:
    """`torch.cuda.Stream`: every stream is the one stream of the model."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("cuda", 0)
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None:
        STATE.stream.synchronize()

    def query(self) -> bool:
        return STATE.stream.idle

    def wait_stream(self, stream: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def record_event(self, event: SimEvent | None = None) -> SimEvent:
        event = event or SimEvent()
        event.record()
        return event

    def __enter__(self) -> SimStream:
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SimStream)

    def __hash__(self) -> int:
        return 0


class _NoContext:
    """`torch.cuda.device(...)`, `torch.cuda.stream(...)`, `nvtx.range(...)`: nothing to switch."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> _NoContext:
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return func


class DeviceProperties:
    name = "NVIDIA H100 80GB HBM3 (simulated CUDA on the CPU)"
    major = 9
    minor = 0
    multi_processor_count = 132
    is_integrated = False
    is_multi_gpu_board = False
    warp_size = 32
    uuid = "simulated"

    def __init__(self, total_memory: int) -> None:
        self.total_memory = total_memory


class _UnsupportedGraph:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise inconclusive("CUDA graphs are not simulated")


def install(total_memory: int) -> None:
    cuda = torch.cuda
    properties = DeviceProperties(total_memory)
    sync = lambda device=None: STATE.stream.synchronize()  # noqa: E731
    api: dict[str, Any] = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "is_initialized": lambda: True,
        "_lazy_init": lambda: None,
        "init": lambda: None,
        "set_device": lambda device: None,
        "synchronize": sync,
        "get_device_name": lambda device=None: properties.name,
        "get_device_capability": lambda device=None: (properties.major, properties.minor),
        "get_device_properties": lambda device=None: properties,
        "is_bf16_supported": lambda including_emulation=True: True,
        "manual_seed": lambda seed: None,
        "manual_seed_all": lambda seed: None,
        "seed": lambda: None,
        "seed_all": lambda: None,
        "initial_seed": lambda: 0,
        "get_rng_state": lambda device="cuda": torch.get_rng_state(),
        "set_rng_state": lambda state, device="cuda": None,
        "get_rng_state_all": lambda: [torch.get_rng_state()],
        "set_rng_state_all": lambda states: None,
        "Event": SimEvent,
        "Stream": SimStream,
        "current_stream": lambda device=None: SimStream(),
        "default_stream": lambda device=None: SimStream(),
        "stream": _NoContext,
        "set_stream": lambda stream: None,
        "device": _NoContext,
        "device_of": _NoContext,
        "get_arch_list": lambda: ["sm_90"],
        "ipc_collect": lambda: None,
        "CUDAGraph": _UnsupportedGraph,
        "graph": _UnsupportedGraph,
        "make_graphed_callables": refusal("CUDA graphs are not simulated"),
    }
    tracker = STATE.memory
    if tracker is not None:
        api.update(tracker.cuda_api())
    for name, value in api.items():
        setattr(cuda, name, value)
        if hasattr(cuda.memory, name):
            setattr(cuda.memory, name, value)
    cuda.amp.common.amp_definitely_not_available = lambda: False
    for name in ("range_push", "range_pop", "mark"):
        setattr(cuda.nvtx, name, lambda *args, **kwargs: 0)
    cuda.nvtx.range = _NoContext  # type: ignore[assignment]
    torch.accelerator.current_accelerator = lambda check_available=False: torch.device("cuda")
