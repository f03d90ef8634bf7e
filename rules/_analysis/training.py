"""Training events: the backward passes, optimizer steps and gradient clears of a module,
which optimizer each step steps and which model it optimizes, and the tensor a backward
call back-propagates, and the epoch loops that run a training pass each iteration.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.flow import enclosing_loops, loops_run_by
from torchlint.rules._analysis.calls import callee_name, is_false, method_name, positional, receiver
from torchlint.rules._analysis.index import Index, N, index
from torchlint.rules._analysis.names import Imports, dotted, imports, last_name
from torchlint.rules._vocabulary import (
    CLEAR_HELPER,
    FRAMEWORK_BACKWARD_WORDS,
    is_optimizer_class,
    DEVICE_LOADER_METHODS,
    ITERABLE_WRAPPERS,
    name_says_optimizer,
    name_tokens,
    OPTIMIZER_FACTORY,
    says_epoch,
    says_not_optimizer,
)


@dataclass
class Training:
    """Where a module runs backward passes, optimizer steps and gradient clears."""

    idx: Index
    backward: list[cst.Call]
    steps: list[cst.Call]
    clears: list[cst.CSTNode]
    # For each step call: the expression of the optimizer it steps.
    stepped: dict[int, cst.BaseExpression]
    # Optimizer name -> the model whose parameters it was built from, where known.
    models: dict[str, str | None]

    def optimizer_of(self, step: cst.Call) -> cst.BaseExpression:
        return self.stepped[id(step)]

    def clears_gradients_of(
        self, clear: cst.CSTNode, step: cst.Call, cleared_as: cst.BaseExpression | None = None
    ) -> bool:
        """Whether `clear` may clear the gradients that `step` applies; `cleared_as` is the
        clear's receiver as the step's code spells it (a parameter bound to an optimizer).

        Only `X.zero_grad()` of something that is plainly another network's optimizer, or
        another optimizer's model, is ruled out (a GAN clearing one side only)."""
        if not (isinstance(clear, cst.Call) and method_name(clear) == "zero_grad"):
            return True
        owner = cleared_as if cleared_as is not None else receiver(clear)
        cleared = dotted(owner) if owner is not None else None
        stepped = dotted(self.optimizer_of(step))
        if cleared is None or stepped is None or cleared == stepped:
            return True
        others = {dotted(e) for e in self.stepped.values()} - {stepped}
        if cleared in others:
            return False
        own_model = self.models.get(stepped)
        other_models = {self.models.get(o) for o in others if o is not None} - {None}
        return not (own_model is not None and cleared != own_model and cleared in other_models)

    def loops_running(self, kind: list[N], funcs: Functions) -> dict[int, list[cst.For | cst.While]]:
        """Each event of `kind`, by id, to the loops whose body runs it (inside the body or
        in local functions it reaches), in source order: one pass over the loops."""
        running: dict[int, list[cst.For | cst.While]] = defaultdict(list)
        for loop in self.idx.nodes(cst.For, cst.While):
            for event in self.events_in(kind, loop.body, funcs):
                running[id(event)].append(loop)
        return running

    def training_loops(self, funcs: Functions) -> list[cst.For | cst.While]:
        """Loops whose body runs a backward pass and an optimizer step (there or in local
        functions it reaches), in source order."""
        return [
            loop
            for loop in self.idx.nodes(cst.For, cst.While)
            if self.events_in(self.backward, loop.body, funcs) and self.events_in(self.steps, loop.body, funcs)
        ]

    def events_in(self, kind: list[N], scope: cst.CSTNode, funcs: Functions) -> list[N]:
        """Events of `kind` that run when `scope` runs: inside it or in local functions it reaches."""
        # The events inside a root are found by bisection over their source order (a scan
        # of all events per root made large modules quadratic).
        orders, positions = self.idx.sorted_orders(kind)
        found: dict[int, N] = {}
        for root in (scope, *(f for f in funcs.reachable(scope) if f is not scope)):
            lo, hi = self.idx.order(root), self.idx.end(root)
            for position in sorted(positions[bisect_left(orders, lo) : bisect_right(orders, hi)]):
                event = kind[position]
                found[id(event)] = event
        return list(found.values())


def training(ctx: FileContext) -> Training:
    return ctx.analysis(_build_training)


