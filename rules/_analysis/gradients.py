"""Whose gradients: the object a gradient clear empties (an optimizer, or the model whose
parameters it walks), the parameters each stepped optimizer updates as far as the module
shows, and code that writes gradients into `.grad` by hand (gradient surgery, CUDA graph
replays of a captured backward). The clears, steps and backward passes themselves are
`training`'s.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.calls import method_name, positional, receiver
from torchlint.rules._analysis.dataflow import assigned_values
from torchlint.rules._analysis.index import children, Index, index
from torchlint.rules._analysis.names import dotted
from torchlint.rules._analysis.training import graph_replays, Training, training
from torchlint.rules._vocabulary import name_says_optimizer, name_tokens

# What a plain `X.zero_grad()` most likely means by X when the module steps one optimizer.
MODEL_WORDS = frozenset({"model", "net", "network", "module", "self"})
# How many plain renames (`o = opt`) are followed back to the name they copy.
MAX_ALIASES = 3
# In-place methods that put values into a gradient rather than clear it.
_WRITING_METHODS = frozenset({"copy_", "add_", "set_"})


def cleared_object(idx: Index, clear: cst.CSTNode) -> str | None:
    """`optimizer` for `optimizer.zero_grad()`, `model` for `p.grad = None` or
    `p.grad.zero_()` in `for p in model.parameters()`, or for `zero_grads(model)`;
    None when unclear or when the "clear" rescales rather than clears (`p.grad.mul_(s)`)."""
    if isinstance(clear, cst.Call):
        owner = receiver(clear)
        if method_name(clear) == "zero_grad" and owner is not None:
            return dotted(owner)
        if method_name(clear) != "zero_":
            args = positional(clear)
            return dotted(args[0].value) if isinstance(clear.func, cst.Name) and args else None
    elif not (isinstance(clear, cst.Assign) and isinstance(clear.value, cst.Name) and clear.value.value == "None"):
        return None
    loop = idx.enclosing(clear, (cst.For,))
    if loop is not None and isinstance(loop.iter, cst.Call) and method_name(loop.iter) == "parameters":
        owner = receiver(loop.iter)
        return dotted(owner) if owner is not None else None
    return None


def gradient_writes(ctx: FileContext) -> list[cst.CSTNode]:
    """Code that fills `.grad` after a clear: `p.grad = g`, `p.grad += g`, `p.grad.copy_(g)`,
    and each replay of a CUDA graph whose capture runs a backward pass."""
    return ctx.analysis(_build_gradient_writes)


def _build_gradient_writes(ctx: FileContext) -> list[cst.CSTNode]:
    idx = index(ctx)
    found: list[cst.CSTNode] = []
    for assign in idx.nodes(cst.Assign):
        if any(_is_grad(t.target) for t in assign.targets) and not (
            isinstance(assign.value, cst.Name) and assign.value.value == "None"
        ):
            found.append(assign)
    found.extend(a for a in idx.nodes(cst.AugAssign) if _is_grad(a.target))
    for call in idx.nodes(cst.Call):
        owner = receiver(call)
        if method_name(call) in _WRITING_METHODS and owner is not None and _is_grad(owner):
            found.append(call)
    return [*found, *graph_replays(ctx)]


def _is_grad(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "grad"


class OptimizedParameters:
    """Which parameters each stepped optimizer of a module updates, as far as it shows."""

    def __init__(self, idx: Index, train: Training, values: dict[str, list[cst.BaseExpression]]) -> None:
        self.idx = idx
        self.train = train
        self.values = values
        self.stepped = {dotted(e) for e in train.stepped.values()} - {None}
        # Optimizer name -> every name mentioned in the arguments it was built with.
        self.built_from: dict[str, set[str]] = {}
        for assign in idx.nodes(cst.Assign):
            if not isinstance(assign.value, cst.Call):
                continue
            for target in assign.targets:
                name = dotted(target.target)
                if name is not None and name in self.stepped:
                    self.built_from.setdefault(name, set()).update(mentioned_prefixes(assign.value.args))

    def clears_what_step_applies(self, clear: cst.CSTNode, step: cst.CSTNode) -> bool:
        """Only with evidence: the clear names the stepped optimizer, a model the optimizer
        was built from, or (when the module shows no construction and steps one optimizer)
        a plain `model`/`net`/`self`."""
        cleared = cleared_object(self.idx, clear)
        optimizer = dotted(self.train.optimizer_of(step))  # type: ignore[arg-type]
        if cleared is None or optimizer is None:
            return False
        if self.original(cleared) == self.original(optimizer):
            return True
        if cleared in self.stepped or name_says_optimizer(cleared.rsplit(".", 1)[-1]):
            return False
        built_from = self.built_from.get(optimizer)
        if built_from is not None:
            return cleared in built_from
        return len(self.stepped) == 1 and set(name_tokens(cleared.rsplit(".", 1)[-1])) <= MODEL_WORDS


    def original(self, name: str) -> str:
        """The name that `name` is another name for: `opt` after `o = opt` (every value the
        module assigns to `o` is that one name), followed a few times."""
        for _ in range(MAX_ALIASES):
            values = {dotted(v) for v in self.values.get(name, ())}
            if len(values) != 1 or None in values or name in values:
                return name
            name = values.pop()  # type: ignore[assignment]
        return name


def optimized_parameters(ctx: FileContext) -> OptimizedParameters:
    return ctx.analysis(_build_optimized_parameters)


def _build_optimized_parameters(ctx: FileContext) -> OptimizedParameters:
    return OptimizedParameters(index(ctx), training(ctx), assigned_values(ctx))


def mentioned_prefixes(args: Sequence[cst.Arg]) -> set[str]:
    """Dotted names and their prefixes in the arguments: `model.encoder.parameters()` gives
    `model`, `model.encoder`, `model.encoder.parameters`."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = list(args)
    while stack:
        node = stack.pop()
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None:
            parts = name.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            continue
        stack.extend(children(node))
    return found
