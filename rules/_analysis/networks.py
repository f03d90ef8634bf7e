"""Networks: which objects the code runs as networks, which of them training runs with
gradients, what a call runs through a local helper, who owns a method's mode, and whether
a network's train/eval mode matters at all (its layers). Networks by dataflow: which
classes of the module are `nn.Module`s (through local base classes too), and which names
hold a network whatever they are called (`aanet`, `enc`, `self.backbone`): every value
assigned to the name builds one with such a class (or with a class of another project
module, as the caller's `project_class` says), wraps one (DataParallel, `torch.compile`,
`torch.jit.trace`), or moves one with `.to(device)` / `.cuda()`. Name-based guesses about
networks are `vocabulary`'s.

"Which layer types make train/eval mode matter" has one definition: the project summaries'
(`_summaries.class_mode_free`, with the words of `vocabulary.MODE_DEPENDENT`), for the
classes of the checked file as for those of the project's other modules; a dropout whose
rate is an `__init__` parameter counts only when it is built with a rate other than 0.
"""

from __future__ import annotations

import builtins
from typing import Callable

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    called_module,
    callee_name,
    keyword,
    method_name,
    move_statement,
    parameter_names,
    positional,
    receiver,
)
from torchlint.rules._analysis.dataflow import assigned_values, target_elements
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.modes import grad_free_decorated, model_key, runs_with_gradients, wrapped_model
from torchlint.rules._analysis.names import Imports, dotted, imports, last_name, string_text
from torchlint.rules._analysis.training import training
from torchlint.rules._vocabulary import (
    MODE_DEPENDENT,
    MODE_FRAMEWORKS,
    MODEL_WRAPPERS,
    name_says_evaluation,
    name_tokens,
    NOT_MODEL_WORDS,
)

_BUILTINS = frozenset(dir(builtins))
# Methods that move or cast a network and return it.
_PLACEMENT = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train"})


def looks_like_model(key: str) -> bool:
    """A called object that may be a network: not `self`, a builtin, a loss or a metric."""
    return key != "self" and key not in _BUILTINS and not NOT_MODEL_WORDS.intersection(name_tokens(key))


def trained_models(ctx: FileContext) -> frozenset[str]:
    """The networks (as `model_key` names them) that training loops run with gradients, in
    their own body or in the local helpers they call (not evaluation helpers)."""
    return ctx.analysis(_build_trained_models)


def _build_trained_models(ctx: FileContext) -> frozenset[str]:
    idx, imps, funcs = index(ctx), imports(ctx), functions(ctx)
    keys: set[str | None] = set()
    for loop in training(ctx).training_loops(funcs):
        roots: list[cst.CSTNode] = [loop.body]
        roots.extend(
            f
            for f in funcs.reachable(loop.body)
            if isinstance(f, cst.FunctionDef)
            and not name_says_evaluation(f.name.value)
            and not grad_free_decorated(f, imps)
        )
        for root in roots:
            keys.update(model_key(e) for e in runs_with_gradients(idx, imps, root))
    return frozenset(k for k in keys if k is not None and k != "self")