def _bound_optimizers(idx: Index, imps: Imports) -> dict[str, str | None]:
    """Dotted names assigned an optimizer: `torch.optim` (or other known) classes,
    optimizer factories, and `*.prepare(...)` / `deepspeed.initialize(...)` results; each
    mapped to the model whose `.parameters()` it optimizes, when the code shows it."""
    bound: dict[str, str | None] = {}
    for loop in idx.nodes(cst.For):
        # `for opt in optimizers: opt.step()`: each item of a collection of optimizers.
        iterated = last_name(loop.iter)
        if isinstance(loop.target, cst.Name) and iterated is not None and name_says_optimizer(iterated):
            bound[loop.target.value] = None
    for assign in idx.nodes(cst.Assign):
        value = assign.value
        if not isinstance(value, cst.Call):
            continue
        callee = imps.callee(value) or ""
        short = callee.rsplit(".", 1)[-1]
        unpacked = short in ("prepare", "initialize") and (
            short == "prepare" or callee.startswith("deepspeed")
        )
        from_class = (
            callee.startswith("torch.optim.")
            and "lr_scheduler" not in callee
            and "swa_utils" not in callee  # SWALR is a schedule, AveragedModel a model
            and short[:1].isupper()
        ) or is_optimizer_class(short)
        is_optimizer = from_class or OPTIMIZER_FACTORY.match(short) is not None
        if not (is_optimizer or unpacked):
            continue
        for target in assign.targets:
            several = isinstance(target.target, (cst.Tuple, cst.List))
            elements = (
                [e.value for e in target.target.elements]
                if isinstance(target.target, (cst.Tuple, cst.List))
                else [target.target]
            )
            for element in elements:
                name = dotted(element)
                # What a factory returns, or one of several results, is what its name says: a
                # `scheduler` from `init_optimizer(model)` is no optimizer.
                if name and (
                    (from_class and not several) or not says_not_optimizer(name_tokens(last_name(element) or ""))
                ):
                    bound[name] = _parameters_owner(value) if is_optimizer else None
    return bound


def _parameters_owner(call: cst.Call) -> str | None:
    """`model` for `Adam(model.parameters(), ...)`."""
    args = positional(call)
    first_arg = args[0].value if args else None
    if isinstance(first_arg, cst.Call) and method_name(first_arg) in ("parameters", "named_parameters"):
        owner = receiver(first_arg)
        return dotted(owner) if owner is not None else None
    return None


def _is_scaler(expr: cst.BaseExpression, scalers: set[str]) -> bool:
    name = last_name(expr) or ""
    return "scaler" in name.lower() or dotted(expr) in scalers


def _build_training(ctx: FileContext) -> Training:
    idx = index(ctx)
    imps = imports(ctx)
    optimizers = _bound_optimizers(idx, imps)
    scalers = {
        name
        for assign in idx.nodes(cst.Assign)
        if isinstance(assign.value, cst.Call) and (imps.callee(assign.value) or "").endswith("GradScaler")
        for target in assign.targets
        if (name := dotted(target.target))
    }
    calls = idx.nodes(cst.Call)
    backward = [call for call in calls if (method_name(call) or callee_name(call)) in ("backward", "manual_backward")]
    # A call of the module's own `backward()` wrapper (`self.backward(loss)`) is not itself
    # the backward pass: the one in the wrapper's body is, in its place among the clears.
    funcs = functions(ctx)
    wrappers = {id(call) for call in backward for f in funcs.resolve(call) if _backpropagates_itself(idx, f)}
    backward = [call for call in backward if id(call) not in wrappers]
    engines = _engines(backward)
    steps: list[cst.Call] = []
    stepped: dict[int, cst.BaseExpression] = {}
    clears: list[cst.CSTNode] = []
    for call in calls:
        name = method_name(call)
        owner = receiver(call)
        if name == "step" and owner is not None:
            owner_name = dotted(owner)
            if _is_scaler(owner, scalers):
                args = positional(call)
                if args:
                    steps.append(call)
                    stepped[id(call)] = args[0].value
            elif owner_name not in engines and (
                name_says_optimizer(last_name(owner)) or (owner_name is not None and owner_name in optimizers)
            ):
                steps.append(call)
                stepped[id(call)] = owner
        elif (imps.callee(call) or "").startswith("torch_xla.") and callee_name(call) == "optimizer_step" and call.args:
            # PyTorch/XLA's `xm.optimizer_step(optimizer)`: reduces the gradients, then steps.
            steps.append(call)
            stepped[id(call)] = call.args[0].value
        elif name == "zero_grad" or CLEAR_HELPER.search(callee_name(call) or ""):
            clears.append(call)
        elif name in ("zero_", "fill_", "mul_", "detach_") and owner is not None and _is_grad_attr(owner):
            clears.append(call)
    for assign in idx.nodes(cst.Assign):
        if any(_is_grad_attr(t.target) for t in assign.targets):
            clears.append(assign)
    for delete in idx.nodes(cst.Del):
        if _is_grad_attr(delete.target):
            clears.append(delete)
    clears.sort(key=idx.order)
    return Training(idx, backward, steps, clears, stepped, optimizers)


