"""Summaries: the queries that rules ask about what other modules' functions, methods and
classes do (`call_effects`, `class_mode_free`, `modes_left`, ...), answered from the
modules' summaries (built by `torchlint.rules._summarize`, which documents their data)
without parsing those modules again. The checked file's own definitions are read from its
own summary (`own_summary`, `local_entry`), so that one definition (which layers make
train/eval mode matter) decides for this file's classes and for other modules' alike.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, TypeVar

import libcst as cst

from torchlint.project import OWN_PACKAGE, Entry, ModuleRef
from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules._summarize import Summary, summarize
from torchlint.rules._vocabulary import TORCH_MODULE_BASES

if TYPE_CHECKING:
    from torchlint.project import ProjectView

# How many calls deep effects are followed through other functions.
MAX_DEPTH = 4

T = TypeVar("T")


# ---------------------------------------------------------------------------
# Queries: what a checked file asks about the project's other modules.


def view(ctx: FileContext) -> ProjectView | None:
    return ctx.project


def own_summary(ctx: FileContext) -> Summary | None:
    """The summary of the checked file itself, so that its own classes are judged as other
    modules' are (None: Python cannot parse it)."""
    return ctx.analysis(_summarize_own)


def _summarize_own(ctx: FileContext) -> Summary | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are the user's business
            return summarize(ast.parse(ctx.source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def own_module(ctx: FileContext) -> ModuleRef:
    project = view(ctx)
    return project.module if project is not None else ModuleRef("", Path(ctx.filename), ())


def local_entry(ctx: FileContext, name: str) -> Entry | None:
    """A top-level function or class of the checked file, by name."""
    data = (own_summary(ctx) or {}).get("defs", {}).get(name)
    return Entry(f":{name}", data, own_module(ctx)) if isinstance(data, dict) else None


def lookup(ctx: FileContext, written: str, where: ModuleRef) -> Entry | None:
    """The entry a name written in module `where` denotes: the checked file's own definitions
    from its own summary, other modules' through the project."""
    if written.startswith(":") and where == own_module(ctx) and "." not in written:
        return local_entry(ctx, written[1:])
    project = view(ctx)
    return project.lookup(written, where) if project is not None else None


def entry_for(ctx: FileContext, expr: cst.BaseExpression) -> Entry | None:
    """The project definition an imported name denotes (`helpers.clear` after `import
    helpers`, `clear` after `from .helpers import clear`), or a method of a project
    class that a `self.` attribute holds (`self.devices.pin`); None for local names,
    names of installed packages and anything unknown."""
    project = view(ctx)
    if project is None:
        return None
    imps = an.imports(ctx)
    if not imps.is_imported(expr):
        return _attribute_entry(ctx, project, expr)
    name = imps.qualify(expr)
    return project.lookup(name) if name else None


def _attribute_entry(ctx: FileContext, project: ProjectView, expr: cst.BaseExpression) -> Entry | None:
    """The method that `helper.method` or `self.helper.method` names when every value this
    file assigns to `helper` is an instance of one project class: built by the class
    (`self.helper = Helper()`) or returned by a project factory (`model = create_model(opt)`);
    a method that the class inherits from a project base class included."""
    name = an.dotted(expr)
    if name is None or name.count(".") < (2 if name.startswith("self.") else 1):
        return None
    holder, _, method = name.rpartition(".")
    return _held_method(ctx, project, holder, method)


def _held_method(ctx: FileContext, project: ProjectView, holder: str, method: str) -> Entry | None:
    """The method `method` of the one project class whose instances `holder` (`model`,
    `self.helper`, `self.tracker.losses`) holds in this file."""
    owner = _held_class(ctx, project, holder)
    return _method(ctx, owner, method) if owner is not None else None


def _held_class(ctx: FileContext, project: ProjectView, holder: str) -> Entry | None:
    """The one project class whose instances `holder` holds in this file."""
    head = 2 if holder.startswith("self.") else 1
    parts = holder.split(".")
    if len(parts) < head:
        return None
    attribute, inner = ".".join(parts[:head]), parts[head:]
    values = an.assigned_values(ctx).get(attribute, [])
    imps = an.imports(ctx)
    owners = {}
    for value in values:
        owner = _instance_class(project, imps, value)
        if owner is None:
            return None
        owners[owner.name] = owner
    if len(owners) != 1:
        return None
    found: Entry | None = owners.popitem()[1]
    for attr in inner:  # `tracker.losses.update(...)`: an attribute its constructor builds
        held = found.data.get("attrs", {}).get(attr, []) if found is not None else []
        found = project.lookup(held[0], found.module) if found is not None and len(held) == 1 else None
        if found is None or found.kind != "class":
            return None
    return found


def _instance_class(project: ProjectView, imps: an.Imports, value: cst.BaseExpression) -> Entry | None:
    """The project class whose instance `value` is: `Helper(...)`, or the call of a project
    function that returns one class (`def create_model(opt): return SRModel(opt)`)."""
    if not (isinstance(value, cst.Call) and imps.is_imported(value.func)):
        return None
    entry = project.lookup(imps.qualify(value.func) or "")
    if entry is not None and entry.kind == "function":
        returned = [project.lookup(r, entry.module) for r in entry.data.get("returns", ())]
        entry = returned[0] if len(returned) == 1 else None
    return entry if entry is not None and entry.kind == "class" else None


def _method(ctx: FileContext, owner: Entry, method: str, depth: int = 0) -> Entry | None:
    """`owner.method`, defined in the class or inherited from its project base classes (the
    checked file's own classes too, outside a project)."""
    data = owner.data.get("methods", {}).get(method)
    if data is not None:
        return Entry(f"{owner.name}.{method}", data, owner.module)
    if depth >= MAX_DEPTH:
        return None
    for base in owner.data.get("bases", ()):
        inner = lookup(ctx, base, owner.module)
        if inner is not None and inner.kind == "class":
            found = _method(ctx, inner, method, depth + 1)
            if found is not None:
                return found
    return None


def inherited_method(ctx: FileContext, expr: cst.BaseExpression) -> Entry | None:
    """The method that `self.method` names inside a class of the checked file that does not
    define it (nor any local base class) but inherits it from a base class of another
    project module (`self.evaluate()` in a trainer subclass); None otherwise."""
    name = an.dotted(expr)
    project = view(ctx)
    if project is None or name is None or not name.startswith("self.") or name.count(".") != 1:
        return None
    cls = an.index(ctx).enclosing(expr, (cst.ClassDef,))
    method = name[len("self.") :]
    if cls is None or an.functions(ctx).method(cls.name.value, method) is not None:
        return None
    return _inherited(ctx, cls, lambda base: _method(ctx, base, method))


def inherited_attribute_classes(ctx: FileContext, node: cst.CSTNode, attr: str) -> list[Entry] | None:
    """The project classes that the base classes (in other project modules) of the class
    around `node` build `self.<attr>` with: `self.net = TinyNet()`, or a method's result that
    returns one class (`self.net = self.build()`). None when the class, a base or a value is
    unknown, or when nothing builds the attribute."""
    cls = an.index(ctx).enclosing(node, (cst.ClassDef,))
    if cls is None or view(ctx) is None:
        return None
    return _inherited(ctx, cls, lambda base: _attribute_classes(ctx, base, attr))


def _inherited(ctx: FileContext, cls: cst.ClassDef, ask: Callable[[Entry], T | None]) -> T | None:
    """The first answer that `ask` gives for a project base class (in another module) of a
    top-level class `cls` of the checked file."""
    own = local_entry(ctx, cls.name.value)
    project = view(ctx)
    if own is None or own.kind != "class" or project is None:
        return None
    for base in own.data.get("bases", ()):
        inner = project.lookup(base, own.module)
        if inner is not None and inner.kind == "class":
            found = ask(inner)
            if found is not None:
                return found
    return None


def _attribute_classes(ctx: FileContext, owner: Entry, attr: str, depth: int = 0) -> list[Entry] | None:
    """The project classes that `owner` (or the base class that builds it) builds
    `self.<attr>` with: the checked file's own classes too, outside a project."""
    values = owner.data.get("attrs", {}).get(attr)
    if depth >= MAX_DEPTH:
        return None
    if values is None:
        for base in owner.data.get("bases", ()):
            inner = lookup(ctx, base, owner.module)
            if inner is not None and inner.kind == "class":
                return _attribute_classes(ctx, inner, attr, depth + 1)
        return None
    found: list[Entry] = []
    for written in values:
        entry = lookup(ctx, written, owner.module)
        if entry is not None and entry.kind == "function":
            returned = [lookup(ctx, r, entry.module) for r in entry.data.get("returns", ())]
            entry = returned[0] if len(returned) == 1 else None
        if entry is None or entry.kind != "class":
            return None
        found.append(entry)
    return found or None


def effects(ctx: FileContext, entry: Entry, depth: int = 0) -> frozenset[str]:
    """What running `entry` does, through the project functions it calls (a class: its
    `__init__`)."""
    data = entry.data
    if entry.kind == "class":
        data = data.get("methods", {}).get("__init__", {})
    found = set(data.get("effects", ()))
    project = view(ctx)
    if project is None or depth >= MAX_DEPTH:
        return frozenset(found)
    for written in data.get("calls", ()):
        callee = project.lookup(written, entry.module)
        if callee is not None and callee.kind in ("function", "class"):
            found |= effects(ctx, callee, depth + 1)
    return frozenset(found)


def number(ctx: FileContext, expr: cst.BaseExpression) -> float | None:
    """The value of a number literal (`-1`), or of a project module's number that `expr`
    names: a module-level constant or an attribute of a config object (`cfg.LR_START` after
    `from config import cfg`); None when unknown."""
    literal = an.literal_number(expr)
    if literal is not None:
        return literal
    project = view(ctx)
    imps = an.imports(ctx)
    name = imps.qualify(expr) if project is not None and imps.is_imported(expr) else None
    if project is None or not name:
        return None
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        entry = project.lookup(".".join(parts[:cut]))
        if entry is not None and entry.kind == "constant" and cut == len(parts):
            return float(entry.data["value"])
        if entry is not None and entry.kind == "namespace":
            value = entry.data.get("attrs", {}).get(".".join(parts[cut:]))
            return float(value) if value is not None else None
    return None


def call_effects(ctx: FileContext, call: cst.Call) -> frozenset[str]:
    """The effects of a call of a project function or class; empty when unknown."""
    return callee_effects(ctx, call.func)


def callee_effects(ctx: FileContext, callee: cst.BaseExpression) -> frozenset[str]:
    """The effects of calling what `callee` names, a project function or class (also when
    it is passed on uncalled: `bench(run_forward, x)`); empty when unknown."""
    entry = entry_for(ctx, callee)
    return effects(ctx, entry) if entry is not None and entry.kind in ("function", "class") else frozenset()


def returns_moved_model(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project function that returns a model it moved to an accelerator (`model =
    build_model(cfg)` with `from .models import build_model`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "function" and bool(entry.data.get("returns_moved"))


def timed_parameters(ctx: FileContext, call: cst.Call) -> list[tuple[str, int]]:
    """For a call of a project timing helper (`def timeit(fn, *args)`: it reads a wall clock
    twice or more, calls a parameter, and never synchronizes, itself or through what it
    calls), the parameters it calls, each with its position."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or entry.data.get("clock_reads", 0) < 2:
        return []
    if "syncs" in effects(ctx, entry):
        return []
    params = entry.data.get("params", [])
    return [(param, params.index(param)) for param in entry.data.get("runs", ()) if param in params]


def times_block(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project context manager that times the body of its `with` statement
    (`with record_time("train"):`, a clock read before and after its `yield`) and never
    synchronizes, itself or through what it calls."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or not entry.data.get("times_block"):
        return False
    return "syncs" not in effects(ctx, entry)


def returns_backpropagated_loss(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project function that returns the loss it back-propagated (`loss =
    train_step(model, batch)` with `from engine import train_step`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "function" and bool(entry.data.get("returns_backpropagated"))


def totaled_arguments(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The arguments that a call of a project function or method adds as they are into an
    attribute of its object (`tracker.update(losses)` with `self.sums[k] += losses[k]`)."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return []
    bound = _bound_arguments(entry.data.get("params", []), call)
    return [bound[param] for param in entry.data.get("totals_params", ()) if param in bound]


def placed_arguments(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The arguments of `call` that what it runs moves to a device before it reads anything of
    them but their metadata (`def forward(self, ids, device): ids = ids.to(device)`): a
    function of the checked file or of another project module, a method of the class around
    the call or of a project object, or the module that a `self.` attribute holds
    (`self.rope(frame_indices=ids)` with `self.rope = RotaryEmbed(...)`, a project class
    whose `forward` moves `frame_indices`). The call's arguments are bound to parameters by
    position and by keyword; when it may run several functions, each must move the argument.
    Empty when what it runs is unknown (an installed package's function)."""
    found: list[cst.BaseExpression] | None = None
    for entry in _functions_run(ctx, call):
        bound = _bound_arguments(entry.data.get("params", []), call)
        moved = [bound[param] for param in entry.data.get("places_params", ()) if param in bound]
        found = moved if found is None else [arg for arg in found if any(arg is m for m in moved)]
    return found or []


def _functions_run(ctx: FileContext, call: cst.Call) -> list[Entry]:
    """The function entries that `call` may run (see `placed_arguments`); empty when any is
    unknown: a nested function, or an attribute that holds something else too."""
    func = call.func
    found = entry_for(ctx, func) or inherited_method(ctx, func)
    if found is not None:
        return [found] if found.kind == "function" else []
    local = an.functions(ctx).resolve(call)
    if local:
        entries = [_local_function(ctx, f) for f in local]
        return [e for e in entries if e is not None] if all(e is not None for e in entries) else []
    # `self.rope(...)` / `self.rope.forward(...)`: the module a `self.` attribute holds.
    parts = (an.dotted(func) or "").split(".")
    if parts[0] != "self" or len(parts) not in (2, 3) or parts[2:] not in ([], ["forward"]):
        return []
    cls = an.index(ctx).enclosing(call, (cst.ClassDef,))
    owner = local_entry(ctx, cls.name.value) if cls is not None else None
    held = _attribute_classes(ctx, owner, parts[1]) if owner is not None and owner.kind == "class" else None
    # Calling the object runs its `__call__`, which for a module is `forward`.
    names = ("__call__", "forward") if len(parts) == 2 else ("forward",)
    runs = [next(filter(None, (_method(ctx, c, name) for name in names)), None) for c in held or ()]
    return [r for r in runs if r is not None] if runs and all(r is not None for r in runs) else []


def _local_function(ctx: FileContext, func: cst.FunctionDef) -> Entry | None:
    """The entry of a top-level function of the checked file, or of a method of one of its
    top-level classes; None for a nested function, which no summary describes."""
    idx = an.index(ctx)
    cls = an.functions(ctx).enclosing_class(func)
    if cls is None:
        return local_entry(ctx, func.name.value) if idx.scope(func) is ctx.module else None
    owner = local_entry(ctx, cls.name.value) if idx.scope(cls) is ctx.module else None
    data = owner.data.get("methods", {}).get(func.name.value) if owner is not None else None
    return Entry(f"{owner.name}.{func.name.value}", data, owner.module) if owner is not None and data is not None else None


def is_module_class(ctx: FileContext, entry: Entry, depth: int = 0) -> bool:
    """A project class that subclasses `torch.nn.Module` (or a LightningModule), directly or
    through other project classes."""
    project = view(ctx)
    if entry.kind != "class" or project is None or depth >= MAX_DEPTH:
        return False
    for base in entry.data.get("bases", ()):
        if base in TORCH_MODULE_BASES or base.startswith("torch.nn.") or base.endswith("LightningModule"):
            return True
        inner = project.lookup(base, entry.module)
        if inner is not None and is_module_class(ctx, inner, depth + 1):
            return True
    return False


def builds_module(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project class that is a network (`nets.AANet(...)`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and is_module_class(ctx, entry)


def runs_with_gradients(ctx: FileContext, call: cst.Call, key: str) -> bool:
    """A call of a project function that runs the module `key` names (passed as an
    argument) with gradients: it calls the parameter bound to it, outside any grad-free
    context, and does not put it in train mode."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return False
    data = entry.data
    if {"grad_free", "enters_grad_free", "sets_train"} & effects(ctx, entry):
        return False
    bound = _bound_arguments(data.get("params", []), call)
    return any(an.dotted(bound[param]) == key for param in data.get("runs", ()) if param in bound)


def trained_by(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """What a call of a project function or method that back-propagates and steps an
    optimizer trains: the object whose method it is (`model.train_emb(x)`: `model`) and
    the arguments bound to parameters that it runs (`train_step(model, batch)`); empty
    when the call does not train or is unknown."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or not {"backward", "steps"} <= effects(ctx, entry):
        return []
    bound = _bound_arguments(entry.data.get("params", []), call)
    trained = [bound[param] for param in entry.data.get("runs", ()) if param in bound]
    if isinstance(call.func, cst.Attribute) and not an.imports(ctx).is_imported(call.func):
        trained.append(call.func.value)
    return trained


@dataclass(frozen=True)
class ModeLeft:
    """An argument that a call leaves in a mode, and the method whose call switched it
    (`eval`, `train`, or a wrapper's own: `val_start`)."""

    argument: cst.BaseExpression
    mode: str  # "eval", "train" or "either" (`model.train(flag)`)
    switch: str


def modes_left(ctx: FileContext, call: cst.Call) -> list[ModeLeft]:
    """The arguments that a call of a project function leaves in another mode, each with
    the mode its last switch in that function sets: "eval" (`evaluate(model, loader)` that
    calls `model.eval()`, or `model.val_start()` of a project wrapper class whose method
    calls `self.encoder.eval()`), "train", or "either" (`model.train(flag)`)."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return []
    bound = _bound_arguments(entry.data.get("params", []), call)
    left = []
    for param, mode in entry.data.get("mode_params", {}).items():
        if param not in bound:
            continue
        switch = "train" if mode == "train" else "eval"
        if mode.startswith("method:"):
            switch = mode.partition(":")[2]
            mode = _method_mode(ctx, bound[param], switch)
        if mode is not None:
            left.append(ModeLeft(bound[param], mode if mode in ("eval", "train") else "either", switch))
    return left


def _method_mode(ctx: FileContext, holder: cst.BaseExpression, method: str) -> str | None:
    """The mode that calling `holder.method()` leaves (`model.val_start()` of a wrapper whose
    method calls `self.encoder.eval()`): None when the class or the method is unknown or
    switches no mode."""
    project, name = view(ctx), an.dotted(holder)
    entry = _held_method(ctx, project, name, method) if project is not None and name else None
    return _mode_of(effects(ctx, entry)) if entry is not None else None


def object_mode_left(ctx: FileContext, call: cst.Call) -> str | None:
    """The mode that a call of a project wrapper's method leaves its object's networks in
    (`model.val_start()` whose definition calls `self.encoder.eval()`): "eval", "train",
    "either", or None (unknown, or no switch)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value in ("eval", "train") or an.imports(ctx).is_imported(func):
        return None
    entry = entry_for(ctx, func)
    return _mode_of(effects(ctx, entry)) if entry is not None and entry.kind == "function" else None


def _mode_of(done: frozenset[str]) -> str | None:
    switched = done & {"sets_eval", "sets_train"}
    if not switched:
        return None
    return "eval" if switched == {"sets_eval"} else "train" if switched == {"sets_train"} else "either"


def train_switch(ctx: FileContext, holder: cst.BaseExpression) -> str | None:
    """The method that puts what `holder` holds back in train mode: `train` for a network or
    anything unknown, a project wrapper class's own method that only switches its networks
    to train mode (`train_start`), None for a wrapper class without one."""
    project, name = view(ctx), an.dotted(holder)
    owner = _held_class(ctx, project, name) if project is not None and name else None
    if owner is None or is_module_class(ctx, owner):
        return "train"
    for method in owner.data.get("methods", {}):
        found = _method(ctx, owner, method)
        if found is not None and _mode_of(effects(ctx, found)) == "train" and not {"backward", "steps"} & effects(ctx, found):
            return str(method)
    return None


def evaluates_in_train_mode(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The networks that a call of a project evaluation function (named like one:
    `evaluate(model, loader)`) runs under `no_grad()` / `inference_mode()` without ever
    switching their mode (nor any mode, through the functions it calls): the arguments it
    runs, and for a method (`trainer.validate()`, or `self.validate()` inherited from a base
    class of another module) the attributes of its instance it runs (`trainer.net`)."""
    entry = entry_for(ctx, call.func) or inherited_method(ctx, call.func)
    if entry is None or entry.kind != "function" or not an.name_says_evaluation(entry.name.rpartition(".")[2].lstrip(":")):
        return []
    done = effects(ctx, entry)
    if not {"grad_free", "enters_grad_free"} & done or {"sets_eval", "sets_train", "backward"} & done:
        return []
    params = entry.data.get("params", [])
    instance = an.receiver(call) if params[:1] == ["self"] else None
    bound = _bound_arguments(params, call)
    found: list[cst.BaseExpression] = [bound[param] for param in entry.data.get("runs", ()) if param in bound]
    if instance is not None:
        found.extend(
            cst.Attribute(value=instance, attr=cst.Name(run[5:]))
            for run in entry.data.get("runs", ())
            if run.startswith("self.")
        )
    return found


def builds_frozen(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project class whose constructor freezes all its parameters
    (`self.requires_grad_(False)`, also through a method it calls): its instances build no
    autograd graph."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "class" and "freezes_self" in effects(ctx, entry)


def distributed_sampler_factory(ctx: FileContext, call: cst.Call) -> str | None:
    """What a call of a project factory returns that needs `set_epoch`: "loader" for a
    `DataLoader` with a shuffling `DistributedSampler` that it builds (`make_loader(dataset)`
    in a data module), "sampler" for such a sampler itself; None otherwise."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or "distributed_sampler" not in effects(ctx, entry):
        return None
    returns = entry.data.get("returns", ())
    if any(r.endswith("DataLoader") for r in returns):
        return "loader"
    return "sampler" if any(r.endswith("DistributedSampler") for r in returns) else None


def package_async_trainer(ctx: FileContext) -> str | None:
    """A function or method of another module of the file's package that back-propagates
    and copies with `non_blocking=True` (`pkg.fit.Trainer.epoch`): a trainer that feeds a
    GPU from host memory, such as the loaders of a data module beside it."""
    project = view(ctx)
    found = project.package_functions(("backward", "copies_async")) if project is not None else []
    return found[0] if found else None


def called_from_methods(ctx: FileContext, methods: Iterable[str]) -> dict[str, list[int]]:
    """The checked file's top-level functions that methods named in `methods` of classes in
    other modules of its folder call (`forward` of a layer calling `functional.encode`), with
    the positions at which those methods pass them their own parameters."""
    project = view(ctx)
    return project.called_from_methods(methods) if project is not None else {}


def mixed_by_methods(ctx: FileContext, methods: Iterable[str]) -> list[str]:
    """The checked file's top-level functions whose results methods named in `methods` of
    classes in other modules of its folder compute with as they got them (`x +
    functional.table(n)` in a layer's `forward`)."""
    project = view(ctx)
    return project.mixed_by_methods(methods) if project is not None else []


def project_places_on_device(ctx: FileContext) -> bool:
    """Some module of the checked file's package, or a script that runs it, places work on a
    device (a training script that moves the model of a layer library to CUDA); False
    outside a project."""
    project = view(ctx)
    return project is not None and project.any_module("places_on_device", OWN_PACKAGE)


def project_disables_grad(ctx: FileContext) -> bool:
    """Some module of the checked file's project (the file itself included) runs code
    without gradients, as a caller of the file's classes may around them; False outside a
    project, where the file's own code shows every caller."""
    project = view(ctx)
    return project is not None and project.any_module("disables_grad")


def project_sets_epoch(ctx: FileContext) -> bool:
    """Some module of the checked file's project calls a `set_epoch`, hands loaders to
    `accelerator.prepare`, or trains with a framework that sets samplers' epochs itself;
    True outside a project (unknown)."""
    project = view(ctx)
    return project is None or project.any_module("sets_epoch")


def any_call_has(ctx: FileContext, calls: Iterable[cst.Call], effect: str) -> cst.Call | None:
    """The first of `calls` that runs a project function with `effect`."""
    for call in calls:
        if effect in call_effects(ctx, call):
            return call
    return None


def class_mode_free(ctx: FileContext, entry: Entry, call: cst.Call | None = None, depth: int = 0) -> bool:
    """Whether a network class of the project computes the same in train and eval mode:
    no mode-dependent layer in its code, its bases or the project classes it builds, and
    every dropout whose rate is an `__init__` parameter built with rate 0 (by `call`'s
    arguments, else the parameter's default). Unknown parts answer False."""
    data = entry.data
    if entry.kind != "class" or data.get("mode_words", True) or depth >= MAX_DEPTH:
        return False
    bound = _bound_arguments(data.get("init_params", []), call)
    for param, default in data.get("dropout_params", {}).items():
        rate = _number(bound[param]) if param in bound else default
        if isinstance(rate, bool) or rate != 0:
            return False
    for base in data.get("bases", ()):
        if base in TORCH_MODULE_BASES:
            continue
        inner = lookup(ctx, base, entry.module)
        if inner is None or not class_mode_free(ctx, inner, None, depth + 1):
            return False
    for written in data.get("uses", ()):
        inner = lookup(ctx, written, entry.module)
        if inner is None or not class_mode_free(ctx, inner, None, depth + 1):
            return False  # unknown, or a function that may build any layer
    return True


def _number(expr: cst.BaseExpression) -> float | None:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    return None


def _bound_arguments(params: list[str], call: cst.Call | None) -> dict[str, cst.BaseExpression]:
    if call is None:
        return {}
    if params[:1] in (["self"], ["cls"]):  # a method called on its object: `helper.run(model)`
        params = params[1:]
    bound: dict[str, cst.BaseExpression] = {}
    for param, arg in zip(params, an.positional(call)):
        bound[param] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
    return bound
