from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an

# Names of a micro-step count: `range(gradient_accumulation_steps)`, `range(accum_iter)`.
_ACCUMULATION_WORDS = frozenset({"accum", "accumulate", "accumulation", "accumulations", "micro", "acc"})


@dataclass(frozen=True)
class _Accumulation:
    """Backward every iteration, a step every `count` iterations."""

    backward: cst.Call
    step: cst.Call
    count: cst.BaseExpression


class UnscaledAccumulationLoss(Rule):
    """
    ## What it does
    Finds gradient accumulation (a backward pass every iteration, an optimizer step every
    N iterations: under `if (i + 1) % N == 0:`, or after a `for _ in range(accum_steps):`
    micro-step loop) where the back-propagated loss is not divided by N (nor by the
    accumulation count) anywhere between its computation and `backward()`.

    ## Why is this bad?
    Gradients add up over the N backward passes: without dividing the loss by N, each step
    applies the sum of N batch gradients instead of their mean, an N-times larger update.
    The learning rate tuned for one batch is then N times too large, and changing N changes
    the training dynamics instead of only the effective batch size.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```
    `accelerator.backward()` inside `accelerator.accumulate(model)` (and DeepSpeed's
    `engine.backward`) divide by the accumulation count for you.

    ## Fix safety
    The fix back-propagates `loss / N`. It is unsafe: it changes the size of every update,
    which is the point, but a learning rate tuned against the summed gradients must be
    re-tuned.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation
    """

    CODE = "TL015"
    NAME = "unscaled-accumulation-loss"
    SUMMARY = "Gradient accumulation without dividing the loss by the number of steps"
    SEVERITY = Severity.WARNING
    TRIGGERS = (("backward",), ("step(",), ("%", "acc", "micro"))
    CONFIRMED_BY = ()

    VALID = [
        # The loss divided where it is computed.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Divided in place, conditionally (the old Hugging Face scripts).
        """
        for step, batch in enumerate(train_dataloader):
            loss = model(**batch)[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                model.zero_grad()
        """,
        # Divided inside the backward call, with a GradScaler.
        """
        for i, batch in enumerate(loader):
            with torch.autocast("cuda"):
                loss = model(batch)
            scaler.scale(loss / accum).backward()
            if (i + 1) % accum == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        """,
        # nanoGPT: micro-steps with a divided loss.
        """
        while True:
            for micro_step in range(gradient_accumulation_steps):
                logits, loss = model(X, Y)
                loss = loss / gradient_accumulation_steps
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        """,
        # accelerate scales the loss in accumulate().
        """
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # accelerator.backward divides by its gradient_accumulation_steps.
        """
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if step % args.gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A framework's own backward (fairseq's optimizer, DeepSpeed's engine) handles accumulation.
        """
        for i, sample in enumerate(itr):
            loss = criterion(model, sample)
            self.optimizer.backward(loss)
            model_engine.backward(loss)
            if (i + 1) % update_freq == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
        """,
        # WGAN: the generator trains every n_critic iterations with its own backward.
        """
        for i, (imgs, _) in enumerate(dataloader):
            optimizer_D.zero_grad()
            loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
            loss_D.backward()
            optimizer_D.step()
            if i % n_critic == 0:
                optimizer_G.zero_grad()
                loss_G = -torch.mean(discriminator(generator(z)))
                loss_G.backward()
                optimizer_G.step()
        """,
        # apex's scale_loss context: the scaled loss comes from the `with` target.
        """
        for i, (video, caption) in enumerate(data_loader):
            loss = model(video, caption)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A helper computes the already divided loss.
        """
        def compute_loss(model, batch):
            return model(batch).loss / ACCUM

        for i, batch in enumerate(loader):
            loss = compute_loss(model, batch)
            loss.backward()
            if (i + 1) % ACCUM == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A backward pass only on the stepping iterations (a periodic auxiliary update).
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if i % n_aux == 0:
                aux = aux_loss(model)
                aux.backward()
                aux_optimizer.step()
                aux_optimizer.zero_grad()
        """,
        # Step every iteration, logging every N.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if i % log_every == 0:
                print(loss.item())
        """,
        # A micro-step loop over chunks whose losses are normalised by the token count.
        """
        for batch in loader:
            for chunk in batch.split(micro_batch):
                loss = model(chunk).sum() / n_tokens
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # Scaled by multiplication with an inverse count.
        """
        for i, batch in enumerate(loader):
            loss = model(batch) * inv_accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    ]

    INVALID = [
        Example(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()  # expect: TL015
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            fixed="""
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                (loss / accum_steps).backward()  # expect: TL015
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        # A GradScaler and an attribute count.
        Example(
            """
            for step, batch in enumerate(loader):
                with torch.autocast("cuda"):
                    loss = model(**batch).loss
                scaler.scale(loss).backward()  # expect: TL015
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
            fixed="""
            for step, batch in enumerate(loader):
                with torch.autocast("cuda"):
                    loss = model(**batch).loss
                scaler.scale(loss / args.gradient_accumulation_steps).backward()  # expect: TL015
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
        ),
        # A literal count, and a loss summed from parts.
        """
        for i, (x, y) in enumerate(loader):
            out = model(x)
            loss = ce(out, y) + 0.1 * reg(model)
            loss.backward()  # expect: TL015
            if i % 4 == 3:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Micro-steps named like accumulation, without dividing.
        """
        for it in range(max_iters):
            for micro_step in range(grad_accum_steps):
                x, y = get_batch()
                logits, loss = model(x, y)
                loss.backward()  # expect: TL015
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        """,
        # Skip the step with `continue` until N batches are in.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()  # expect: TL015
            if (i + 1) % accumulation_steps != 0:
                continue
            optimizer.step()
            optimizer.zero_grad()
        """,
        # The step condition kept in a flag (timm's need_update), without dividing.
        """
        for batch_idx, (x, y) in enumerate(loader):
            last_batch = batch_idx == last_batch_idx
            need_update = last_batch or (batch_idx + 1) % accum_steps == 0
            loss = loss_fn(model(x), y)
            loss.backward()  # expect: TL015
            if need_update:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # A global step counter and a step helper.
        """
        class Trainer:
            def optimizer_step(self):
                self.optimizer.step()
                self.optimizer.zero_grad()

            def train(self):
                for batch in self.loader:
                    loss = self.model(batch)
                    loss.backward()  # expect: TL015
                    self.global_step += 1
                    if self.global_step % self.accum == 0:
                        self.optimizer_step()
        """,
        # torch.autograd.backward.
        """
        import torch
        for i, batch in enumerate(loader):
            loss = model(batch)
            torch.autograd.backward(loss)  # expect: TL015
            if (i + 1) % n_accum == 0 or i + 1 == len(loader):
                opt.step()
                opt.zero_grad()
        """,
        # A mean over the batch is not a mean over the accumulated batches.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y).mean()
            loss.backward()  # expect: TL015
            if ((i + 1) % update_freq) == 0:
                clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        """,
        # DDP: no gradient sync on the accumulating micro-steps, the last one steps.
        """
        for i, (x, y) in enumerate(loader):
            loss = criterion(ddp_model(x), y)
            if (i + 1) % accum != 0:
                with ddp_model.no_sync():
                    loss.backward()  # expect: TL015
            else:
                loss.backward()  # expect: TL015
                optimizer.step()
                optimizer.zero_grad()
        """,
        # Backward through a direct chain, in a while loop.
        """
        it = 0
        while it < iters:
            criterion(model(next(data)), target).backward()  # expect: TL015
            it += 1
            if it % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        if not train.steps or not train.backward or _uses_framework_accumulation(ctx):
            return
        idx = an.index(ctx)
        flow = an.flow(ctx)
        funcs = an.functions(ctx)
        divisors = _divisors(idx)
        reported: set[int] = set()
        loops: list[cst.For | cst.While] = [*idx.nodes(cst.For), *idx.nodes(cst.While)]
        interesting = [*train.backward, *train.steps]
        for loop in loops:
            events = flow.events(loop.body, interesting)
            for acc in _accumulations(idx, an.imports(ctx), train, events, loop):
                if id(acc.backward) in reported or _scaled(ctx, idx, funcs, acc, divisors):
                    continue
                reported.add(id(acc.backward))
                yield self._report(ctx, acc)

    def _report(self, ctx: FileContext, acc: _Accumulation) -> Report:
        code = ctx.module.code_for_node
        count = code(acc.count)
        loss = an.backpropagated(acc.backward, an.imports(ctx))
        message = (
            f"`{code(acc.backward)}` runs every iteration but `{code(acc.step)}` only once every `{count}`, "
            f"and the loss is not divided by `{count}`: each step applies the sum of `{count}` gradients; "
            f"back-propagate the loss divided by `{count}`"
        )
        if loss is None:
            return self.report(acc.backward, message)
        divided = cst.BinaryOperation(left=loss, operator=cst.Divide(), right=_atom(acc.count))
        if loss is an.receiver(acc.backward):
            divided = divided.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        fix = FixSpec(f"back-propagate `{code(loss)} / {count}`", ((loss, divided),), safe=False)
        return self.report(acc.backward, message, fix)


def _uses_framework_accumulation(ctx: FileContext) -> bool:
    """`accelerator.accumulate(model)` (or Lightning's `accumulate_grad_batches`) scale for you."""
    return "accumulate(" in ctx.source or "accumulate_grad_batches" in ctx.source


def _accumulations(
    idx: an.Index, imps: an.Imports, train: an.Training, events: list[an.Event], loop: cst.For | cst.While
) -> Iterator[_Accumulation]:
    steps = [e for e in events if id(e.node) in train.stepped]
    if not steps:
        return
    periods = [_every_n(idx, loop, step) for step in steps]
    backwards = [e for e in events if id(e.node) not in train.stepped and not _self_scaling(e.node, imps)]
    if all(p is not None for p in periods):
        # Branch of each `if ... % N` that holds a step: a backward pass elsewhere runs every iteration.
        stepping = {id(p.guard): p.branch for p in periods if p is not None and p.guard is not None}
        count = periods[0].count  # type: ignore[union-attr]
        every_iteration = [b for b in backwards if not b.loops and _runs_every_iteration(b, stepping, backwards)]
        for backward in every_iteration:
            yield _Accumulation(backward.node, steps[0].node, count)  # type: ignore[arg-type]
        return
    if any(step.loops for step in steps):
        return
    for backward in backwards:
        micro = _micro_step_count(backward)
        if micro is not None:
            yield _Accumulation(backward.node, steps[0].node, micro)  # type: ignore[arg-type]


def _runs_every_iteration(backward: an.Event, stepping: dict[int, bool], backwards: list[an.Event]) -> bool:
    """Not under the step's `if ... % N`, or under it with a backward pass in each branch
    (`with model.no_sync(): loss.backward()` on accumulating iterations, then the last one)."""
    return all(
        any(any(s is stmt and b != branch for s, b in other.guards) for other in backwards)
        for stmt, branch in backward.guards
        if id(stmt) in stepping
    )


@dataclass(frozen=True)
class _Period:
    """A step that runs every `count` iterations, under `guard` (None: after `if ...: continue`)."""

    count: cst.BaseExpression
    guard: cst.If | None
    branch: bool


def _every_n(idx: an.Index, loop: cst.For | cst.While, step: an.Event) -> _Period | None:
    """N for a step under `if ... % N ...:` or after `if ... % N ...: continue` in this loop."""
    if step.loops:
        return None
    for stmt, branch in step.guards:
        count = _modulo_divisor(_named_condition(idx, loop, stmt.test))
        if count is not None:
            return _Period(count, stmt, branch)
    top = _statement_in_block(idx, step.path[0], loop.body)
    body = getattr(loop.body, "body", ())
    for stmt in body:
        if stmt is top:
            break
        if isinstance(stmt, cst.If) and stmt.orelse is None and _only_continues(stmt.body):
            count = _modulo_divisor(stmt.test)
            if count is not None:
                return _Period(count, None, True)
    return None


def _named_condition(idx: an.Index, loop: cst.For | cst.While, test: cst.BaseExpression) -> cst.BaseExpression:
    """The condition behind a flag set in the loop body: `need_update = (i + 1) % n == 0`
    then `if need_update:` (timm); the test itself otherwise."""
    if not isinstance(test, cst.Name):
        return test
    for assign in idx.within(loop.body, cst.Assign):
        if any(isinstance(t.target, cst.Name) and t.target.value == test.value for t in assign.targets):
            return assign.value
    return test


def _statement_in_block(idx: an.Index, node: cst.CSTNode, block: cst.CSTNode) -> cst.CSTNode | None:
    """The statement directly in `block` that holds `node`."""
    return next((a for a in (node, *idx.ancestors(node)) if idx.parent(a) is block), None)


def _only_continues(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return (
        len(statements) == 1
        and isinstance(statements[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and any(
            isinstance(s, cst.Continue)
            for s in statements[0].body
        )
    )


def _modulo_divisor(test: cst.BaseExpression) -> cst.BaseExpression | None:
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            if not (isinstance(node.right, cst.Integer) and node.right.value in ("1", "0")):
                return node.right
        stack.extend(an.children(node))
    return None


def _micro_step_count(backward: an.Event) -> cst.BaseExpression | None:
    """N for a backward pass inside `for _ in range(N):` with N named like accumulation."""
    if len(backward.loops) != 1 or not isinstance(backward.loops[0], cst.For):
        return None
    iterable = backward.loops[0].iter
    if not (isinstance(iterable, cst.Call) and an.callee_name(iterable) == "range" and len(iterable.args) == 1):
        return None
    count = iterable.args[0].value
    tokens = an.name_tokens(an.last_name(count) or "")
    return count if any(t in _ACCUMULATION_WORDS for t in tokens) else None


def _self_scaling(backward: cst.CSTNode, imps: an.Imports) -> bool:
    """A framework's backward pass (`accelerator.backward(loss)`, DeepSpeed's
    `engine.backward(loss)`, fairseq's `optimizer.backward(loss)`, Lightning's
    `manual_backward`): it divides by the accumulation count itself, or accumulates its own way."""
    assert isinstance(backward, cst.Call)
    if an.callee_name(backward) != "backward":
        return True
    if (imps.callee(backward) or "") == "torch.autograd.backward":
        return False
    loss = an.backpropagated(backward, imps)
    return loss is not None and any(loss is arg.value for arg in backward.args)


def _atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Integer, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _divisors(idx: an.Index) -> set[str]:
    """Everything the file divides by: `x / N`, `x /= N`, `x.div(N)`, `torch.div(x, N)`."""
    found: set[str] = set()
    for op in idx.nodes(cst.BinaryOperation):
        if isinstance(op.operator, (cst.Divide, cst.FloorDivide)):
            found.update(_spellings(op.right))
    for aug in idx.nodes(cst.AugAssign):
        if isinstance(aug.operator, cst.DivideAssign):
            found.update(_spellings(aug.value))
    for call in idx.nodes(cst.Call):
        if an.callee_name(call) in ("div", "div_", "true_divide") and call.args:
            found.update(_spellings(call.args[-1].value))
    return found


def _spellings(expr: cst.BaseExpression) -> set[str]:
    name = an.dotted(expr)
    return {name, name.rsplit(".", 1)[-1]} if name else set()


def _scaled(ctx: FileContext, idx: an.Index, funcs: an.Functions, acc: _Accumulation, divisors: set[str]) -> bool:
    """The loss is divided (or multiplied by a factor) somewhere, or the file divides by the
    accumulation count at all: stay silent."""
    if _spellings(acc.count) & divisors:
        return True
    loss = an.backpropagated(acc.backward, an.imports(ctx))
    if loss is None:
        return True
    return _scaled_value(idx, funcs, loss, idx.scope(acc.backward), depth=0)


def _scaled_value(idx: an.Index, funcs: an.Functions, expr: cst.BaseExpression, scope: cst.CSTNode, depth: int) -> bool:
    if _has_scaling(expr):
        return True
    if isinstance(expr, cst.Call):
        return _calls_scaling_helper(idx, funcs, expr)
    if not isinstance(expr, cst.Name):
        return False
    values = _values_assigned(idx, scope, expr.value)
    if values is None:
        return True  # a parameter or a loop variable: unknown origin
    return any(
        _has_scaling(v)
        or (isinstance(v, cst.Call) and _calls_scaling_helper(idx, funcs, v))
        or (isinstance(v, cst.Name) and depth < 3 and _scaled_value(idx, funcs, v, scope, depth + 1))
        for v in values
    )


def _has_scaling(expr: cst.CSTNode) -> bool:
    """A division anywhere in the expression, or a product at its top."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return (
            not isinstance(expr.left, (cst.Integer, cst.Float))
            and not isinstance(expr.right, (cst.Integer, cst.Float))
            or _has_scaling(expr.left)
            or _has_scaling(expr.right)
        )
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
            return True
        if isinstance(node, cst.Call) and an.callee_name(node) in ("div", "div_", "true_divide", "mul", "mul_"):
            return True
        stack.extend(an.children(node))
    return False


def _calls_scaling_helper(idx: an.Index, funcs: an.Functions, call: cst.Call) -> bool:
    """A local function computes the value: silent if anything it runs divides."""
    for helper in funcs.resolve(call):
        for root in funcs.reachable(helper):
            if any(
                isinstance(op.operator, (cst.Divide, cst.FloorDivide)) for op in idx.within(root, cst.BinaryOperation)
            ):
                return True
    return False


def _values_assigned(idx: an.Index, scope: cst.CSTNode, name: str) -> list[cst.BaseExpression] | None:
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
            if an.dotted(node.target) == name:
                if isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign)):
                    values.append(cst.BinaryOperation(cst.Name(name), cst.Divide(), node.value))
                else:
                    values.append(node.value)
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            if any(an.dotted(e) == name for e in elements) and node.value is not None:
                values.append(node.value)
    return values or None
