"""Iterations: the code that one iteration of a loop runs. The loop body and the local
functions it calls, transitively (and the closures that chosen calls run, such as the one
`optimizer.step(closure)` runs), each with the caller's expressions bound to its
parameters as the loop's own function spells them; the order of two nodes within one
iteration; and whether the iteration is the last (a `break` of the loop or a `return`
follows a node: there is no next iteration).

Training iterations: the loops that run a backward pass and an optimizer step once per
iteration (through local helpers too), the innermost such loop of each step, and what
gives each iteration fresh gradients: a clear that runs with the step on the same path, a
project helper that clears, a context that starts without gradients, or an optimizer
built anew. The events themselves are `training`'s, their order and paths `flow`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Mapping

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import bind_arguments, parameter_names, receiver
from torchlint.rules._analysis.flow import enclosing_loops, flow, loops_run_by, never_runs
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import dotted, imports, last_name
from torchlint.rules._analysis.training import training
from torchlint.rules._vocabulary import name_says_optimizer

# How many calls deep an iteration's code is followed.
MAX_DEPTH = 5


@dataclass(frozen=True)
class Part:
    """Code that one iteration runs: the loop body itself or a local function it calls."""

    root: cst.CSTNode
    # The calls that lead here from the loop body, outermost first (empty for the body).
    path: tuple[cst.Call, ...] = ()
    # Parameter name -> the loop function's expression bound to it (None: not known).
    binding: Mapping[str, cst.BaseExpression | None] = field(default_factory=dict)

    @property
    def params(self) -> set[str]:
        return parameter_names(self.root) if isinstance(self.root, cst.FunctionDef) else set()

    def translate(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`expr` as the loop's own function spells it; None when a parameter is bound to nothing known."""
        plain = expr
        while isinstance(plain, cst.Attribute) and plain.attr.value in ("module", "_orig_mod"):
            plain = plain.value
        if isinstance(plain, cst.Name) and plain.value in self.params:
            return self.binding.get(plain.value)
        return expr


