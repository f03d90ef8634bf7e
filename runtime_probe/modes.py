"""Confirmations of the training-mode rules, for modules with layers that behave
differently in training and evaluation (dropout, batch-norm with running statistics, ...):

- TL008: an optimizer step trains a module in eval mode after earlier steps of the same
  optimizer trained it in train mode: an `.eval()` switched it and nothing switched it
  back. Modules are watched from their first `train()`/`eval()` call; a module first seen
  when `.eval()` switches it from train mode, with no watched module around its
  parameters, has been in train mode since it was built. Deliberate eval-mode training
  (frozen batch norm from the start) never trained in train mode and is not reported.
- TL009: a forward pass from the script's code, with gradients disabled, of a module in
  training mode whose parameters an optimizer has stepped: an evaluation with dropout
  active. `Module.__call__` is wrapped; with gradients enabled it costs one check.

Both are weak events: they confirm a static finding on its lines (the loop, the
evaluation function) and are not findings alone (MC dropout is deliberate).
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

from torchlint.runtime_probe.frames import called_from_user, user_stack
from torchlint.runtime_probe.loop import Loop, describe_steps, parameter_ids
from torchlint.runtime_probe.protocol import Event, Frame

Guard = Callable[[Callable[..., Any]], Callable[..., Any]]


def mode_layers(module: nn.Module) -> dict[str, int]:
    """Layers of `module` that behave differently in train and eval mode, by class name."""
    found: dict[str, int] = {}
    for layer in module.modules():
        if (
            isinstance(layer, nn.modules.dropout._DropoutNd)
            and layer.p > 0
            or isinstance(layer, (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm))
            and layer.track_running_stats
            or isinstance(layer, (nn.RNNBase, nn.MultiheadAttention))
            and layer.dropout > 0
        ):
            name = type(layer).__name__
            found[name] = found.get(name, 0) + 1
    return found


def _layers_text(layers: dict[str, int]) -> str:
    return ", ".join(name if n == 1 else f"{n} {name}" for name, n in layers.items())


@dataclass
class _Watched:
    ref: weakref.ref[nn.Module]
    name: str
    params: frozenset[int]
    layers: dict[str, int]
    # The latest `.eval()` that switched it out of train mode.
    switch: tuple[Frame, ...] = ()
    # Steps per optimizer (by id) known to have trained it in train mode before it was watched.
    trained_before: dict[int, int] = field(default_factory=dict)


@dataclass
class _Pair:
    """One optimizer and one watched module."""

    optimizer: weakref.ref[torch.optim.Optimizer]
    overlap: bool
    train_steps: int = 0
    eval_steps: list[int] = field(default_factory=list)
    stack: tuple[Frame, ...] = ()
    switch: tuple[Frame, ...] = ()


@dataclass
class _NoGradSite:
    stack: tuple[Frame, ...]
    module: str
    layers: dict[str, int]
    trained_steps: int
    forwards: int = 0


class ModeCheck:
    def __init__(self, loop: Loop, guard: Guard) -> None:
        self._loop = loop
        self._guard = guard
        self._train_depth = 0
        self._watched: dict[int, _Watched] = {}
        self._pairs: dict[tuple[int, int], _Pair] = {}
        self._finished: list[tuple[_Watched, _Pair]] = []
        # TL009
        self._forward_depth = 0
        self._modules: dict[int, tuple[weakref.ref[nn.Module], dict[str, int], int, bool]] = {}
        self._no_grad: dict[tuple[str, int], _NoGradSite] = {}

    # --- TL008 ------------------------------------------------------------------------

    def wrap_train(self, original: Callable[..., Any]) -> Callable[..., Any]:
        note = self._guard(self._note)

        @functools.wraps(original)
        def train(module: nn.Module, mode: bool = True) -> Any:
            if self._train_depth:
                return original(module, mode)
            was = module.training
            self._train_depth += 1
            try:
                result = original(module, mode)
            finally:
                self._train_depth -= 1
            note(module, was, mode)
            return result

        return train

    def _note(self, module: nn.Module, was: bool, mode: bool) -> None:
        watched = self._watched.get(id(module))
        if watched is None or watched.ref() is not module:
            params = parameter_ids(module)
            if not params:
                return
            fresh = not any(w.params & params for w in self._watched.values())
            key = id(module)
            watched = self._watched[key] = _Watched(
                weakref.ref(module, lambda _: self._forget(key)), type(module).__name__, params, mode_layers(module)
            )
            if fresh and was and not mode:
                watched.trained_before = self._loop.step_counts()
        if was and not mode:
            watched.switch = user_stack(sys._getframe())

    def _forget(self, key: int) -> None:
        watched = self._watched.pop(key, None)
        for pair_key in [k for k in self._pairs if k[1] == key]:
            pair = self._pairs.pop(pair_key)
            if watched is not None and pair.eval_steps:
                self._finished.append((watched, pair))

    def before_step(self, optimizer: torch.optim.Optimizer) -> None:
        if not self._watched:
            return
        step = self._loop.steps(optimizer) + 1
        for key, watched in list(self._watched.items()):
            module = watched.ref()
            if module is None:
                continue
            pair = self._pair(optimizer, key, watched)
            if not pair.overlap:
                continue
            if module.training:
                pair.train_steps += 1
            elif pair.train_steps and watched.switch:
                pair.eval_steps.append(step)
                pair.switch = watched.switch
                pair.stack = pair.stack or user_stack(sys._getframe())

    def _pair(self, optimizer: torch.optim.Optimizer, key: int, watched: _Watched) -> _Pair:
        pair = self._pairs.get((id(optimizer), key))
        if pair is None or pair.optimizer() is not optimizer:
            overlap = bool(watched.params & self._loop.params(optimizer))
            pair = self._pairs[id(optimizer), key] = _Pair(weakref.ref(optimizer), overlap)
            pair.train_steps = watched.trained_before.get(id(optimizer), 0)
        return pair

    # --- TL009 ------------------------------------------------------------------------

    def wrap_call(self, original: Callable[..., Any]) -> Callable[..., Any]:
        is_grad_enabled = torch.is_grad_enabled
        seen = self._guard(self._no_grad_forward)

        @functools.wraps(original)
        def call(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
            if is_grad_enabled():
                return original(module, *args, **kwargs)
            if not self._forward_depth and getattr(module, "training", False):
                seen(module)
            self._forward_depth += 1
            try:
                return original(module, *args, **kwargs)
            finally:
                self._forward_depth -= 1

        return call

    def _no_grad_forward(self, module: nn.Module) -> None:
        layers, trained = self._module_facts(module)
        if not trained or not called_from_user(sys._getframe()):
            return
        stack = user_stack(sys._getframe())
        if not stack:
            return
        site = self._no_grad.get((stack[0].filename, stack[0].line))
        if site is None:
            site = self._no_grad[stack[0].filename, stack[0].line] = _NoGradSite(
                stack, type(module).__name__, layers, self._loop.total_steps
            )
        site.forwards += 1

    def _module_facts(self, module: nn.Module) -> tuple[dict[str, int], bool]:
        """Its mode-dependent layers, and whether an optimizer has stepped its parameters
        (rechecked only when the set of trained parameters has grown)."""
        facts = self._modules.get(id(module))
        loop = self._loop
        if facts is None or facts[0]() is not module:
            facts = (weakref.ref(module), mode_layers(module), -1, False)
        ref, layers, version, trained = facts
        if not trained and version != loop.trained_version:
            trained = any(id(p) in loop.trained for p in module.parameters())
            version = loop.trained_version
        self._modules[id(module)] = (ref, layers, version, trained)
        return layers, trained

    # --- events -----------------------------------------------------------------------

    def events(self, final: bool) -> list[Event]:
        pairs = [(w, p) for (_, key), p in self._pairs.items() if p.eval_steps for w in [self._watched.get(key)] if w]
        events = [_eval_event(watched, pair) for watched, pair in [*self._finished, *pairs]]
        events.extend(_no_grad_event(site) for site in self._no_grad.values())
        return events


def _eval_event(watched: _Watched, pair: _Pair) -> Event:
    name = watched.name
    switch = f" by `.eval()` at line {watched.switch[0].line}" if watched.switch else ""
    evidence: dict[str, Any] = {
        "module": name,
        "layers": watched.layers,
        "train_mode_steps": pair.train_steps,
        "eval_mode_steps": pair.eval_steps,
    }
    stack = pair.stack + pair.switch
    if not watched.layers:
        message = (
            f"`{name}` trained in eval mode on {describe_steps(pair.eval_steps)} after {pair.train_steps} steps in train "
            "mode, but it has no dropout or batch-norm layers: the mode changes nothing for it"
        )
        return Event("TL008", stack, message, evidence, benign=True)
    message = (
        f"`{name}` ({_layers_text(watched.layers)}) trained in train mode for {pair.train_steps} steps, then in eval mode "
        f"on {describe_steps(pair.eval_steps)}: it was switched{switch} and never switched back, so those steps ran "
        "with dropout off and batch-norm statistics frozen; call `model.train()` before training"
    )
    return Event("TL008", stack, message, evidence, weak=True)


def _no_grad_event(site: _NoGradSite) -> Event:
    evidence = {
        "module": site.module,
        "layers": site.layers,
        "forwards": site.forwards,
        "trained_steps": site.trained_steps,
    }
    if not site.layers:
        message = (
            f"`{site.module}` ran with gradients disabled in training mode, but it has no dropout or batch-norm "
            "layers: the mode changes nothing for it"
        )
        return Event("TL009", site.stack, message, evidence, benign=True)
    effects = []
    if any("Dropout" in name or name in ("LSTM", "GRU", "RNN", "MultiheadAttention") for name in site.layers):
        effects.append("dropout dropped activations at random")
    if any("Norm" in name for name in site.layers):
        effects.append("normalization used (and updated) batch statistics")
    passes = "1 forward pass" if site.forwards == 1 else f"{site.forwards} forward passes"
    message = (
        f"`{site.module}` ({_layers_text(site.layers)}) ran {passes} with gradients disabled but in training mode, "
        f"after {site.trained_steps} optimizer steps trained it: {' and '.join(effects) or 'its layers behaved as in training'}, "
        "so the evaluation is noisy and biased; call `model.eval()` first"
    )
    return Event("TL009", site.stack, message, evidence, weak=True)