def models_run_by(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The networks a call runs, spelled as the caller spells them: `model` for `model(x)`;
    for a local helper `forward_step(model, x)`, the modules the helper runs (its parameters
    bound to the call's arguments, and attributes such as `self.model`). Evaluation helpers
    are left out (they are judged on their own), and so are imported objects."""
    idx, imps, funcs = index(ctx), imports(ctx), functions(ctx)
    helpers = funcs.resolve(call)
    if not helpers:
        model = called_module(call)
        return [] if model is None or imps.is_imported(model) else [model]
    found: list[cst.BaseExpression] = []
    for helper in helpers:
        if name_says_evaluation(helper.name.value):
            continue
        params = parameter_names(helper)
        assigned = {
            t.target.value for a in idx.within(helper, cst.Assign) for t in a.targets if isinstance(t.target, cst.Name)
        }
        bound = bind_arguments(funcs, helper, call)
        for inner in idx.within(helper, cst.Call):
            model = called_module(inner) if idx.scope(inner) is helper else None
            if model is None or funcs.resolve(inner) or imps.is_imported(model):
                continue
            if isinstance(model, cst.Name) and model.value in params:
                if model.value in bound:
                    found.append(bound[model.value])
            elif not isinstance(model, cst.Name) or model.value not in assigned:
                found.append(model)
    return found


def mode_owned_elsewhere(funcs: Functions, imps: Imports, func: cst.FunctionDef) -> bool:
    """A method of a framework class (Lightning, HF Trainer, ...) or of a network itself: the
    framework, or the code that owns the network, decides its mode."""
    cls = funcs.enclosing_class(func)
    if cls is None:
        return False
    for base in cls.bases:
        qualified = imps.qualify(base.value) or ""
        short = qualified.rsplit(".", 1)[-1]
        if qualified.split(".")[0] in MODE_FRAMEWORKS or "Lightning" in short:
            return True
        if short == "Module" and (qualified.startswith("torch") or qualified == "nn.Module"):
            return True
    return False


def mode_free(ctx: FileContext, key: str | None, inherited_at: cst.CSTNode | None = None) -> bool:
    """Every network that `key` is built as (`model = Net(...)`, through `.to(device)` and
    DataParallel wrappers) is a class of this file or of the project with no layer that
    behaves differently in eval mode: `eval()` would change nothing. With `inherited_at` (a
    node where `self.<key>` runs) and nothing in this file building `key`, the classes that
    the project base classes of the class around it build `self.<key>` with. Unknown: False."""
    if key is None:
        return False
    built = [a.value for a in index(ctx).nodes(cst.Assign) if any(model_key(t.target) == key for t in a.targets)]
    if not built:
        inherited = sm.inherited_attribute_classes(ctx, inherited_at, key) if inherited_at is not None else None
        return inherited is not None and all(sm.class_mode_free(ctx, entry) for entry in inherited)
    for value in built:
        while isinstance(value, cst.Call) and method_name(value) in _PLACEMENT:
            value = receiver(value)  # type: ignore[assignment]
        if wrapped_model(value) == key:
            continue  # `net = nn.DataParallel(net)`: the same layers
        if not isinstance(value, cst.Call):
            return False
        if torch_layer_mode_free(imports(ctx), value):
            continue
        entry = sm.local_entry(ctx, callee_name(value) or "") or sm.entry_for(ctx, value.func)
        if entry is None or not sm.class_mode_free(ctx, entry, value):
            return False
    return True


# torch.nn recurrent layers, whose `dropout` (between layers) is 0 unless given; and its
# containers, whose layers are their arguments.
_RECURRENT = frozenset({"RNN", "LSTM", "GRU"})
_CONTAINERS = frozenset({"Sequential", "ModuleList"})


def torch_layer_mode_free(imps: Imports, call: cst.Call) -> bool:
    """`nn.Linear(...)`, `nn.Conv2d(...)`, `nn.LSTM(...)` without dropout, an
    `nn.Sequential(...)` of such layers: a torch.nn layer that computes the same in train and
    eval mode. Dropout, normalization, transformer and attention layers are not."""
    qualified = imps.callee(call) or ""
    if not qualified.startswith("torch.nn."):
        return False
    layer = qualified.rpartition(".")[2]
    if layer in _CONTAINERS:
        if any(a.star or a.keyword is not None for a in call.args):
            return False
        items = [a.value for a in call.args]
        values = [e.value for item in items if isinstance(item, (cst.List, cst.Tuple)) for e in item.elements] or items
        return all(isinstance(v, cst.Call) and torch_layer_mode_free(imps, v) for v in values)
    if layer in _RECURRENT:
        dropout = keyword(call, "dropout")
        return len(positional(call)) < 6 and (dropout is None or (isinstance(dropout.value, cst.Integer) and dropout.value.value == "0"))
    return layer[:1].isupper() and not MODE_DEPENDENT.search(layer)


# Methods that return the module they are called on (so a chain of them still holds it).
MODULE_CHAIN_METHODS = frozenset("eval train half float double bfloat16 requires_grad_ share_memory".split())
# Calls that build a module from the module they are given.
TRACERS = frozenset({"torch.jit.trace", "torch.jit.script", "torch.compile"})
MAX_DEPTH = 3


def is_cpu_literal(expr: cst.BaseExpression) -> bool:
    """`"cpu"`, `"cpu:0"`."""
    return (string_text(expr) or "").startswith("cpu")


class Networks:
    """The module's network classes and the names that hold a network."""

    def __init__(self, ctx: FileContext, project_class: Callable[[cst.Call], bool] | None = None) -> None:
        self.imps: Imports = imports(ctx)
        self.assigned = assigned_values(ctx)
        self.idx = index(ctx)
        self.classes = {cls.name.value: cls for cls in self.idx.nodes(cst.ClassDef)}
        self.project_class = project_class or (lambda call: False)
        self._module_classes: dict[str, bool] = {}
        self._moved_in_place: frozenset[str] | None = None

    def is_module_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        """A class of this module that subclasses `torch.nn.Module` (or a LightningModule),
        directly or through other classes of the module."""
        known = self._module_classes.get(name)
        if known is not None:
            return known
        cls = self.classes.get(name)
        result = cls is not None and name not in _seen and any(
            (self.imps.qualify(base.value) or "").startswith(("torch.nn.", "nn."))
            or (self.imps.qualify(base.value) or "").endswith("LightningModule")
            or self.is_module_class(last_name(base.value) or "", _seen | {name})
            for base in cls.bases
        )
        self._module_classes[name] = result
        return result

    def holds_module(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """Every value assigned to the name `expr` (`aanet`, `self.net`) is a network."""
        name = dotted(expr)
        values = self.assigned.get(name, []) if name else []
        return bool(values) and depth < MAX_DEPTH and all(self.builds_module(v, depth + 1) for v in values)

    def moved_in_place(self, expr: cst.BaseExpression) -> bool:
        """The code moves `expr` with a statement of its own (`session.to(device)`, its result
        unused): only a module moves itself, a tensor's `.to()` returns a copy."""
        if self._moved_in_place is None:
            self._moved_in_place = frozenset(
                move[0] for statement in self.idx.nodes(cst.Expr) if (move := move_statement(statement)) is not None
            )
        return isinstance(expr, cst.Name) and expr.value in self._moved_in_place

    def builds_module(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """`Net(...)`, `Net().to(device).eval()`, `model.cuda()`, `nn.DataParallel(net)`,
        `torch.jit.trace(net, x)`, or a name that holds a network."""
        while isinstance(expr, cst.Call):
            method = method_name(expr)
            if method == "cuda" or (method == "to" and self._moves_off_host(expr)):
                return True
            if method in MODULE_CHAIN_METHODS and receiver(expr) is not None:
                expr = receiver(expr)  # type: ignore[assignment]
                continue
            # `compile` only as `torch.compile`: `re.compile(...)` builds no network.
            if callee_name(expr) in MODEL_WRAPPERS - {"compile"} or self.imps.callee(expr) in TRACERS:
                return True
            return self.project_class(expr) or (
                not self.imps.is_imported(expr.func) and self.is_module_class(callee_name(expr) or "")
            )
        return isinstance(expr, (cst.Name, cst.Attribute)) and self.holds_module(expr, depth)

    def parameter_free(self, name: str) -> bool:
        """A class of this module that subclasses `torch.nn.Module` directly and, as far as its
        visible body shows, owns no parameters: no `torch.nn` layer, `nn.Parameter`,
        `register_parameter` or class built anywhere in it, and every attribute its methods set
        is plain data (literals, torch tensors, `__init__` arguments with number, string or boolean defaults).
        Only buffers (`register_buffer`): running it records no autograd graph for inputs
        that need no gradient. Unknown or doubtful: False."""
        cls = self.classes.get(name)
        if cls is None or not cls.bases or not all(_plain_module_base(self.imps, b.value) for b in cls.bases):
            return False
        idx = self.idx
        if any(not self._parameter_free_call(call) for call in idx.within(cls, cst.Call)):
            return False
        for func in idx.within(cls, cst.FunctionDef):
            literal_params = {p.name.value for p in func.params.params if p.default is not None and _literal(p.default)}
            for assign in idx.within(func, cst.Assign, cst.AnnAssign, cst.AugAssign):
                targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
                sets_attribute = any(
                    isinstance(element, cst.Attribute) for target in targets for element in target_elements(target)
                )
                if sets_attribute and (assign.value is None or not self._plain_value(assign.value, literal_params, idx)):
                    return False
        return True

    def _parameter_free_call(self, call: cst.Call) -> bool:
        """A call that cannot add a parameter or a sub-module to the class."""
        qualified = self.imps.callee(call) or ""
        last = qualified.rpartition(".")[2]
        if last in _PARAMETER_MAKERS:
            return False
        if qualified.startswith(("torch.nn.", "nn.")) and not qualified.startswith(_NN_FUNCTIONS):
            return False
        return not last[:1].isupper() or qualified.startswith("torch.")

    def _plain_value(self, value: cst.BaseExpression, literal_params: set[str], idx: Index) -> bool:
        """An attribute value that holds no module: its calls are torch functions (not
        `torch.nn` layers) or builtins, its names literal-default arguments, constants or
        builtins."""
        for call in idx.within(value, cst.Call):
            qualified = self.imps.callee(call) or ""
            if not (qualified.startswith("torch.") or qualified in _PLAIN_BUILTINS):
                return False
        for node in idx.within(value, cst.Name):
            parent = idx.parent(node)
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if node.value not in literal_params and node.value not in _PLAIN_BUILTINS and not (
                (self.imps.qualify(node) or "").startswith("torch")
            ):
                return False
        return True

    def _moves_off_host(self, call: cst.Call) -> bool:
        """`.to(device)`, `.to("cuda")`: a move with a device argument that is not the CPU."""
        target = keyword(call, "device") or next(iter(positional(call)), None)
        return target is not None and not is_cpu_literal(target.value)


# Calls that add a parameter or a sub-module to a module.
_PARAMETER_MAKERS = frozenset({"Parameter", "register_parameter", "add_module", "register_module", "UninitializedParameter"})
# `torch.nn` functions that build no layer.
_NN_FUNCTIONS = ("torch.nn.functional.", "torch.nn.init.", "nn.functional.", "nn.init.")
_PLAIN_BUILTINS = frozenset({"int", "float", "bool", "str", "len", "min", "max", "abs", "round", "True", "False", "None"})


def _plain_module_base(imps: Imports, base: cst.BaseExpression) -> bool:
    return imps.qualify(base) in ("torch.nn.Module", "nn.Module")


def _literal(expr: cst.BaseExpression) -> bool:
    """A number, string, `True` / `False`, or a negated number (not `None`, a common default
    of an argument that takes a module)."""
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False")
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString))


def networks(ctx: FileContext) -> Networks:
    return ctx.analysis(Networks)
