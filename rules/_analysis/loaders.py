"""Data loaders: the loader a loop iterates (seen through `enumerate(tqdm(loader))` and
through variables), and whether its data is already on a device before the loop sees it:
built with a device move, batched by a collate function from elsewhere, or moved by a dataset
hook, collate function or `forward` of the module. Which names of a loop body still hold a
batch as the loader yielded it (`for x, y in loader:` until `x = x.to(device)`), and samples
taken from a dataset by index (`x, y = dataset[0]`), followed the same way. How a
`DataLoader(...)` is built: its settings, and what its dataset is (samples already in
memory, tensors on a GPU, tokenized text) and how its batches are used. The module's
distributed samplers, the loaders that draw from them and where those loaders run a whole
pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    call_taking,
    called_module,
    callee_name,
    keyword,
    method_name,
    move_statement,
    parameter_names,
    positional,
    receiver,
)
from torchlint.rules._analysis.dataflow import assigned_values, bound_target, target_names
from torchlint.rules._analysis.devices import MAX_VALUE_DEPTH, Placements, placements
from torchlint.rules._analysis.flow import literal_truth
from torchlint.rules._analysis.graphs import is_loss_call
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.totals import binding_before
from torchlint.rules._analysis.names import calls_to, dotted, imports, last_name, mentions
from torchlint.rules._analysis.training import unwrap_iterable
from torchlint.rules._vocabulary import (
    DATA_TO_TENSOR,
    DATA_HOOKS,
    DEVICE_LOADER_METHODS,
    KNOWN_COLLATORS,
    LOADER_WORDS,
    name_tokens,
    TENSOR_FACTORIES,
    TEXT_WORDS,
    says_evaluation_data,
    says_length,
)

# `torch.utils.data.DataLoader`'s parameters, in the order it takes them positionally.
LOADER_PARAMETERS = (
    "dataset batch_size shuffle sampler batch_sampler num_workers collate_fn pin_memory drop_last".split()
)
# Tensor methods that keep a tensor where it is.
STAYS_PUT = frozenset(
    """float double half long int bool byte view reshape unsqueeze squeeze permute transpose flatten
    contiguous clone detach t expand repeat narrow select unbind split chunk squeeze_ unsqueeze_""".split()
)
# Datasets over what is already in memory, and torch functions that build tensors in the script.
IN_MEMORY_DATASETS = frozenset({"TensorDataset"})
# Functions that join tensors into one on the device they share: `torch.stack(items)`.
JOINS = frozenset({"stack", "cat", "pad_sequence"})
TENSORS_FROM_DATA = TENSOR_FACTORIES | DATA_TO_TENSOR | frozenset({"stack", "cat"})


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
                if all(isinstance(v, cst.Call) and KNOWN_COLLATORS.search(callee_name(v) or "") for v in self.assigned.get(name, [])):
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

    def unmoved_batch(self, loop: cst.For) -> UnmovedBatch | None:
        """The calls of a loop over a loader on the batch as the loader yielded it, when the
        data is not on a device already and nothing the loop runs may move it (other than
        moves whose copy the loop throws away); None otherwise."""
        if self.loader(loop.iter) is None or self.iterable_prepared(loop) or not target_names(batch_target(loop)):
            return None
        discarded = discarded_moves(self.idx, loop)
        skipped = frozenset(id(call) for call in discarded.values())
        if any(self.placements.moves_data_in(root, skipped) for root in self.funcs.reachable(loop.body)):
            return None
        return UnmovedBatch(calls_on_raw_batch(self.idx, loop, self.funcs), discarded)


@dataclass(frozen=True)
class UnmovedBatch:
    """What `LoaderData.unmoved_batch` finds: the calls with the arguments that hold the raw
    batch, and the moves of unpacked parts whose copies are thrown away (`x.to(device)`)."""

    calls: list[tuple[cst.Call, list[cst.BaseExpression]]]
    discarded: dict[str, cst.Call]


def loader_data(ctx: FileContext) -> LoaderData:
    return ctx.analysis(LoaderData)


# -- the batch as the loader yielded it ------------------------------------------------------


def batch_target(loop: cst.For) -> cst.BaseExpression:
    """The part of the loop target that receives data (not `enumerate`'s index)."""
    target = loop.target
    if (
        isinstance(loop.iter, cst.Call)
        and callee_name(loop.iter) == "enumerate"
        and isinstance(target, (cst.Tuple, cst.List))
        and len(target.elements) == 2
    ):
        return target.elements[1].value
    return target


def raw_batch(expr: cst.BaseExpression, raw: set[str]) -> bool:
    """`expr` is loader data as it came, given the names `raw` that hold it: a raw name, an
    item of it, or a tensor method of it that keeps it where it is."""
    if isinstance(expr, cst.Name):
        return expr.value in raw
    if isinstance(expr, cst.Subscript):
        return raw_batch(expr.value, raw)
    if isinstance(expr, cst.Attribute):
        return isinstance(expr.value, cst.Name) and expr.value.value in raw and expr.attr.value[:1].islower()
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and method_name(expr) in STAYS_PUT:
        return raw_batch(expr.func.value, raw)
    if isinstance(expr, cst.Call) and callee_name(expr) == "Variable" and expr.args:
        return raw_batch(expr.args[0].value, raw)  # the pre-0.4 autograd wrapper
    if isinstance(expr, cst.Call) and callee_name(expr) in JOINS and expr.args and keyword(expr, "device") is None:
        return raw_batch(expr.args[0].value, raw)  # `torch.stack(items)` stays where its items are
    if isinstance(expr, (cst.Tuple, cst.List)):
        return bool(expr.elements) and all(raw_batch(e.value, raw) for e in expr.elements)
    return False


def calls_on_raw_batch(
    idx: Index, loop: cst.For, funcs: Functions | None = None
) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls of the loop body (in its own scope, in source order) with the arguments that
    still hold the batch as the loader yielded it; an assignment of a moved value (`x =
    x.cuda()`) ends a name's raw state, one of raw data (`x = batch[0]`) starts it. With
    `funcs`, also the calls in the local helpers that the loop hands the raw batch to
    (`self.step(batch)`), on the parameters that receive it."""
    raw = {name.value for name in target_names(batch_target(loop))}
    return calls_on_raw_data(idx, loop.body, raw, idx.scope(loop), funcs=funcs)


def calls_after_binding(
    idx: Index, statement: cst.Assign, moved_in_place: frozenset[str] = frozenset()
) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls after `statement` binds host data (a sample, a tokenizer's output, a tensor
    made from data), in its scope, with the arguments that still hold that data as it was
    bound (as `calls_on_raw_batch` follows a batch); see `calls_on_raw_data` for
    `moved_in_place`."""
    raw = {name.value for target in statement.targets for name in target_names(target.target)}
    scope = idx.scope(statement)
    return calls_on_raw_data(idx, scope, raw, scope, after=idx.order(statement), moved_in_place=moved_in_place)


def calls_on_raw_sample(idx: Index, sample: DatasetSample) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls after a dataset sample is taken that still get it as the dataset gave it."""
    return calls_after_binding(idx, sample.statement)


# How deep `calls_on_raw_data` follows raw data into local helpers (`step` -> `forward_loss`).
MAX_HELPER_DEPTH = 3


def calls_on_raw_data(
    idx: Index,
    within: cst.CSTNode,
    raw: set[str],
    scope: cst.CSTNode,
    after: int = -1,
    funcs: Functions | None = None,
    depth: int = 0,
    moved_in_place: frozenset[str] = frozenset(),
    skipping: tuple[cst.CSTNode, ...] = (),
) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls in `within` (in `scope` itself, after source order `after`, outside the
    blocks `skipping`: the branches that one path does not take) with the arguments that
    still hold the data that the names `raw` hold at the start; with `funcs`, followed into
    the one local function that such a call runs. The names `moved_in_place` hold objects
    whose `.to(device)` moves them in place (a `BatchEncoding`), not a copy."""
    raw = set(raw)
    events: list[cst.Assign | cst.Call] = [*idx.within(within, cst.Assign), *idx.within(within, cst.Call)]
    events = sorted(
        (node for node in events if idx.order(node) > after and not any(idx.contains(b, node) for b in skipping)),
        key=idx.order,
    )
    found: list[tuple[cst.Call, list[cst.BaseExpression]]] = []
    for node in events:
        if idx.scope(node) is not scope:
            continue
        if isinstance(node, cst.Assign):
            derived = raw_batch(node.value, raw)
            for target in node.targets:
                for name in target_names(target.target):
                    (raw.add if derived else raw.discard)(name.value)
            continue
        owner = receiver(node)
        if method_name(node) in ("to", "cuda") and isinstance(owner, cst.Name) and owner.value in moved_in_place:
            raw.discard(owner.value)
            continue
        inputs = [arg.value for arg in node.args if raw_batch(arg.value, raw)]
        if inputs:
            found.append((node, inputs))
            if funcs is not None and depth < MAX_HELPER_DEPTH:
                found.extend(_calls_in_helper(idx, funcs, node, inputs, depth))
    return found


def _calls_in_helper(
    idx: Index, funcs: Functions, call: cst.Call, inputs: list[cst.BaseExpression], depth: int
) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    targets = funcs.resolve(call)
    if len(targets) != 1:
        return []
    helper = targets[0]
    params = {name for name, value in bind_arguments(funcs, helper, call).items() if any(value is i for i in inputs)}
    if not params:
        return []
    return calls_on_raw_data(idx, helper.body, params, helper, funcs=funcs, depth=depth + 1)


@dataclass(frozen=True)
class DatasetSample:
    """`x, y = dataset[i]` (or `x = dataset[0][0]`): samples taken from a dataset by index,
    as it makes them: on the CPU, unless the dataset puts its tensors on a device; or one
    batch drawn from a loader of such a dataset (`x, y = next(iter(loader))`)."""

    statement: cst.Assign
    dataset: str  # the loader's name, for a drawn batch
    drawn: bool = False


def dataset_samples(ctx: FileContext) -> list[DatasetSample]:
    """Assignments of items of a dataset: a name given to a `DataLoader` as its dataset, or
    bound to a dataset class's instance (`datasets.FashionMNIST(...)`, `ImageFolder(...)`, a
    class whose name ends in `Dataset`), whose data stays on the host; and of a batch drawn
    from such a loader outside a loop (`images, labels = next(iter(train_loader))`)."""
    return ctx.analysis(_build_dataset_samples)


def _build_dataset_samples(ctx: FileContext) -> list[DatasetSample]:
    idx = index(ctx)
    if "next" not in ctx.source and not any(isinstance(node.value, cst.Name) for node in idx.nodes(cst.Subscript)):
        return []
    names = _dataset_names(ctx)
    sources = loader_sources(ctx)
    assigned = assigned_values(ctx)
    found: list[DatasetSample] = []
    for assign in idx.nodes(cst.Assign):
        value = assign.value
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        bases = {_item_base(item) for item in items}
        base = next(iter(bases)) if len(bases) == 1 else None
        if base is not None and base in names and not any(sources.holds_gpu_tensors(v) for v in assigned.get(base, [])):
            found.append(DatasetSample(assign, base))
        elif (loader := _drawn_loader(ctx, value)) is not None:
            found.append(DatasetSample(assign, loader, drawn=True))
    return found


def _drawn_loader(ctx: FileContext, value: cst.BaseExpression) -> str | None:
    """`loader` for one batch drawn from it outside a loop: `next(iter(loader))`, or
    `next(batches)` and `batches.next()` of `batches = iter(loader)`, where `loader` is bound
    only to `DataLoader(...)` calls of this module whose datasets keep their data on the host."""
    if not isinstance(value, cst.Call):
        return None
    if callee_name(value) == "next" and len(value.args) == 1:
        drawn = value.args[0].value
    elif method_name(value) == "next" and not value.args and isinstance(value.func, cst.Attribute):
        drawn = value.func.value
    else:
        return None
    assigned = assigned_values(ctx)
    spelled = dotted(drawn)
    iterators = assigned.get(spelled, []) if spelled is not None else [drawn]
    source = iterators[0] if len(iterators) == 1 else None
    if not (isinstance(source, cst.Call) and callee_name(source) == "iter" and len(source.args) == 1):
        return None
    loader = dotted(source.args[0].value)
    built = assigned.get(loader, []) if loader is not None else []
    loaders = calls_to(ctx, DATA_LOADERS, frozenset({"DataLoader"}))
    made = [call for call in loaders if any(value is call for value in built)]
    if not built or len(made) != len(built):
        return None
    sources = loader_sources(ctx)
    if any(sources.holds_gpu_tensors(loader_setting(call, "dataset")) for call in made):
        return None
    return loader


def _item_base(expr: cst.BaseExpression) -> str | None:
    """`ds` for `ds[i]` and `ds[0][1]`; None for anything else."""
    if not isinstance(expr, cst.Subscript):
        return None
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted(expr)


def _dataset_names(ctx: FileContext) -> set[str]:
    imps = imports(ctx)
    found: set[str] = set()
    for call in calls_to(ctx, DATA_LOADERS, frozenset({"DataLoader"})):
        given = loader_setting(call, "dataset")
        name = dotted(given) if given is not None else None
        if name:
            found.add(name)
    for name, values in assigned_values(ctx).items():
        for value in values:
            if isinstance(value, cst.Call):
                callee = imps.callee(value) or ""
                if callee.startswith("torchvision.datasets.") or callee.rpartition(".")[2].endswith(("Dataset", "ImageFolder")):
                    found.add(name)
    return found


def discarded_moves(idx: Index, loop: cst.For) -> dict[str, cst.Call]:
    """`x.to(device)` as a statement, per name `x` unpacked from the batch (`for x, y in
    loader`) or bound to an item or field of it (`X, y = t["X"], t["y"]`): a tensor's `.to()`
    returns a copy, so `x` stays put. A batch object that is not unpacked (PyG's `Data`,
    Hugging Face's `BatchEncoding`) moves itself in place."""
    found: dict[str, cst.Call] = {}
    raw = batch_items(idx, loop)
    for statement in idx.within(loop.body, cst.Expr):
        move = move_statement(statement)
        if move is not None and move[0] in raw and idx.scope(statement) is idx.scope(loop):
            found[move[0]] = move[1]
    return found


def batch_items(idx: Index, loop: cst.For) -> set[str]:
    """The names that hold parts of the batch rather than the batch object: those unpacked
    from it (`for x, y in loader`), and those the loop body binds to an item or field of it
    (`X = t["X"]`, `x, y = batch.images, batch.labels`)."""
    target = batch_target(loop)
    bound = {name.value for name in target_names(target)}
    items = set(bound) if isinstance(target, (cst.Tuple, cst.List)) else set()
    for assign in idx.within(loop.body, cst.Assign):
        if idx.scope(assign) is not idx.scope(loop):
            continue
        values = assign.value.elements if isinstance(assign.value, (cst.Tuple, cst.List)) else [assign.value]
        parts = [v.value if isinstance(v, cst.BaseElement) else v for v in values]
        if not parts or not all(isinstance(v, (cst.Subscript, cst.Attribute)) and raw_batch(v, bound) for v in parts):
            continue
        for assigned in assign.targets:
            items.update(name.value for name in target_names(assigned.target))
    return items


def forgotten_batch_parts(idx: Index, funcs: Functions, loop: cst.For) -> set[str]:
    """The names unpacked from the batch (`labels` in `for inputs, labels in loader`) that
    nothing in the loop moves while another one is moved (`inputs = inputs.to(device)`): the
    loop puts its data on the device but forgets a part. A name handed to a local helper,
    or to any call that may move data, counts as moved; lengths (`feat_lens`) stay on the
    host on purpose."""
    target = batch_target(loop)
    if not isinstance(target, (cst.Tuple, cst.List)):
        return set()
    parts = {name.value for name in target_names(target)}
    moved = parts_moved_by(idx, funcs, idx.within(loop.body, cst.Call), parts)
    return {name for name in parts - moved.keys() if not says_length(name)} if moved else set()


def parts_moved_by(idx: Index, funcs: Functions, calls: Iterable[cst.Call], parts: set[str]) -> dict[str, cst.Call]:
    """The names of `parts` that `calls` may move, each with the first call that may: one
    that may move data, or a local helper's call, that mentions it."""
    moved: dict[str, cst.Call] = {}
    for call in calls:
        mentioned = {n.value for n in idx.within(call, cst.Name)} & parts
        if mentioned and (Placements.is_data_move(call) or funcs.resolve(call)):
            for name in mentioned:
                moved.setdefault(name, call)
    return moved


@dataclass(frozen=True)
class ForgottenPartUse:
    """A loss or torch op (`criterion(outputs, labels)`) that meets a part of the batch that
    the loop forgot to move with the output of a model call."""

    call: cst.Call
    part: cst.BaseExpression  # the forgotten part as the call takes it
    output: cst.Call  # the model call whose output it meets


def forgotten_part_uses(ctx: FileContext, loop: cst.For) -> list[ForgottenPartUse]:
    """The uses of `forgotten_batch_parts` in the loop's losses and torch ops (a helper may
    take paths or indices), with a model's output: `model(x)`, or the name the loop bound
    to it (`outputs = model(x)`)."""
    idx, funcs = index(ctx), functions(ctx)
    forgotten = forgotten_batch_parts(idx, funcs, loop)
    return part_uses_with_output(ctx, loop, calls_on_raw_batch(idx, loop), forgotten) if forgotten else []


def part_uses_with_output(
    ctx: FileContext, loop: cst.For, calls: list[tuple[cst.Call, list[cst.BaseExpression]]], parts: set[str]
) -> list[ForgottenPartUse]:
    """Of `calls` in `loop` (each with its arguments that hold raw batch data), the losses
    and torch ops that meet one of the batch's `parts` with a model's output."""
    idx, imps = index(ctx), imports(ctx)
    found: list[ForgottenPartUse] = []
    for call, inputs in calls:
        if not is_loss_call(imps, call) and not (imps.callee(call) or "").startswith("torch."):
            continue
        held = [e for e in inputs if parts & {n.value for n in idx.within(e, cst.Name)}]
        outputs = [out for arg in call.args if (out := _model_output(idx, loop, arg.value)) is not None]
        if held and outputs:
            found.append(ForgottenPartUse(call, held[0], outputs[0]))
    return found


def _model_output(idx: Index, loop: cst.For, expr: cst.BaseExpression) -> cst.Call | None:
    if isinstance(expr, cst.Name):
        binding = binding_before(idx, loop, expr.value, expr)
        if binding is None or binding.unpacked:
            return None
        expr = binding.value
    return expr if isinstance(expr, cst.Call) and called_module(expr) is not None else None


# -- how a DataLoader is built and used --------------------------------------------------------


def loader_setting(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value a `DataLoader(...)` call gives its parameter `name`, by keyword or position."""
    arg = keyword(call, name)
    if arg is not None:
        return arg.value
    position = LOADER_PARAMETERS.index(name)
    args = positional(call)
    return args[position].value if len(args) > position else None


LoaderSettings = dict[str, cst.BaseExpression | None]


def loader_settings(ctx: FileContext, call: cst.Call) -> list[LoaderSettings] | None:
    """How a `DataLoader(...)` call sets its parameters, once per way this module builds it:
    one mapping for a call that spells them out; for a call that forwards the `**kwargs` of
    its function (a loader factory), one per call site of that function here, with what the
    site passes by keyword. None where a setting cannot be known (`*args`, a factory with no
    call site here, a site that passes `**` itself)."""
    spelled = {name: loader_setting(call, name) for name in LOADER_PARAMETERS}
    stars = [arg for arg in call.args if arg.star]
    if not stars:
        return [spelled]
    func = index(ctx).enclosing(call, (cst.FunctionDef,))
    forwarded = func.params.star_kwarg if func is not None else None
    if (
        func is None
        or forwarded is None
        or len(stars) != 1
        or stars[0].star != "**"
        or not isinstance(stars[0].value, cst.Name)
        or stars[0].value.value != forwarded.name.value
    ):
        return None
    sites = functions(ctx).call_sites(func)
    if not sites or any(arg.star for site in sites for arg in site.args):
        return None
    return [
        {name: value if value is not None else _passed(site, name) for name, value in spelled.items()}
        for site in sites
    ]


def _passed(site: cst.Call, name: str) -> cst.BaseExpression | None:
    arg = keyword(site, name)
    return arg.value if arg is not None else None


def only_first_batch(idx: Index, loader: cst.Call) -> bool:
    """`next(iter(loader))` and nothing else (a batch to inspect a shape, warm up or trace a
    model), directly or through the one name the loader is assigned to."""
    uses: list[cst.CSTNode] = [loader]
    assign = idx.parent(loader)
    if isinstance(assign, cst.Assign) and assign.value is loader:
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return False
        name = assign.targets[0].target.value
        uses = [
            node
            for node in idx.nodes(cst.Name)
            if node.value == name and not isinstance(idx.parent(node), cst.AssignTarget)
        ]
    return bool(uses) and all(_first_batch_of(idx, use) for use in uses)


def _first_batch_of(idx: Index, expr: cst.CSTNode) -> bool:
    """Whether `expr` stands in `next(iter(expr))`."""
    calls = []
    node: cst.CSTNode | None = expr
    for _ in range(2):
        arg = idx.parent(node) if node is not None else None
        call = idx.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or len(call.args) != 1:
            return False
        calls.append(callee_name(call))
        node = call
    return calls == ["iter", "next"]


class LoaderSources:
    """What a `DataLoader`'s data is: samples already in memory (built in the script), tensors
    on a GPU (directly, or through a dataset class of the module that places its samples on a
    device), batches that a collate function of the module puts on a device, or tokenized
    text."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.imports = imports(ctx)
        self.funcs = functions(ctx)
        self.assigned = assigned_values(ctx)

    def in_memory(self, dataset: cst.BaseExpression | None, depth: int = 0) -> bool:
        """A list or tuple of samples, `range(n)`, a `TensorDataset`, a tensor built in the
        script (`torch.randn(...)`), directly, through the names it was assigned to or a
        function of this module that returns one: indexing memory is all a worker could do."""
        if dataset is None or depth > MAX_VALUE_DEPTH:
            return False
        if isinstance(dataset, (cst.List, cst.ListComp)):
            return True
        if isinstance(dataset, cst.Tuple):
            # Beyond the argument itself a tuple is what `a, b = ...` or `return a, b` unpacks.
            return depth == 0
        if isinstance(dataset, (cst.Name, cst.Attribute)):
            values = self.assigned.get(dotted(dataset) or "", [])
            return bool(values) and all(self.in_memory(value, depth + 1) for value in values)
        if not isinstance(dataset, cst.Call):
            return False
        callee = self.imports.callee(dataset) or ""
        short = callee.rpartition(".")[2]
        if short in IN_MEMORY_DATASETS and (callee == short or callee.startswith("torch.")):
            return True
        if callee.startswith("torch.") and callee.count(".") == 1 and short in TENSORS_FROM_DATA:
            return True
        if short in ("range", "list", "tuple") and callee == short:
            return True
        returned = [
            ret.value
            for func in self.funcs.by_name.get(callee, [])
            if self.funcs.enclosing_class(func) is None
            for ret in self.idx.within(func, cst.Return)
        ]
        return bool(returned) and all(value is not None and self.in_memory(value, depth + 1) for value in returned)

    def holds_gpu_tensors(self, expr: cst.BaseExpression | None, depth: int = 0) -> bool:
        """`expr`, what it was built from, or a method of a class it builds puts tensors on a
        device."""
        if expr is None or depth > MAX_VALUE_DEPTH:
            return False
        for call in self.idx.within(expr, cst.Call):
            if places_tensor(call):
                return True
            methods = self.funcs.methods.get(callee_name(call) or "", {})
            if any(places_tensor(inner) for method in methods.values() for inner in self.idx.within(method, cst.Call)):
                return True
        for node in self.idx.within(expr, cst.Name, cst.Attribute):
            name = dotted(node)
            if name and any(self.holds_gpu_tensors(v, depth + 1) for v in self.assigned.get(name, [])):
                return True
        return False

    def collates_on_device(self, loader: cst.Call) -> bool:
        """A `collate_fn` of this module that puts each batch on a device: the batches are
        CUDA tensors already, which worker processes and pinned memory cannot carry."""
        arg = keyword(loader, "collate_fn")
        if arg is None:
            return False
        for node in self.idx.within(arg.value, cst.Name):
            functions_named = self.funcs.by_name.get(node.value, [])  # functions and methods
            if any(places_tensor(call) for func in functions_named for call in self.idx.within(func, cst.Call)):
                return True
        return False

    def serves_text(self, loader: cst.Call) -> bool:
        """The loader's dataset or collate function, or what they were built from, names a
        tokenizer or a padding collator."""
        pending: list[tuple[cst.BaseExpression, int]] = [(arg.value, 0) for arg in loader.args]
        while pending:
            expr, depth = pending.pop()
            for node in self.idx.within(expr, cst.Name, cst.Attribute):
                name = dotted(node) if isinstance(node, cst.Attribute) else node.value
                if name is None:
                    continue
                if any(t in TEXT_WORDS for t in name_tokens(name.rpartition(".")[2])):
                    return True
                if depth < MAX_VALUE_DEPTH:
                    pending.extend((value, depth + 1) for value in self.assigned.get(name, []))
        return False


def loader_sources(ctx: FileContext) -> LoaderSources:
    return ctx.analysis(LoaderSources)


def places_tensor(call: cst.Call) -> bool:
    """`.cuda()`, `.to(...)`, `device=...`: a tensor put on a device."""
    return method_name(call) in ("cuda", "to") or keyword(call, "device") is not None
DISTRIBUTED_SAMPLERS = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Calls that iterate or wrap a loader without reseeding its sampler.
PASS_WRAPPERS = frozenset(
    """enumerate iter len zip tqdm trange islice cycle chain print list next range repr str ProgressBar
    track DataLoader BatchSampler ParallelLoader MpDeviceLoader""".split()
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


def one_per_binding(ctx: FileContext, samplers: list[Sampler]) -> list[Sampler]:
    """One sampler for each name a function binds samplers to: the samplers that alternative
    branches bind to one name (`if horovod: self.sampler = DistributedSampler(...)` and
    `elif ddp: self.sampler = DistributedSampler(...)`) are the one sampler the program
    runs with, stood for by the last binding, the one nearest the code after the branches.
    An unbound sampler stands for itself. In source order."""
    idx = index(ctx)
    last: dict[tuple[int, str], Sampler] = {}
    for sampler in samplers:
        key = (id(idx.scope(sampler.call)), sampler.name or f"#{id(sampler.call)}")
        last.pop(key, None)
        last[key] = sampler
    return sorted(last.values(), key=lambda s: idx.order(s.call))


def _build_distributed_samplers(ctx: FileContext) -> list[Sampler]:
    idx, funcs = index(ctx), functions(ctx)
    loaders = calls_to(ctx, DATA_LOADERS, frozenset({"DataLoader"}))
    found: list[Sampler] = []
    for call in calls_to(ctx, DISTRIBUTED_SAMPLERS, frozenset({"DistributedSampler"})):
        if len(positional(call)) >= 4 or any(arg.star for arg in call.args) or not _shuffles(idx, funcs, call):
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


def _shuffles(idx: Index, funcs: Functions, sampler: cst.Call) -> bool:
    """The sampler shuffles: by default, `shuffle=True`, or `shuffle=shuffle` of a parameter
    of the enclosing function that defaults to True or that a call of it here passes as True
    (`data_sampler(dataset, shuffle=True)`)."""
    shuffle = keyword(sampler, "shuffle")
    if shuffle is None or literal_truth(shuffle.value):
        return True
    func = idx.enclosing(sampler, (cst.FunctionDef,))
    if func is None or not isinstance(shuffle.value, cst.Name):
        return False
    param = shuffle.value.value
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    default = next((p.default for p in params if p.name.value == param), None)
    passed = (bind_arguments(funcs, func, site).get(param) for site in funcs.call_sites(func))
    return any(value is not None and literal_truth(value) for value in (default, *passed))


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
    """The loader's `sampler=` or `batch_sampler=` is the sampler, holds it, is a name bound
    to something that holds it (`batch_sampler_train = BatchSampler(sampler_train, ...)`), or
    calls a local function that returns it (`sampler=data_sampler(dataset, distributed=True)`)."""
    idx, funcs = index(ctx), functions(ctx)
    for word in ("sampler", "batch_sampler"):
        arg = keyword(loader, word)
        if arg is None:
            continue
        if _holds(idx, arg.value, sampler, name) or _returned_by(idx, funcs, arg.value, sampler):
            return True
        wrapper = dotted(arg.value)
        if wrapper is not None and any(_holds(idx, v, sampler, name) for v in assigned_values(ctx).get(wrapper, [])):
            return True
    return False


def _holds(idx: Index, expr: cst.CSTNode, sampler: cst.Call, name: str | None) -> bool:
    return idx.contains(expr, sampler) or (name is not None and bool(mentions(idx, expr, name)))


def _returned_by(idx: Index, funcs: Functions, expr: cst.BaseExpression, sampler: cst.Call) -> bool:
    """`expr` calls a local function that returns `sampler` as it builds it
    (`return DistributedSampler(dataset)`, `return DistributedSampler(ds) if ddp else None`)."""
    if not isinstance(expr, cst.Call):
        return False
    for func in funcs.resolve(expr):
        for ret in idx.within(func, cst.Return):
            value = ret.value
            arms = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,)
            if idx.scope(ret) is func and any(arm is sampler for arm in arms):
                return True
    return False


def _prepared(idx: Index, loader: cst.Call, name: str | None) -> bool:
    """`accelerator.prepare(loader)`: the framework shards the data and sets the epoch itself."""
    for call in idx.nodes(cst.Call):
        if method_name(call) == "prepare" and any(
            idx.contains(arg.value, loader) or (name is not None and dotted(arg.value) == name) for arg in call.args
        ):
            return True
    return False


def sets_epoch_for(ctx: FileContext, loop: cst.For | cst.While, sampler: Sampler) -> bool:
    """Code that `loop` runs (its body and the local helpers it calls) calls a `set_epoch`
    that may be `sampler`'s: any but one on another sampler of the module
    (`val_sampler.set_epoch(epoch)` leaves `train_sampler` in the same order)."""
    idx, funcs = index(ctx), functions(ctx)
    return any(
        method_name(call) == "set_epoch" and not _other_sampler(ctx, receiver(call), sampler)
        for root in funcs.reachable(loop.body)
        for call in idx.within(root, cst.Call)
    )


def _other_sampler(ctx: FileContext, owner: cst.BaseExpression | None, sampler: Sampler) -> bool:
    """`owner` is only ever bound to another `DistributedSampler(...)` than `sampler`'s, or is
    the `.sampler` of a name only ever bound to another `DataLoader(...)`."""
    if owner is None:
        return False
    ours: tuple[cst.CSTNode | None, ...] = (sampler.call, sampler.loader)
    made = "DistributedSampler"
    if isinstance(owner, cst.Attribute) and owner.attr.value == "sampler":
        owner, made = owner.value, "DataLoader"
    name = dotted(owner)
    values = assigned_values(ctx).get(name, []) if name is not None else []
    return bool(values) and all(
        isinstance(v, cst.Call) and callee_name(v) == made and all(v is not o for o in ours) for v in values
    )


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
        helpers = funcs.resolve(call)
        if callee_name(call) in PASS_WRAPPERS and not helpers:  # a local `cycle` is no itertools.cycle
            wrapper = bound_target(idx, _per_device(idx, call))
            if wrapper is not None and (wrapper_name := dotted(wrapper)):
                names.append(wrapper_name)
        elif any(idx.within(f, cst.For) for f in helpers):
            found.append(call)
            found.extend(_passes_in_helper(idx, funcs, call, use))
    for name in names:
        found.extend(loops_over(idx, scope, name))
    unique = {id(node): node for node in found}
    return list(unique.values())


def _per_device(idx: Index, wrapper: cst.Call) -> cst.Call:
    """`pl.ParallelLoader(loader, devices).per_device_loader(device)` for the inner call
    (PyTorch/XLA); `wrapper` itself otherwise."""
    attribute = idx.parent(wrapper)
    outer = idx.parent(attribute) if isinstance(attribute, cst.Attribute) else None
    if isinstance(outer, cst.Call) and outer.func is attribute and method_name(outer) in DEVICE_LOADER_METHODS:
        return outer
    return wrapper


def _passes_in_helper(idx: Index, funcs: Functions, call: cst.Call, use: cst.CSTNode, depth: int = 0) -> list[cst.CSTNode]:
    """The loops of the one local function that `call` runs over the parameter that receives
    the loader `use`, and of the helpers it passes that parameter on to: a generator that
    iterates its loader again and again (`while True: for batch in loader: yield batch`)
    runs its passes there, not once per call."""
    targets = funcs.resolve(call)
    if len(targets) != 1 or depth >= MAX_HELPER_DEPTH:
        return []
    helper = targets[0]
    params = [name for name, value in bind_arguments(funcs, helper, call).items() if value is use]
    found: list[cst.CSTNode] = []
    for param in params:
        found.extend(loop for loop in loops_over(idx, helper, param) if idx.scope(loop) is helper)
        for inner in mentions(idx, helper, param):
            passed = call_taking(idx, inner)
            if passed is not None and idx.scope(passed) is helper:
                found.extend(_passes_in_helper(idx, funcs, passed, inner, depth + 1))
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
