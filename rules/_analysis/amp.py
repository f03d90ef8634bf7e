"""Mixed precision: which `autocast` regions compute in float16 (through `dtype=`
arguments, device strings and variables), whether their loss is back-propagated with
gradients, who scales the loss (a `GradScaler`, or a framework that does; not a scaler built
disabled), and whether each `scaler.step()` is followed by `scaler.update()` in the loops
that run it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cached_property

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import is_false, keyword, method_name, positional, receiver
from torchlint.rules._analysis.dataflow import assigned_values
from torchlint.rules._analysis.flow import enclosing_loops, loops_run_by
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.modes import grad_free_blocks, grad_mode_flag, is_grad_free_call
from torchlint.rules._analysis.names import dotted, imports, last_name
from torchlint.rules._analysis.training import training
from torchlint.rules._vocabulary import name_says_evaluation, name_says_optimizer

# `autocast` callables whose `dtype` defaults to the device's fast type (float16 on CUDA).
GENERIC_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
# `autocast` callables that always default to float16.
CUDA_AUTOCAST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"})
FLOAT16 = frozenset({"torch.float16", "torch.half"})
# Whoever scales the loss: a GradScaler, timm's NativeScaler, apex, or a framework that does it.
SCALED = re.compile(r"(?i)scaler|scale_loss|loss_scale|accelerat|fabric|deepspeed|lightning|apex")
MAX_RESOLVE_DEPTH = 3


class Amp:
    """Autocast regions of a module and the gradient scalers of its training steps."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.train = training(ctx)

    @cached_property
    def _backward_by_scope(self) -> dict[int, list[cst.Call]]:
        found: dict[int, list[cst.Call]] = defaultdict(list)
        for backward in self.train.backward:
            found[id(self.idx.scope(backward))].append(backward)
        return found

    @cached_property
    def _updates(self) -> list[cst.Call]:
        return [c for c in self.idx.nodes(cst.Call) if method_name(c) == "update"]

    @cached_property
    def _loops_running_steps(self) -> dict[int, list[cst.For | cst.While]]:
        return self.train.loops_running(self.train.steps, self.funcs)

    # -- float16 autocast ----------------------------------------------------------------

    def is_fp16_autocast(self, call: cst.Call) -> bool:
        name = self.imps.callee(call) or ""
        if name not in GENERIC_AUTOCAST and name not in CUDA_AUTOCAST:
            return False
        generic = name in GENERIC_AUTOCAST
        args = positional(call)
        enabled = keyword(call, "enabled") or (args[2] if generic and len(args) > 2 else None)
        if not generic and args:
            enabled = args[0]
        if enabled is not None and is_false(enabled.value):
            return False
        dtype = keyword(call, "dtype") or (args[1] if len(args) > 1 else None)
        if dtype is not None:
            return self._float16(dtype.value)
        if not generic:
            return True
        device = keyword(call, "device_type") or (args[0] if args else None)
        return device is not None and self._may_be_cuda(device.value)

    def _float16(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if (self.imps.qualify(expr) or "") in FLOAT16:
            return True
        if isinstance(expr, cst.Name) and depth < MAX_RESOLVE_DEPTH:
            values = self.assigned(expr.value)
            return bool(values) and all(self._float16(v, depth + 1) for v in values)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Dict) and depth < MAX_RESOLVE_DEPTH:
            return self._selects_float16(expr.value, expr, depth)
        return False

    def _selects_float16(self, table: cst.Dict, selection: cst.Subscript, depth: int) -> bool:
        """`{'float32': torch.float32, 'float16': torch.float16}[dtype]`: the entry that every
        string the key can be (a literal, through variables) picks is float16."""
        if len(selection.slice) != 1 or not isinstance(selection.slice[0].slice, cst.Index):
            return False
        keys = self._strings(selection.slice[0].slice.value, depth)
        entries = {
            element.key.evaluated_value: element.value
            for element in table.elements
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
        }
        return keys is not None and all(key in entries and self._float16(entries[key], depth + 1) for key in keys)

    def _strings(self, expr: cst.BaseExpression, depth: int) -> list[object] | None:
        """The string literals `expr` evaluates to (directly or through assignments); None
        when some value is not one."""
        if isinstance(expr, cst.SimpleString):
            return [expr.evaluated_value]
        if isinstance(expr, cst.Name) and depth < MAX_RESOLVE_DEPTH:
            values = self.assigned(expr.value)
            found: list[object] = []
            for value in values:
                strings = self._strings(value, depth + 1)
                if strings is None:
                    return None
                found.extend(strings)
            return found or None
        return None

    def _may_be_cuda(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """The device-type expression can evaluate to "cuda" (literally, or through variables)."""
        if depth > MAX_RESOLVE_DEPTH:
            return False
        for string in self.idx.within(expr, cst.SimpleString):
            if "cuda" in string.value:
                return True
        for part in self.idx.within(expr, cst.FormattedStringText):
            if "cuda" in part.value:
                return True
        if isinstance(expr, cst.Attribute) and expr.attr.value == "type":
            return self._may_be_cuda(expr.value, depth + 1)
        if isinstance(expr, cst.Call):  # `str(device)`, `torch.device(name)`
            return any(self._may_be_cuda(arg.value, depth + 1) for arg in expr.args)
        if isinstance(expr, cst.Name):
            return any(self._may_be_cuda(v, depth + 1) for v in self.assigned(expr.value))
        return False

    def assigned(self, name: str) -> list[cst.BaseExpression]:
        """Values assigned to the plain name `name` anywhere in the module."""
        return assigned_values(self.ctx).get(name, [])

    def disabled_scaler(self, scaler: cst.BaseExpression | None) -> bool:
        """`scaler` is only ever bound to a `GradScaler(..., enabled=False)` (a literal False):
        its `scale()` returns the loss as it is, so its gradients are never scaled."""
        name = dotted(scaler) if scaler is not None else None
        values = self.assigned(name) if name is not None else []
        return bool(values) and all(self._disabled_scaler_call(value) for value in values)

    def _disabled_scaler_call(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call) or not (self.imps.callee(value) or "").endswith("GradScaler"):
            return False
        enabled = keyword(value, "enabled")
        return enabled is not None and is_false(enabled.value)

    def backpropagated(self, autocast: cst.Call) -> bool:
        """The autocast region runs a forward pass whose loss a backward pass of the same
        iteration consumes: in the same function, or in a loop that calls the function."""
        for region in self._regions(autocast):
            scope = self.idx.scope(region)
            if self._inference_only(region, scope) or not self._computes_with_gradients(region):
                continue
            if self._backward_follows(region, scope):
                return True
            if isinstance(scope, cst.FunctionDef):
                for site in self.funcs.call_sites(scope):
                    caller = self.idx.scope(site)
                    if not self._inference_only(site, caller) and self._backward_follows(site, caller):
                        return True
        return False

    def _regions(self, autocast: cst.Call) -> list[cst.CSTNode]:
        """The `with` statements that enter this autocast: directly or through a variable."""
        parent = self.idx.parent(autocast)
        if isinstance(parent, cst.WithItem):
            with_ = self.idx.parent(parent)
            return [with_] if with_ is not None else []
        statement = self.idx.statement(autocast)
        if not isinstance(statement, cst.Assign):
            return []
        names = {dotted(t.target) for t in statement.targets} - {None}
        return [
            with_
            for with_ in self.idx.nodes(cst.With)
            if any(dotted(item.item) in names for item in with_.items)
        ]

    def _computes_with_gradients(self, region: cst.CSTNode) -> bool:
        """Some call in the autocast block runs with gradients (not all of it is under `no_grad`)."""
        body = region.body if isinstance(region, cst.With) else region
        return any(
            not self.without_gradients(call) and not is_grad_free_call(call, self.imps)
            for call in self.idx.within(body, cst.Call)
        )

    def without_gradients(self, node: cst.CSTNode, stop_at_function: bool = True) -> bool:
        """`node` runs with gradients off: in a gradient-free block, unless that block is a
        `set_grad_enabled(flag)` that also runs a backward pass, which trains when its flag
        is true (one `run_epoch(loader, train=...)` for training and validation)."""
        return any(
            not (grad_mode_flag(block, self.imps) and self._runs_backward(block))
            for block in grad_free_blocks(self.idx, node, self.imps, stop_at_function)
        )

    def _runs_backward(self, block: cst.CSTNode) -> bool:
        body = block.body if isinstance(block, (cst.With, cst.FunctionDef)) else block
        return self.idx.holds_any(body, self.train.backward)

    def _inference_only(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        if self.without_gradients(node, stop_at_function=False):
            return True
        # A function named like an evaluation that runs its own backward pass trains (a
        # `test_*` repro script, pytorch/pytorch#115785).
        return (
            isinstance(scope, cst.FunctionDef)
            and name_says_evaluation(scope.name.value)
            and not any(self.idx.scope(backward) is scope for backward in self.train.backward)
        )

    def _backward_follows(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """A backward pass of `scope` runs inside `node` or after it within the same iteration."""
        loops = {id(loop) for loop in enclosing_loops(self.idx, node)}
        for backward in self._backward_by_scope.get(id(scope), []):
            if self.without_gradients(backward):
                continue
            if receiver(backward) is not None and positional(backward):
                continue  # `optimizer.backward(loss)`: an fp16 optimizer or engine scales the loss
            if self.idx.contains(node, backward):
                return True
            if self.idx.order(backward) > self.idx.end(node) and all(
                id(loop) in loops for loop in enclosing_loops(self.idx, backward)
            ):
                return True
        return False

    # -- scaler.step() without scaler.update() ---------------------------------------------

    def steps_without_update(self, step: cst.Call) -> bool:
        """`scaler.step(optimizer)` runs in a loop, and either no loop that runs it updates the
        scaler, or the training loop around it (the loop whose own body runs the backward pass)
        does not. A loop over optimizers steps each one and updates once after it: not a bug."""
        scaler = receiver(step)
        if scaler is None or self.train.optimizer_of(step) is scaler:
            return False  # an optimizer's own step(), not `scaler.step(optimizer)`
        updates = [c for c in self._updates if same_scaler(receiver(c), scaler)]
        loops = self._loops_running_steps.get(id(step), [])
        if not loops:
            return False
        if not any(self.train.events_in(updates, loop.body, self.funcs) for loop in loops):
            return True
        training_loops = [loop for loop in loops if self._runs_backward_itself(loop) and not over_optimizers(loop)]
        ids = {id(loop) for loop in training_loops}
        innermost = [
            loop
            for loop in training_loops
            if not any(id(inner) in ids for inner in loops_run_by(self.idx, self.funcs, loop.body))
        ]
        return any(not self.train.events_in(updates, loop.body, self.funcs) for loop in innermost)

    def skipped_update(self, unscale: cst.Call) -> cst.If | None:
        """The `if` that skips the scaler's `update()` on a path where `scaler.unscale_(...)`
        ran: `unscale_` outside it, every `update()` of that scaler after it inside it, and no
        `update()` in its other branch. The next `unscale_()` then raises "unscale_() has
        already been called on this optimizer since the last update()"."""
        scaler = receiver(unscale)
        if scaler is None or method_name(unscale) != "unscale_":
            return None
        scope = self.idx.scope(unscale)
        updates = [
            c for c in self._updates
            if same_scaler(receiver(c), scaler) and self.idx.scope(c) is scope and self.idx.order(c) > self.idx.order(unscale)
        ]
        if not updates:
            return None
        guards = [self._guard(update, unscale) for update in updates]
        if any(guard is None for guard in guards):
            return None
        guard = guards[0]
        assert guard is not None
        # `if args.amp: scaler.unscale_(...)` ... `if args.amp: scaler.update()`: the same
        # condition (or one that shares its names) holds both, so no path runs only one.
        tested = _tested_names(guard.test)
        for ancestor in self.idx.ancestors(unscale):
            if ancestor is scope:
                break
            if isinstance(ancestor, cst.If) and not self.idx.contains(ancestor, guard) and tested & _tested_names(ancestor.test):
                return None
        other = guard.orelse
        if other is not None and any(same_scaler(receiver(c), scaler) for c in self.idx.within(other, cst.Call) if method_name(c) == "update"):
            return None
        return guard

    def _guard(self, node: cst.CSTNode, outside: cst.CSTNode) -> cst.If | None:
        """The outermost `if` around `node` (in its function) whose body does not hold `outside`."""
        found: cst.If | None = None
        for ancestor in self.idx.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                break
            if isinstance(ancestor, cst.If) and self.idx.contains(ancestor.body, node) and not self.idx.contains(ancestor, outside):
                found = ancestor
        return found

    def _runs_backward_itself(self, loop: cst.For | cst.While) -> bool:
        scope = self.idx.scope(loop)
        return any(
            self.idx.contains(loop.body, b) and self.idx.scope(b) is scope for b in self.train.backward
        )

def _tested_names(test: cst.BaseExpression) -> set[str]:
    """The dotted names a condition reads (`args.fp16`, `args.amp`), not their prefixes."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None:
            found.add(name)
            continue
        stack.extend(node.children)
    return found


def scales_loss(idx: Index) -> bool:
    """Some identifier of the module names a loss scaler or a framework that scales the loss."""
    return any(SCALED.search(name) for name in {n.value for n in idx.nodes(cst.Name)})


def over_optimizers(loop: cst.For | cst.While) -> bool:
    """`for opt in optimizers:`: one pass per optimizer within a training step."""
    if not isinstance(loop, cst.For):
        return False
    names = [last_name(loop.target) or "", last_name(loop.iter) or ""]
    if isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Attribute):
        names.append(last_name(loop.iter.func.value) or "")
    return any(name_says_optimizer(name) for name in names)


def same_scaler(a: cst.BaseExpression | None, b: cst.BaseExpression) -> bool:
    name = (last_name(a) or "") if a is not None else ""
    return bool(name) and (name == last_name(b) or "scaler" in name.lower())


def amp(ctx: FileContext) -> Amp:
    return ctx.analysis(Amp)
