"""Running totals: values summed or collected across the iterations of a loop (`total +=
loss`, `total += output.loss`, `total = total + loss`, `total = loss if total is None else
total + loss`, `losses.append(loss)`, `meter.update(loss, n)` of a
running-average meter, `tracker.update(losses)` of a project class whose method adds its
argument into an attribute), the value each one adds, and whether the total is started afresh
inside the iteration. Whether the added value carries an autograd graph is `graphs`'s.

An iteration is a loop's body, or the body of a per-step method (`Trainer.train_step`, which
a loop of the module calls once per batch): what such a method adds into an attribute of
its object (`self.train_loss += loss`) outlives the call, as a loop's total outlives the
iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import callee_name, method_name, positional, receiver, same_expr
from torchlint.rules._analysis.dataflow import assigned_names
from torchlint.rules._analysis.flow import enclosing_loops
from torchlint.rules._analysis.graphs import detached, mentioned_names
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import dotted


@dataclass(frozen=True)
class RunningTotal:
    """One statement of a loop body that adds `value` into `accumulator`."""

    statement: cst.CSTNode
    accumulator: cst.BaseExpression
    # The added name or attribute (`output.loss`), or the call of a helper that returns the value.
    value: cst.Name | cst.Attribute | cst.Call
    # The total is kept by a method of another module that `statement` calls with `value`.
    in_helper: bool = False
    # The branch that starts the total with the same value (`loss if total is None else ...`).
    start: cst.BaseExpression | None = None

    @property
    def added_name(self) -> str | None:
        """The dotted name added (`loss`, `output.loss`); None for a helper's result."""
        return dotted(self.value) if not isinstance(self.value, cst.Call) else None


# The code that runs once per step: a loop, or a per-step method (`per_step_methods`).
Iteration = cst.For | cst.While | cst.FunctionDef


def running_totals(ctx: FileContext, loop: Iteration) -> Iterator[RunningTotal]:
    """Totals that run directly in this iteration (not in an inner loop, nor in a nested
    function), of a plain name or of a helper's result (`total += self.training_step(...)`);
    in a per-step method, only totals kept in attributes of its object (`self.total`)."""
    idx = index(ctx)
    meters = running_meters(ctx)
    for node in idx.within(loop.body, cst.AugAssign, cst.Assign, cst.Call):
        if isinstance(loop, cst.FunctionDef):
            if enclosing_loops(idx, node) or idx.scope(node) is not loop:
                continue
            for total in _totals_of(node, meters):
                if (dotted(container(total.accumulator)) or "").startswith("self."):
                    yield total
        elif enclosing_loops(idx, node)[:1] == [loop]:
            yield from _totals_of(node, meters)


def per_step_methods(ctx: FileContext) -> list[cst.FunctionDef]:
    """Methods that a loop of this module calls through `self` once per iteration
    (`for batch in loader: self.train_step(batch)`) and that take no loop of their own."""
    return ctx.analysis(_build_per_step_methods)


def _build_per_step_methods(ctx: FileContext) -> list[cst.FunctionDef]:
    idx = index(ctx)
    funcs = functions(ctx)
    found = []
    for method in funcs.all:
        if id(method) not in funcs.class_of or idx.within(method, cst.For, cst.While):
            continue
        if any(
            dotted(receiver(site) or site.func) == "self" and enclosing_loops(idx, site)
            for site in funcs.call_sites(method)
        ):
            found.append(method)
    return found


