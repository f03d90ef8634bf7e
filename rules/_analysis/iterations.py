"""Training iterations: the loops that run a backward pass and an optimizer step once per
iteration (through local helpers too), the innermost such loop of each step, and what
gives each iteration fresh gradients: a clear that runs with the step on the same path, a
project helper that clears, a context that starts without gradients, or an optimizer
built anew. The events themselves are `training`'s, their order and paths `flow`'s.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.flow import enclosing_loops, flow, loops_run_by, never_runs
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import dotted, imports, last_name
from torchlint.rules._analysis.training import training
from torchlint.rules._analysis.vocabulary import name_says_optimizer

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
        clears = [c for c in self.events(loop, "clears") if self.train.clears_gradients_of(c, step)]
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
