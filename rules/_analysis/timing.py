"""Timing: wall-clock reads and the measurements they make. Which calls read a wall clock
(through import aliases), and for a clock read that ends a measurement (`time.time() - t0`,
or `t1 = time.time()` later subtracted from), the earlier read it is measured from, when
both lie in one iteration: a read carried across a loop (`t0 = t1` at the end of each
iteration) and a timeout check (`time.time() - t0 > limit`) measure no region.

What a measured region contains is the caller's question; `synchronization` says which
of its calls queue GPU work and which wait for it. A timing helper of another project
module (`timeit(fn, *args)`) measures what its callers pass: `project_timer_calls`. A
context manager that reads the clock before and after its `yield` (`with
record_time("train"):`) measures the body of the `with`: `timed_blocks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import callee_name, keyword, method_name, positional
from torchlint.rules._analysis.flow import Step
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import Imports, dotted, imports
from torchlint.rules._vocabulary import WAITING_METHODS, WALL_CLOCKS, says_timer


@dataclass(frozen=True)
class Measurement:
    """A pair of clock reads in one scope's execution order: `steps[start]` starts the
    measurement, `steps[end]` ends it."""

    steps: list[Step]
    start: int
    end: int

    @property
    def region(self) -> list[Step]:
        """What runs between the two reads."""
        return self.steps[self.start + 1 : self.end]

    @property
    def depth(self) -> int:
        """How many loops the start read runs in: deeper steps repeat within the region."""
        return len(self.steps[self.start].loops)

    @property
    def clock(self) -> cst.Call:
        node = self.steps[self.end].node
        assert isinstance(node, cst.Call)
        return node


class Clocks:
    """The clock reads of one module and the measurements they make."""

    def __init__(self, idx: Index, imps: Imports) -> None:
        self.idx = idx
        self.imps = imps

    def is_clock(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = self.imps.callee(node) or ""
        return name in WALL_CLOCKS or (name.endswith(".now") and "datetime" in name)

    def measurements(self, steps: list[Step]) -> list[Measurement]:
        """Each clock read of `steps` (a scope's execution order) that ends a measurement
        within one iteration, with the read it starts from."""
        found = []
        for end, step in enumerate(steps):
            if self.is_clock(step.node):
                start = self._start_of(steps, end)
                if start is not None:
                    found.append(Measurement(steps, start, end))
        return found

    def _start_of(self, steps: list[Step], end: int) -> int | None:
        variable = self.subtracted_variable(steps[end].node)
        if variable is None:
            return None
        for i in range(end - 1, -1, -1):
            candidate = steps[i].node
            if self.is_clock(candidate) and self.assigned_name(candidate) == variable:
                carried = [loop for loop in steps[end].loops if loop not in steps[i].loops]
                if any(self._reassigned_later(steps[end].node, loop, variable) for loop in carried):
                    return None
                return i
        return None

    def subtracted_variable(self, clock: cst.CSTNode) -> str | None:
        """`t0` for `time.time() - t0`, or for `t1 = time.time()` followed by `t1 - t0`.
        None for a timeout check (`time.time() - t0 > limit`), which measures nothing."""
        parent = self.idx.parent(clock)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract):
            if parent.left is clock and not self._compared(parent):
                return dotted(parent.right)
            return None
        assigned = self.assigned_name(clock)
        if assigned is None:
            return None
        after = self.idx.order(clock)
        for binop in self.idx.within(self.idx.scope(clock), cst.BinaryOperation):
            if (
                self.idx.order(binop) > after
                and isinstance(binop.operator, cst.Subtract)
                and dotted(binop.left) == assigned
            ):
                return dotted(binop.right)
        return None

    def _compared(self, node: cst.CSTNode) -> bool:
        for ancestor in self.idx.ancestors(node):
            if isinstance(ancestor, cst.Comparison):
                return True
            if not isinstance(ancestor, (cst.BinaryOperation, cst.UnaryOperation, cst.Call, cst.Arg)):
                return False
        return False

    def assigned_name(self, clock: cst.CSTNode) -> str | None:
        parent = self.idx.parent(clock)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return dotted(parent.targets[0].target)
        if isinstance(parent, cst.AnnAssign):
            return dotted(parent.target)
        return None

    def _reassigned_later(self, clock: cst.CSTNode, loop: cst.CSTNode, variable: str) -> bool:
        """`variable` is assigned again later in `loop`'s body (`t0 = t1` or `t0 = time.time()`)."""
        after = self.idx.order(clock)
        return any(
            self.idx.order(assign) > after and any(dotted(t.target) == variable for t in assign.targets)
            for assign in self.idx.within(loop, cst.Assign)
        )


def clocks(ctx: FileContext) -> Clocks:
    return ctx.analysis(_build_clocks)


def _build_clocks(ctx: FileContext) -> Clocks:
    return Clocks(index(ctx), imports(ctx))


def project_timer_calls(
    ctx: FileContext, runs_work: Callable[[cst.BaseExpression], bool]
) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """Calls of a timing helper of another project module that never synchronizes
    (`timeit(model, x)`), each with the argument it times when `runs_work` says calling
    that argument queues GPU work."""
    for call in index(ctx).nodes(cst.Call):
        # Only helpers named for timing: other modules' entries become dependencies only then.
        if not says_timer(callee_name(call)):
            continue
        for param, position in sm.timed_parameters(ctx, call):
            args = positional(call)
            arg = keyword(call, param) or (args[position] if position < len(args) else None)
            if arg is not None and runs_work(arg.value):
                yield call, arg.value
                break


def timed_blocks(ctx: FileContext, project_timer: Callable[[cst.Call], bool]) -> Iterator[tuple[cst.With, cst.Call]]:
    """`with` statements whose context manager times their body and never synchronizes: a
    `@contextmanager` function of this module that reads a wall clock before and after its
    `yield` and never waits for the GPU (`synchronize()`, a host read), or a call for which
    `project_timer` says so (another project module's)."""
    idx = index(ctx)
    funcs = functions(ctx)
    timing = clocks(ctx)
    for block in idx.nodes(cst.With):
        for item in block.items:
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            local = funcs.resolve(call)
            if (local and _times_block(idx, timing, local[0])) or (not local and project_timer(call)):
                yield block, call
                break


def _times_block(idx: Index, timing: Clocks, func: cst.FunctionDef) -> bool:
    if not any(
        (dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "").endswith("contextmanager")
        for d in func.decorators
    ):
        return False
    calls = idx.within(func, cst.Call)
    if any(method_name(c) in WAITING_METHODS for c in calls):
        return False
    reads = [idx.order(c) for c in calls if timing.is_clock(c)]
    yields = [idx.order(y) for y in idx.within(func, cst.Yield)]
    return any(a < y < b for y in yields for a in reads for b in reads)


FORWARD_HOOKS = ("register_forward_pre_hook", "register_forward_hook")


def hook_measurements(ctx: FileContext) -> list[cst.Call]:
    """End reads of per-layer timing done in forward hooks: a forward hook that reads the
    clock minus an attribute (`time.time() - module.start`) that a forward pre-hook set from
    the clock (`module.start = time.time()`). The layer's forward runs between the two, in
    neither function. A hook that synchronizes is left out."""
    idx = index(ctx)
    funcs = functions(ctx)
    timing = clocks(ctx)
    registered: dict[str, set[int]] = {name: set() for name in FORWARD_HOOKS}
    for call in idx.nodes(cst.Call):
        method = method_name(call)
        if method in registered and call.args:
            registered[method].update(id(f) for f in funcs.referenced(call.args[0].value))
    started: set[str] = set()  # attribute names a pre-hook sets from the clock
    for func in funcs.all:
        if id(func) in registered["register_forward_pre_hook"]:
            for read in idx.within(func, cst.Call):
                target = timing.assigned_name(read) if timing.is_clock(read) else None
                if target is not None and "." in target:
                    started.add(target.rpartition(".")[2])
    found: list[cst.Call] = []
    for func in funcs.all:
        if id(func) not in registered["register_forward_hook"]:
            continue
        calls = idx.within(func, cst.Call)
        if any(method_name(c) in WAITING_METHODS for c in calls):
            continue
        for read in calls:
            subtracted = timing.subtracted_variable(read) if timing.is_clock(read) else None
            if subtracted is not None and subtracted.rpartition(".")[2] in started and "." in subtracted:
                found.append(read)
    return found