def _totals_of(node: cst.CSTNode, meters: frozenset[str]) -> Iterator[RunningTotal]:
    """The running total that one statement of an iteration keeps, if any."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        value = added_operand(node.value)
        if value is not None:
            yield RunningTotal(node, node.target, value)
        elif isinstance(node.value, cst.Call):
            yield RunningTotal(node, node.target, node.value)
    elif isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        total = summed(node.value)
        if total is not None:
            for own, other in ((total.left, total.right), (total.right, total.left)):
                value = added_operand(other)
                if (same_expr(own, target) or (isinstance(target, cst.Subscript) and own.deep_equals(target))) and value is not None:
                    yield RunningTotal(node, target, value, start=_start(node.value, total, value))
    elif isinstance(node, cst.Call) and method_name(node) == "append" and len(node.args) == 1:
        owner = receiver(node)
        item = node.args[0].value
        if owner is not None and dotted(owner) is not None and isinstance(item, (cst.Name, cst.Attribute)):
            if dotted(item) is not None and not detached(item):
                yield RunningTotal(node, owner, item)
    elif isinstance(node, cst.Call) and method_name(node) == "update" and positional(node):
        owner = receiver(node)
        value = added_operand(positional(node)[0].value)
        if owner is not None and dotted(owner) in meters and value is not None:
            yield RunningTotal(node, owner, value)


def helper_totals(ctx: FileContext, loop: cst.For | cst.While, names: frozenset[str]) -> Iterator[RunningTotal]:
    """`tracker.update(losses)` directly in this loop's body, handing over one of `names`,
    where the project method adds `losses` (or each of its elements) into an attribute of its
    object, which outlives the iteration. Only calls that pass one of `names` are looked up
    in the project, so that a file depends on no more of other modules than it asks about."""
    idx = index(ctx)
    meters = running_meters(ctx)
    for call in idx.within(loop.body, cst.Call):
        if enclosing_loops(idx, call)[:1] != [loop] or not any(dotted(a.value) in names for a in call.args):
            continue
        owner = receiver(call)
        if method_name(call) == "update" and owner is not None and dotted(owner) in meters:
            continue  # a running meter: `running_totals` has it
        for value in sm.totaled_arguments(ctx, call):
            if isinstance(value, (cst.Name, cst.Attribute)) and dotted(value) in names:
                yield RunningTotal(call, call.func, value, in_helper=True)


def running_meters(ctx: FileContext) -> frozenset[str]:
    """Names bound to a running-average meter: an `AverageMeter`-like class (the ImageNet
    example's, usually imported from a utils module), or a class of this module whose
    `update(val, ...)` adds `val` into an attribute (`self.sum += val * n`)."""
    return ctx.analysis(_build_meters)


def _build_meters(ctx: FileContext) -> frozenset[str]:
    idx = index(ctx)
    funcs = functions(ctx)
    found: set[str] = set()
    for assign in idx.nodes(cst.Assign):
        if not isinstance(assign.value, cst.Call):
            continue
        cls = callee_name(assign.value) or ""
        update = funcs.method(cls, "update")
        if (update is None and cls.endswith("Meter")) or (update is not None and _sums_argument(idx, update)):
            found.update(name for t in assign.targets if (name := dotted(t.target)) is not None)
    return frozenset(found)


def _sums_argument(idx: Index, update: cst.FunctionDef) -> bool:
    params = [p.name.value for p in update.params.params if p.name.value != "self"]
    if not params:
        return False
    return any(
        isinstance(aug.operator, cst.AddAssign)
        and isinstance(aug.target, cst.Attribute)
        and dotted(aug.target.value) == "self"
        and params[0] in mentioned_names(aug.value)
        for aug in idx.within(update, cst.AugAssign)
    )


def _start(value: cst.BaseExpression, total: cst.BinaryOperation, added: cst.BaseExpression) -> cst.BaseExpression | None:
    if not isinstance(value, cst.IfExp):
        return None
    other = value.body if value.orelse is total else value.orelse
    return other if same_expr(other, added) else None


def summed(expr: cst.BaseExpression) -> cst.BinaryOperation | None:
    """The addition that an assigned value computes: `total + loss`, or the branch of
    `loss if total is None else total + loss` that adds (the first iteration starts it)."""
    if isinstance(expr, cst.IfExp):
        return summed(expr.orelse) or summed(expr.body)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return expr
    return None


def added_operand(expr: cst.BaseExpression) -> cst.Name | cst.Attribute | None:
    """`loss` in `loss`, `loss * x.size(0)`, `loss / n`, `output.loss` (a model output's
    field); None in `w * loss.item()` or `loss.data` (a number, a detached tensor)."""
    if isinstance(expr, cst.Name):
        return expr
    if isinstance(expr, cst.Attribute):
        return expr if dotted(expr) is not None and not detached(expr) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        if detached(expr.left) or detached(expr.right):
            return None
        if isinstance(expr.operator, cst.Divide):
            return added_operand(expr.left)
        return added_operand(expr.left) or added_operand(expr.right)
    return None


def container(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`totals` for `totals["loss"]` or `totals[k][i]`."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def restarted_in_iteration(idx: Index, loop: Iteration, total: RunningTotal) -> bool:
    """The accumulator is (re)bound somewhere inside the iteration (other than by the total
    itself, `total = total + loss`), so it holds at most a bounded window of iterations."""
    base = dotted(container(total.accumulator))
    if base is None:
        return True
    assigns: list[cst.Assign | cst.AnnAssign] = [
        *idx.within(loop.body, cst.Assign),
        *idx.within(loop.body, cst.AnnAssign),
    ]
    for assign in assigns:
        if isinstance(assign, cst.Assign) and _carries_on(assign.value, base):
            continue
        targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
        if any(dotted(container(t)) == base for t in targets):
            return True
    return False


def _carries_on(value: cst.BaseExpression, base: str) -> bool:
    """An assigned value that goes on from the total: `total + loss` (any arithmetic), or a
    conditional that starts it while it is None and otherwise builds on it (`loss if total
    is None else tuple(map(sum, zip(total, loss)))`)."""
    if isinstance(value, cst.BinaryOperation):
        return True
    if not isinstance(value, cst.IfExp) or not isinstance(value.test, cst.Comparison):
        return False
    test = value.test
    if len(test.comparisons) != 1 or dotted(test.left) != base:
        return False
    (comparison,) = test.comparisons
    if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
        return False
    if isinstance(comparison.operator, cst.Is):
        going_on = value.orelse
    elif isinstance(comparison.operator, cst.IsNot):
        going_on = value.body
    else:
        return False
    return base in mentioned_names(going_on) and not detached(going_on)


@dataclass(frozen=True)
class LoopBinding:
    value: cst.BaseExpression
    # The name is one element of a tuple or list target.
    unpacked: bool


def binding_before(idx: Index, loop: Iteration, name: str, before: cst.CSTNode) -> LoopBinding | None:
    """The assignment to `name` last before `before` in the iteration (source order)."""
    found: LoopBinding | None = None
    for assign in idx.within(loop.body, cst.Assign):
        if idx.order(assign) >= idx.order(before):
            break
        if name in assigned_names(assign):
            unpacked = any(isinstance(t.target, (cst.Tuple, cst.List)) for t in assign.targets)
            found = LoopBinding(assign.value, unpacked)
    return found
