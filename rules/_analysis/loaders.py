"""Data loaders: the loader a loop iterates (seen through `enumerate(tqdm(loader))` and
through variables), and whether its data is already on a device before the loop sees it:
built with a device move, batched by a collate function from elsewhere, or moved by a dataset
hook, collate function or `forward` of the module.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import bind_arguments, callee_name, method_name, parameter_names, receiver
from torchlint.rules._analysis.dataflow import assigned_values
from torchlint.rules._analysis.devices import MAX_VALUE_DEPTH, placements
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import dotted, last_name
from torchlint.rules._analysis.training import unwrap_iterable
from torchlint.rules._analysis.vocabulary import DATA_HOOKS, KNOWN_COLLATORS, LOADER_WORDS, name_tokens


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