def _backpropagates_itself(idx: Index, func: cst.FunctionDef) -> bool:
    return any(
        (method_name(call) or callee_name(call)) in ("backward", "manual_backward") and idx.scope(call) is func
        for call in idx.within(func, cst.Call)
    )


def _engines(backward: list[cst.Call]) -> set[str]:
    """`engine` for `engine.backward(loss)`: DeepSpeed-style engines, whose `step()` clears
    gradients, steps the optimizer and then the schedule given to the engine."""
    return {
        name
        for call in backward
        if method_name(call) == "backward" and call.args and (owner := receiver(call)) is not None
        if (name := dotted(owner))
    }


def engine_steps(ctx: FileContext) -> list[cst.Call]:
    """`engine.step()` of each engine that back-propagates (`engine.backward(loss)`)."""
    train = training(ctx)
    engines = _engines(train.backward)
    if not engines:
        return []
    return [
        call
        for call in train.idx.nodes(cst.Call)
        if method_name(call) == "step" and (owner := receiver(call)) is not None and dotted(owner) in engines
    ]


def _is_grad_attr(expr: cst.BaseExpression) -> bool:
    """`p.grad`, `p.grad.data`: the gradient of a tensor."""
    while isinstance(expr, cst.Attribute):
        if expr.attr.value == "grad":
            return True
        expr = expr.value
    return False


