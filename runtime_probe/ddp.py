"""TL016 confirmation, on CUDA: a `DistributedDataParallel` built without `device_ids` in a
process whose `LOCAL_RANK` names another GPU than the one its model sits on, while that
GPU is visible: every process put its model on the same GPU (the current device,
`cuda:0`, since nothing called `torch.cuda.set_device(local_rank)`)."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable

import torch

from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.protocol import Event

Guard = Callable[[Callable[..., Any]], Callable[..., Any]]


def misplaced(devices: set[torch.device], local_rank: int, visible: int) -> int | None:
    """The GPU index a rank's model sits on when it is not the rank's own GPU, else None."""
    indices = {d.index if d.index is not None else 0 for d in devices if d.type == "cuda"}
    if len(indices) != 1 or not 0 <= local_rank < visible or visible < 2:
        return None
    index = indices.pop()
    return index if index != local_rank else None


class DdpDeviceCheck:
    def __init__(self, guard: Guard) -> None:
        self._guard = guard
        self._events: list[Event] = []

    def wrap_init(self, original: Callable[..., Any]) -> Callable[..., Any]:
        built = self._guard(self._built)

        # Judged before DDP's constructor runs: with NCCL, two processes on one GPU make it fail.
        @functools.wraps(original)
        def __init__(ddp: Any, module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
            built(module, args, kwargs)
            original(ddp, module, *args, **kwargs)

        return __init__

    def _built(self, module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if (args[0] if args else kwargs.get("device_ids")) or "LOCAL_RANK" not in os.environ:
            return
        local_rank = int(os.environ["LOCAL_RANK"])
        devices = {p.device for p in module.parameters()}
        index = misplaced(devices, local_rank, torch.cuda.device_count())
        stack = user_stack(sys._getframe())
        if index is None or not stack:
            return
        message = (
            f"the process with LOCAL_RANK={local_rank} wrapped a model sitting on cuda:{index} in "
            "`DistributedDataParallel` without `device_ids`: the processes share one GPU; call "
            "`torch.cuda.set_device(local_rank)` first and pass `device_ids=[local_rank]`"
        )
        evidence = {"local_rank": local_rank, "model_device": f"cuda:{index}", "visible_gpus": torch.cuda.device_count()}
        self._events.append(Event("TL016", stack, message, evidence))

    def events(self, final: bool) -> list[Event]:
        return list(self._events)
