"""Asynchronous CUDA work and the points that wait for it.

`effect(node)` says whether a call (or `a @ b`) queues GPU work and returns at once, or
waits for the GPU. Work: a torch op, a compute method of a tensor, running a network (a
name that `networks` knows holds one, or that is named like one), an optimizer step, a
non-blocking copy, a local helper whose last effect is work, and a function parameter
called in its function when a caller in the module passes GPU work for it (`bench(model,
x)`, `_measure(lambda: net(x))`). Waits: `synchronize()`, the host reads `.item()`,
`.cpu()`, `.tolist()`, `.numpy()`, a copy to a CPU device, `float(t)`, printing a device
tensor, and a project helper that synchronizes (as the caller's `project_effects` says).

`timeline(scope)` is a scope's execution order with the implicit host reads of device
tensors in place: formatting one (`f"{loss}"`) or testing one in a condition (`if
next_token == eos_id:` once per generated token).
"""

from __future__ import annotations

from bisect import bisect_right
from enum import Enum
from typing import Callable

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    callee_name,
    keyword,
    method_name,
    positional,
    receiver,
    same_expr,
)
from torchlint.rules._analysis.dataflow import assigned_values, bindings
from torchlint.rules._analysis.flow import LOOP_TYPES, Step, execution_order
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import dotted, imports, last_name, string_text
from torchlint.rules._analysis.networks import Networks, is_cpu_literal
from torchlint.rules._vocabulary import (
    METADATA as TENSOR_METADATA,
    METADATA_CALLS,
    PIPELINE_WORDS,
    TENSOR_WORK,
    WAITING_METHODS,
    is_torch_op,
    name_says_model_run,
    name_says_optimizer,
    name_tokens,
)

# Attributes and methods of a tensor that are host metadata, not device data.
METADATA = TENSOR_METADATA | METADATA_CALLS
# Builtins that turn their argument into host text or numbers.
HOST_CONVERSIONS = frozenset({"print", "str", "repr", "format"})
# Summaries and value chains look two calls or assignments deep: deeper ones guess more than they know.
MAX_CALL_DEPTH = 2
MAX_VALUE_DEPTH = 3


class Effect(Enum):
    WORK = "work"
    SYNC = "sync"