class Iterations:
    """What an iteration of each loop of one module runs, and in which order."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.funcs = functions(ctx)

    def project_steps(self, part: Part) -> list[cst.Call]:
        """The calls of `part` that run a training step in another module: a project
        function or method that back-propagates and steps an optimizer
        (`model.train_emb(images, captions)` of a wrapper class)."""
        return [call for call in self.own_calls(part) if {"backward", "steps"} <= sm.call_effects(self.ctx, call)]

    def parts(self, body: cst.CSTNode, running_closures: Collection[int] = ()) -> list[Part]:
        """The loop body and every local function one iteration may call; the ids in
        `running_closures` name calls that run the local functions passed to them."""
        start = Part(body)
        found = [start]
        seen = {id(body)}
        stack = [start]
        while stack:
            part = stack.pop()
            if len(part.path) >= MAX_DEPTH:
                continue
            for call in self.own_calls(part):
                closures = self.funcs.passed_functions(call) if id(call) in running_closures else []
                for func in [*self.funcs.resolve(call), *closures]:
                    if id(func) in seen:
                        continue
                    seen.add(id(func))
                    binding = {name: part.translate(arg) for name, arg in bind_arguments(self.funcs, func, call).items()}
                    inner = Part(func, (*part.path, call), binding)
                    found.append(inner)
                    stack.append(inner)
        return found

    def _home(self, part: Part) -> cst.CSTNode:
        return part.root if isinstance(part.root, cst.FunctionDef) else self.idx.scope(part.root)

    def own_calls(self, part: Part) -> list[cst.Call]:
        """The calls of `part` itself (not of functions nested in it)."""
        home = self._home(part)
        return [c for c in self.idx.within(part.root, cst.Call) if self.idx.scope(c) is home]

    def owns(self, part: Part, node: cst.CSTNode) -> bool:
        return self.idx.contains(part.root, node) and self.idx.scope(node) is self._home(part)

    def before(self, first: tuple[cst.CSTNode, ...], second: tuple[cst.CSTNode, ...]) -> bool:
        """`first` runs before `second` in one iteration (each a call path ending at a node):
        compare where the paths part."""
        for a, b in zip(first, second):
            if a is b:
                continue
            return self.idx.order(a) < self.idx.order(b) and not self.idx.contains(a, b)
        return False

    def following(self, node: cst.CSTNode) -> list[cst.BaseStatement]:
        """The statements after the one holding `node`, in the block that holds it."""
        current: cst.CSTNode = node
        for parent in self.idx.ancestors(node):
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                body = list(parent.body)
                return body[body.index(current) + 1 :]  # type: ignore[arg-type]
            current = parent
        return []

    def stops_after(self, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        """A `break` of `loop` or a `return` follows `node` in its block: no next iteration."""
        current: cst.CSTNode = node
        while current is not loop.body:
            later = [s for s in self.following(current) if self.idx.contains(loop.body, s)]
            if any(self._exits(s, loop) for s in later):
                return True
            parent = self.idx.parent(current)
            if parent is None or isinstance(parent, cst.FunctionDef):
                return False
            current = parent
        return False

    def _exits(self, statement: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        for exit_ in self.idx.within(statement, cst.Break, cst.Return):
            if self.idx.scope(exit_) is not self.idx.scope(loop):
                continue
            if isinstance(exit_, cst.Return) or next(iter(enclosing_loops(self.idx, exit_)), None) is loop:
                return True
        return False


def iterations(ctx: FileContext) -> Iterations:
    return ctx.analysis(Iterations)


# Each `with dist_autograd.context():` holds its own fresh gradients.
FRESH_GRADIENT_CONTEXTS = frozenset({"torch.distributed.autograd.context"})

Loop = cst.For | cst.While


class TrainingLoops:
    """Which training events and loops each loop of a module runs, through local calls too."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.funcs = functions(ctx)
        self.train = training(ctx)
        self._events: dict[tuple[int, str], list[cst.CSTNode]] = {}
        self._inner: dict[int, list[Loop]] = {}
        self._ordered = [*self.train.steps, *self.train.clears]
        self.loops = [
            loop
            for loop in self.idx.nodes(cst.For, cst.While)
            if self.events(loop, "backward") and self.events(loop, "steps")
        ]
        # Per step and per function, what the queries below look up (one scan of all loops
        # or all clears per step made large modules quadratic).
        self._loops_of_step: dict[int, list[Loop]] = {}
        for loop in self.loops:
            for step in self.events(loop, "steps"):
                self._loops_of_step.setdefault(id(step), []).append(loop)
        self._clears_by_scope: dict[int, list[cst.CSTNode]] = {}
        for clear in self.train.clears:
            self._clears_by_scope.setdefault(id(self.idx.scope(clear)), []).append(clear)

    def events(self, loop: Loop, kind: str) -> list[cst.CSTNode]:
        """The `backward`, `steps` or `clears` that an iteration of `loop` may run."""
        key = (id(loop), kind)
        if key not in self._events:
            self._events[key] = self.train.events_in(getattr(self.train, kind), loop.body, self.funcs)
        return self._events[key]

    def inner_loops(self, loop: Loop) -> list[Loop]:
        if id(loop) not in self._inner:
            self._inner[id(loop)] = loops_run_by(self.idx, self.funcs, loop.body)
        return self._inner[id(loop)]

    def stepping_loops(self, step: cst.Call) -> list[Loop]:
        """The innermost loops that run both `step` and a backward pass, once per iteration."""
        candidates = self._loops_of_step.get(id(step), [])
        candidate_ids = {id(c) for c in candidates}
        return [
            loop for loop in candidates if not any(id(inner) in candidate_ids for inner in self.inner_loops(loop))
        ]

    def clears_with_step(self, loop: Loop, step: cst.Call) -> bool:
        """An iteration of `loop` that runs `step` may also clear its gradients: a clear of
        them that is neither in another branch than the step nor under a condition that the
        arguments on its path make false (`if zero_grad:` in a helper called without it).
        A clear that runs only through a function passed as a value (a closure given to
        `optimizer.step(closure)`) has no path here and counts."""
        clears = [c for c in self.events(loop, "clears") if self._clears_gradients_of(c, step)]
        if not clears:
            return False
        order = flow(self.ctx)
        events = order.events(loop, self._ordered)
        steps = [e for e in events if e.node is step]
        for clear in clears:
            paths = [e for e in events if e.node is clear]
            if not paths or any(
                not never_runs(self.funcs, e) and (not steps or any(not order.exclusive(e, s) for s in steps))
                for e in paths
            ):
                return True
        return False

    def _clears_gradients_of(self, clear: cst.CSTNode, step: cst.Call) -> bool:
        """`Training.clears_gradients_of`, with a clear in a closure that `step` runs as
        `functools.partial(fn, optimizer, ...)` read as a clear of what the partial binds."""
        owner = receiver(clear) if isinstance(clear, cst.Call) else None
        name = dotted(owner) if owner is not None else None
        for func, partial in self.funcs.passed_closures(step):
            if partial is None or name is None or self.idx.scope(clear) is not func:
                continue
            bound = bind_arguments(self.funcs, func, cst.Call(partial.args[0].value, partial.args[1:])).get(name)
            if bound is not None:
                return self.train.clears_gradients_of(clear, step, bound)
        return self.train.clears_gradients_of(clear, step)

    def calls_given_optimizer(self, loop: Loop) -> list[cst.Call]:
        """Calls that run once per iteration of `loop` (not in a loop nested in it) and are
        given an optimizer: the only calls that can step one."""
        return [
            call
            for call in self.idx.within(loop.body, cst.Call)
            if enclosing_loops(self.idx, call)[:1] == [loop]
            and any(name_says_optimizer(last_name(arg.value)) for arg in call.args)
        ]

    def project_clear(self, loop: Loop) -> bool:
        """The loop (or a local function it runs) calls a function of another project
        module that clears gradients."""
        calls = (call for root in self.funcs.reachable(loop.body) for call in self.idx.within(root, cst.Call))
        return sm.any_call_has(self.ctx, calls, "clears_grads") is not None

    def fresh_gradients(self, loop: Loop) -> bool:
        """Each iteration runs in a context that starts with no gradients."""
        imps = imports(self.ctx)
        return any(
            isinstance(item.item, cst.Call) and imps.callee(item.item) in FRESH_GRADIENT_CONTEXTS
            for with_ in self.idx.within(loop.body, cst.With)
            for item in with_.items
        )

    def builds_optimizer(self, loop: Loop, optimizer: cst.BaseExpression) -> bool:
        """A fresh optimizer every iteration, usually over fresh tensors (latent optimization)."""
        name = dotted(optimizer)
        return name is not None and any(
            dotted(target.target) == name for assign in self.idx.within(loop.body, cst.Assign) for target in assign.targets
        )

    def clears_outside(self, loop: Loop) -> bool:
        """A clear runs in the same function before the loop, or in an enclosing loop."""
        for clear in self._clears_by_scope.get(id(self.idx.scope(loop)), []):
            if not self.idx.contains(loop, clear):
                if self.idx.order(clear) < self.idx.order(loop) or any(
                    self.idx.contains(outer, clear) for outer in enclosing_loops(self.idx, loop)
                ):
                    return True
        return False


def training_loops(ctx: FileContext) -> TrainingLoops:
    return ctx.analysis(TrainingLoops)
