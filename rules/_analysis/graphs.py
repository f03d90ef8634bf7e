"""Autograd graphs: which values carry autograd history (a tensor, not a detached copy, a number
read back or a literal), which calls compute a loss, and what the backward passes of a scope
consume: the tensors back-propagated, the terms added into them, and every name whose value
flows into them (through assignments, and from the container a loop takes them from).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import callee_name, method_name, receiver
from torchlint.rules._analysis.dataflow import assigned_names
from torchlint.rules._analysis.index import children, Index, index
from torchlint.rules._analysis.names import dotted, Imports, imports
from torchlint.rules._analysis.training import backpropagated, training


# Expressions that turn a tensor into a value without autograd history.
DETACHING_METHODS = frozenset({"item", "detach", "tolist", "numpy", "data"})
DETACHING_FUNCTIONS = frozenset({"float", "int", "bool", "round"})
# Calls whose result is a loss: `criterion(out, y)`, `loss_fn(...)`, `F.cross_entropy(...)`.
LOSS_CALL = re.compile(r"(?i)(loss|criterion|cross_entropy|nll|mse|bce|l1|huber|kl_div)")


@dataclass(frozen=True)
class Backpropagated:
    calls: list[cst.Call]
    # Names back-propagated directly (`loss` in `loss.backward()`).
    direct: frozenset[str]
    # Names added into one that is (`ce`, `kl` in `loss = ce + 0.1 * kl`).
    terms: frozenset[str]
    # Every name whose value flows into a back-propagated expression.
    flowing: frozenset[str]


def backpropagated_names(ctx: FileContext, idx: Index, scope: cst.CSTNode) -> Backpropagated:
    return ctx.analysis(_BackpropagatedNames).of(idx, ctx, scope)


class _BackpropagatedNames:
    """Per scope, what its backward passes consume (cached per file)."""

    def __init__(self, ctx: FileContext) -> None:
        self._cache: dict[int, Backpropagated] = {}
        self._backward_by_scope: dict[int, list[cst.Call]] | None = None

    def of(self, idx: Index, ctx: FileContext, scope: cst.CSTNode) -> Backpropagated:
        found = self._cache.get(id(scope))
        if found is None:
            found = self._cache[id(scope)] = self._compute(idx, ctx, scope)
        return found

    def _compute(self, idx: Index, ctx: FileContext, scope: cst.CSTNode) -> Backpropagated:
        imps = imports(ctx)
        if self._backward_by_scope is None:
            self._backward_by_scope = {}
            for backward in training(ctx).backward:
                self._backward_by_scope.setdefault(id(idx.scope(backward)), []).append(backward)
        calls = self._backward_by_scope.get(id(scope), [])
        direct: set[str] = set()
        taken: set[str] = set()
        for call in calls:
            tensor = backpropagated(call, imps)
            if tensor is None:
                continue
            names = mentioned_names(tensor)
            direct.update(names)
            # `for out in outputs: out.backward()`: the loop takes what it back-propagates from `outputs`.
            for loop in idx.ancestors(call):
                if isinstance(loop, cst.For) and idx.contains(loop.body, call) and names & mentioned_names(loop.target):
                    taken.update(mentioned_names(loop.iter))
        candidates: list[cst.Assign | cst.AugAssign] = [
            *idx.within(scope, cst.Assign),
            *idx.within(scope, cst.AugAssign),
        ]
        assigns = [a for a in candidates if idx.scope(a) is scope]
        losses, flowing = set(direct), direct | taken
        changed = True
        while changed:
            changed = False
            for assign in assigns:
                targets = assigned_names(assign)
                if targets & flowing:
                    new = mentioned_names(assign.value) - flowing
                    if new:
                        flowing |= new
                        changed = True
                if targets & losses:
                    new_terms = arithmetic_terms(assign.value) - losses
                    if new_terms:
                        losses |= new_terms
                        changed = True
        return Backpropagated(calls, frozenset(direct), frozenset(losses - direct), frozenset(flowing))


def mentioned_names(node: cst.CSTNode) -> set[str]:
    """Plain names and dotted chains mentioned in `node`."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            name = dotted(current)
            if name is not None:
                found.add(name)
                found.add(name.partition(".")[0])
                if isinstance(current, cst.Name):
                    continue
        stack.extend(children(current))
    return found


def arithmetic_terms(expr: cst.BaseExpression) -> set[str]:
    """Names added or scaled into a value: `ce`, `kl` in `ce + 0.1 * kl`; not a divisor."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            return arithmetic_terms(expr.left) | arithmetic_terms(expr.right)
        if isinstance(expr.operator, cst.Divide):
            return arithmetic_terms(expr.left)
    return set()


def detached(value: cst.BaseExpression) -> bool:
    """`loss.item()`, `loss.detach().cpu()`, `float(loss)`, `loss.data`."""
    if isinstance(value, cst.Call):
        if method_name(value) in DETACHING_METHODS:
            return True
        if isinstance(value.func, cst.Name) and value.func.value in DETACHING_FUNCTIONS:
            return True
        owner = receiver(value)
        return owner is not None and detached(owner)
    if isinstance(value, cst.Attribute):
        return value.attr.value in DETACHING_METHODS or detached(value.value)
    return False


def no_graph(value: cst.BaseExpression) -> bool:
    """A value that cannot carry autograd history: detached, or a literal."""
    return detached(value) or not isinstance(
        value, (cst.Name, cst.Subscript, cst.BinaryOperation, cst.Call, cst.Attribute, cst.UnaryOperation)
    )


def is_loss_call(imps: Imports, value: cst.BaseExpression) -> bool:
    """`criterion(out, y)`, `F.cross_entropy(...)`, `model(**batch).loss`, `outputs.loss`."""
    if isinstance(value, cst.Attribute) and value.attr.value == "loss":
        return True
    if isinstance(value, cst.Call):
        return bool(LOSS_CALL.search(callee_name(value) or ""))
    return False


def returns_backpropagated_loss(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """Every `return` of `func` returns a tensor that `func` back-propagates (`loss.backward();
    return loss`): the caller gets a tensor that still carries autograd history."""
    idx = index(ctx)
    returns = [r for r in idx.within(func, cst.Return) if idx.scope(r) is func]
    if not returns:
        return False
    consumed = backpropagated_names(ctx, idx, func)
    return all(isinstance(r.value, cst.Name) and r.value.value in consumed.direct for r in returns)


def helper_backpropagated_loss(ctx: FileContext, call: cst.Call) -> bool:
    """`self.training_step(batch)`, `train_step(model, x, y)`: the call runs one local function,
    or a function of another project module, that back-propagates the loss it returns, so its
    result still carries autograd history (whether it is added to a total directly or through
    a name: `loss = step(b); total += loss`)."""
    helpers = functions(ctx).resolve(call)
    if helpers:
        return len(helpers) == 1 and returns_backpropagated_loss(ctx, helpers[0])
    return sm.returns_backpropagated_loss(ctx, call)