class GpuWork:
    """What the calls of one module do to the GPU's queue."""

    def __init__(
        self,
        ctx: FileContext,
        nets: Networks | None = None,
        project_effects: Callable[[cst.BaseExpression], frozenset[str]] | None = None,
    ) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.bindings = bindings(ctx)
        self.assigned = assigned_values(ctx)
        self.nets = nets or Networks(ctx)
        self.project_effects = project_effects or (lambda callee: frozenset())
        self._summaries: dict[tuple[int, int], Effect | None] = {}
        self._implicit: set[int] = set()
        self._passed: dict[int, bool] = {}

    # -- one call ---------------------------------------------------------------------

    def effect(self, node: cst.CSTNode, depth: int = 0) -> Effect | None:
        if id(node) in self._implicit:
            return Effect.SYNC
        if isinstance(node, cst.BinaryOperation):
            return Effect.WORK
        if not isinstance(node, cst.Call):
            return None
        method = method_name(node)
        short = callee_name(node) or ""
        if method in WAITING_METHODS or any(t.startswith(("sync", "synchroni")) for t in name_tokens(short)):
            return Effect.SYNC
        if method == "to" and self._to_cpu(node):
            return Effect.SYNC
        if short in ("float", "int", "bool") and len(node.args) == 1 and isinstance(
            node.args[0].value, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)
        ):
            return Effect.SYNC
        if short in HOST_CONVERSIONS and isinstance(node.func, cst.Name):
            return Effect.SYNC if any(self.is_device_tensor(a.value) for a in node.args) else None
        local = self.funcs.resolve(node)
        if local:
            return self.summary(local[0], depth + 1) if depth < MAX_CALL_DEPTH else None
        return self._outside_effect(node, method, depth)

    def _outside_effect(self, node: cst.Call, method: str | None, depth: int) -> Effect | None:
        """The effect of a call of something not defined in this module."""
        if is_torch_op(self.imps.callee(node) or ""):
            return Effect.WORK
        if "syncs" in self.project_effects(node.func):
            return Effect.SYNC  # a helper of another project module that synchronizes
        if method in TENSOR_WORK:
            return Effect.WORK
        if _optimizer_step(node):
            return Effect.WORK
        if method in ("cuda", "to") and keyword(node, "non_blocking") is not None:
            return Effect.WORK
        if _pipeline_to_host(node):
            return Effect.SYNC
        # `model(x)`, `self.encoder(x)`, `net.forward(x)`: running a network.
        target = receiver(node) if method == "forward" else node.func
        if target is not None and self.runs_network(target, depth):
            return Effect.WORK
        return None

    def runs_network(self, target: cst.BaseExpression, depth: int = 0) -> bool:
        """Calling `target` runs a network: its name says so, its values are networks, the
        code moves it in place (`session.to(device)`), or it is a parameter for which a caller
        passes GPU work."""
        if isinstance(target, cst.Name) and self._passed_work(target, depth):
            return True
        return name_says_model_run(last_name(target)) or (
            isinstance(target, (cst.Name, cst.Attribute))
            and (self.nets.holds_module(target) or self.nets.moved_in_place(target))
        )

    def _passed_work(self, name: cst.Name, depth: int) -> bool:
        """`fn` in `def bench(fn, *args): ... fn(*args)`, when a call of `bench` in the module
        passes a network, a lambda or a function that runs one."""
        func = self.idx.scope(name)
        binding = self.bindings.seen_by(name)
        if not isinstance(func, cst.FunctionDef) or binding is None or not isinstance(binding.node, cst.Param):
            return False
        key = id(binding.node)
        if key not in self._passed:
            self._passed[key] = False  # recursion guard
            self._passed[key] = depth < MAX_CALL_DEPTH and any(
                self._runs_work(arg, depth + 1)
                for site in self.funcs.call_sites(func)
                for param, arg in bind_arguments(self.funcs, func, site).items()
                if param == name.value
            )
        return self._passed[key]

    def runs_work(self, expr: cst.BaseExpression) -> bool:
        """Calling the value `expr` queues GPU work (see `_runs_work`)."""
        return self._runs_work(expr, 0)

    def _runs_work(self, expr: cst.BaseExpression, depth: int) -> bool:
        """Calling the value `expr` queues GPU work: a network, a bound `forward`, a lambda or
        a local function whose last effect is work, a `functools.partial` of one."""
        if isinstance(expr, cst.Lambda):
            return self._last_effect(execution_order(expr), depth) is Effect.WORK
        if isinstance(expr, cst.Call) and callee_name(expr) == "partial" and expr.args:
            return self._runs_work(expr.args[0].value, depth)
        if isinstance(expr, cst.Call):
            return self.nets.builds_module(expr)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "forward":
            return self.runs_network(expr.value, depth)
        if isinstance(expr, cst.Name):
            local = [f for f in self.funcs.by_name.get(expr.value, []) if id(f) not in self.funcs.class_of]
            if local:
                return self.summary(local[0], depth) is Effect.WORK
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        method = self.funcs.referenced(expr) if isinstance(expr, cst.Attribute) else []
        if method:  # a bound method of this module's class: `self.forward_torch`
            return self.summary(method[0], depth) is Effect.WORK
        effects = self.project_effects(expr)
        if "queues_work" in effects and "syncs" not in effects:
            return True  # a function of another project module that runs GPU work
        if self.runs_network(expr, depth):
            return True
        # `forward_fn = model.forward` or `fn = run_forward`, then `bench(forward_fn)`.
        name = dotted(expr)
        return depth < MAX_VALUE_DEPTH and any(
            value is not expr and self._runs_work(value, depth + 1) for value in self.assigned.get(name or "", [])
        )

    def _to_cpu(self, call: cst.Call) -> bool:
        """`x.to("cpu")`, `x.to(device=cpu_device)`: a copy to the host, which waits for the GPU."""
        args = positional(call)
        target = keyword(call, "device") or (args[0] if args else None)
        return target is not None and self._is_cpu_device(target.value, follow=True)

    def _is_cpu_device(self, expr: cst.BaseExpression, follow: bool) -> bool:
        """`"cpu"`, `torch.device("cpu")`, or (one step) a name only ever bound to one of them."""
        if is_cpu_literal(expr):
            return True
        if isinstance(expr, cst.Call) and self.imps.callee(expr) == "torch.device":
            return bool(expr.args) and is_cpu_literal(expr.args[0].value)
        name = dotted(expr) if follow else None
        values = self.assigned.get(name, []) if name else []
        return bool(values) and all(self._is_cpu_device(value, follow=False) for value in values)

    def summary(self, func: cst.FunctionDef, depth: int) -> Effect | None:
        """The last GPU-relevant effect of running `func`."""
        key = (id(func), depth)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = None  # recursion guard
        if self.idx.within(func, cst.For, cst.While):
            # A helper that loops (a train or evaluate epoch) does its own host reads more
            # often than not, and an error of one iteration in an epoch does not matter.
            return None
        last = self._summaries[key] = self._last_effect(self.timeline(func), depth)
        return last

    def _last_effect(self, steps: list[Step], depth: int) -> Effect | None:
        last: Effect | None = None
        for step in steps:
            effect = self.effect(step.node, depth)
            if effect is not None:
                last = effect
        return last

    # -- device tensors -------------------------------------------------------------------

    def is_device_tensor(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """`expr` holds data that GPU work computed (not its metadata): a model's output, a
        torch op's result, an element or a method result of one, a name bound to one."""
        if depth > MAX_VALUE_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            owner = receiver(expr)
            if method_name(expr) in METADATA or method_name(expr) in WAITING_METHODS:
                return False
            if owner is not None and self.is_device_tensor(owner, depth + 1):
                return True
            return self.effect(expr, MAX_CALL_DEPTH) is Effect.WORK
        if isinstance(expr, cst.Subscript):
            return self.is_device_tensor(expr.value, depth + 1)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value not in METADATA and self.is_device_tensor(expr.value, depth + 1)
        if isinstance(expr, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)):
            return any(self.is_device_tensor(operand, depth + 1) for operand in _operands(expr))
        if isinstance(expr, cst.Name):
            binding = self.bindings.seen_by(expr)
            if binding is None:
                return False
            value = binding.value
            if value is None and isinstance(binding.node, cst.Assign):
                value = binding.node.value  # `_, _, out = model(x)`
            return value is not None and self.is_device_tensor(value, depth + 1)
        return False

    # -- a scope in order -------------------------------------------------------------------

    def timeline(self, scope: cst.CSTNode) -> list[Step]:
        """`execution_order(scope)` with the implicit host reads of device tensors in place:
        an f-string that formats one, a condition that tests one."""
        steps = execution_order(scope)
        ends = [self.idx.end(step.node) for step in steps]
        for node in self._implicit_reads(scope):
            position = bisect_right(ends, self.idx.end(node))
            while position and self.idx.contains(steps[position - 1].node, node):
                position -= 1
            self._implicit.add(id(node))
            steps.insert(position, Step(node, self._loops(scope, node)))
            ends.insert(position, self.idx.end(node))
        return steps

    def _implicit_reads(self, scope: cst.CSTNode) -> list[cst.BaseExpression]:
        home = scope if isinstance(scope, (cst.FunctionDef, cst.Module)) else self.idx.scope(scope)
        tests: list[cst.BaseExpression] = [
            node.test for node in self.idx.within(scope, cst.If, cst.While, cst.IfExp, cst.Assert)
        ]
        tests += self.idx.within(scope, cst.FormattedString)
        return [
            test
            for test in tests
            if self.idx.scope(test) is home
            and self.idx.enclosing(test, (cst.ClassDef,)) is self.idx.enclosing(scope, (cst.ClassDef,))
            and self._reads(test)
        ]

    def _reads(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.FormattedString):
            return any(
                isinstance(part, cst.FormattedStringExpression) and self.is_device_tensor(part.expression)
                for part in test.parts
            )
        return self.is_device_tensor(test)

    def _loops(self, scope: cst.CSTNode, node: cst.CSTNode) -> tuple[cst.For | cst.While, ...]:
        """The loops of `scope` that run `node` once per iteration, outermost first (a
        `while` test runs with its loop's body)."""
        loops: list[cst.For | cst.While] = []
        for ancestor in self.idx.ancestors(node):
            if ancestor is scope or isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
            if isinstance(ancestor, LOOP_TYPES) and (
                self.idx.contains(ancestor.body, node)
                or (isinstance(ancestor, cst.While) and self.idx.contains(ancestor.test, node))
            ):
                loops.append(ancestor)
        return tuple(reversed(loops))

    # -- regions ------------------------------------------------------------------------------

    def pending(self, region: list[Step], depth: int) -> bool:
        """GPU work is queued at the end of `region`: work after the last wait, and no wait
        in a loop that starts inside the region (that bounds the error to one iteration).
        `depth` is how many loops the region's start runs in."""
        pending = False
        for step in region:
            if len(step.loops) > depth and _optimizer_step(step.node):
                # Timing a training phase of many steps: the error is one step at most.
                return False
            effect = self.effect(step.node)
            if effect is Effect.WORK:
                pending = True
            elif effect is Effect.SYNC:
                if len(step.loops) > depth:
                    return False
                pending = False
        return pending

    def recorded_unwaited(self, before: list[Step], event: cst.BaseExpression) -> bool:
        """`event.record()` ran in `before` and nothing waited for the GPU after it."""
        for step in reversed(before):
            node = step.node
            if not isinstance(node, cst.Call):
                continue
            if self.effect(node) is Effect.SYNC:
                return False
            if method_name(node) == "record" and same_expr(receiver(node), event):
                return True
        return False


