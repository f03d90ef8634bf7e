"""Gradient accumulation: an optimizer step that runs once every N iterations of a loop (under
`if (i + 1) % N == 0:`, after `if ...: continue`, or after an inner loop of N micro-steps), a
clear that runs only every N iterations while the step runs on every one, the
backward passes that run every iteration, and whether the loss they back-propagate is divided
by N (in the expression, through variables, or in a local helper). Accumulation that
Accelerate runs (`with accelerator.accumulate(model):`), and the clears inside it that it
does not hold back. Clears between the passes of a loop whose step counts iterations across
those passes (`if ni - last_step >= accumulate:` with `last_step` kept across epochs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions
from torchlint.rules._analysis.calls import callee_name
from torchlint.rules._analysis.flow import Event, flow
from torchlint.rules._analysis.index import children, Index, index
from torchlint.rules._analysis.names import dotted, imports, Imports, last_name
from torchlint.rules._analysis.training import backpropagated, Training, training
from torchlint.rules._vocabulary import ACCUMULATION_WORDS, name_says_optimizer, name_tokens, says_gradient_scaling


@dataclass(frozen=True)
class Accumulation:
    """Backward every iteration, a step every `count` iterations."""

    backward: cst.Call
    step: cst.Call
    count: cst.BaseExpression


def uses_framework_accumulation(ctx: FileContext) -> bool:
    """`accelerator.accumulate(model)` (or Lightning's `accumulate_grad_batches`) scale for you."""
    return "accumulate(" in ctx.source or "accumulate_grad_batches" in ctx.source


@dataclass(frozen=True)
class UnheldClear:
    """A gradient clear inside `with accelerator.accumulate(...)` that Accelerate does not
    defer to the step that syncs gradients: not the prepared optimizer's `zero_grad()`."""

    clear: cst.CSTNode
    block: cst.With


def unheld_clears(idx: Index, train: Training) -> list[UnheldClear]:
    """Clears in an `accumulate(...)` block that also back-propagates: a model's
    `zero_grad()`, `p.grad = None`, anything but an optimizer's `zero_grad()`; not under an
    `if ...sync_gradients:` of their own, which runs them only on the sync step."""
    found: list[UnheldClear] = []
    for block in idx.nodes(cst.With):
        if not any(isinstance(i.item, cst.Call) and last_name(i.item.func) == "accumulate" for i in block.items):
            continue
        if not idx.holds_any(block.body, train.backward):
            continue
        for clear in train.clears:
            if not idx.contains(block.body, clear) or idx.scope(clear) is not idx.scope(block):
                continue
            owner = clear.func.value if isinstance(clear, cst.Call) and isinstance(clear.func, cst.Attribute) else None
            if owner is not None and name_says_optimizer(last_name(owner)):
                continue
            if any(
                isinstance(a, cst.If) and idx.contains(block, a) and "sync_gradients" in (dotted(a.test) or "")
                for a in idx.ancestors(clear)
            ):
                continue
            found.append(UnheldClear(clear, block))
    return found


@dataclass(frozen=True)
class LoopAccumulation:
    """An accumulation in `loop`, with the step's event there."""

    loop: cst.For | cst.While
    accumulation: Accumulation
    step: Event


def loop_accumulations(ctx: FileContext) -> list[LoopAccumulation]:
    """Every accumulation of the module, loop by loop (`accumulations` over each loop's
    backward passes and steps)."""
    return ctx.analysis(_build_loop_accumulations)


def _build_loop_accumulations(ctx: FileContext) -> list[LoopAccumulation]:
    idx, imps, train, events_of = index(ctx), imports(ctx), training(ctx), flow(ctx).events
    found: list[LoopAccumulation] = []
    if not (train.steps and train.backward):
        return found
    loops: list[cst.For | cst.While] = [*idx.nodes(cst.For), *idx.nodes(cst.While)]
    for loop in loops:
        events = events_of(loop.body, [*train.backward, *train.steps])
        for acc in accumulations(idx, imps, train, events, loop):
            found.append(LoopAccumulation(loop, acc, next(e for e in events if e.node is acc.step)))
    return found


def accumulations(
    idx: Index, imps: Imports, train: Training, events: list[Event], loop: cst.For | cst.While
) -> Iterator[Accumulation]:
    steps = [e for e in events if id(e.node) in train.stepped]
    if not steps:
        return
    periods = [every_n(idx, loop, step) for step in steps]
    backwards = [e for e in events if id(e.node) not in train.stepped and not self_scaling(e.node, imps)]
    if all(p is not None for p in periods):
        # Branch of each `if ... % N` that holds a step: a backward pass elsewhere runs every iteration.
        stepping = {id(p.guard): p.branch for p in periods if p is not None and p.guard is not None}
        count = periods[0].count  # type: ignore[union-attr]
        every_iteration = [b for b in backwards if not b.loops and runs_every_iteration(b, stepping, backwards)]
        for backward in every_iteration:
            yield Accumulation(backward.node, steps[0].node, count)  # type: ignore[arg-type]
        return
    if any(step.loops for step in steps):
        return
    for backward in backwards:
        micro = micro_step_count(backward)
        if micro is not None:
            yield Accumulation(backward.node, steps[0].node, micro)  # type: ignore[arg-type]


def runs_every_iteration(backward: Event, stepping: dict[int, bool], backwards: list[Event]) -> bool:
    """Not under the step's `if ... % N`, or under it with a backward pass in each branch
    (`with model.no_sync(): loss.backward()` on accumulating iterations, then the last one)."""
    return all(
        any(any(s is stmt and b != branch for s, b in other.guards) for other in backwards)
        for stmt, branch in backward.guards
        if id(stmt) in stepping
    )


@dataclass(frozen=True)
class Period:
    """A step that runs every `count` iterations, under `guard` (None: after `if ...: continue`)."""

    count: cst.BaseExpression
    guard: cst.If | None
    branch: bool


def every_n(idx: Index, loop: cst.For | cst.While, step: Event) -> Period | None:
    """N for a step under `if ... % N ...:` or after `if ... % N ...: continue` in this loop."""
    if step.loops:
        return None
    for stmt, branch in step.guards:
        count = modulo_divisor(named_condition(idx, loop, stmt.test))
        if count is not None:
            return Period(count, stmt, branch)
    top = statement_in_block(idx, step.path[0], loop.body)
    body = getattr(loop.body, "body", ())
    for stmt in body:
        if stmt is top:
            break
        if isinstance(stmt, cst.If) and stmt.orelse is None and only_continues(stmt.body):
            count = modulo_divisor(stmt.test)
            if count is not None:
                return Period(count, None, True)
    return None


@dataclass(frozen=True)
class PeriodicClear:
    """A clear that runs only every N iterations of a loop whose step runs on every one."""

    clear: cst.CSTNode
    period: Period


def periodic_clear(ctx: FileContext, loop: cst.For | cst.While, step: cst.Call) -> PeriodicClear | None:
    """The clear of `step`'s gradients when `step` runs on every iteration of `loop` and every
    clear of them in the loop runs only under `if ... % N ...:`: between two clears, each step
    applies the gradients of every iteration since the last one. Not where a framework
    accumulates (an optimizer that Accelerate prepared skips the steps between syncs)."""
    if uses_framework_accumulation(ctx):
        return None
    idx, train = index(ctx), training(ctx)
    events = flow(ctx).events(loop.body, [*train.clears, step])
    steps = [e for e in events if e.node is step]
    if len(steps) != 1 or not runs_every_iteration_of(idx, loop, steps[0]):
        return None
    clears = [e for e in events if e.node is not step and train.clears_gradients_of(e.node, step)]
    periods = [period for clear in clears if (period := every_n(idx, loop, clear)) is not None]
    # Clears under one branch of one period: an `else:` or a second condition may clear the rest.
    if not clears or len(periods) != len(clears) or len({(id(p.guard), p.branch) for p in periods}) != 1:
        return None
    return PeriodicClear(clears[0].node, periods[0])


def named_condition(idx: Index, loop: cst.For | cst.While, test: cst.BaseExpression) -> cst.BaseExpression:
    """The condition behind a flag set in the loop body: `need_update = (i + 1) % n == 0`
    then `if need_update:` (timm); the test itself otherwise."""
    if not isinstance(test, cst.Name):
        return test
    for assign in idx.within(loop.body, cst.Assign):
        if any(isinstance(t.target, cst.Name) and t.target.value == test.value for t in assign.targets):
            return assign.value
    return test


def statement_in_block(idx: Index, node: cst.CSTNode, block: cst.CSTNode) -> cst.CSTNode | None:
    """The statement directly in `block` that holds `node`."""
    return next((a for a in (node, *idx.ancestors(node)) if idx.parent(a) is block), None)


def runs_every_iteration_of(idx: Index, loop: cst.For | cst.While, event: Event) -> bool:
    """`event` runs on every iteration of `loop`: directly in its body, under no condition,
    and after no `if ...: continue` of that body."""
    if event.loops or event.guards:
        return False
    top = statement_in_block(idx, event.path[0], loop.body)
    for stmt in getattr(loop.body, "body", ()):
        if stmt is top:
            return True
        if isinstance(stmt, cst.If) and _ends_with_continue(stmt.body):
            return False
    return top is not None


def _ends_with_continue(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = statements[-1] if statements else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(last.body[-1], cst.Continue)


def only_continues(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return (
        len(statements) == 1
        and isinstance(statements[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and any(
            isinstance(s, cst.Continue)
            for s in statements[0].body
        )
    )


def modulo_divisor(test: cst.BaseExpression) -> cst.BaseExpression | None:
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            if not (isinstance(node.right, cst.Integer) and node.right.value in ("1", "0")):
                return node.right
        stack.extend(children(node))
    return None


def micro_step_count(backward: Event) -> cst.BaseExpression | None:
    """N for a backward pass inside `for _ in range(N):` with N named like accumulation."""
    if len(backward.loops) != 1 or not isinstance(backward.loops[0], cst.For):
        return None
    iterable = backward.loops[0].iter
    if not (isinstance(iterable, cst.Call) and callee_name(iterable) == "range" and len(iterable.args) == 1):
        return None
    count = iterable.args[0].value
    tokens = name_tokens(last_name(count) or "")
    return count if any(t in ACCUMULATION_WORDS for t in tokens) else None


def self_scaling(backward: cst.CSTNode, imps: Imports) -> bool:
    """A framework's backward pass (`accelerator.backward(loss)`, DeepSpeed's
    `engine.backward(loss)`, fairseq's `optimizer.backward(loss)`, Lightning's
    `manual_backward`): it divides by the accumulation count itself, or accumulates its own way."""
    assert isinstance(backward, cst.Call)
    if callee_name(backward) != "backward":
        return True
    if (imps.callee(backward) or "") == "torch.autograd.backward":
        return False
    loss = backpropagated(backward, imps)
    return loss is not None and any(loss is arg.value for arg in backward.args)


def loss_divisors(idx: Index) -> set[str]:
    """Everything the file divides by: `x / N`, `x /= N`, `x.div(N)`, `torch.div(x, N)`. Not
    floor divisions: `i // N` counts steps or batches; a loss is never floor-divided."""
    found: set[str] = set()
    for op in idx.nodes(cst.BinaryOperation):
        if isinstance(op.operator, cst.Divide):
            found.update(spellings(op.right))
    for aug in idx.nodes(cst.AugAssign):
        if isinstance(aug.operator, cst.DivideAssign):
            found.update(spellings(aug.value))
    for call in idx.nodes(cst.Call):
        if callee_name(call) in ("div", "div_", "true_divide") and call.args:
            found.update(spellings(call.args[-1].value))
    return found


def spellings(expr: cst.BaseExpression) -> set[str]:
    name = dotted(expr)
    return {name, name.rsplit(".", 1)[-1]} if name else set()


def divides_loss(ctx: FileContext, idx: Index, funcs: Functions, acc: Accumulation, divisors: set[str]) -> bool:
    """The loss is divided (or multiplied by a factor) somewhere, the file divides by the
    accumulation count at all, or the gradients are scaled before the step (torchtune's
    `training.scale_grads(model, 1 / num_tokens)`): stay silent."""
    if spellings(acc.count) & divisors:
        return True
    if any(says_gradient_scaling(callee_name(call)) for call in idx.within(idx.scope(acc.step), cst.Call)):
        return True
    loss = backpropagated(acc.backward, imports(ctx))
    if loss is None:
        return True
    return scaled_value(idx, funcs, loss, idx.scope(acc.backward), depth=0)


def scaled_value(idx: Index, funcs: Functions, expr: cst.BaseExpression, scope: cst.CSTNode, depth: int) -> bool:
    if has_scaling(expr):
        return True
    if isinstance(expr, cst.Call):
        return calls_scaling_helper(idx, funcs, expr)
    if not isinstance(expr, cst.Name):
        return False
    values = values_assigned(idx, scope, expr.value)
    if values is None:
        return True  # a parameter or a loop variable: unknown origin
    return any(
        has_scaling(v)
        or (isinstance(v, cst.Call) and calls_scaling_helper(idx, funcs, v))
        or (isinstance(v, cst.Name) and depth < 3 and scaled_value(idx, funcs, v, scope, depth + 1))
        for v in values
    )


def has_scaling(expr: cst.CSTNode) -> bool:
    """A division anywhere in the expression, or a product at its top."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return (
            not isinstance(expr.left, (cst.Integer, cst.Float))
            and not isinstance(expr.right, (cst.Integer, cst.Float))
            or has_scaling(expr.left)
            or has_scaling(expr.right)
        )
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
            return True
        if isinstance(node, cst.Call) and callee_name(node) in ("div", "div_", "true_divide", "mul", "mul_"):
            return True
        stack.extend(children(node))
    return False


def calls_scaling_helper(idx: Index, funcs: Functions, call: cst.Call) -> bool:
    """A local function computes the value: silent if anything it runs divides."""
    for helper in funcs.resolve(call):
        for root in funcs.reachable(helper):
            if any(
                isinstance(op.operator, (cst.Divide, cst.FloorDivide)) for op in idx.within(root, cst.BinaryOperation)
            ):
                return True
    return False


def values_assigned(idx: Index, scope: cst.CSTNode, name: str) -> list[cst.BaseExpression] | None:
    """Every value assigned to `name` in `scope` (a scaling augmented assignment counts as a
    division); None when the name is never assigned there."""
    values: list[cst.BaseExpression] = []
    nodes: list[cst.Assign | cst.AugAssign | cst.AnnAssign] = [
        *idx.within(scope, cst.Assign),
        *idx.within(scope, cst.AugAssign),
        *idx.within(scope, cst.AnnAssign),
    ]
    for node in nodes:
        if idx.scope(node) is not scope:
            continue
        if isinstance(node, cst.AugAssign):
            if dotted(node.target) == name:
                if isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign)):
                    values.append(cst.BinaryOperation(cst.Name(name), cst.Divide(), node.value))
                else:
                    values.append(node.value)
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            if any(dotted(e) == name for e in elements) and node.value is not None:
                values.append(node.value)
    return values or None


def clears_between_passes(idx: Index, events: list[Event], step: Event, clears: set[int], backward: set[int]) -> list[Event]:
    """Clears (ids in `clears`) that run once per pass of the loop around the loop whose
    iterations a step accumulates over, when the step's condition reads a counter carried
    across those passes: each such clear throws away the gradients of the iterations that
    back-propagated since the last step (the last ones of the previous epoch).

    The step runs under an `if` in its innermost loop whose test reads a name bound before
    the outer loop and rebound in the inner one (`last_step = ni`, `global_step += 1`); a
    backward pass of that inner loop runs outside the `if`; the clear runs in the outer
    loop, outside the inner one and under no condition of its own. A condition on the inner
    loop's own index restarts each pass and is left alone: its period ends with the pass."""
    if len(step.loops) < 2:
        return []
    outer, inner = step.loops[-2], step.loops[-1]
    guard = next(
        (g for g, in_body in reversed(step.guards) if in_body and idx.contains(inner.body, g) and _carried_counter(idx, outer, inner, g.test)),
        None,
    )
    if guard is None:
        return []
    if not any(
        id(e.node) in backward and e.loops == step.loops and all(g is not guard for g, _ in e.guards) for e in events
    ):
        return []
    outside = {(id(g), b) for g, b in step.guards}
    return [
        e
        for e in events
        if id(e.node) in clears
        and e.loops == step.loops[:-1]
        and all((id(g), b) in outside for g, b in e.guards)
    ]


def _carried_counter(idx: Index, outer: cst.For | cst.While, inner: cst.For | cst.While, test: cst.BaseExpression) -> bool:
    """The test reads a name bound before `outer` starts and rebound in `inner`'s body."""
    scope = idx.scope(outer)
    read = {n.value for n in idx.within(named_condition(idx, inner, test), cst.Name)}
    rebound: set[str] = set()
    before: set[str] = set()
    nodes: list[cst.Assign | cst.AugAssign] = [*idx.within(scope, cst.Assign), *idx.within(scope, cst.AugAssign)]
    for node in nodes:
        if idx.scope(node) is not scope:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        names = {n for t in targets if (n := dotted(t)) is not None}
        if idx.contains(inner.body, node):
            rebound |= names
        elif idx.order(node) < idx.order(outer):
            before |= names
    return bool(read & rebound & before)

