"""Devices: whether a module places work on a CUDA device, and where a tensor that a
module's `forward` creates goes: moved to a device, mixed with a tensor on the model's
device, returned as the model's output, or kept on the host (an index, a shape, a value read
back). Follows values through local bindings, `self` attributes, helper methods and their
call sites. And in distributed training: the process groups a module starts, whether it
selects each process's GPU, which calls wrap a model in `DistributedDataParallel`, and
whether it puts its models on each process's own GPU or on one that every process shares.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Iterable, Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions, Functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    callee_name,
    is_false,
    keyword,
    method_name,
    positional,
    positional_parameters,
    receiver,
)
from torchlint.rules._analysis.dataflow import assigned_values, bindings, target_names
from torchlint.rules._analysis.flow import chain_blocks, in_exclusive_branches
from torchlint.rules._analysis.index import children, Index, index
from torchlint.rules._analysis.modes import model_key, strip_self_returning
from torchlint.rules._analysis.networks import networks
from torchlint.rules._analysis.names import calls_to, dotted, Imports, imports, last_name, mentions, string_text
from torchlint.rules._vocabulary import (
    CUDA_TEXT,
    DEVICE_WORDS,
    HOST_READS,
    METADATA,
    METADATA_CALLS,
    RANK_WORDS,
    SCALAR_ARG_METHODS,
    VISIBLE_DEVICES,
    call_selects_gpu,
    name_says_model_run,
    name_tokens,
    says_host,
)


def uses_cuda(ctx: FileContext) -> bool:
    """The module places work on a CUDA device: a `.cuda()` call, a `"cuda..."` device string,
    or the NCCL backend. (`torch.cuda.is_available()` alone is not placement.)"""
    return ctx.analysis(_build_uses_cuda)


def _build_uses_cuda(ctx: FileContext) -> bool:
    if "cuda" not in ctx.source and "nccl" not in ctx.source:
        return False
    idx = index(ctx)
    if any(method_name(call) == "cuda" for call in idx.nodes(cst.Call)):
        return True
    for node in idx.nodes(cst.SimpleString, cst.FormattedString):
        text = string_text(node)
        # A device string, not an item of a list of names (`["cuda", "cpu"]`) or a docstring.
        if text is not None and CUDA_TEXT.match(text) and not isinstance(idx.parent(node), (cst.Element, cst.Expr)):
            return True
    return False


def copies_asynchronously(idx: Index) -> bool:
    """`x.cuda(non_blocking=True)` / `x.to(device, non_blocking=True)` somewhere in the module:
    host-to-device copies asked to overlap with compute (which only pinned memory allows)."""
    return any(
        arg.keyword is not None and arg.keyword.value == "non_blocking" and not is_false(arg.value)
        for arg in idx.nodes(cst.Arg)
    )


FACTORIES = frozenset(
    f"torch.{name}"
    for name in "zeros ones empty full arange rand randn randint randperm eye tensor linspace logspace from_numpy".split()
)
# Methods that put their receiver where the model is.
MOVES = frozenset({"to", "cuda", "type_as"})
# Builtins that bring a value back to the host: the tensor never meets the model.
HOST_BUILTINS = frozenset({"float", "int", "bool", "len", "list", "tuple", "range", "str"})
# Wrapping a tensor in these registers it with the module, which `.to(device)` moves.
REGISTERS = frozenset({"register_buffer", "Parameter", "register_parameter"})
DTYPES = frozenset(
    """float float32 float16 float64 half double bfloat16 long int int64 int32 int16 int8 uint8
    bool complex64 complex128 cfloat cdouble""".split()
)
# Methods that `self.<name>(...)` may call without being a submodule.
SELF_HELPERS = frozenset({"register_buffer", "register_parameter", "parameters", "buffers", "modules", "children"})
SHAPED = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})
# Factories whose result is always one-dimensional.
ONE_DIMENSIONAL = frozenset({"arange", "linspace", "logspace", "randperm"})
# Reductions that, called without arguments, give a 0-dim tensor (which mixes with CUDA tensors).
REDUCTIONS = frozenset("sum mean max min prod norm any all std var median amax amin".split())
# Methods that keep a tensor's shape: an element of the result is still a scalar.
ELEMENTWISE = frozenset("float long int half double bool clamp abs neg exp log sqrt".split())
MAX_FLOW = 5
# LightningModule hooks that Lightning runs on the module's device with the batch moved there.
LIGHTNING_STEPS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})


def mentions_device(ctx: FileContext) -> bool:
    """The file runs models somewhere other than the default device: CUDA, or any `device`."""
    if uses_cuda(ctx):
        return True
    idx = index(ctx)
    return any(node.value == "device" for node in idx.nodes(cst.Name))


def runs_on_device(ctx: FileContext) -> bool:
    """The file, or another module of its project, runs models somewhere other than the
    default device (`mentions_device`; for other modules, their summaries' `places_on_device`)."""
    return mentions_device(ctx) or sm.project_places_on_device(ctx)


def sets_default_device(ctx: FileContext) -> bool:
    return any(
        callee_name(call) in ("set_default_device", "set_default_tensor_type")
        for call in index(ctx).nodes(cst.Call)
    )


class Fate(Enum):
    """What happens to a CPU tensor: moved to a device, mixed with a tensor on the model's
    device, returned by `forward`, or none of these (kept local, used as an index, read on
    the host)."""

    MOVED = 3
    MIXED = 2
    RETURNED = 1  # returned by `forward`: the model's output
    NONE = 0


def _worst(flows: Iterable[Fate]) -> Fate:
    """A move anywhere means the author placed the tensor; otherwise any mix is the bug."""
    return max(flows, key=lambda flow: flow.value, default=Fate.NONE)


class ForwardFactories:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.bindings = bindings(ctx)
        self._device_names: dict[tuple[int, str | None], set[str]] = {}
        # Local names holding a one-dimensional factory result (scope id, name): an element is a scalar.
        self._one_dimensional: set[tuple[int, str]] = set()
        # The parameter of a helper that currently holds the CPU tensor being followed (function id -> name).
        self._following: dict[int, str] = {}
        self._tensor_attrs: dict[str, set[str]] = {}
        self.classes = {cls.name.value: cls for cls in self.idx.nodes(cst.ClassDef)}
        # Module-level functions that a layer's `forward` in another module calls, with the
        # positions of the parameters to which it passes its own inputs: those are taken as
        # a `forward`'s inputs are.
        self._run_by_other_forwards: dict[int, set[int]] = {}
        # Of those, the names of the ones whose results such a `forward` computes with.
        self._mixed_by_other_forwards: frozenset[str] | None = None

    # -- where to look ----------------------------------------------------------

    def is_module_class(self, name: str) -> bool:
        return networks(self.ctx).is_module_class(name)

    def lightning_classes(self) -> list[str]:
        return [name for name in self.classes if self.is_lightning_class(name)]

    def is_lightning_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        cls = self.classes.get(name)
        if cls is None or name in _seen:
            return False
        return any(
            (self.imps.qualify(base.value) or "").endswith("LightningModule")
            or self.is_lightning_class(last_name(base.value) or "", _seen | {name})
            for base in cls.bases
        )

    def forwards(self) -> Iterator[tuple[cst.FunctionDef, list[cst.FunctionDef]]]:
        """Each module class's `forward` (and a LightningModule's step hooks) with the methods
        and module-level functions of this file it runs; each module-level function that a
        layer's `forward` in another module of this folder calls, with what it runs; and each
        other function that creates tensors on its inputs' device (`device_following`), alone."""
        covered: set[int] = set()
        for name, methods in self.funcs.methods.items():
            if not self.is_module_class(name):
                continue
            roots = ["forward", *(LIGHTNING_STEPS if self.is_lightning_class(name) else ())]
            for root in roots:
                method = methods.get(root)
                if method is not None:
                    run = self._methods_run_by(method)
                    covered.update(id(f) for f in run)
                    yield method, run
        top_level = {f.name.value: f for f in self.funcs.all if self.funcs.enclosing_class(f) is None}
        for name, positions in sm.called_from_methods(self.ctx, ("forward",)).items():
            func = top_level.get(name)
            if func is not None and self.idx.scope(func) is self.ctx.module:
                self._run_by_other_forwards[id(func)] = set(positions)
                run = self._methods_run_by(func)
                covered.update(id(f) for f in run)
                yield func, run
        for func in self.funcs.all:
            if id(func) not in covered and self.device_following(func):
                yield func, [func]

    def device_following(self, func: cst.FunctionDef) -> set[str]:
        """The parameters of `func` on whose device its own code creates tensors (`torch.zeros(n,
        device=scores.device)`): tensors that may live on a GPU, since the author places new
        tensors where they are. A helper of a structured layer or a loss that nothing in this
        file runs from a `forward` is written to run on its inputs' device all the same."""
        params = {p.name.value for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)}
        found: set[str] = set()
        for call in self.idx.within(func, cst.Call):
            if self.idx.scope(call) is not func or self.imps.callee(call) not in FACTORIES:
                continue
            device = keyword(call, "device")
            value = device.value if device is not None else None
            if isinstance(value, cst.Attribute) and value.attr.value == "device" and isinstance(value.value, cst.Name):
                found.add(value.value.value)
        return found & params - {"self", "cls"}

    def _mixed_by_others(self) -> frozenset[str]:
        if self._mixed_by_other_forwards is None:
            self._mixed_by_other_forwards = frozenset(sm.mixed_by_methods(self.ctx, ("forward",)))
        return self._mixed_by_other_forwards

    def _methods_run_by(self, forward: cst.FunctionDef) -> list[cst.FunctionDef]:
        found: dict[int, cst.FunctionDef] = {id(forward): forward}
        stack = [forward]
        while stack:
            current = stack.pop()
            for call in self.idx.within(current, cst.Call):
                if self._self_call(call) or isinstance(call.func, cst.Name):
                    for method in self.funcs.resolve(call):
                        if id(method) not in found:
                            found[id(method)] = method
                            stack.append(method)
        return list(found.values())

    def first_tensor_input(self, func: cst.FunctionDef) -> str | None:
        """`x` for `def forward(self, x, ...)`: the first parameter that holds a device tensor."""
        names = self._names_on_device(func)
        return next((p.name.value for p in func.params.params if p.name.value in names), None)

    def _function_call_in_function(self, call: cst.Call) -> bool:
        """`make_grid(h, w)` in a function or method: a module-level helper's call site."""
        return isinstance(call.func, cst.Name) and isinstance(self.idx.scope(call), cst.FunctionDef)

    def _self_call(self, call: cst.Call) -> bool:
        owner = receiver(call)
        return isinstance(owner, cst.Name) and owner.value == "self"

    # -- which factories --------------------------------------------------------

    def is_factory(self, call: cst.Call) -> bool:
        if self.imps.callee(call) not in FACTORIES:
            return False
        if any(arg.star for arg in call.args) or keyword(call, "device") or keyword(call, "out"):
            return False
        if _zero_dim_or_empty(call) or _placeholder(self.idx, call) or _scalar_element(self.idx, call):
            return False
        return not self._device_guarded(call)

    def _device_guarded(self, call: cst.Call) -> bool:
        """`if x.is_cuda: ... else: t = torch.rand(n)`: a branch chosen by the device, whose
        author placed each tensor on purpose."""
        scope = self.idx.scope(call)
        for ancestor in self.idx.ancestors(call):
            if ancestor is scope:
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and not self.idx.contains(ancestor.test, call):
                if self._tests_device(ancestor.test, scope):
                    return True
        return False

    def _tests_device(self, test: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        tests = [test]
        for name in self.idx.within(test, cst.Name):
            binding = self.bindings.before(scope, name.value, self.idx.order(test))
            if binding is not None and binding.value is not None:
                tests.append(binding.value)
        names = (node.value for expr in tests for node in self.idx.within(expr, cst.Name))
        strings = (string_text(node) for expr in tests for node in self.idx.within(expr, cst.SimpleString))
        return any(name in ("is_cuda", "device", "is_cpu") for name in names) or any(
            text in ("cuda", "cpu") for text in strings
        )

    def reaches_device(self, call: cst.Call) -> bool:
        """The CPU tensor meets a tensor on the model's device and nothing moves it first."""
        return self._flow(call, 0) is Fate.MIXED

    # -- following the tensor -----------------------------------------------------

    def _flow(self, start: cst.CSTNode, depth: int) -> Fate:
        """Follow `start` (the factory call, or a later use of a name holding its result) up
        through the expression around it, then through the names it is stored in."""
        func = self.idx.scope(start)
        current: cst.CSTNode = start
        for parent in self.idx.ancestors(start):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return Fate.NONE
            step = self._step(parent, current, start, func, depth)
            if step is not None:
                return step
            if isinstance(parent, cst.Return):
                return self._returned(parent, depth)
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                return self._stored(parent, current, start, func, depth)
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseStatement)):
                return Fate.NONE
            current = parent
        return Fate.NONE

    def _step(
        self, parent: cst.CSTNode, current: cst.CSTNode, start: cst.CSTNode, func: cst.CSTNode, depth: int
    ) -> Fate | None:
        """What one enclosing expression does with the CPU value `current`; None to go on up."""
        if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value in METADATA:
            return Fate.NONE
        if isinstance(parent, cst.SubscriptElement):
            return Fate.NONE  # an index: PyTorch accepts CPU indices into CUDA tensors
        if isinstance(parent, cst.Subscript) and parent.value is current and self._element_of_1d(parent, current):
            return Fate.NONE  # `t[i]` of a 1-D tensor: a 0-dim scalar
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is current:
            return Fate.NONE  # a host-side condition
        if isinstance(parent, cst.Call):
            return self._call_step(parent, current, start, func, depth)
        others: list[cst.CSTNode] = []
        if isinstance(parent, cst.BinaryOperation):
            others = [parent.left, parent.right]
        elif isinstance(parent, cst.Comparison):
            others = [parent.left, *(c.comparator for c in parent.comparisons)]
        if any(not self.idx.contains(o, start) and self.on_device(o, func, _held(start)) for o in others):
            return Fate.MIXED
        return None

    def _call_step(
        self, call: cst.Call, current: cst.CSTNode, start: cst.CSTNode, func: cst.CSTNode, depth: int
    ) -> Fate | None:
        if call.func is current and not isinstance(current, cst.Attribute):
            # The value is itself called: a module built around it (`nn.BCELoss(weight=w)`).
            return Fate.MIXED if any(self.on_device(arg.value, func) for arg in call.args) else Fate.NONE
        if call.func is current:  # a method of the CPU tensor: `t.to(...)`, `t.masked_fill(...)`
            assert isinstance(current, cst.Attribute)
            method = current.attr.value
            if method in MOVES and (method != "to" or not _dtype_only(call, self.imps)):
                return Fate.MOVED
            if method == "type":  # `t.type()` names the type; `t.type(torch.cuda.FloatTensor)` moves
                if not call.args:
                    return Fate.NONE
                return None if _host_type(call, self.imps) else Fate.MOVED
            if method in HOST_READS or method in METADATA_CALLS or (method in REDUCTIONS and not call.args):
                return Fate.NONE  # `t.max()`: a 0-dim tensor
            if method not in SCALAR_ARG_METHODS and any(self.on_device(arg.value, func, _held(start)) for arg in call.args):
                return Fate.MIXED
            return None
        if not isinstance(current, cst.Arg):
            return None
        name = callee_name(call)
        if name in REGISTERS:
            return Fate.MOVED
        if method_name(call) == "copy_":
            return Fate.NONE  # copying into an existing tensor crosses devices by itself
        if name in HOST_BUILTINS and isinstance(call.func, cst.Name) and not self.imps.is_imported(call.func):
            return Fate.NONE
        if current.keyword is not None and current.keyword.value == "device":
            return Fate.NONE
        if self.imps.callee(call) in FACTORIES:
            return Fate.NONE  # a size or a bound of another factory: read on the host
        if "ctc" in (callee_name(call) or "").lower():
            return Fate.NONE  # CTC losses take CPU targets and lengths (cuDNN requires them)
        if any(arg is current.value for arg in sm.placed_arguments(self.ctx, call)):
            return Fate.MOVED  # the callee moves it first: `self.rope(ids)` whose `forward` does `ids.to(device)`
        if self._calls_submodule(call, func):
            return Fate.MIXED  # `self.embedding(cpu)`
        passed = self._passed_to_local(call, current, depth)
        if passed is Fate.MIXED and depth < MAX_FLOW and self._flow(call, depth + 1) is Fate.MOVED:
            # The caller moves what the helper computed: the CPU work is deliberate, and the
            # helper's own mixing was judged with the caller's devices (longt5's side bias).
            return Fate.MOVED
        if passed in (Fate.MOVED, Fate.MIXED):
            return passed
        if isinstance(call.func, cst.Attribute) and self.on_device(call.func.value, func, _held(start)):
            return Fate.MIXED  # `x.masked_fill(cpu_mask, 0)`
        if not self._is_torch_op(call):
            if "moves_device" in sm.call_effects(self.ctx, call):
                return Fate.MOVED  # a project helper that places what it is given (`move_device_like(t, x)`)
            return None  # a function of another module may move its arguments itself
        if any(arg is not current and self.on_device(arg.value, func, _held(start)) for arg in call.args):
            return Fate.MIXED  # `torch.matmul(x, cpu)`
        if isinstance(current.value, (cst.List, cst.Tuple)) and any(
            not self.idx.contains(e, start) and self.on_device(e.value, func, _held(start)) for e in current.value.elements
        ):
            return Fate.MIXED  # `torch.cat([x, cpu])`
        return None

    def _passed_to_local(self, call: cst.Call, arg: cst.Arg, depth: int) -> Fate:
        """`self.helper(cpu)`, `helper(cpu)`: what the helper does with its parameter."""
        if depth >= MAX_FLOW:
            return Fate.NONE
        flows = []
        for target in self.funcs.resolve(call):
            param = next((n for n, v in bind_arguments(self.funcs, target, call).items() if v is arg.value), None)
            if param is None or id(target) in self._following:
                continue
            # Inside the helper the parameter holds the CPU tensor, whatever its annotation says.
            self._following[id(target)] = param
            try:
                flows.append(self._uses_flow(param, target, self.idx.order(target.body) - 1, depth + 1))
            finally:
                del self._following[id(target)]
        return _worst(flows)

    def _is_torch_op(self, call: cst.Call) -> bool:
        callee = self.imps.callee(call) or ""
        if callee.startswith("torch."):
            return True
        # A snippet that uses `F.relu` without importing `F`.
        return callee.startswith(("F.", "nn.functional.")) and not self.imps.is_imported(call.func)

    def _calls_submodule(self, call: cst.Call, func: cst.CSTNode) -> bool:
        """`self.embedding(t)`, `self.layers[i](t)`, `layer(t)` for a layer of the model."""
        callee = call.func
        while isinstance(callee, cst.Subscript):
            callee = callee.value
        if isinstance(callee, cst.Attribute) and dotted(callee.value) == "self":
            return not self.funcs.resolve(call) and callee.attr.value not in SELF_HELPERS
        if isinstance(callee, cst.Name) and callee.value == "self":
            return self._in_lightning_step(func)  # `self(x)`: the module's own forward
        return isinstance(callee, cst.Name) and callee.value in self._names_on_device(func)

    def _in_lightning_step(self, func: cst.CSTNode) -> bool:
        if not isinstance(func, cst.FunctionDef) or func.name.value not in LIGHTNING_STEPS:
            return False
        owner = self.funcs.enclosing_class(func)
        return owner is not None and self.is_lightning_class(owner.name.value)

    def _stored(
        self,
        statement: cst.Assign | cst.AnnAssign | cst.AugAssign,
        current: cst.CSTNode,
        start: cst.CSTNode,
        func: cst.CSTNode,
        depth: int,
    ) -> Fate:
        value = statement.value
        if value is None:
            return Fate.NONE
        if value is not current:
            if isinstance(statement, cst.AugAssign):
                # `cpu += value`: an in-place op with a device tensor.
                return Fate.MIXED if self.on_device(value, func) else Fate.NONE
            # `cpu[i] = value` copies across devices; the tensor stays on the CPU. That only
            # breaks the model when `forward` returns it.
            holder = dotted(start) if isinstance(start, (cst.Name, cst.Attribute)) else None
            if holder is None or depth >= MAX_FLOW or not self.on_device(value, func):
                return Fate.NONE
            later = self._uses_flow(holder, self.idx.scope(statement), self.idx.end(statement), depth)
            return Fate.MIXED if later in (Fate.RETURNED, Fate.MIXED) else Fate.NONE
        if isinstance(statement, cst.AugAssign):
            return Fate.MIXED if self.on_device(statement.target, func) else Fate.NONE
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        flows: list[Fate] = []
        for target in targets:
            if isinstance(target, cst.Subscript):
                # Copied into another tensor, which keeps its own device: whether that one
                # meets the model is that tensor's story.
                continue
            for name in _paired_names(self.idx, target, value, current):
                if depth >= MAX_FLOW or says_host(name):
                    continue  # `x_host = ...`: kept on the host on purpose
                scope = self.idx.scope(statement)
                if self._holds_1d(start) and _elementwise_path(self.idx, start, value):
                    self._one_dimensional.add((id(scope), name))
                flows.append(self._uses_flow(name, scope, self.idx.end(statement), depth, statement))
        return _worst(flows)

    def _holds_1d(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            return _one_dimensional(node)
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        return name is not None and (id(self.idx.scope(node)), name) in self._one_dimensional

    def _element_of_1d(self, subscript: cst.Subscript, current: cst.CSTNode) -> bool:
        if not _scalar_index(subscript):
            return False
        name = dotted(current) if isinstance(current, (cst.Name, cst.Attribute)) else None
        return name is not None and (id(self.idx.scope(subscript)), name) in self._one_dimensional

    def _uses_flow(
        self, name: str, scope: cst.CSTNode, after: int, depth: int, origin: cst.CSTNode | None = None
    ) -> Fate:
        """What the uses of `name` in `scope` after source position `after` do with it; uses in
        another branch of an `if` than `origin` (the assignment) never see its value."""
        uses = [
            use
            for use in mentions(self.idx, scope, name)
            if self.idx.order(use) > after
            and not isinstance(self.idx.parent(use), (cst.AssignTarget, cst.AnnAssign))
            and (origin is None or not in_exclusive_branches(self.idx, origin, use))
        ]
        return _worst(self._flow(use, depth + 1) for use in uses)

    def _returned(self, statement: cst.Return, depth: int) -> Fate:
        """A helper returns the tensor: what its callers do with it (a method's callers in the
        class, a module-level function's callers in the file's functions: `grid =
        make_grid(h, w)` in `forward`, or a layer's `forward` in another module that computes
        with the result). `forward` returns it to code this file may not show, which may move it."""
        method = self.idx.scope(statement)
        if isinstance(method, cst.FunctionDef) and method.name.value == "forward":
            return Fate.RETURNED
        if not isinstance(method, cst.FunctionDef) or depth >= MAX_FLOW:
            return Fate.NONE
        if id(method) in self._run_by_other_forwards and method.name.value in self._mixed_by_others():
            return Fate.MIXED  # `x + table(n)` in a layer's `forward` in another module
        sites = [
            site
            for site in self.funcs.call_sites(method)
            if (self._self_call(site) or self._function_call_in_function(site))
            and not _dead_branch(self.idx, self.funcs, method, site, statement)
        ]
        return _worst(self._flow(site, depth + 1) for site in sites)

    # -- what lives on the model's device ---------------------------------------

    def on_device(self, expr: cst.CSTNode, func: cst.CSTNode, besides: str | None = None) -> bool:
        """`expr` involves a tensor that lives where the model does: an input of the method,
        a parameter, buffer or submodule output of the module, or a name computed from them.
        Shapes, dtypes and other host-side reads of those do not count, nor does the name
        `besides`: the one that holds the CPU tensor being followed, whatever else it may
        hold on other paths (`gauss / gauss.sum()` divides the tensor by itself)."""
        names = self._names_on_device(func)
        attrs = self._attrs_on_device(func)
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                if node.attr.value in METADATA:
                    continue
                if dotted(node.value) == "self":
                    if node.attr.value in attrs:
                        return True
                    continue
            elif isinstance(node, cst.Call):
                if method_name(node) in METADATA_CALLS or method_name(node) in HOST_READS:
                    continue
                if self.imps.callee(node) in FACTORIES or callee_name(node) in HOST_BUILTINS:
                    continue
                if self._calls_submodule(node, func):
                    return True
            elif isinstance(node, cst.Name):
                if node.value in names and node.value != besides:
                    return True
                continue
            elif isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(children(node))
        return False

    def _names_on_device(self, func: cst.CSTNode) -> set[str]:
        following = self._following.get(id(func))
        key = (id(func), following)
        names = self._device_names.get(key)
        if names is not None:
            return names
        names = self._device_names[key] = set()
        if not isinstance(func, cst.FunctionDef):
            return names
        for param in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
            if param.name.value != following and self._param_on_device(func, param):
                names.add(param.name.value)
        binders = self.idx.within(func, cst.Assign, cst.AnnAssign, cst.For, cst.WithItem)
        for _ in range(2):  # twice: loops use names bound further down
            for node in binders:
                value = node.iter if isinstance(node, cst.For) else node.item if isinstance(node, cst.WithItem) else node.value
                if value is None or not self.on_device(value, func):
                    continue
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, cst.WithItem):
                    targets = [node.asname.name] if node.asname is not None else []
                else:
                    targets = [node.target]
                for target in targets:
                    # `x[i] = ...` and `self.x = ...` bind no local name (`i` is only read).
                    names.update(n.value for n in target_names(target))
        return names

    def _param_on_device(self, func: cst.FunctionDef, param: cst.Param) -> bool:
        """An input of `forward` is a tensor unless its annotation or default says otherwise; a
        helper's parameter is on the device when a call in the class passes it such a value."""
        name = param.name.value
        if name in ("self", "cls"):
            return False
        annotation = param.annotation
        if annotation is not None:
            return "Tensor" in self.ctx.module.code_for_node(annotation.annotation)
        if _scalar_default(param):
            return False
        if func.name.value == "forward" or name in self.device_following(func):
            return True
        if id(func) in self._run_by_other_forwards:
            positional_names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
            return any(positional_names[i] == name for i in self._run_by_other_forwards[id(func)] if i < len(positional_names))
        if self._in_lightning_step(func):
            # The batch, which Lightning moved; not `batch_idx` or `dataloader_idx`.
            batch = positional_parameters(func, bound_self=True)[:1]
            return bool(batch) and batch[0].name.value == name
        for site in self.funcs.call_sites(func):
            if not (self._self_call(site) or isinstance(site.func, cst.Name)):
                continue
            passed = bind_arguments(self.funcs, func, site).get(name)
            if passed is not None and self.on_device(passed, self.idx.scope(site)):
                return True
        return False

    def _attrs_on_device(self, func: cst.CSTNode) -> set[str]:
        """Attributes of the method's class that hold parameters, buffers or submodules."""
        cls = self.idx.enclosing(func, (cst.ClassDef,))
        if cls is None:
            return set()
        key = cls.name.value
        attrs = self._tensor_attrs.get(key)
        if attrs is not None:
            return attrs
        attrs = self._tensor_attrs[key] = set()
        for call in self.idx.within(cls, cst.Call):
            if callee_name(call) in ("register_buffer", "register_parameter", "register_module", "add_module"):
                first = positional(call)[:1]
                text = string_text(first[0].value) if first else None
                if text:
                    attrs.add(text)
        for assign in self.idx.within(cls, cst.Assign):
            value = assign.value
            if not isinstance(value, cst.Call):
                continue
            callee = self.imps.callee(value) or ""
            short = callee.rpartition(".")[2]
            if not ((callee.startswith(("torch.nn.", "nn.")) and short[:1].isupper()) or self.is_module_class(short)):
                continue
            for target in assign.targets:
                if isinstance(target.target, cst.Attribute) and dotted(target.target.value) == "self":
                    attrs.add(target.target.attr.value)
        return attrs


