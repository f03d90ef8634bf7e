"""Allocation and free events from the simulator, fed into the caching-allocator model.

A new CPU storage wrapped as "cuda" is an allocation of its `nbytes()`; it is freed when
that storage dies, as CUDA's allocator gets a block back when the storage's data pointer
is released. Views share their base's storage, and a storage lives exactly as long as
the real CUDA one would (reference counts, autograd's saved tensors), so the stream of
events is the one CUDA's allocator sees, less what never appears as a tensor
(workspaces, the CUDA context, kernel temporaries).

The storage's Python object carries the free: torch keeps a storage's Python object
alive as long as the C++ storage lives, so a weak reference to it dies with the
storage, once per storage however many tensors share it.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import torch

from torchlint.runtime_probe.simcuda.allocator import AllocatorConfig, Block, CachingAllocator, OutOfMemory
from torchlint.runtime_probe.simcuda.state import SIMULATED_ERROR


class _Allocation(weakref.ref):  # type: ignore[type-arg]  # a weak reference to an UntypedStorage
    """A live storage's block: the weak reference to the storage whose death frees it."""

    __slots__ = ("key", "block")
    key: int
    block: Block | None


class MemoryTracker:
    def __init__(self, config: AllocatorConfig) -> None:
        self.allocator = CachingAllocator(config)
        self.total_memory = config.total_memory
        # id(storage) -> its allocation.
        self._live: dict[int, _Allocation] = {}
        self._on_release = self._released  # bound once: one callback for every allocation

    def on_new(self, elem: torch.Tensor) -> None:
        storage = elem.untyped_storage()
        key = id(storage)
        if key in self._live:
            return
        try:
            block = self.allocator.malloc(storage.nbytes())
        except OutOfMemory as exc:
            error = torch.OutOfMemoryError(str(exc))
            setattr(error, SIMULATED_ERROR, True)
            raise error from None
        allocation = _Allocation(storage, self._on_release)
        allocation.key, allocation.block = key, block
        self._live[key] = allocation

    def _released(self, allocation: _Allocation) -> None:
        if self._live.get(allocation.key) is allocation:
            del self._live[allocation.key]
            self.allocator.free(allocation.block)

    def cuda_api(self) -> dict[str, Callable[..., Any]]:
        """The `torch.cuda` memory functions, answered by the model."""
        allocator = self.allocator
        total = self.total_memory

        def current(name: str) -> Callable[..., int]:
            return lambda device=None: allocator.current(name)

        def peak(name: str) -> Callable[..., int]:
            return lambda device=None: allocator.peak(name)

        def memory_stats(device: Any = None) -> dict[str, int]:
            return dict(sorted(allocator.memory_stats().items()))

        def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
            stats = allocator.memory_stats()
            rows = [f"{key}: {value}" for key, value in stats.items() if key.endswith(".all.current")]
            return "simulated CUDA allocator (estimates)\n" + "\n".join(rows)

        def reset_peak(device: Any = None) -> None:
            allocator.reset_peak()

        def reset_accumulated(device: Any = None) -> None:
            allocator.reset_accumulated()

        def mem_get_info(device: Any = None) -> tuple[int, int]:
            return total - allocator.total_reserved, total

        def set_fraction(fraction: float, device: Any = None) -> None:
            if not 0 <= fraction <= 1:
                raise ValueError(f"invalid fraction: {fraction}. Please set within [0, 1].")
            allocator.capacity = int(fraction * total)

        def get_fraction(device: Any = None) -> float:
            return allocator.capacity / total

        return {
            "memory_stats": memory_stats,
            "memory_allocated": current("allocated_bytes"),
            "memory_reserved": current("reserved_bytes"),
            "memory_cached": current("reserved_bytes"),
            "max_memory_allocated": peak("allocated_bytes"),
            "max_memory_reserved": peak("reserved_bytes"),
            "max_memory_cached": peak("reserved_bytes"),
            "reset_peak_memory_stats": reset_peak,
            "reset_max_memory_allocated": reset_peak,
            "reset_max_memory_cached": reset_peak,
            "reset_accumulated_memory_stats": reset_accumulated,
            "empty_cache": allocator.empty_cache,
            "mem_get_info": mem_get_info,
            "memory_summary": memory_summary,
            "set_per_process_memory_fraction": set_fraction,
            "get_per_process_memory_fraction": get_fraction,
        }