def _optimizer_step(node: cst.CSTNode) -> bool:
    owner = receiver(node) if isinstance(node, cst.Call) and method_name(node) == "step" else None
    return owner is not None and name_says_optimizer(last_name(owner))


def _operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation):
        return [expr.left, expr.right]
    if isinstance(expr, cst.Comparison):
        return [expr.left, *(c.comparator for c in expr.comparisons)]
    if isinstance(expr, cst.UnaryOperation):
        return [expr.expression]
    if isinstance(expr, cst.BooleanOperation):
        return [expr.left, expr.right]
    return []


def _pipeline_to_host(call: cst.Call) -> bool:
    """`pipe(prompt).images`: an inference pipeline returns host data (diffusers' default
    `output_type="pil"`, `"np"`, a transformers pipeline's dicts), which waits for the GPU;
    not with `output_type="pt"` or `"latent"`, which stay on the device."""
    tokens = name_tokens(last_name(call.func) or "")
    # `pipe`, `sd_pipeline`, not `data_pipeline` (a user's own preprocessing).
    if not tokens or tokens[-1] not in PIPELINE_WORDS or "data" in tokens:
        return False
    output = keyword(call, "output_type")
    if output is None:
        return True
    # An output type chosen at run time may be either: unknown stays silent.
    kind = string_text(output.value)
    return kind is None or kind in ("pil", "np", "numpy")
