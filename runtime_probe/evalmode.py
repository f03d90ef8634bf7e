"""TL004 confirmation: a module in eval mode runs forward with gradients enabled and its
output's autograd graph is never back-propagated (evaluation that forgot `no_grad()`).

Global forward hooks cost something on every module call, so they are installed only
while some module is in eval mode (`Module.train` is wrapped to know). The outermost
module call of an eval-mode forward tags its output's graph; a backward pass whose graph
holds the tag marks it back-propagated (deliberate eval-mode training, such as frozen
batch norm: not a bug); a tag that dies unmarked is the bug.
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch.utils.hooks import RemovableHandle

from torchlint.runtime_probe.frames import user_stack
from torchlint.runtime_probe.graphs import graph_tags, tag_graph
from torchlint.runtime_probe.protocol import Event, Frame

TAG = "torchlint.eval"
# After this many back-propagated eval-mode forwards and none left unused, a call site
# is deliberate eval-mode training and is no longer tagged (the graph walk costs time).
DELIBERATE_AFTER = 3


@dataclass
class _Site:
    stack: tuple[Frame, ...]
    module: str
    forwards: int = 0
    unused: int = 0
    backpropagated: int = 0

    @property
    def deliberate(self) -> bool:
        return self.backpropagated >= DELIBERATE_AFTER and self.unused == 0


class _Tag:
    __slots__ = ("watch", "__weakref__")

    def __init__(self) -> None:
        self.watch: _Watch | None = None


class _Watch(weakref.ref):  # type: ignore[type-arg]
    __slots__ = ("site", "backpropagated")
    site: _Site
    backpropagated: bool


def _output_tensor(output: Any) -> torch.Tensor | None:
    items = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else (output,)
    for item in items:
        if isinstance(item, torch.Tensor) and item.requires_grad and item.grad_fn is not None:
            return item
    return None


class EvalCheck:
    def __init__(self, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self._guard = guard
        self._eval_roots: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()
        self._handles: tuple[RemovableHandle, ...] = ()
        self._depth = 0
        self._train_depth = 0
        self._pending: set[_Watch] = set()
        self._sites: dict[tuple[str, int], _Site] = {}

    def wrap_train(self, original: Callable[..., Any]) -> Callable[..., Any]:
        update = self._guard(self._update)

        @functools.wraps(original)
        def train(module: torch.nn.Module, mode: bool = True) -> Any:
            self._train_depth += 1
            try:
                return original(module, mode)
            finally:
                self._train_depth -= 1
                if self._train_depth == 0:
                    update(module, mode)

        return train

    def _update(self, module: torch.nn.Module, mode: bool) -> None:
        if not mode:
            self._eval_roots.add(module)
        for root in [m for m in self._eval_roots if m.training]:
            self._eval_roots.discard(root)
        if self._eval_roots and not self._handles:
            self._depth = 0
            self._handles = (
                torch.nn.modules.module.register_module_forward_pre_hook(self._guard(self._before)),
                torch.nn.modules.module.register_module_forward_hook(self._guard(self._after), always_call=True),
            )
        elif not self._eval_roots and self._handles:
            for handle in self._handles:
                handle.remove()
            self._handles = ()

    def _before(self, module: torch.nn.Module, args: Any) -> None:
        self._depth += 1

    def _after(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self._depth = max(self._depth - 1, 0)
        if self._depth or module.training or not torch.is_grad_enabled():
            return
        tensor = _output_tensor(output)
        if tensor is None:
            return
        stack = user_stack(sys._getframe())
        if not stack:
            return
        site = self._sites.get((stack[0].filename, stack[0].line))
        if site is None:
            site = self._sites[stack[0].filename, stack[0].line] = _Site(stack, type(module).__name__)
        site.forwards += 1
        if site.deliberate:
            return
        tag = _Tag()
        watch = _Watch(tag, self._resolve)
        watch.site, watch.backpropagated = site, False
        tag.watch = watch
        if tag_graph(tensor, TAG, tag):
            self._pending.add(watch)

    def _resolve(self, watch: _Watch) -> None:
        # Runs when a tagged graph dies: keep it tiny, it can run anywhere.
        self._pending.discard(watch)
        if watch.backpropagated:
            watch.site.backpropagated += 1
        else:
            watch.site.unused += 1

    def on_backward(self, roots: list[torch.Tensor]) -> None:
        if not self._pending:
            return
        for tag in graph_tags([root.grad_fn for root in roots], TAG):
            if isinstance(tag, _Tag) and tag.watch is not None:
                tag.watch.backpropagated = True

    def events(self, final: bool) -> list[Event]:
        unused_alive: dict[int, int] = {}
        if final:
            for watch in list(self._pending):
                if not watch.backpropagated:
                    unused_alive[id(watch.site)] = unused_alive.get(id(watch.site), 0) + 1
        events = []
        for site in self._sites.values():
            unused = site.unused + unused_alive.get(id(site), 0)
            evidence = {
                "module": site.module,
                "forwards": site.forwards,
                "never_backpropagated": unused,
                "backpropagated": site.backpropagated,
            }
            if unused:
                message = (
                    f"`{site.module}` ran forward in eval mode with gradients enabled ({site.forwards} calls) and "
                    f"{unused} of its outputs' autograd graphs were never back-propagated: wrap evaluation in "
                    "`with torch.no_grad():` or `torch.inference_mode()`"
                )
                events.append(Event("TL004", site.stack, message, evidence))
            elif site.backpropagated:
                message = (
                    f"`{site.module}` ran forward in eval mode with gradients enabled and its outputs were "
                    "back-propagated: eval-mode training looks deliberate"
                )
                events.append(Event("TL004", site.stack, message, evidence, benign=True))
        return events
