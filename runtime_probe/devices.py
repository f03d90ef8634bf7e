"""TL101 device-mismatch: an operation mixed tensors on different devices.

Two sources. A module moved with `.to()`, `.cuda()` or `.cpu()` is remembered, and its
calls (`Module.__call__` is wrapped) note inputs sitting on another device than its
parameters; if that call then fails with a device error, the finding points at the call
that passed the input (where the fix goes) rather than deep inside `forward`. A forward that handles the move itself
does not fail and is not reported. Any other device error that ends the script is mapped
to the innermost line of the user's code in its traceback.
"""

from __future__ import annotations

import functools
import re
import sys
import weakref
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Iterator

import torch

from torchlint.runtime_probe.frames import traceback_stack, user_stack
from torchlint.runtime_probe.protocol import Event, Frame

_DEVICE = r"(?:cpu|meta|mps|xpu|hpu|xla|privateuseone|cuda)(?::\d+)?"
_PATTERNS = (
    re.compile(rf"Expected all tensors to be on the same device, but found at least two devices, ({_DEVICE}) and ({_DEVICE})"),
    re.compile(rf"Expected all tensors to be on the same device, but got \w+ is on ({_DEVICE}), different from other tensors on ({_DEVICE})"),
    re.compile(rf"Tensor on device ({_DEVICE}) is not on the expected device ({_DEVICE})"),
    re.compile(rf"Input and parameter tensors are not at the same device, found input tensor at ({_DEVICE}) and parameter tensor at ({_DEVICE})"),
    re.compile(rf"Input and hidden tensors are not at the same device, found input tensor at ({_DEVICE}) and hidden tensor at ({_DEVICE})"),
    re.compile(r"Input type \(torch\.(?:(cuda)\.)?\w+\) and (?:weight|bias) type \(torch\.(?:(cuda)\.)?\w+\) should be the same"),
    re.compile(rf"Expected .* to be on the same device.* ({_DEVICE}) .*?({_DEVICE})"),
    # `.numpy()` on a device tensor: the other side is the host (the empty group reads as cpu).
    re.compile(rf"can't convert ({_DEVICE}) device type tensor to numpy()"),
)
REPORTED = "_torchlint_reported"


def mismatch_devices(message: str) -> tuple[str, ...] | None:
    """The devices named by a device-mismatch error message; None if it is not one."""
    for pattern in _PATTERNS:
        match = pattern.search(message)
        if match:
            # The legacy type message names CUDA types only: a missing group is the CPU.
            devices = tuple(dict.fromkeys(group or "cpu" for group in match.groups()))
            return devices if len(devices) > 1 else None
    return None


@dataclass(frozen=True)
class _Suspect:
    module: str
    stack: tuple[Frame, ...]
    inputs: tuple[str, ...]
    parameters: str


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        if isinstance(item, torch.Tensor):
            yield item


class DeviceCheck:
    def __init__(self, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._guard = guard
        # Moved modules by id, with the device of their parameters (None when mixed). No
        # hook or attribute goes on the module itself: it would end up in `torch.save(model)`.
        self._moved: dict[int, tuple[weakref.ref[torch.nn.Module], torch.device | None]] = {}
        self._events: dict[tuple[str, int], Event] = {}

    def wrap_move(self, original: Callable[..., Any]) -> Callable[..., Any]:
        watch = self._guard(self._watch)

        @functools.wraps(original)
        def move(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            result = original(module, *args, **kwargs)
            watch(module)
            return result

        return move

    def wrap_call(self, original: Callable[..., Any]) -> Callable[..., Any]:
        suspect_of = self._guard(self._suspect)
        failed = self._guard(self._failed)

        @functools.wraps(original)
        def call(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            if id(module) not in self._moved:
                return original(module, *args, **kwargs)
            suspect = suspect_of(module, args, kwargs)
            if suspect is None:
                return original(module, *args, **kwargs)
            try:
                return original(module, *args, **kwargs)
            except Exception as error:
                failed(suspect, error)
                raise

        return call

    def _watch(self, module: torch.nn.Module) -> None:
        devices = {p.device for p in module.parameters()}
        key = id(module)
        self._moved[key] = (weakref.ref(module, lambda _: self._moved.pop(key, None)), devices.pop() if len(devices) == 1 else None)

    def _suspect(self, module: torch.nn.Module, args: Any, kwargs: Any) -> _Suspect | None:
        ref, expected = self._moved[id(module)]
        if expected is None or ref() is not module:
            return None
        inputs = [t for t in (*_tensors(args), *_tensors(kwargs)) if t.dim() > 0 and t.device != expected]
        if not inputs:
            return None
        return _Suspect(
            type(module).__name__,
            user_stack(sys._getframe()),
            tuple(dict.fromkeys(str(t.device) for t in inputs)),
            str(expected),
        )

    def _failed(self, suspect: _Suspect, error: Exception) -> None:
        if getattr(error, REPORTED, False) or not suspect.stack or mismatch_devices(str(error)) is None:
            return
        message = (
            f"`{suspect.module}` has its parameters on {suspect.parameters} but was called with an input on "
            f"{', '.join(suspect.inputs)}, and the forward failed: move the input with `.to(device)` before the call"
        )
        evidence = {
            "devices": [suspect.parameters, *suspect.inputs],
            "module": suspect.module,
            "error": str(error).splitlines()[0],
        }
        self._add(Event("TL101", suspect.stack, message, evidence))
        setattr(error, REPORTED, True)

    def on_error(self, error: BaseException, tb: TracebackType | None) -> None:
        """An exception that ended the script: report it if it is an unreported device error."""
        devices = mismatch_devices(str(error))
        stack = traceback_stack(tb)
        if devices is None or getattr(error, REPORTED, False) or not stack:
            return
        if "to numpy" in str(error):
            message = (
                f"a tensor on {devices[0]} was converted to numpy, which needs it on the CPU: call `.cpu()` "
                f"first (`{type(error).__name__}: {str(error).splitlines()[0]}`)"
            )
        else:
            message = (
                f"an operation mixed tensors on {' and '.join(devices)}: put every operand on the same device "
                f"(`{type(error).__name__}: {str(error).splitlines()[0]}`)"
            )
        self._add(Event("TL101", stack, message, {"devices": list(devices), "error": str(error).splitlines()[0]}))

    def _add(self, event: Event) -> None:
        self._events.setdefault((event.filename, event.line), event)

    def events(self, final: bool) -> list[Event]:
        return list(self._events.values())
