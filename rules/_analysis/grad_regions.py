"""Gradient-free regions: whether a node runs with autograd off. Beyond the `with` blocks and
decorators that `modes.in_grad_free_block` sees, gradients are off
- inside a context manager chosen by a flag (`with torch.no_grad() if evaluating else
  nullcontext():`, or one bound to a name first and entered later);
- after a `torch.set_grad_enabled(False)` statement, or an `ExitStack` that entered
  `no_grad()`, in the same scope (until one turns them back on);
- everywhere in a script that turns them off at module level for all it runs;
- in the hooks that a framework runs without gradients (Lightning's `validation_step`);
- in a function whose every call site in the module is gradient-free (followed up to
  `CALLER_DEPTH` callers up); a function without call sites in the module is not.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import method_name
from torchlint.rules._analysis.dataflow import bindings
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.modes import in_grad_free_block, is_grad_free_call
from torchlint.rules._analysis.names import dotted, imports

# How many levels of callers to follow when asking "is every caller gradient-free?".
CALLER_DEPTH = 4
# Lightning runs these hooks under `torch.no_grad()` (its evaluation loops).
LIGHTNING_GRAD_FREE_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})


def framework_grad_free(funcs: Functions, func: cst.FunctionDef) -> bool:
    """A hook that its framework runs without gradients: `validation_step` / `test_step` /
    `predict_step` of a class with a Lightning base."""
    if func.name.value not in LIGHTNING_GRAD_FREE_HOOKS:
        return False
    owner = funcs.enclosing_class(func)
    return owner is not None and any("Lightning" in (dotted(base.value) or "") for base in owner.bases)


class GradRegions:
    """The gradient-free regions of one module (see the module docstring)."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.bindings = bindings(ctx)
        self._switches: dict[int, list[tuple[int, bool]]] = {}
        self._callers_free: dict[int, bool] = {}

    def grad_free(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """Whether `node` runs with gradients off: in its own scope, or because its function
        is a framework's gradient-free hook or is called only from gradient-free code."""
        if self.module_off or in_grad_free_block(self.idx, node, self.imps) or self.switched_off(node):
            return True
        if self.in_chosen_block(node):
            return True
        scope = self.idx.scope(node)
        if not isinstance(scope, cst.FunctionDef) or depth >= CALLER_DEPTH:
            return False
        if framework_grad_free(self.funcs, scope):
            return True
        cached = self._callers_free.get(id(scope))
        if cached is None:
            self._callers_free[id(scope)] = False  # recursion reads "no"
            sites = [s for s in self.funcs.call_sites(scope) if not self.idx.contains(scope, s)]
            cached = bool(sites) and all(self.grad_free(site, depth + 1) for site in sites)
            self._callers_free[id(scope)] = cached
        return cached

    @cached_property
    def module_off(self) -> bool:
        """A script that turns gradients off at module level for everything it runs."""
        switches = self._switch_events(self.idx.module)
        return bool(switches) and all(off for _, off in switches)

    def switched_off(self, node: cst.CSTNode) -> bool:
        """The last `set_grad_enabled` / `enter_context(no_grad())` before `node` in its scope
        turned gradients off."""
        order = self.idx.order(node)
        state = False
        for at, off in self._switch_events(self.idx.scope(node)):
            if at >= order:
                break
            state = off
        return state

    def _switch_events(self, scope: cst.CSTNode) -> list[tuple[int, bool]]:
        """(source order, gradients off) of the switches in `scope`'s own code."""
        found = self._switches.get(id(scope))
        if found is None:
            found = []
            for call in self.idx.within(scope, cst.Call):
                if self.idx.scope(call) is not scope:
                    continue
                name = self.imps.qualify(call.func) or ""
                if name.endswith("set_grad_enabled") and isinstance(self.idx.parent(call), cst.Expr):
                    found.append((self.idx.order(call), is_grad_free_call(call, self.imps)))
                elif method_name(call) == "enter_context" and call.args:
                    if is_grad_free_call(call.args[0].value, self.imps):
                        found.append((self.idx.order(call), True))
            self._switches[id(scope)] = found
        return found

    def in_chosen_block(self, node: cst.CSTNode) -> bool:
        """`with torch.no_grad() if evaluating else nullcontext():`, or a context manager
        chosen earlier (`ctx = torch.no_grad() if ... else ...; with ctx:`)."""
        for ancestor in self.idx.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(ancestor, cst.With) and self.idx.contains(ancestor.body, node):
                if any(self._may_be_grad_free(item.item) for item in ancestor.items):
                    return True
        return False

    def _may_be_grad_free(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(expr, cst.IfExp):
            return self._may_be_grad_free(expr.body, depth) or self._may_be_grad_free(expr.orelse, depth)
        if isinstance(expr, cst.Name) and depth < 3:
            binding = self.bindings.seen_by(expr)
            return binding is not None and binding.value is not None and self._may_be_grad_free(binding.value, depth + 1)
        return isinstance(expr, cst.Call) and is_grad_free_call(expr, self.imps)


def grad_regions(ctx: FileContext) -> GradRegions:
    return ctx.analysis(GradRegions)