def _held(start: cst.CSTNode) -> str | None:
    """The name whose use `start` is, when the tensor being followed is held in a local name.
    Its other mentions in the same expression are the same tensor, each followed on its own."""
    return start.value if isinstance(start, cst.Name) else None


def _scalar_default(param: cst.Param) -> bool:
    """`scale=1.0`, `mode="a"`, `flag=False`: a parameter that is no tensor."""
    default = param.default
    return isinstance(default, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(default, cst.Name) and default.value in ("True", "False")
    )


def _paired_names(
    idx: Index, target: cst.BaseExpression, value: cst.BaseExpression, current: cst.CSTNode
) -> list[str]:
    """The dotted names that `current` (inside `value`) is stored in: for `a, b = x, y`, the
    target paired with the element that holds it; for `a, b = f(x)` (`torch.meshgrid`,
    `t.chunk(2)`), every target, each a part computed from it."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return []
        for t, v in zip(target.elements, value.elements):
            if idx.contains(v, current):
                return _paired_names(idx, t.value, v.value, current)
        return []
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _paired_names(idx, element.value, value, current)]
    name = dotted(target)
    return [name] if name is not None else []


def _zero_dim_or_empty(call: cst.Call) -> bool:
    """`torch.tensor(1.0)`, `torch.zeros(())`, `torch.full((), v)`: 0-dim tensors mix with CUDA
    tensors. `torch.tensor([])`, `torch.empty(0)`: empty placeholders."""
    args = positional(call)
    short = last_name(call.func)
    if short == "tensor":
        data = args[0].value if args else None
        if isinstance(data, (cst.List, cst.Tuple)):
            return not data.elements
        return not isinstance(data, cst.ListComp)
    size_kw = keyword(call, "size")
    shape = size_kw.value if size_kw is not None else (args[0].value if args and short in SHAPED else None)
    if isinstance(shape, (cst.Tuple, cst.List)):
        sizes = [e.value for e in shape.elements]
        return not sizes or (len(sizes) == 1 and _is_zero(sizes[0]))
    return len(args) == 1 and shape is not None and _is_zero(shape)


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.evaluated_value == 0


def _dtype_only(call: cst.Call, imps: Imports) -> bool:
    """`.to(torch.float32)`, `.to(x.dtype)`, `.to(dtype=...)`: a cast that stays on the device."""
    if keyword(call, "device") is not None:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
                return False
            continue
        is_dtype = _torch_member(arg.value, imps) in DTYPES or (
            isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "dtype"
        )
        if not is_dtype:
            return False
    return True


def _host_type(call: cst.Call, imps: Imports) -> bool:
    """`.type(torch.float16)`, `.type(torch.LongTensor)`, `.type("torch.FloatTensor")`: a cast
    that stays on the host. A type held in a variable or read from a tensor may be a CUDA one."""
    value = call.args[0].value
    if isinstance(value, cst.SimpleString):
        return "cuda" not in value.value
    member = _torch_member(value, imps)
    return member in DTYPES or member.endswith("Tensor")


def _torch_member(expr: cst.BaseExpression, imps: Imports) -> str:
    """`float16` for `torch.float16` (however torch is imported), `""` for anything else."""
    qualified = imps.qualify(expr) or ""
    return qualified[6:] if qualified.startswith("torch.") and qualified.count(".") == 1 else ""


def _sizes(call: cst.Call) -> list[cst.BaseExpression] | None:
    """The sizes a shaped factory was given, when the code spells them out."""
    short = last_name(call.func)
    size_kw = keyword(call, "size")
    args = positional(call)
    shape: cst.BaseExpression | None
    if size_kw is not None:
        shape = size_kw.value
    elif short == "randint":
        shape = args[-1].value if args else None
    elif short == "full":
        shape = args[0].value if args else None
    elif short in SHAPED and args:
        shape = args[0].value
        if len(args) > 1 or _int_like(shape):
            return [a.value for a in args]
    else:
        return None
    if isinstance(shape, (cst.Tuple, cst.List)):
        return [e.value for e in shape.elements]
    return None


def _int_like(expr: cst.BaseExpression) -> bool:
    """`3`, `n + 1`, `x.size(0)`, `x.shape[1]`, `len(xs)`, `batch_size`: one size, not a shape."""
    if isinstance(expr, cst.Name):
        return not expr.value.lower().endswith(("shape", "sizes", "dims", "size_"))
    if isinstance(expr, cst.Call):
        return (method_name(expr) == "size" and bool(expr.args)) or callee_name(expr) in ("len", "int")
    return isinstance(expr, (cst.Integer, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))


def _one_dimensional(call: cst.Call) -> bool:
    """`torch.arange(n)`, `torch.rand(2)`, `torch.randint(a, b, (1,))`, `torch.tensor([a, b])`."""
    short = last_name(call.func)
    if short in ONE_DIMENSIONAL:
        return True
    if short == "tensor":
        data = positional(call)[0].value if positional(call) else None
        return isinstance(data, (cst.List, cst.Tuple)) and not any(
            isinstance(e.value, (cst.List, cst.Tuple, cst.ListComp)) for e in data.elements
        )
    sizes = _sizes(call)
    return sizes is not None and len(sizes) == 1 and _int_like(sizes[0])


def _scalar_index(subscript: cst.Subscript) -> bool:
    """`t[0]`, `t[i]`: one plain index (no slice, no tuple, no `None`)."""
    if len(subscript.slice) != 1:
        return False
    item = subscript.slice[0].slice
    if not isinstance(item, cst.Index):
        return False
    value = item.value
    if isinstance(value, cst.Name):
        return value.value not in ("None", "Ellipsis")
    return isinstance(value, (cst.Integer, cst.UnaryOperation))


def _scalar_element(idx: Index, call: cst.Call) -> bool:
    """`torch.randint(a, b, (1,))[0]`: a 0-dim element of a one-dimensional factory."""
    parent = idx.parent(call)
    indexed = isinstance(parent, cst.Subscript) and parent.value is call and _scalar_index(parent)
    return indexed and _one_dimensional(call)


def _elementwise_path(idx: Index, start: cst.CSTNode, value: cst.CSTNode) -> bool:
    """Between `start` and the stored `value`, only arithmetic and shape-keeping methods."""
    current = start
    while current is not value:
        parent = idx.parent(current)
        if parent is None:
            return False
        if isinstance(parent, cst.Call):
            if parent.func is not current:
                return False
        elif isinstance(parent, cst.Attribute):
            call = idx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent and parent.attr.value in ELEMENTWISE):
                return False
        elif not isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return False
        current = parent
    return True


def _placeholder(idx: Index, call: cst.Call) -> bool:
    """`torch.empty(1)` used as it is: uninitialized memory, so only a placeholder that a
    kernel ignores (DeepSpeed passes one for "no mask")."""
    if last_name(call.func) != "empty":
        return False
    sizes = _sizes(call)
    if sizes is None or not all(isinstance(size, cst.Integer) for size in sizes):
        return False
    numel = 1
    for size in sizes:
        assert isinstance(size, cst.Integer)
        numel *= int(size.evaluated_value)
    parent = idx.parent(call)
    return numel <= 1 and not (isinstance(parent, cst.Attribute) and parent.value is call)


def _dead_branch(
    idx: Index, funcs: Functions, method: cst.FunctionDef, site: cst.Call, node: cst.CSTNode
) -> bool:
    """`node` runs only under `if shape is not None:` (or `if shape:`) where `shape` defaults
    to None and `site` does not pass it: that call never reaches `node`."""
    for ancestor in idx.ancestors(node):
        if ancestor is method:
            return False
        if not isinstance(ancestor, cst.If) or not idx.contains(ancestor.body, node):
            continue
        name = _tested_not_none(ancestor.test)
        param = next((p for p in (*method.params.params, *method.params.kwonly_params) if p.name.value == name), None)
        if (
            param is not None
            and isinstance(param.default, cst.Name)
            and param.default.value == "None"
            and param.name.value not in bind_arguments(funcs, method, site)
        ):
            return True
    return False


def _tested_not_none(test: cst.BaseExpression) -> str | None:
    """`x` for `x is not None` or a bare `x`."""
    if isinstance(test, cst.Name):
        return test.value
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.IsNot)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value
    return None


# How many assignments a device or loader expression is followed through.
MAX_VALUE_DEPTH = 3


class Placements:
    """Where the module puts its models and its data: the calls that move each model to an
    accelerator (`model.to(device)`, `model = Net().cuda()`), whether a device expression is
    an accelerator, and which calls may move data to a device."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.assigned = assigned_values(ctx)
        # Factory calls (`build_model(cfg)`, by id) -> the move made inside the factory.
        self._factory_moves: dict[int, cst.Call] = {}
        # Model name (as `model_key` spells it) -> the calls that move it to an accelerator.
        self.models = self._model_moves()

    def _model_moves(self) -> dict[str, list[cst.Call]]:
        """Model name -> the calls that move it to an accelerator (`model.to(device)`,
        `model = Net().cuda()`)."""
        moves: dict[str, list[cst.Call]] = {}
        for call in self.idx.nodes(cst.Call):
            if not self.moves_to_accelerator(call):
                continue
            parent = self.idx.parent(call)
            if isinstance(parent, cst.Expr):
                key = model_key(receiver(call))
                keys = [key] if key else []
            elif isinstance(parent, cst.Assign):
                keys = [k for t in parent.targets if (k := model_key(t.target))]
            else:
                keys = []
            for key in keys:
                moves.setdefault(key, []).append(call)
        self._add_factory_moves(moves)
        return moves

    def _add_factory_moves(self, moves: dict[str, list[cst.Call]]) -> None:
        """`model = build_model(cfg)` where the factory (of this module, or of another
        project module) returns the model it moved (`return model.cuda()`, or
        `model.to(device)` then `return model`): the assigned name holds a model on the
        accelerator, moved by the factory's call."""
        funcs = functions(self.ctx)
        for assign in self.idx.nodes(cst.Assign):
            if not isinstance(assign.value, cst.Call):
                continue
            targets = funcs.resolve(assign.value)
            move = self._returned_move(targets[0], moves) if len(targets) == 1 else None
            # A factory of another project module: the call is the move. Asked only for a name
            # that says model, so that other modules' entries become dependencies only then.
            if move is None and not targets and self._named_model(assign) and sm.returns_moved_model(self.ctx, assign.value):
                move = assign.value
            if move is None:
                continue
            self._factory_moves[id(assign.value)] = move
            for key in (k for t in assign.targets if (k := model_key(t.target))):
                moves.setdefault(key, []).append(move)

    @staticmethod
    def _named_model(assign: cst.Assign) -> bool:
        return any(name_says_model_run(dotted(t.target)) for t in assign.targets)

    def _returned_move(self, factory: cst.FunctionDef, moves: dict[str, list[cst.Call]]) -> cst.Call | None:
        for ret in self.idx.within(factory, cst.Return):
            if self.idx.scope(ret) is not factory:
                continue
            if isinstance(ret.value, cst.Call) and self.moves_to_accelerator(ret.value):
                return ret.value
            if isinstance(ret.value, cst.Name):
                moved = [m for m in moves.get(ret.value.value, ()) if self.idx.scope(m) is factory]
                if moved:
                    return moved[0]
        return None

    def rebuilt_since(self, move: cst.Call, use: cst.BaseExpression) -> bool:
        """Every binding of the model name `use` that may reach it binds a fresh model, built
        after `move` without the moved one (`net = Net()` after `net.to(device)`; not
        `net = torch.compile(net)`): the model that `move` put on the accelerator is gone."""
        if not isinstance(use, cst.Name):
            return False
        reaching = bindings(self.ctx).reaching(use)
        same_scope = self.idx.scope(move) is self.idx.scope(use)
        return bool(reaching) and all(
            binding.value is not None
            and not any(node is move or self._factory_moves.get(id(node)) is move for node in self.idx.within(binding.node, cst.Call))
            and not any(isinstance(n, cst.Name) and n.value == use.value for n in self.idx.within(binding.value, cst.Name))
            and (not same_scope or binding.order > self.idx.end(move))
            for binding in reaching
        )

    def moves_to_accelerator(self, call: cst.Call) -> bool:
        method = method_name(call)
        if method == "cuda":
            return True
        if method != "to":
            return False
        arg = keyword(call, "device") or next(iter(positional(call)), None)
        return arg is not None and self.is_accelerator(arg.value)

    def is_accelerator(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A device expression that is (or may be) an accelerator; dtypes and tensors are not."""
        if isinstance(expr, (cst.SimpleString, cst.FormattedString)):
            return "cpu" not in self.ctx.module.code_for_node(expr)
        if isinstance(expr, cst.Call):
            name = self.imps.callee(expr) or ""
            if name.rsplit(".", 1)[-1] != "device":
                return False
            args = positional(expr)
            return not args or self.is_accelerator(args[0].value, depth + 1)
        if isinstance(expr, cst.IfExp):
            return self.is_accelerator(expr.body, depth + 1) or self.is_accelerator(expr.orelse, depth + 1)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if (self.imps.qualify(expr) or "").startswith("torch."):
                return False
            if not DEVICE_WORDS.intersection(name_tokens(last_name(expr) or "")):
                return False
            if isinstance(expr, cst.Name) and depth < MAX_VALUE_DEPTH:
                values = self.assigned.get(expr.value, [])
                return not values or any(self.is_accelerator(v, depth + 1) for v in values)
            return True
        return False

    def moves_data_in(self, scope: cst.CSTNode, skipping: frozenset[int] = frozenset()) -> bool:
        """Some call in `scope`, other than those whose ids are in `skipping`, may move data."""
        return any(id(call) not in skipping and self.is_data_move(call) for call in self.idx.within(scope, cst.Call))

    @staticmethod
    def is_data_move(call: cst.Call) -> bool:
        """Anything that may put data on a device: `.to(...)`, `.cuda()`, `device=`,
        `non_blocking=`, `to_device(batch)`, `helper(batch, device)`."""
        if method_name(call) in ("to", "cuda", "type"):
            return True
        if any(arg.keyword is not None and arg.keyword.value in ("device", "non_blocking") for arg in call.args):
            return True
        if DEVICE_WORDS.intersection(name_tokens(callee_name(call) or "")):
            return True
        return any(
            isinstance(arg.value, (cst.Name, cst.Attribute))
            and DEVICE_WORDS.intersection(name_tokens(last_name(arg.value) or ""))
            for arg in call.args
        )


def placements(ctx: FileContext) -> Placements:
    return ctx.analysis(Placements)


# -- wrappers that put a model's inputs on its devices -------------------------------------

# `DataParallel` scatters its inputs over its device ids, `DistributedDataParallel` (with
# device ids) and FSDP move them to the module's device: called through such a wrapper, a
# model on the GPU takes CPU batches.
INPUT_PLACING_WRAPPERS = frozenset(
    {"DataParallel", "DistributedDataParallel", "FullyShardedDataParallel", "DDP", "FSDP"}
)
DATA_PARALLEL_TEXT = re.compile(r"DataParallel")


class ParallelWraps:
    """The calls that wrap a module's models in an input-placing wrapper (`model =
    nn.DataParallel(model)`, `DDP(model, device_ids=[gpu])`), and, for each move of a model
    to the GPU, whether every path through it goes through such a wrap: a wrap only taken
    on one branch (`if torch.cuda.device_count() > 1:`, `if args.distributed:`) leaves the
    other paths running the bare model on whatever the loop gives it."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.placements = placements(ctx)
        imps = imports(ctx)
        self.calls = [
            call
            for call in self.idx.nodes(cst.Call)
            if {last_name(call.func), (imps.callee(call) or "").rpartition(".")[2]} & INPUT_PLACING_WRAPPERS
        ]
        self.mentioned = bool(self.calls) or bool(DATA_PARALLEL_TEXT.search(ctx.source))
        # Move (by id) -> the model names it moves.
        self._moved: dict[int, set[str]] = {}
        for key, moves in self.placements.models.items():
            for move in moves:
                self._moved.setdefault(id(move), set()).add(key)

    def out_of_sight(self) -> bool:
        """The module names such a wrapper but shows no wrap of a model it moves: a wrapper
        only imported or tested for (`isinstance(model, DataParallel)`), or a wrap of a model
        that another module moves, which may be the model that the module runs."""
        if not self.mentioned:
            return False
        moves = [move for moves in self.placements.models.values() for move in moves]
        return not self.calls or any(not any(self._covers(wrap, move) for move in moves) for wrap in self.calls)

    def always_wrapped(self, move: cst.Call) -> bool:
        """Every path through `move` also wraps the model it moves: a wrap of that model
        outside any branch that leaves the move out, or one on each branch of such an
        `if`/`elif`/`else` (not on a branch that excludes the move's)."""
        covering = self.wraps_of(move)
        return any(self._on_every_path(wrap, move, covering) for wrap in covering)

    def wraps_of(self, move: cst.Call) -> list[cst.Call]:
        """The wraps of the model that `move` moves that a path through the move may take."""
        return [wrap for wrap in self.calls if self._covers(wrap, move) and not in_exclusive_branches(self.idx, wrap, move)]

    def _covers(self, wrap: cst.Call, move: cst.Call) -> bool:
        """`wrap` wraps the model that `move` moves: it holds the move or the move holds it
        (`nn.DataParallel(model).cuda()`), or it wraps, or is bound to, a name that `move` moves."""
        if self.idx.contains(wrap, move) or self.idx.contains(move, wrap):
            return True
        return bool(self._wrapped_names(wrap) & self._moved.get(id(move), set()))

    def _wrapped_names(self, wrap: cst.Call) -> set[str]:
        names: set[str] = set()
        given = keyword(wrap, "module") or next(iter(positional(wrap)), None)
        if given is not None and (key := model_key(strip_self_returning(given.value))):
            names.add(key)
        top: cst.CSTNode = wrap
        parent = self.idx.parent(top)
        while isinstance(parent, (cst.Attribute, cst.Call, cst.Arg)):
            top, parent = parent, self.idx.parent(parent)
        if isinstance(parent, cst.Assign) and parent.value is top:
            names.update(k for target in parent.targets if (k := model_key(target.target)))
        return names

    def _on_every_path(self, wrap: cst.Call, move: cst.Call, covering: list[cst.Call]) -> bool:
        scope = self.idx.scope(wrap)
        for ancestor in self.idx.ancestors(wrap):
            if ancestor is scope:
                return True
            if isinstance(ancestor, cst.IfExp) and not self.idx.contains(ancestor, move):
                return False
            if isinstance(ancestor, cst.If) and not self.idx.contains(ancestor, move):
                blocks = chain_blocks(ancestor)
                if not all(block is not None and any(self.idx.contains(block, w) for w in covering) for block in blocks):
                    return False
        return True


def parallel_wraps(ctx: FileContext) -> ParallelWraps:
    return ctx.analysis(ParallelWraps)


# -- process groups and each process's GPU ----------------------------------------------

PROCESS_GROUP_INITS = frozenset(
    {"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"}
)
DDP_WRAPPERS = frozenset(
    {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
)


def process_group_inits(ctx: FileContext, through_helpers: bool = False) -> list[cst.Call]:
    """`init_process_group(...)` calls (spelled bare in a snippet without imports too); with
    `through_helpers`, when there is none, the calls of project functions that start the
    process group (`init_distributed()` of a `utils/dist.py`)."""
    found = calls_to(ctx, PROCESS_GROUP_INITS, frozenset({"init_process_group", "dist.init_process_group"}))
    if found or not through_helpers:
        return found
    return [call for call in index(ctx).nodes(cst.Call) if "inits_process_group" in sm.call_effects(ctx, call)]


def ddp_wrappers(ctx: FileContext) -> list[cst.Call]:
    """`DistributedDataParallel(...)` calls, through the module's import aliases (`DDP(...)`
    after `from torch.nn.parallel import DistributedDataParallel as DDP`), or spelled bare in
    a snippet without imports; not a `DDP` imported from elsewhere, nor the word in a comment
    or a string."""
    return calls_to(ctx, DDP_WRAPPERS, frozenset({"DistributedDataParallel", "DDP"}))


def backend(init: cst.Call) -> str | None:
    """The backend of an `init_process_group` call when it is spelled as a string literal."""
    args = positional(init)
    given = keyword(init, "backend")
    value = given.value if given is not None else (args[0].value if args else None)
    return string_text(value) if value is not None else None


def gpu_selected(ctx: FileContext, inits: list[cst.Call]) -> bool:
    """Something in the module selects the process's GPU, or may: `CUDA_VISIBLE_DEVICES`,
    a selecting call, or `init_process_group(**kwargs)`."""
    if VISIBLE_DEVICES in ctx.source or any(any(a.star for a in init.args) for init in inits):
        return True
    imps = imports(ctx)
    return any(
        call_selects_gpu(imps.callee(call) or callee_name(call) or "", (a.keyword.value for a in call.args if a.keyword))
        for call in index(ctx).nodes(cst.Call)
    )


class Share(Enum):
    """Whose GPU a device is: this process's own, or one that every process shares."""

    PER_PROCESS = "per-process"  # `cuda:{local_rank}`, `.cuda(rank)`
    SHARED = "shared"  # `"cuda"`, `.cuda()`, `"cuda:0"`: the same device in every process
    UNKNOWN = "unknown"


class ProcessDevices:
    """Where the module puts modules and tensors: on each process's own GPU, or on a shared
    one. `None` means the code says nothing about a device (no move, or a move to a dtype)."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.imps = imports(ctx)
        # Whole targets only (`device = ...`): an element of a tuple target says nothing here.
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        for assign in self.idx.nodes(cst.Assign):
            for target in assign.targets:
                name = dotted(target.target)
                if name:
                    self.assigned.setdefault(name, []).append(assign.value)
        self.moves = [c for c in self.idx.nodes(cst.Call) if method_name(c) in ("cuda", "to")]

    def of_module(self, module: cst.BaseExpression) -> Share | None:
        """Where `module` (what DDP wraps) was put: inline, by moves of its name, or by the
        values assigned to its name."""
        inline = self._of_move_chain(module)
        if inline is not None:
            return inline
        name = dotted(module)
        if name is None:
            return None
        found = [self._of_move(c) for c in self.moves if dotted(receiver(c) or c.func) == name]
        found += [self._of_move_chain(value) for value in self.assigned.get(name, [])]
        return _agree([p for p in found if p is not None])

    def whole_file(self) -> Share | None:
        """Per-process if anything is; shared if something is and nothing is per-process."""
        found = [self._of_move(c) for c in self.moves]
        for node in self.idx.nodes(cst.Arg):
            if node.keyword is not None and node.keyword.value == "device":
                found.append(self.of_device(node.value, 0))
        if Share.PER_PROCESS in found:
            return Share.PER_PROCESS
        return Share.SHARED if Share.SHARED in found else None

    def _of_move_chain(self, expr: cst.BaseExpression) -> Share | None:
        """`Net().cuda()`, `model.to(device).train()`: the last move in a method chain."""
        while isinstance(expr, cst.Call):
            if method_name(expr) in ("cuda", "to"):
                return self._of_move(expr)
            owner = receiver(expr)
            if owner is None:
                break
            expr = owner
        return None

    def _of_move(self, call: cst.Call) -> Share | None:
        args = [a for a in call.args if a.keyword is None or a.keyword.value == "device"]
        if method_name(call) == "cuda":
            return Share.PER_PROCESS if args else Share.SHARED
        return self.of_device(args[0].value, 0) if args else None

    def of_device(self, expr: cst.BaseExpression, depth: int) -> Share | None:
        text = string_text(expr)
        if text is not None:
            if text.startswith("cuda"):
                return Share.PER_PROCESS if "{}" in text else Share.SHARED
            return None if text.startswith(("cpu", "mps", "xla", "meta")) else Share.UNKNOWN
        if isinstance(expr, cst.Integer):
            return Share.SHARED
        if isinstance(expr, cst.IfExp):
            branches = [self.of_device(expr.body, depth), self.of_device(expr.orelse, depth)]
            return _agree([p for p in branches if p is not None])
        if isinstance(expr, cst.BinaryOperation):
            return Share.PER_PROCESS  # "cuda:" + str(rank), "cuda:%d" % rank
        if isinstance(expr, cst.Call):
            return self._of_device_call(expr, depth)
        name = dotted(expr)
        if name is None:
            return Share.UNKNOWN
        qualified = self.imps.qualify(expr) or ""
        if qualified.startswith("torch.") or name.endswith(".dtype") or name == "dtype":
            return None  # `torch.float16`, `x.dtype`: a cast, not a move
        values = self.assigned.get(name, [])
        if values and depth < MAX_VALUE_DEPTH:
            return _agree([p for p in (self.of_device(v, depth + 1) for v in values) if p is not None])
        tokens = name_tokens(name.rpartition(".")[2])
        return Share.PER_PROCESS if any(t in RANK_WORDS and t != "device" for t in tokens) else Share.UNKNOWN

    def _of_device_call(self, call: cst.Call, depth: int) -> Share | None:
        callee = self.imps.callee(call) or ""
        if callee == "torch.device":
            if len(call.args) >= 2:
                return Share.PER_PROCESS
            return self.of_device(call.args[0].value, depth) if call.args else Share.UNKNOWN
        if method_name(call) == "format" and (string_text(call.func.value) or "").startswith("cuda"):  # type: ignore[attr-defined]
            return Share.PER_PROCESS
        return Share.PER_PROCESS if callee.endswith("current_device") else Share.UNKNOWN


def _agree(found: list[Share]) -> Share | None:
    """Per-process if any is; shared only if all are; otherwise unknown."""
    if not found:
        return None
    if Share.PER_PROCESS in found:
        return Share.PER_PROCESS
    return Share.SHARED if all(p is Share.SHARED for p in found) else Share.UNKNOWN


def process_devices(ctx: FileContext) -> ProcessDevices:
    return ctx.analysis(ProcessDevices)
