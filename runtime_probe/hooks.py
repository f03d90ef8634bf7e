"""Installs the probe's instrumentation in the child before the script starts: global
optimizer step hooks (step counting, the step limit, TL102, per-step memory, and the
step-time checks of TL005, TL008 and TL010), a wrapper around `torch.autograd.backward`,
and the wrappers of the individual checks."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from torchlint.runtime_probe.amp import AmpCheck
from torchlint.runtime_probe.cudamem import CudaMemoryCheck
from torchlint.runtime_probe.data import LoaderWaitCheck, SamplerCheck
from torchlint.runtime_probe.ddp import DdpDeviceCheck
from torchlint.runtime_probe.devices import DeviceCheck
from torchlint.runtime_probe.evalmode import EvalCheck
from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.grads import GradCheck, Resets
from torchlint.runtime_probe.graphs import GraphCheck
from torchlint.runtime_probe.loop import Loop
from torchlint.runtime_probe.modes import ModeCheck
from torchlint.runtime_probe.order import ClearCheck, ClipCheck, SchedulerCheck, module_parameters, optimizer_parameters
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
        self.loop = Loop()
        self.resets = Resets()
        self.grads = GradCheck(self.resets)
        self.graphs = GraphCheck()
        self.evals = EvalCheck(guard)
        self.views = ViewCheck(guard)
        self.devices = DeviceCheck(guard)
        self.amp = AmpCheck(self.loop, guard)
        self.clears = ClearCheck(self.loop, guard)
        self.schedulers = SchedulerCheck(self.loop, guard)
        self.clips = ClipCheck(self.grads, self.amp, guard)
        self.modes = ModeCheck(self.loop, guard)
        self.samplers = SamplerCheck(self.loop, guard)
        self.timing = TimingCheck(guard) if recorder.cuda else None
        self.cuda_memory = CudaMemoryCheck() if recorder.cuda else None
        # Loader waits are GPU speed and DDP placement needs several GPUs: not simulated.
        real_gpu = recorder.cuda and not recorder.simulated
        self.loader_wait = LoaderWaitCheck(guard, torch.cuda.is_initialized) if real_gpu else None
        self.ddp = DdpDeviceCheck(guard) if real_gpu else None
        recorder.checks.extend([self.grads, self.graphs, self.evals, self.views, self.devices])
        recorder.checks.extend([self.amp, self.clears, self.schedulers, self.clips, self.modes, self.samplers])
        recorder.checks.extend(c for c in (self.timing, self.cuda_memory, self.loader_wait, self.ddp) if c is not None)
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
        module.train = self.modes.wrap_train(self.evals.wrap_train(module.train))  # type: ignore[method-assign]
        for name in ("to", "cuda", "cpu"):
            setattr(module, name, self.devices.wrap_move(getattr(module, name)))
        module.__call__ = self.modes.wrap_call(self.devices.wrap_call(module.__call__))  # type: ignore[method-assign]
        module.zero_grad = self.clears.wrap_zero_grad(module.zero_grad, module_parameters)  # type: ignore[method-assign]
        optimizer = torch.optim.Optimizer
        optimizer.zero_grad = self.clears.wrap_zero_grad(optimizer.zero_grad, optimizer_parameters)  # type: ignore[method-assign]
        self._install_schedulers()
        self._install_amp()
        self._install_clipping()
        self._install_data()
        if self.timing is not None:
            self.timing.install()

    def _install_schedulers(self) -> None:
        from torch.optim import lr_scheduler

        base = lr_scheduler.LRScheduler
        base._initial_step = self.schedulers.wrap_initial(base._initial_step)  # type: ignore[method-assign]
        # Every scheduler class of torch with a `step` of its own (ReduceLROnPlateau, ...).
        for cls in {base, *(c for c in vars(lr_scheduler).values() if isinstance(c, type) and issubclass(c, base))}:
            if "step" in vars(cls):
                setattr(cls, "step", self.schedulers.wrap_step(vars(cls)["step"]))

    def _install_amp(self) -> None:
        from torch.amp.autocast_mode import autocast
        from torch.amp.grad_scaler import GradScaler

        autocast.__enter__ = self.amp.wrap_enter(autocast.__enter__)  # type: ignore[method-assign]
        GradScaler.scale = self.amp.wrap_scale(GradScaler.scale)  # type: ignore[method-assign]
        GradScaler.unscale_ = self.amp.wrap_unscale(GradScaler.unscale_)  # type: ignore[method-assign]
        GradScaler.step = self.amp.wrap_step(GradScaler.step)  # type: ignore[method-assign]
        GradScaler.update = self.amp.wrap_update(GradScaler.update)  # type: ignore[method-assign]

    def _install_clipping(self) -> None:
        from torch.nn import utils
        from torch.nn.utils import clip_grad

        for name in ("clip_grad_norm_", "clip_grad_value_"):
            wrapped = self.clips.wrap(getattr(clip_grad, name))
            setattr(clip_grad, name, wrapped)
            setattr(utils, name, wrapped)

    def _install_data(self) -> None:
        from torch.utils.data import dataloader, distributed

        sampler = distributed.DistributedSampler
        sampler.__iter__ = self.samplers.wrap_iter(sampler.__iter__)  # type: ignore[method-assign]
        sampler.set_epoch = self.samplers.wrap_set_epoch(sampler.set_epoch)  # type: ignore[method-assign]
        if self.loader_wait is not None:
            wait = self.loader_wait
            dataloader.DataLoader.__init__ = wait.wrap_loader_init(dataloader.DataLoader.__init__)  # type: ignore[method-assign]
            single = dataloader._SingleProcessDataLoaderIter
            single.__init__ = wait.wrap_iterator_init(single.__init__)  # type: ignore[method-assign]
            single._next_data = wait.wrap_next_data(single._next_data)  # type: ignore[method-assign]
        if self.ddp is not None:
            from torch.nn.parallel import DistributedDataParallel

            DistributedDataParallel.__init__ = self.ddp.wrap_init(DistributedDataParallel.__init__)  # type: ignore[method-assign]

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
        self.loop.on_backward()
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
        step = self.loop.steps(optimizer) + 1
        closure = _has_closure(args, kwargs)
        self.grads.before_step(optimizer, step, closure, _stack)
        if not closure:
            # A closure (LBFGS) computes the gradients inside step().
            self.clears.before_step(optimizer)
            self.amp.before_step(optimizer)
        self.modes.before_step(optimizer)

    def _after_step_hook(self, optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._after_step(optimizer)
        if self.recorder.steps >= self.recorder.settings.max_steps:
            raise StopProbe

    def _after_step_soft(self, optimizer: torch.optim.Optimizer) -> None:
        count = self.loop.after_step(optimizer)
        self.grads.after_step(optimizer)
        self.amp.after_step()
        if self.loader_wait is not None:
            self.loader_wait.after_step()
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
