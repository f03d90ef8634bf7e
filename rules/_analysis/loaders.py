"""Data loaders: the loader a loop iterates (seen through `enumerate(tqdm(loader))` and
through variables), and whether its data is already on a device before the loop sees it:
built with a device move, batched by a collate function from elsewhere, or moved by a dataset
hook, collate function or `forward` of the module; the module's distributed samplers, the
loaders that draw from them and where those loaders run a whole pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    call_taking,
    callee_name,
    keyword,
    method_name,
    parameter_names,
    positional,
    receiver,
)
from torchlint.rules._analysis.dataflow import assigned_values, bound_target
from torchlint.rules._analysis.devices import MAX_VALUE_DEPTH, placements
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import calls_to, dotted, last_name, mentions
from torchlint.rules._analysis.training import unwrap_iterable
from torchlint.rules._analysis.vocabulary import (
    DATA_HOOKS,
    KNOWN_COLLATORS,
    LOADER_WORDS,
    name_tokens,
    says_evaluation_data,
)


class LoaderData:
    """What a module's loops iterate and where that data lives."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.funcs = functions(ctx)
        self.assigned = assigned_values(ctx)
        self.placements = placements(ctx)
        self._prepared: dict[tuple[int, int], bool] = {}

    def loader(self, iterable: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression | None:
        """The data loader a loop iterates, seen through `enumerate(tqdm(loader))` and through
        variables (`bar = tqdm(train_loader)`)."""
        expr = unwrap_iterable(iterable)
        if isinstance(expr, cst.Call):
            callee = callee_name(expr) or ""
            return expr if "Loader" in callee or "loader" in callee else None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = last_name(expr) or ""
            if "loader" in name.lower() or LOADER_WORDS.intersection(name_tokens(name)):
                return expr
            spelled = dotted(expr)
            values = self.assigned.get(spelled, []) if spelled and depth < MAX_VALUE_DEPTH else []
            if values and all(self.loader(v, depth + 1) is not None for v in values):
                return expr
        return None

    def moved_by_hooks(self) -> bool:
        """A dataset, collate function, batch getter or model forward of this file moves data."""
        for func in self.funcs.all:
            if func.name.value == "forward":
                if self._moves_parameter(func):
                    return True
            elif DATA_HOOKS.search(func.name.value):
                # A dataset or loader class that moves its data anywhere (in `__init__` too).
                owner = self.funcs.enclosing_class(func)
                if self.placements.moves_data_in(owner if owner is not None and func.name.value.startswith("__") else func):
                    return True
        for arg in self.idx.nodes(cst.Arg):
            if arg.keyword is not None and arg.keyword.value == "collate_fn" and isinstance(arg.value, cst.Lambda):
                if self.placements.moves_data_in(arg.value):
                    return True
        return False

    def _moves_parameter(self, func: cst.FunctionDef) -> bool:
        """`forward(self, x)` that calls `x.to(...)` / `x.cuda()`: the model moves its own inputs."""
        params = parameter_names(func) - {"self"}
        for call in self.idx.within(func, cst.Call):
            if method_name(call) in ("to", "cuda"):
                root = receiver(call)
                while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
                    root = root.value if not isinstance(root, cst.Call) else root.func
                if isinstance(root, cst.Name) and root.value in params:
                    return True
        return False

    def prepared_on_device(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """The data behind `expr` was built with a device move (`TensorDataset(x.cuda(), ...)`)."""
        key = (id(expr), depth)
        if key not in self._prepared:
            self._prepared[key] = False  # recursion guard
            self._prepared[key] = self._compute_prepared(expr, depth)
        return self._prepared[key]

    def _compute_prepared(self, expr: cst.BaseExpression, depth: int) -> bool:
        if self.placements.moves_data_in(expr) or self._unknown_collate(expr):
            return True
        if depth >= MAX_VALUE_DEPTH:
            return False
        for name in self.idx.within(expr, cst.Name):
            parent = self.idx.parent(name)
            if isinstance(parent, cst.Attribute) and parent.attr is name:
                continue
            if isinstance(parent, cst.Attribute) and parent.value is name:
                spelled = dotted(parent)
                if spelled and any(self.prepared_on_device(v, depth + 1) for v in self.assigned.get(spelled, [])):
                    return True
            if any(self.prepared_on_device(v, depth + 1) for v in self.assigned.get(name.value, [])):
                return True
        return False

    def _unknown_collate(self, expr: cst.BaseExpression) -> bool:
        """A loader built with a `collate_fn` from elsewhere, which may move the batch itself.
        Local collate functions were checked in `data_moved_by_hooks`; known padding collators
        (`DataCollatorWithPadding`, `default_collate`, `pad_sequence`) keep it on the CPU."""
        for arg in self.idx.within(expr, cst.Arg):
            if arg.keyword is None or arg.keyword.value != "collate_fn":
                continue
            value = arg.value
            name = callee_name(value) if isinstance(value, cst.Call) else last_name(value)
            if isinstance(value, cst.Lambda) or name is None:
                continue
            if self.funcs.by_name.get(name) or KNOWN_COLLATORS.search(name):
                continue
            if isinstance(value, cst.Name) and any(isinstance(v, cst.Call) for v in self.assigned.get(name, [])):
                if all(KNOWN_COLLATORS.search(callee_name(v) or "") for v in self.assigned.get(name, [])):  # type: ignore[arg-type]
                    continue
            return True
        return False

    def iterable_prepared(self, loop: cst.For) -> bool:
        """The data the loop iterates was built on the device: where it is assigned, or, for a
        parameter, at the call sites of the function."""
        if self.prepared_on_device(loop.iter):
            return True
        root = unwrap_iterable(loop.iter)
        home = self.idx.scope(loop)
        if isinstance(root, cst.Name) and isinstance(home, cst.FunctionDef) and root.value in parameter_names(home):
            for site in self.funcs.call_sites(home):
                bound = bind_arguments(self.funcs, home, site).get(root.value)
                if bound is not None and self.prepared_on_device(bound):
                    return True
        return False


def loader_data(ctx: FileContext) -> LoaderData:
    return ctx.analysis(LoaderData)


DISTRIBUTED_SAMPLERS = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Calls that iterate or wrap a loader without reseeding its sampler.
PASS_WRAPPERS = frozenset(
    """enumerate iter len zip tqdm trange islice cycle chain print list next range repr str ProgressBar
    track DataLoader BatchSampler""".split()
)


@dataclass(frozen=True)
class Sampler:
    """A shuffling `DistributedSampler`, or a call of a project factory that builds one
    (then `call` is the factory call), and the DataLoader that draws from it, if this module
    shows one: `loader` is None when the sampler goes where the module cannot follow it (a
    dict, another function's argument)."""

    call: cst.Call
    name: str | None  # the dotted name it is bound to, if any
    loader: cst.Call | None
    loader_name: str | None
    factory: bool = False  # `call` is a project factory's


def distributed_samplers(ctx: FileContext) -> list[Sampler]:
    """The module's training samplers that need `set_epoch`, each with the loaders drawing from
    it: shuffling DistributedSamplers, and loaders and samplers that a factory of another
    project module builds with one. Not evaluation samplers or loaders (named so), nor loaders
    that `accelerator.prepare` takes over."""
    return ctx.analysis(_build_distributed_samplers)


def _build_distributed_samplers(ctx: FileContext) -> list[Sampler]:
    idx = index(ctx)
    loaders = calls_to(ctx, DATA_LOADERS, frozenset({"DataLoader"}))
    found: list[Sampler] = []
    for call in calls_to(ctx, DISTRIBUTED_SAMPLERS, frozenset({"DistributedSampler"})):
        shuffle = keyword(call, "shuffle")
        if len(positional(call)) >= 4 or any(arg.star for arg in call.args):
            continue
        if shuffle is not None and not (isinstance(shuffle.value, cst.Name) and shuffle.value.value == "True"):
            continue
        found.extend(_with_loaders(ctx, call, loaders))
    # A project factory's result, bound to a name that says what it is (`self.sampler = ...`,
    # `train_loader = ...`): the name keeps the look-ups to the calls that may matter.
    for call in idx.nodes(cst.Call):
        target = bound_target(idx, call)
        name = dotted(target) if target is not None else None
        tokens = name_tokens(name.rpartition(".")[2]) if name is not None else []
        says = {kind for kind in ("loader", "sampler") if any(t.endswith(kind) for t in tokens)}
        built = sm.distributed_sampler_factory(ctx, call) if says else None
        if built == "sampler" and "sampler" in says:
            found.extend(_with_loaders(ctx, call, loaders, factory=True))
        elif built == "loader" and "loader" in says and not says_evaluation_data(name):
            if not _prepared(idx, call, name):
                found.append(Sampler(call, None, call, name, factory=True))
    return found


def _with_loaders(ctx: FileContext, call: cst.Call, loaders: list[cst.Call], factory: bool = False) -> list[Sampler]:
    idx = index(ctx)
    target = bound_target(idx, call)
    name = dotted(target) if target is not None else None
    if (target is not None and name is None) or says_evaluation_data(name) or says_evaluation_data(_dict_key(idx, call)):
        return []
    local = name is not None and not name.startswith("self.")
    found: list[Sampler] = []
    for loader in loaders:
        if local and idx.scope(loader) is not idx.scope(call):
            continue  # another function's `sampler` is another object
        if _draws_from(ctx, loader, call, name):
            loader_target = bound_target(idx, loader)
            loader_name = dotted(loader_target) if loader_target is not None else None
            if not (says_evaluation_data(loader_name) or _prepared(idx, loader, loader_name)):
                found.append(Sampler(call, name, loader, loader_name, factory))
    drawn = any(_draws_from(ctx, loader, call, name) for loader in loaders)
    return found if drawn else [Sampler(call, name, None, None, factory)]


def _dict_key(idx: Index, call: cst.Call) -> str | None:
    """`"val"` for a sampler kept in `{"train": ..., "val": DistributedSampler(...)}`."""
    element = idx.parent(call)
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _draws_from(ctx: FileContext, loader: cst.Call, sampler: cst.Call, name: str | None) -> bool:
    """The loader's `sampler=` or `batch_sampler=` is the sampler, holds it, or is a name bound
    to something that holds it (`batch_sampler_train = BatchSampler(sampler_train, ...)`)."""
    idx = index(ctx)
    for word in ("sampler", "batch_sampler"):
        arg = keyword(loader, word)
        if arg is None:
            continue
        if _holds(idx, arg.value, sampler, name):
            return True
        wrapper = dotted(arg.value)
        if wrapper is not None and any(_holds(idx, v, sampler, name) for v in assigned_values(ctx).get(wrapper, [])):
            return True
    return False


def _holds(idx: Index, expr: cst.CSTNode, sampler: cst.Call, name: str | None) -> bool:
    return idx.contains(expr, sampler) or (name is not None and bool(mentions(idx, expr, name)))


def _prepared(idx: Index, loader: cst.Call, name: str | None) -> bool:
    """`accelerator.prepare(loader)`: the framework shards the data and sets the epoch itself."""
    for call in idx.nodes(cst.Call):
        if method_name(call) == "prepare" and any(
            idx.contains(arg.value, loader) or (name is not None and dotted(arg.value) == name) for arg in call.args
        ):
            return True
    return False


def loader_passes(ctx: FileContext, sampler: Sampler) -> list[cst.CSTNode]:
    """Where a sampler's loader runs a whole pass: `for` loops over it (or over a progress bar
    wrapping it), a loop over the DataLoader call itself, and calls of local functions that it
    is passed to and that loop."""
    idx, funcs = index(ctx), functions(ctx)
    found: list[cst.CSTNode] = []
    if sampler.loader is None:
        return found
    loop = idx.parent(sampler.loader)
    while loop is not None and not isinstance(loop, (cst.For, cst.BaseStatement)):
        loop = idx.parent(loop)
    if isinstance(loop, cst.For) and idx.contains(loop.iter, sampler.loader):
        found.append(loop)
    if sampler.loader_name is None:
        return found
    names = [sampler.loader_name]
    # `self.loader` lives as long as the object; a local name only in the function that binds it.
    scope = idx.module if sampler.loader_name.startswith("self.") else idx.scope(sampler.loader)
    for use in mentions(idx, scope, sampler.loader_name):
        call = call_taking(idx, use)
        if call is None:
            continue
        if callee_name(call) in PASS_WRAPPERS:
            wrapper = bound_target(idx, call)
            if wrapper is not None and (wrapper_name := dotted(wrapper)):
                names.append(wrapper_name)
        elif any(idx.within(f, cst.For) for f in funcs.resolve(call)):
            found.append(call)
    for name in names:
        found.extend(loops_over(idx, scope, name))
    return found


def loops_over(idx: Index, scope: cst.CSTNode, name: str) -> list[cst.For]:
    """`for` loops in `scope` that iterate `name`: `for b in loader`, `for i, b in enumerate(loader)`,
    `for b in tqdm(loader, ...)`."""
    found: list[cst.For] = []
    for node in mentions(idx, scope, name):
        parent = idx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            continue  # `loader.dataset`: another object
        loop = idx.enclosing(node, (cst.For,))
        if isinstance(loop, cst.For) and idx.contains(loop.iter, node):
            found.append(loop)
    return found