def unwrap_iterable(expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
    """`loader` for `enumerate(tqdm(loader))`, and for PyTorch/XLA's device loaders
    (`pl.ParallelLoader(loader, [device]).per_device_loader(device)`, `pl.MpDeviceLoader(loader, device)`)."""
    while isinstance(expr, cst.Call) and depth < 4:
        if method_name(expr) in DEVICE_LOADER_METHODS and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif callee_name(expr) in ITERABLE_WRAPPERS and expr.args:
            expr = expr.args[0].value
        else:
            break
        depth += 1
    return expr


def backpropagated(call: cst.Call, imps: Imports) -> cst.BaseExpression | None:
    """The tensor a backward call back-propagates: `loss` in `loss.backward()`,
    `loss.backward(retain_graph=True)`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`, `model_engine.backward(loss)`, `optimizer.backward(loss)`
    (fairseq), `self.manual_backward(loss)`, `torch.autograd.backward(loss)`; `t` (not the
    gradient) in `t.backward(grad)`."""
    owner = receiver(call)
    args = positional(call)
    framework = (imps.callee(call) or "") == "torch.autograd.backward" or method_name(call) == "manual_backward"
    if owner is not None and not framework:
        owner_name = last_name(owner) or ""
        framework = name_says_optimizer(owner_name) or any(
            t in FRAMEWORK_BACKWARD_WORDS for t in name_tokens(owner_name)
        )
    if framework or owner is None:
        return args[0].value if args else None
    if isinstance(owner, cst.Call) and method_name(owner) == "scale" and positional(owner):
        return positional(owner)[0].value
    return owner


def graph_replays(ctx: FileContext) -> list[cst.Call]:
    """`g.replay()` of each CUDA graph `g` whose capture (`with torch.cuda.graph(g):`) runs a
    backward pass: every replay runs that backward again and writes fresh gradients."""
    return ctx.analysis(_build_graph_replays)


def _build_graph_replays(ctx: FileContext) -> list[cst.Call]:
    if "replay" not in ctx.source:
        return []
    idx = index(ctx)
    imps = imports(ctx)
    backward = training(ctx).backward
    captured: set[str] = set()
    for block in idx.nodes(cst.With):
        if not idx.holds_any(block.body, backward):
            continue
        for item in block.items:
            call = item.item
            if isinstance(call, cst.Call) and (imps.callee(call) or "").endswith("cuda.graph") and call.args:
                name = dotted(call.args[0].value)
                if name is not None:
                    captured.add(name)
    return [
        call
        for call in idx.nodes(cst.Call)
        if method_name(call) == "replay" and dotted(receiver(call) or cst.Name("_")) in captured
    ]


# Framework classes built with the function they run once per batch: `Engine(update)`.
ITERATION_ENGINES = {"ignite.engine.Engine": "ignite's `Engine`", "ignite.engine.engine.Engine": "ignite's `Engine`"}


@dataclass(frozen=True)
class FrameworkIteration:
    """A function that a framework runs once per training iteration, and who runs it."""

    func: cst.FunctionDef
    runner: str  # "Lightning", "ignite's `Engine`"


def framework_iterations(ctx: FileContext) -> list[FrameworkIteration]:
    """Functions that a framework runs once per training iteration, so that their body is a
    loop body though no loop is in sight: a LightningModule's `training_step` under manual
    optimization (`self.automatic_optimization = False` in its class), and the local
    function an ignite `Engine(update)` is built with."""
    return ctx.analysis(_build_framework_iterations)


def _build_framework_iterations(ctx: FileContext) -> list[FrameworkIteration]:
    idx = index(ctx)
    funcs = functions(ctx)
    found: list[FrameworkIteration] = []
    if "ignite" in ctx.source:
        imps = imports(ctx)
        for call in idx.nodes(cst.Call):
            runner = ITERATION_ENGINES.get(imps.callee(call) or "")
            args = positional(call)
            if runner is not None and args and isinstance(args[0].value, cst.Name):
                found.extend(FrameworkIteration(f, runner) for f in funcs.visible(args[0].value.value, call))
    if "automatic_optimization" not in ctx.source:
        return found
    manual: set[int] = set()
    for assign in idx.nodes(cst.Assign):
        if dotted(assign.targets[0].target) == "self.automatic_optimization" and is_false(assign.value):
            owner = idx.enclosing(assign, (cst.ClassDef,))
            if owner is not None:
                manual.add(id(owner))
    return found + [
        FrameworkIteration(func, "Lightning")
        for func in funcs.by_name.get("training_step", [])
        if (owner := funcs.enclosing_class(func)) is not None and id(owner) in manual
    ]


def counts_epochs(idx: Index, funcs: Functions, loop: cst.For | cst.While) -> bool:
    """A loop that says it runs epochs: `for epoch in ...`, `while epoch < n`, a body that
    counts them (`while step < max_steps: epoch += 1`), or a body that calls a local function
    named like one epoch (`while True: self._train_epoch()`)."""
    if isinstance(loop, cst.For):
        if isinstance(loop.target, cst.Name) and says_epoch(loop.target.value):
            return True
    elif any(says_epoch(dotted(n) if isinstance(n, cst.Attribute) else n.value) for n in _names_in(idx, loop.test)):
        return True
    home = idx.scope(loop)
    if any(
        isinstance(count.target, cst.Name)
        and says_epoch(count.target.value)
        and enclosing_loops(idx, count)[:1] == [loop]
        for count in idx.within(loop.body, cst.AugAssign)
    ):
        return True
    return any(
        idx.scope(call) is home and any(says_epoch(f.name.value) for f in funcs.resolve(call))
        for call in idx.within(loop.body, cst.Call)
    )


def _names_in(idx: Index, expr: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
    return [n for n in idx.within(expr, cst.Name, cst.Attribute) if not isinstance(idx.parent(n), cst.Attribute)]


def epoch_loops(ctx: FileContext, avoid: cst.CSTNode | None = None) -> list[cst.For | cst.While]:
    """The outermost loops that count epochs (`counts_epochs`) and run, each iteration, an
    inner loop (over batches) that back-propagates, there or through local functions. Loops
    that run `avoid` (an object built anew each epoch) are left out."""
    idx, funcs, train = index(ctx), functions(ctx), training(ctx)
    running = train.loops_running(train.backward, funcs)
    found: dict[int, cst.For | cst.While] = {}
    for backward in train.backward:
        loops = running.get(id(backward), [])
        for loop in loops:
            if id(loop) in found or not counts_epochs(idx, funcs, loop):
                continue
            inner = {id(other) for other in loops_run_by(idx, funcs, loop.body)}
            if any(id(other) in inner and not counts_epochs(idx, funcs, other) for other in loops) and not (
                avoid is not None and any(idx.contains(root, avoid) for root in funcs.reachable(loop.body))
            ):
                found[id(loop)] = loop
    return [
        loop for loop in found.values() if not any(other is not loop and idx.contains(other, loop) for other in found.values())
    ]
