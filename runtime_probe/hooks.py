"""Installs the probe's instrumentation in the child before the script starts: global
optimizer step hooks (step counting, the step limit, TL102, per-step memory), a wrapper
around `torch.autograd.backward`, and the wrappers of the individual checks."""

from __future__ import annotations

import functools
import sys
import weakref
from typing import Any, Callable

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from torchlint.runtime_probe.cudamem import CudaMemoryCheck
from torchlint.runtime_probe.devices import DeviceCheck
from torchlint.runtime_probe.evalmode import EvalCheck
from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.grads import GradCheck, Resets
from torchlint.runtime_probe.graphs import GraphCheck
from torchlint.runtime_probe.protocol import Frame
from torchlint.runtime_probe.recorder import Recorder, StopProbe
from torchlint.runtime_probe.timing import TimingCheck
from torchlint.runtime_probe.views import ViewCheck


def _stack() -> tuple[Frame, ...]:
    return user_stack(sys._getframe())


def _has_closure(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    closure = args[0] if args else kwargs.get("closure")
    return callable(closure)


class Probe:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        guard = recorder.guard
        self.resets = Resets()
        self.grads = GradCheck(self.resets)
        self.graphs = GraphCheck()
        self.evals = EvalCheck(guard)
        self.views = ViewCheck(guard)
        self.devices = DeviceCheck(guard)
        self.timing = TimingCheck(guard) if recorder.cuda else None
        self.cuda_memory = CudaMemoryCheck() if recorder.cuda else None
        recorder.checks.extend([self.grads, self.graphs, self.evals, self.views, self.devices])
        recorder.checks.extend(c for c in (self.timing, self.cuda_memory) if c is not None)
        self._counts: weakref.WeakKeyDictionary[torch.optim.Optimizer, int] = weakref.WeakKeyDictionary()
        self._before_step = guard(self._before_step_soft)
        self._after_step = guard(self._after_step_soft)
        self._on_backward = guard(self._on_backward_soft)

    def install(self) -> None:
        register_optimizer_step_pre_hook(self._before_step)
        register_optimizer_step_post_hook(self._after_step_hook)
        torch.autograd.backward = self._wrap_backward(torch.autograd.backward)
        tensor = torch.Tensor
        tensor.view = self.views.wrap(tensor.view)  # type: ignore[method-assign]
        tensor.zero_ = self._resetting(tensor.zero_, lambda args: True)  # type: ignore[method-assign]
        tensor.fill_ = self._resetting(tensor.fill_, _is_zero)  # type: ignore[method-assign]
        tensor.mul_ = self._resetting(tensor.mul_, _is_zero)  # type: ignore[method-assign]
        tensor.__imul__ = self._resetting(tensor.__imul__, _is_zero)  # type: ignore[method-assign]
        module = torch.nn.Module
        module.train = self.evals.wrap_train(module.train)  # type: ignore[method-assign]
        for name in ("to", "cuda", "cpu"):
            setattr(module, name, self.devices.wrap_move(getattr(module, name)))
        module.__call__ = self.devices.wrap_call(module.__call__)  # type: ignore[method-assign]
        if self.timing is not None:
            self.timing.install()

    def _wrap_backward(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            self._on_backward(tensors)
            return original(tensors, *args, **kwargs)

        return backward

    def _on_backward_soft(self, tensors: Any) -> None:
        if isinstance(tensors, torch.Tensor):
            roots = [tensors]
        else:
            roots = [t for t in tensors if isinstance(t, torch.Tensor)]
        self.grads.on_backward()
        self.graphs.on_backward(roots, self.recorder.steps, _stack)
        self.evals.on_backward(roots)

    def _resetting(self, original: Callable[..., Any], resets: Callable[[tuple[Any, ...]], bool]) -> Callable[..., Any]:
        mark = self.recorder.guard(self.resets.mark)
        watched = self.resets.watched

        @functools.wraps(original)
        def method(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if watched and resets(args):
                mark(tensor)
            return original(tensor, *args, **kwargs)

        return method

    def _before_step_soft(self, optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        step = self._counts.get(optimizer, 0) + 1
        self.grads.before_step(optimizer, step, _has_closure(args, kwargs), _stack)

    def _after_step_hook(self, optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._after_step(optimizer)
        if self.recorder.steps >= self.recorder.settings.max_steps:
            raise StopProbe

    def _after_step_soft(self, optimizer: torch.optim.Optimizer) -> None:
        count = self._counts[optimizer] = self._counts.get(optimizer, 0) + 1
        self.grads.after_step(optimizer)
        if count <= self.recorder.steps:
            return
        # A new training step: the most-stepped optimizer counts (a GAN steps two per iteration).
        self.recorder.steps = count
        sample: dict[str, Any] = {"step": count, "alive_graphs": self.graphs.after_step(count, sys._getframe())}
        if self.cuda_memory is not None and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
            sample.update(self.cuda_memory.after_step(count, _stack()))
        self.recorder.sample(sample)


def _is_zero(args: tuple[Any, ...]) -> bool:
    return bool(args) and type(args[0]) in (int, float) and args[0] == 0


def install(recorder: Recorder) -> Probe:
    recorder.cuda = torch.cuda.is_available()
    probe = Probe(recorder)
    probe.install()
    return probe
