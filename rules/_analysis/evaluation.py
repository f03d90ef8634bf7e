"""Evaluation passes: which model each scope puts in eval mode and from when (the mode
timeline), which calls run that model, and what makes running it with gradients deliberate.

- The timeline: per scope, `model.eval()` / `model.train(False)` (eval), `model.train()` or
  `model.train(flag)` (train: a flag may mean either), and a rebinding of the name to
  something else (reset); `Net().to(device).eval()` names the model it is assigned to.
- Runs of a model: `model(x)`, `model.forward(x)`, a method of the model whose name says it
  runs the forward (`self.model.infer(x)`), a method of the same class that runs it
  (`self.infer(x)`), a function of another project module given it (`predict(model, x)`),
  and a function whose every caller passes it a model in eval mode (`test_net(net)`).
- Deliberate gradients: frozen parameters (`freezing`), a later backward or optimizer step,
  input gradients asked for, and a helper that saves the training flags to restore them.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import (
    first_argument,
    bind_arguments,
    called_module,
    keyword,
    method_name,
    parameter_names,
    receiver,
)
from torchlint.rules._analysis.dataflow import assigned_values, Binding, bindings, target_names
from torchlint.rules._analysis.devices import FACTORIES
from torchlint.rules._analysis.graphs import is_loss_call
from torchlint.rules._analysis.grad_regions import grad_regions
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.flow import skipped_by
from torchlint.rules._analysis.freezing import freezing
from torchlint.rules._analysis.modes import (
    SELF_RETURNING,
    assigned_chain_target,
    grad_free_decorated,
    in_grad_free_block,
    strip_self_returning,
)
from torchlint.rules._analysis.names import dotted, Imports, imports, last_name, mentions
from torchlint.rules._analysis.networks import mode_owned_elsewhere, networks
from torchlint.rules._vocabulary import name_says_forward

_OPTIMIZER_NAME = re.compile(r"opt|scaler", re.IGNORECASE)
_BUILTINS = frozenset(dir(builtins))
# TorchServe calls a handler's `initialize(context)` once and these hooks per request.
SERVING_SETUP = "initialize"
SERVING_REQUEST_HOOKS = ("handle", "preprocess", "inference", "postprocess", "explain_handle")


def _is_literal(expr: cst.BaseExpression | None, value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


def mode_kind(call: cst.Call) -> str | None:
    """`eval` for `x.eval()` and `x.train(False)`, `train` for `x.train()` and `x.train(flag)`."""
    method = method_name(call)
    if method == "eval" and not call.args:
        return "eval"
    if method == "train" and len(call.args) <= 1:
        if not call.args:
            return "train"
        # A flag (`model.train(is_training)`) may mean either: count it as training.
        return "eval" if _is_literal(first_argument(call, "mode"), "False") else "train"
    return None


@dataclass(frozen=True)
class ModeEvent:
    """`key` is put in eval mode (`eval`), back in training mode (`train`), or rebound
    (`reset`) from source order `order` of its scope on."""

    key: str
    order: int
    kind: str
    call: cst.CSTNode
    # The setup method whose mode holds from the start of this one (a framework's
    # per-request hook, or any method after the constructor).
    set_in: str | None = None

    @property
    def per_request(self) -> bool:
        return self.set_in == SERVING_SETUP


class Evaluations:
    """The mode timeline of one module and the questions asked about its evaluation passes."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx: Index = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.bindings = bindings(ctx)
        self.regions = grad_regions(ctx)
        self.freezing = freezing(ctx)
        self.events: dict[int, list[ModeEvent]] = {}
        self._scopes: dict[int, cst.CSTNode] = {}
        self._restores: dict[tuple[int, str], bool] = {}
        self._collect_events()

    # -- the timeline ---------------------------------------------------------

    def subject(self, call: cst.Call) -> tuple[str, int] | None:
        """The model that a mode call acts on, and the source order from which it holds."""
        owner = strip_self_returning(receiver(call))
        name = dotted(owner) if owner is not None else None
        if name is not None:
            return name, self.idx.order(call)
        # `model = Net().to(device).eval()`: the assigned name.
        target = assigned_chain_target(self.idx, call)
        if target is None:
            return None
        assign = self.idx.enclosing(call, (cst.Assign,))
        assert assign is not None
        return target, self.idx.end(assign)

    def _assigned_alias(self, call: cst.Call, key: str) -> tuple[str, int] | None:
        """`self.model_ = model.eval().to(device)`: the switched model stored on an object is
        also the assigned attribute (the chain returns the module itself), in that mode from
        the end of the assignment on. (A local alias, `net = self.net.eval()` in a network's
        `forward`, is left to the caller that chooses the gradient mode.)"""
        target = assigned_chain_target(self.idx, call)
        if target is None or target == key or "." not in target:
            return None
        assign = self.idx.enclosing(call, (cst.Assign,))
        assert assign is not None
        return target, self.idx.end(assign)

    def _collect_events(self) -> None:
        keys: dict[int, set[str]] = {}
        for call in self.idx.nodes(cst.Call):
            kind = mode_kind(call)
            found = self.subject(call) if kind is not None else None
            if kind is None or found is None:
                continue
            key, order = found
            scope = self.idx.scope(call)
            self._scopes[id(scope)] = scope
            self.events.setdefault(id(scope), []).append(ModeEvent(key, order, kind, call))
            keys.setdefault(id(scope), set()).add(key)
            alias = self._assigned_alias(call, key)
            if alias is not None:
                self.events[id(scope)].append(ModeEvent(alias[0], alias[1], kind, call))
                keys[id(scope)].add(alias[0])
        if not self.events:
            return
        self._hold_setup_modes()
        for assign in self.idx.nodes(cst.Assign):
            scope_keys = keys.get(id(self.idx.scope(assign)))
            if not scope_keys:
                continue
            for target in assign.targets:
                rebound = dotted(target.target)
                if rebound is not None and rebound in scope_keys and not self._keeps_model(assign, rebound):
                    events = self.events[id(self.idx.scope(assign))]
                    events.append(ModeEvent(rebound, self.idx.end(assign), "reset", assign))
        for events in self.events.values():
            events.sort(key=lambda e: e.order)

    def _keeps_model(self, assign: cst.Assign, key: str) -> bool:
        """`model = model.to(device)` or `model = Net().eval()`: the mode is known, not reset."""
        value = assign.value
        if dotted(strip_self_returning(value) or value) == key:
            return True
        while isinstance(value, cst.Call) and method_name(value) in SELF_RETURNING:
            if mode_kind(value) is not None:
                return True
            value = receiver(value) or value
        return False

    def _hold_setup_modes(self) -> None:
        """A method that runs before the others leaves its eval mode on a `self.` model when
        each of them starts, unless the class puts the model back in training: TorchServe's
        `initialize()` (a class with `initialize` and `handle`) before its per-request hooks,
        and the constructor of an inference wrapper before every other method."""
        for name, methods in self.funcs.methods.items():
            if SERVING_SETUP in methods and "handle" in methods:
                setup, hooks = methods[SERVING_SETUP], [methods[h] for h in SERVING_REQUEST_HOOKS if h in methods]
            elif "__init__" in methods and self._inference_wrapper(name, methods):
                setup, hooks = methods["__init__"], [m for m in methods.values() if m.name.value != "__init__"]
            else:
                continue
            trained = {e.key for m in methods.values() for e in self.events.get(id(m), ()) if e.kind != "eval"}
            last = {e.key: e for e in self.events.get(id(setup), ()) if e.key.startswith("self.")}
            held = [e for e in last.values() if e.kind == "eval" and e.key not in trained]
            for hook in hooks if held else ():
                self._scopes[id(hook)] = hook
                start = [ModeEvent(e.key, self.idx.order(hook), "eval", e.call, setup.name.value) for e in held]
                self.events[id(hook)] = start + self.events.get(id(hook), [])

    def _inference_wrapper(self, name: str, methods: dict[str, cst.FunctionDef]) -> bool:
        """A class that only applies the models it holds: not a network (whose owner's
        `train()` reaches the models it holds), not a framework class (whose framework sets
        the mode), no method back-propagates, steps an optimizer or asks for gradients, and
        no module of the project turns gradients off (as its callers there may around it)."""
        if "forward" in methods or networks(self.ctx).is_module_class(name) or sm.project_disables_grad(self.ctx):
            return False
        own = sm.local_entry(self.ctx, name)
        if own is not None and sm.is_module_class(self.ctx, own):
            return False
        if mode_owned_elsewhere(self.funcs, self.imps, methods["__init__"]):
            return False
        return not any(self.wants_gradients(m, -1) for m in methods.values())

    def evaluating_scopes(self) -> list[tuple[cst.CSTNode, set[str]]]:
        """Each scope that puts a model in eval mode, with the models it does."""
        found: list[tuple[cst.CSTNode, set[str]]] = []
        for scope_id, events in self.events.items():
            keys = {e.key for e in events if e.kind == "eval"}
            if keys:
                found.append((self._scopes[scope_id], keys))
        return found

    def evaluated(self) -> set[str]:
        """Every model that some scope puts in eval mode."""
        return {e.key for events in self.events.values() for e in events if e.kind == "eval"}

    def own_keys(self, scope: cst.CSTNode) -> set[str]:
        """The models whose mode `scope` itself sets or rebinds."""
        return {e.key for e in self.events.get(id(scope), ())}

    def mode_before(self, scope: cst.CSTNode, key: str, order: int) -> ModeEvent | None:
        """The last event of `key` in `scope` before source order `order`."""
        latest = None
        for event in self.events.get(id(scope), ()):
            if event.order >= order:
                break
            if event.key == key:
                latest = event
        return latest

    def eval_before(self, node: cst.CSTNode, key: str) -> ModeEvent | None:
        """The eval event that holds for `key` at `node` in its scope, or None (also when the
        switch sits in a block that returns before `node`)."""
        scope = self.idx.scope(node)
        event = self.mode_before(scope, key, self.idx.order(node))
        if event is None or event.kind != "eval" or not self._may_follow(event.call, node):
            return None
        return event

    # -- runs of a model ------------------------------------------------------

    def runs_model(self, call: cst.Call, keys: set[str]) -> str | None:
        """Which of the models `keys` a call runs with gradients: `model(x)`,
        `model.forward(x)`, `model.infer(x)` (unless that method is known to turn gradients
        off), or through a helper (a method of the same class, a project function given it)."""
        key = forward_key(call, keys)
        if key is not None and method_name(call) not in (None, "forward") and self._grad_free_method(call):
            return None
        return key or self._through_helper(call, keys)

    def _grad_free_method(self, call: cst.Call) -> bool:
        """`model.predict(x)` where `predict` of the model's class (in this module, or in
        another of the project) is decorated with `no_grad` or enters it."""
        if {"grad_free", "enters_grad_free"} & sm.call_effects(self.ctx, call):
            return True
        method = method_name(call) or ""
        for value in assigned_values(self.ctx).get(dotted(receiver(call) or call) or "", []):
            built = strip_self_returning(value)
            if not (isinstance(built, cst.Call) and isinstance(built.func, cst.Name)):
                continue
            found = self.funcs.method(built.func.value, method)
            if found is not None and (
                grad_free_decorated(found, self.imps)
                or any(in_grad_free_block(self.idx, c, self.imps) for c in self.idx.within(found, cst.Call))
            ):
                return True
        return False

    def _through_helper(self, call: cst.Call, keys: set[str]) -> str | None:
        if dotted(receiver(call) or call.func) == "self":
            for method in self.funcs.resolve(call):
                if any(e.set_in for e in self.events.get(id(method), ())):
                    continue  # a hook whose mode holds from its start reports its own runs
                for inner in self.idx.within(method, cst.Call):
                    key = forward_key(inner, {k for k in keys if k.startswith("self.")})
                    if key is not None and not in_grad_free_block(self.idx, inner, self.imps):
                        return key
            return None
        passed = [dotted(arg.value) for arg in call.args]
        for key in keys:
            if key in passed and sm.runs_with_gradients(self.ctx, call, key):
                return key
        return self._through_local_function(call, keys)

    def _through_local_function(self, call: cst.Call, keys: set[str]) -> str | None:
        """`run_epoch(loader, model, loss)` of a function of this module that runs the
        parameter bound to one of `keys` with gradients, neither back-propagates nor asks for
        input gradients on this call's path (`if optimizer is not None: loss.backward()` with
        no optimizer passed), and does not put it in train mode.
        When every caller hands it a model in eval mode, the function's own forward is what
        gets reported (`eval_from_callers`), not each call."""
        for func in self.funcs.resolve(call):
            if id(func) in self.funcs.class_of or grad_free_decorated(func, self.imps):
                continue
            if self._referenced_uncalled(func, self.funcs.call_sites(func)):
                continue  # also a callback: what its callers do with gradients is not in sight
            if any(not skipped_by(self.funcs, func, call, node) for node in self.gradient_requests(func)):
                continue  # it trains, or wants input gradients (an attack), on this call's path
            for param, arg in bind_arguments(self.funcs, func, call).items():
                key = dotted(arg)
                if key not in keys or self.eval_from_callers(func, param) is not None:
                    continue
                inner_calls = self.idx.within(func, cst.Call)
                if any(method_name(c) == "train" and dotted(receiver(c) or c) == param for c in inner_calls):
                    continue
                if any(forward_key(c, {param}) and not self.regions.grad_free(c) for c in inner_calls):
                    return key
        return None

    def eval_from_callers(self, func: cst.FunctionDef, name: str) -> ModeEvent | None:
        """The eval-mode event that holds for `name` at every call site of `func` (a
        parameter: the model passed for it; a global: the name itself), with gradients on
        there and none wanted; None when any call site differs, or when `func` is also
        handed around (a callback: callers this module does not show)."""
        is_parameter = name in parameter_names(func)
        if not is_parameter and name in self.bindings.of(func):
            return None  # a local of the function: not what any caller switched
        sites = [s for s in self.funcs.call_sites(func) if not self.idx.contains(func, s)]
        if not sites:
            return None
        found = None
        for site in sites:
            key: str | None = name
            if is_parameter:
                passed = bind_arguments(self.funcs, func, site).get(name)
                key = dotted(passed) if passed is not None else None
            event = self.eval_before(site, key) if key is not None else None
            if key is None or event is None or self.wants_gradients(self.idx.scope(site), event.order, event.call):
                return None
            if self.freezing.is_frozen(key) or self.regions.grad_free(site):
                return None
            found = event
        return None if self._referenced_uncalled(func, sites) else found

    def _referenced_uncalled(self, func: cst.FunctionDef, sites: list[cst.Call]) -> bool:
        called = {id(site.func) for site in sites}
        return any(
            use is not func.name and id(use) not in called
            for use in mentions(self.idx, self.idx.module, func.name.value)
        )

    # -- legacy evaluation ----------------------------------------------------

    @cached_property
    def volatile_runs(self) -> dict[int, cst.Call]:
        """Calls of a model on an input made with `Variable(x, volatile=True)` (id -> call):
        the legacy way to evaluate without a graph, which has no effect since PyTorch 0.4.
        A model here is a callee that the module neither imports nor defines, nor a
        builtin or a loss (`criterion(out, target_var)`)."""
        found: dict[int, cst.Call] = {}
        if "volatile" not in self.ctx.source:
            return found
        for variable in self.idx.nodes(cst.Call):
            qualified = self.imps.qualify(variable.func) or ""
            if not (qualified.startswith("torch.") and qualified.endswith(".Variable")):
                continue
            flag = keyword(variable, "volatile")
            if flag is None or not _is_literal(flag.value, "True"):
                continue
            holder = self.idx.parent(self.idx.parent(variable) or variable)
            if isinstance(holder, cst.Call) and self._runs_as_model(holder):
                found[id(holder)] = holder
                continue
            statement = self.idx.parent(variable)
            names: set[str] = set()
            if isinstance(statement, cst.Assign):
                names = {n.value for n in target_names(statement.targets[0].target)}
            after = self.idx.order(variable)
            scope = self.idx.scope(variable)
            for call in self.idx.within(scope, cst.Call):
                if self.idx.order(call) > after and self.idx.scope(call) is scope and self._runs_as_model(call):
                    passed = {n.value for arg in call.args for n in self.idx.within(arg.value, cst.Name)}
                    if passed & names:
                        found[id(call)] = call
                        break
        return found

    def _runs_as_model(self, call: cst.Call) -> bool:
        module = called_module(call)
        if module is None or self.imps.is_imported(call.func) or self.funcs.resolve(call):
            return False
        name = dotted(module) or ""
        local_class = name in self.funcs.methods
        return not (local_class or name in _BUILTINS or is_loss_call(self.imps, call))

    # -- deliberate gradients -------------------------------------------------

    def runs_parameter_free(self, call: cst.Call, key: str) -> bool:
        """`features(spec)` where `features` is only ever built as a class of this module
        that owns no parameters (only buffers) and `spec` needs no gradient: the forward
        records no graph, so gradients being enabled costs nothing."""
        built = [strip_self_returning(v) for v in assigned_values(self.ctx).get(key, [])]
        nets = networks(self.ctx)
        if not built or not all(
            isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and nets.parameter_free(v.func.value) for v in built
        ):
            return False
        return self.needs_no_gradient(call.args)

    def needs_no_gradient(self, args: Sequence[cst.Arg]) -> bool:
        """Every argument is data that needs no gradient: names bound only by loops over
        data or by torch factory calls, their subscripts and attributes, and literals; no
        call other than a torch function, and nothing in the module asks for `requires_grad`."""
        if "requires_grad" in self.ctx.source:
            return False
        idx = self.idx
        for arg in args:
            for call in idx.within(arg.value, cst.Call):
                if not (self.imps.callee(call) or "").startswith("torch.") or keyword(call, "requires_grad"):
                    return False
            for name in idx.within(arg.value, cst.Name):
                parent = idx.parent(name)
                if isinstance(parent, cst.Attribute) and parent.attr is name:
                    continue
                if (self.imps.qualify(name) or "").startswith("torch"):
                    continue
                reaching = self.bindings.reaching(name)
                if not reaching or not all(_binds_data(b, self.imps) for b in reaching):
                    return False
        return True

    def wants_gradients(self, scope: cst.CSTNode, after: int, since: cst.CSTNode | None = None) -> bool:
        """The scope back-propagates or steps after `after`, or asks for input gradients. With
        `since` (the eval switch at `after`), training that cannot follow it does not count:
        code after a block that holds the switch and returns (`if args.eval_only: ... return`)."""
        return any(
            self.idx.order(node) > after and (since is None or self._may_follow(since, node))
            for node in self.gradient_requests(scope)
        )

    def gradient_requests(self, scope: cst.CSTNode) -> list[cst.CSTNode]:
        """What in `scope` needs gradients: a backward pass, `torch.autograd.grad`, an
        optimizer's step, `x.requires_grad_()` and `requires_grad=True`."""
        found: list[cst.CSTNode] = []
        for call in self.idx.within(scope, cst.Call):
            method = method_name(call)
            name = self.imps.qualify(call.func) or ""
            kw = keyword(call, "requires_grad")
            if (
                method in ("backward", "manual_backward")
                or name.endswith(("autograd.backward", "autograd.grad"))
                or (method == "step" and _OPTIMIZER_NAME.search(last_name(receiver(call) or call) or ""))
                or (method == "requires_grad_" and not _is_literal(first_argument(call, "requires_grad"), "False"))
                or (kw is not None and _is_literal(kw.value, "True"))
            ):
                found.append(call)
        for assign in self.idx.within(scope, cst.Assign):
            if _is_literal(assign.value, "True") and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in assign.targets
            ):
                found.append(assign)
        return found

    def _may_follow(self, since: cst.CSTNode, node: cst.CSTNode) -> bool:
        """`node`, later in source order, may run after `since`: no block that holds `since`
        and not `node` returns or raises after it."""
        current = since
        for parent in self.idx.ancestors(since):
            if isinstance(parent, (cst.FunctionDef, cst.Module)) or self.idx.contains(parent, node):
                return True
            if isinstance(parent, cst.IndentedBlock):
                later = list(parent.body)[list(parent.body).index(current) + 1 :]  # type: ignore[arg-type]
                if any(self.idx.within(s, cst.Return, cst.Raise) for s in later if isinstance(s, cst.SimpleStatementLine)):
                    return False
            current = parent
        return True

    def restores_mode(self, scope: cst.CSTNode, key: str) -> bool:
        """The scope saves the model's training flags to put them back afterwards
        (`was_training = model.training`, kornia's `modes = [m.training for m in
        module.modules()]`): a helper that switches the mode for one call and leaves it to
        its caller whether gradients are wanted."""
        cached = self._restores.get((id(scope), key))
        if cached is None:
            cached = self._restores[(id(scope), key)] = self._saves_mode(scope, key)
        return cached

    def _saves_mode(self, scope: cst.CSTNode, key: str) -> bool:
        walks_modules = any(
            method_name(call) in ("modules", "children", "named_modules") and dotted(receiver(call) or call) == key
            for call in self.idx.within(scope, cst.Call)
        )
        for attr in self.idx.within(scope, cst.Attribute):
            if attr.attr.value != "training" or self.idx.scope(attr) is not scope:
                continue
            owner = dotted(attr.value)
            statement = self.idx.statement(attr)
            saved = isinstance(statement, cst.Assign) and self.idx.contains(statement.value, attr)
            if saved and (owner == key or (walks_modules and isinstance(attr.value, cst.Name))):
                return True
        return False


def _binds_data(binding: Binding, imps: Imports) -> bool:
    """A loop over data (`for spec in batches`), or a torch factory call (`torch.randn(...)`)."""
    if isinstance(binding.node, cst.For):
        return True
    value = binding.value
    return isinstance(value, cst.Call) and imps.callee(value) in FACTORIES


def forward_key(call: cst.Call, keys: set[str]) -> str | None:
    """Which of `keys` the call runs directly: `model(x)`, `model.forward(x)`, or a method
    whose name says it runs the forward (`model.infer(x)`, `net.predict(x)`)."""
    name = dotted(call.func)
    if name is not None and name in keys:
        return name
    owner = receiver(call)
    owner_name = dotted(owner) if owner is not None and name_says_forward(method_name(call)) else None
    return owner_name if owner_name is not None and owner_name in keys else None


def evaluations(ctx: FileContext) -> Evaluations:
    return ctx.analysis(Evaluations)
