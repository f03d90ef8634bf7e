"""TL003 confirmation: `.view()` called from the user's code on a non-contiguous tensor
(it raises, or works only by luck of the strides). `Tensor.view` is wrapped: a contiguous
tensor costs one `is_contiguous()` call, nothing more."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Callable

import torch

from torchlint.runtime_probe.frames import is_user_file, user_stack
from torchlint.runtime_probe.protocol import Event, Frame


@dataclass
class _Site:
    stack: tuple[Frame, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    calls: int = 0
    failures: int = 0
    error: str = ""


def _contiguous(tensor: torch.Tensor) -> bool:
    try:
        return tensor.is_contiguous()
    except RuntimeError:  # sparse and other layouts without strides
        return True


def _is_dtype_view(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return bool(args) and isinstance(args[0], torch.dtype) or "dtype" in kwargs


class ViewCheck:
    def __init__(self, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._record = guard(self._record_call)
        self._sites: dict[tuple[str, int], _Site] = {}

    def wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def view(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if _contiguous(tensor) or _is_dtype_view(args, kwargs):
                return original(tensor, *args, **kwargs)
            caller = sys._getframe(1)
            if not is_user_file(caller.f_code.co_filename):
                return original(tensor, *args, **kwargs)
            try:
                result = original(tensor, *args, **kwargs)
            except RuntimeError as exc:
                self._record(caller, tensor, str(exc))
                raise
            self._record(caller, tensor, "")
            return result

        return view

    def _record_call(self, caller: Any, tensor: torch.Tensor, error: str) -> None:
        key = (caller.f_code.co_filename, caller.f_lineno)
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _Site(user_stack(caller), tuple(tensor.shape), tuple(tensor.stride()))
        site.calls += 1
        if error:
            site.failures += 1
            site.error = site.error or error.split(". ")[0]

    def events(self, final: bool) -> list[Event]:
        events = []
        for site in self._sites.values():
            outcome = f"it raised ({site.error})" if site.failures else "it worked only because of the strides it happened to have"
            message = (
                f"`.view()` was called on a non-contiguous tensor of shape {list(site.shape)} and strides "
                f"{list(site.strides)} ({site.calls} calls); {outcome}: use `.reshape()` or call `.contiguous()` first"
            )
            evidence = {"shape": list(site.shape), "strides": list(site.strides), "calls": site.calls, "failures": site.failures}
            # A view that worked is correct: it confirms a static finding on its own line
            # (the code relies on luck), but is not reported alone.
            events.append(Event("TL003", site.stack, message, evidence, weak=not site.failures))
        return events
