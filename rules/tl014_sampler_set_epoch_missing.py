from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

SAMPLERS = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Calls that iterate or wrap a loader without reseeding its sampler.
ITERATION_WRAPPERS = frozenset(
    """enumerate iter len zip tqdm trange islice cycle chain print list next range repr str ProgressBar
    track DataLoader BatchSampler""".split()
)
# A loader or sampler for evaluation: its order does not matter.
EVAL_WORDS = frozenset("val valid validation eval evaluation test testing dev".split())
MAX_CALLER_DEPTH = 2


@dataclass(frozen=True)
class _Sampler:
    call: cst.Call
    name: str | None  # the dotted name it is bound to, if any
    loader: cst.Call
    loader_name: str | None


class SamplerSetEpochMissing(Rule):
    """
    ## What it does
    Finds a `DistributedSampler` whose loader is iterated once per epoch in an epoch loop
    that never calls `sampler.set_epoch(epoch)` (directly, through
    `loader.sampler.set_epoch(epoch)`, or in a helper of the same module that the loop calls).
    When the loader goes where the rule cannot follow it (returned by a factory function,
    kept on a trainer object), it reports the file's epoch loops (`for epoch in ...` that
    run a backward pass in a loop over batches) only if nothing in the file calls a
    `set_epoch` at all; the same when a factory of another module of the project
    (`self.train_loader = make_loader(dataset)`) builds the sampler and the loader.

    ## Why is this bad?
    `DistributedSampler` shuffles with a generator seeded by `seed + epoch`, and the epoch
    only changes when you call `set_epoch`. Without it every epoch visits the data in exactly
    the same order on every process: the shuffle is done once, and models generalize worse
    (and differently from single-GPU runs) with no error or warning.

    ## Example
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(epochs):
        for x, y in loader:
            train_step(x, y)
    ```

    ## Use instead
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            train_step(x, y)
    ```
    A sampler with `shuffle=False`, one created anew each epoch with a seed that depends on
    the epoch, and loaders for evaluation are not reported.

    ## Fix safety
    The fix inserts `sampler.set_epoch(epoch)` as the first statement of a `for epoch in
    range(...)` loop (guarded by `if sampler is not None:` when the sampler may be `None`).
    It is safe: it changes the data order from epoch to epoch, which is what the sampler
    is for.

    ## Runtime confirmation
    `torchlint probe` confirms it when a shuffling `DistributedSampler` starts another pass
    over its data, after training steps, with the same epoch as before.

    ## References
    - https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
    """

    CODE = "TL014"
    NAME = "sampler-set-epoch-missing"
    SUMMARY = "DistributedSampler never gets `set_epoch()` in the epoch loop: every epoch has the same order"
    # Or "epoch" and "backward": an epoch loop over a loader that another module builds.
    TRIGGERS = (("DistributedSampler", "epoch"), ("DataLoader", "backward"))
    CONFIRMED_BY = ("TL014",)

    VALID = [
        # set_epoch at the top of the epoch loop.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for epoch in range(10):
            sampler.set_epoch(epoch)
            for x, y in loader:
                step(x, y)
        """,
        # Through the loader, inside a train_one_epoch helper of the same module.
        """
        import torch
        def train_one_epoch(model, loader, epoch):
            loader.sampler.set_epoch(epoch)
            for batch in loader:
                model(batch)

        sampler = torch.utils.data.distributed.DistributedSampler(ds)
        train_loader = torch.utils.data.DataLoader(ds, sampler=sampler)
        for epoch in range(args.epochs):
            train_one_epoch(model, train_loader, epoch)
        """,
        # shuffle=False: the order is fixed on purpose.
        """
        from torch.utils.data.distributed import DistributedSampler
        sampler = DistributedSampler(ds, shuffle=False)
        loader = DataLoader(ds, sampler=sampler)
        for epoch in range(3):
            for batch in loader:
                step(batch)
        """,
        # A sampler created each epoch with a seed that depends on the epoch.
        """
        from torch.utils.data import DistributedSampler, DataLoader
        for epoch in range(epochs):
            sampler = DistributedSampler(ds, seed=base_seed + epoch)
            for batch in DataLoader(ds, sampler=sampler, batch_size=8):
                step(batch)
        """,
        # Evaluation loaders: their order does not matter.
        """
        from torch.utils.data import DistributedSampler, DataLoader
        val_sampler = DistributedSampler(val_set)
        val_loader = DataLoader(val_set, sampler=val_sampler)
        for epoch in range(epochs):
            train_sampler.set_epoch(epoch)
            train(train_loader)
            for batch in val_loader:
                evaluate(batch)
        """,
        # A single pass over the loader: no epochs.
        """
        from torch.utils.data import DistributedSampler, DataLoader
        sampler = DistributedSampler(ds)
        loader = DataLoader(ds, sampler=sampler)
        for batch in loader:
            step(batch)
        """,
        # The loader goes to code this file cannot see (a trainer, accelerate).
        """
        from torch.utils.data import DistributedSampler, DataLoader
        sampler = DistributedSampler(ds)
        loader = DataLoader(ds, sampler=sampler)
        for epoch in range(epochs):
            run_epoch(model, loader, epoch)
        """,
        # The trainer class of the DDP tutorial: set_epoch in the per-epoch method.
        """
        import torch
        from torch.utils.data.distributed import DistributedSampler
        class Trainer:
            def _run_epoch(self, epoch):
                self.train_data.sampler.set_epoch(epoch)
                for source, targets in self.train_data:
                    self._run_batch(source, targets)

            def train(self, max_epochs):
                for epoch in range(max_epochs):
                    self._run_epoch(epoch)

        def prepare_dataloader(dataset, batch_size):
            return torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset))
        """,
        # A project's own sampler of the same name.
        """
        from mylib.samplers import DistributedSampler
        sampler = DistributedSampler(ds)
        loader = DataLoader(ds, sampler=sampler)
        for epoch in range(epochs):
            for batch in loader:
                step(batch)
        """,
        # Another function's sampler of the same name is another object.
        """
        from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
        def distributed_loader(ds):
            sampler = DistributedSampler(ds)
            return DataLoader(ds, sampler=sampler)

        def single_process_training(ds, epochs):
            sampler = RandomSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(epochs):
                for batch in loader:
                    step(batch)
        """,
        # Accelerate's prepared loaders set the epoch themselves.
        """
        from accelerate import Accelerator
        from torch.utils.data import DataLoader, DistributedSampler
        accelerator = Accelerator()
        loader = DataLoader(ds, sampler=DistributedSampler(ds), batch_size=16)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for epoch in range(epochs):
            for batch in loader:
                accelerator.backward(model(batch))
        """,
        # set_epoch guarded by hasattr, through a batch sampler.
        """
        from torch.utils.data import BatchSampler, DataLoader, DistributedSampler
        sampler = DistributedSampler(ds)
        loader = DataLoader(ds, batch_sampler=BatchSampler(sampler, 32, drop_last=True))
        epoch = 0
        while epoch < max_epochs:
            if hasattr(loader.batch_sampler.sampler, "set_epoch"):
                loader.batch_sampler.sampler.set_epoch(epoch)
            for batch in loader:
                step(batch)
            epoch += 1
        """,
        # A loader returned by a factory and kept on a trainer whose epoch method sets the epoch.
        """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        def prepare_dataloader(dataset, batch_size):
            return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset))

        class Trainer:
            def __init__(self, model, train_data, optimizer):
                self.model, self.train_data, self.optimizer = model, train_data, optimizer

            def _run_epoch(self, epoch):
                self.train_data.sampler.set_epoch(epoch)
                for source, targets in self.train_data:
                    self.optimizer.zero_grad()
                    self.model(source).sum().backward()
                    self.optimizer.step()

            def train(self, max_epochs):
                for epoch in range(max_epochs):
                    self._run_epoch(epoch)
        """,
        # A factory's loader handed to another module's train_one_epoch, which may set the epoch.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        from engine import train_one_epoch

        def build_loader(ds):
            return DataLoader(ds, sampler=DistributedSampler(ds), batch_size=64)

        loader = build_loader(ds)
        for epoch in range(args.epochs):
            train_one_epoch(model, loader, optimizer, epoch)
        """,
    ]

    INVALID = [
        Example(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, batch_size=32, sampler=sampler)
            for epoch in range(10):  # expect: TL014
                for x, y in loader:
                    step(x, y)
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, batch_size=32, sampler=sampler)
            for epoch in range(10):  # expect: TL014
                sampler.set_epoch(epoch)
                for x, y in loader:
                    step(x, y)
            """,
        ),
        # The ImageNet-style optional sampler, and enumerate(tqdm(...)).
        Example(
            """
            import torch
            from tqdm import tqdm
            def main(args):
                train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None
                train_loader = torch.utils.data.DataLoader(
                    train_set, batch_size=256, shuffle=(train_sampler is None), sampler=train_sampler
                )
                for epoch in range(args.start_epoch, args.epochs):  # expect: TL014
                    for i, (images, target) in enumerate(tqdm(train_loader)):
                        loss = criterion(model(images), target)
            """,
            fixed="""
            import torch
            from tqdm import tqdm
            def main(args):
                train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None
                train_loader = torch.utils.data.DataLoader(
                    train_set, batch_size=256, shuffle=(train_sampler is None), sampler=train_sampler
                )
                for epoch in range(args.start_epoch, args.epochs):  # expect: TL014
                    if train_sampler is not None:
                        train_sampler.set_epoch(epoch)
                    for i, (images, target) in enumerate(tqdm(train_loader)):
                        loss = criterion(model(images), target)
            """,
        ),
        # An inline sampler, a local helper that runs the epoch.
        Example(
            """
            import torch.utils.data as data
            def train_epoch(model, loader):
                for x, y in loader:
                    model(x).backward()

            loader = data.DataLoader(ds, batch_size=8, sampler=data.DistributedSampler(ds))
            for epoch in range(epochs):  # expect: TL014
                train_epoch(model, loader)
            """,
            fixed="""
            import torch.utils.data as data
            def train_epoch(model, loader):
                for x, y in loader:
                    model(x).backward()

            loader = data.DataLoader(ds, batch_size=8, sampler=data.DistributedSampler(ds))
            for epoch in range(epochs):  # expect: TL014
                loader.sampler.set_epoch(epoch)
                train_epoch(model, loader)
            """,
        ),
        # set_epoch called once, before training.
        """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler as DS
        sampler = DS(ds, num_replicas=world_size, rank=rank, shuffle=True)
        loader = DataLoader(ds, sampler=sampler)
        sampler.set_epoch(0)
        for epoch in range(epochs):  # expect: TL014
            for batch in loader:
                step(batch)
        """,
        # A while epoch loop (no fix: the loop variable is not an epoch index).
        """
        from torch.utils.data import DataLoader, DistributedSampler
        sampler = DistributedSampler(ds)
        loader = DataLoader(ds, sampler=sampler)
        epoch = 0
        while epoch < max_epochs:  # expect: TL014
            for batch in loader:
                step(batch)
            epoch += 1
        """,
        # A trainer class: the loop over the loader is in a method the epoch loop calls.
        """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler
        class Trainer:
            def __init__(self, ds):
                self.sampler = DistributedSampler(ds)
                self.loader = DataLoader(ds, batch_size=16, sampler=self.sampler)

            def run_epoch(self):
                for batch in self.loader:
                    self.step(batch)

            def fit(self, epochs):
                for epoch in range(epochs):  # expect: TL014
                    self.run_epoch()
        """,
        # A sampler created every epoch without a seed: epoch 0's order, every time.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        for epoch in range(epochs):  # expect: TL014
            sampler = DistributedSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            for batch in loader:
                step(batch)
        """,
        # A snippet without imports, a progress bar around the loader.
        """
        sampler = DistributedSampler(train_dataset, rank=rank, num_replicas=world_size)
        loader = DataLoader(train_dataset, batch_size=64, sampler=sampler, num_workers=4)
        for epoch in range(num_epochs):  # expect: TL014
            pbar = tqdm(loader, desc=f"epoch {epoch}")
            for inputs, labels in pbar:
                optimizer.zero_grad()
                loss = criterion(model(inputs), labels)
                loss.backward()
                optimizer.step()
        """,
        # The DETR layout: a BatchSampler bound to its own name, epochs run by a local helper.
        """
        import torch
        from torch.utils.data import DataLoader, DistributedSampler
        def train_one_epoch(model, data_loader, optimizer):
            for samples, targets in data_loader:
                loss = model(samples, targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        def main(args):
            sampler_train = DistributedSampler(dataset_train)
            batch_sampler_train = torch.utils.data.BatchSampler(sampler_train, args.batch_size, drop_last=True)
            data_loader_train = DataLoader(dataset_train, batch_sampler=batch_sampler_train, num_workers=2)
            for epoch in range(args.start_epoch, args.epochs):  # expect: TL014
                train_one_epoch(model, data_loader_train, optimizer)
        """,
        # The sampler reached through the loader's attribute in a trainer method.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        class Runner:
            def setup(self, ds):
                self.train_loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))

            def train(self):
                for epoch in range(self.epochs):  # expect: TL014
                    for step, batch in enumerate(self.train_loader):
                        self.step(batch)
        """,
        # A validation loader beside it does not hide the training sampler.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        def main():
            sampler = DistributedSampler(train_ds)
            loader = DataLoader(train_ds, sampler=sampler)
            for epoch in range(100):  # expect: TL014
                for batch in loader:
                    step(batch)
                for batch in val_loader:
                    evaluate(batch)
        """,
        # The loader returned by a factory and kept on a trainer (the DDP tutorial's bug).
        """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        def prepare_dataloader(dataset, batch_size):
            return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset))

        class Trainer:
            def __init__(self, model, train_data, optimizer):
                self.model, self.train_data, self.optimizer = model, train_data, optimizer

            def _run_epoch(self, epoch):
                for source, targets in self.train_data:
                    self.optimizer.zero_grad()
                    self.model(source).sum().backward()
                    self.optimizer.step()

            def train(self, max_epochs):
                for epoch in range(max_epochs):  # expect: TL014
                    self._run_epoch(epoch)
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        idx = an.index(ctx)
        funcs = an.functions(ctx)
        reported: set[int] = set()
        untracked: list[_Sampler] = []
        samplers = list(_samplers(ctx, idx))
        for sampler in samplers:
            chains = _loop_chains(idx, funcs, sampler)
            if not chains:
                untracked.append(sampler)
            for chain in chains:
                loop = chain[0]
                if id(loop) in reported or any(
                    _sets_epoch(idx, funcs, outer) or _escapes(idx, funcs, outer, sampler) for outer in chain
                ):
                    continue
                if idx.contains(loop, sampler.call) and an.keyword(sampler.call, "seed") is not None:
                    continue
                reported.add(id(loop))
                yield self._report(ctx, idx, loop, sampler)
        if untracked and not reported:
            maker = idx.scope(untracked[0].loader)
            if not (isinstance(maker, cst.FunctionDef) and _says_eval(maker.name.value)):
                made_in = f" built in `{maker.name.value}()`" if isinstance(maker, cst.FunctionDef) else ""
                yield from self._report_untracked(ctx, idx, funcs, untracked[0], made_in)
        elif not samplers:
            factory = _project_factory(ctx, idx)
            if factory is not None:
                name = ctx.module.code_for_node(factory.func)
                sampler = _Sampler(factory, None, factory, None)
                yield from self._report_untracked(ctx, idx, funcs, sampler, f" built by `{name}()`")

    def _report_untracked(
        self, ctx: FileContext, idx: an.Index, funcs: an.Functions, sampler: _Sampler, made_in: str
    ) -> Iterator[Report]:
        """The loader travels where this rule cannot follow it (returned by a factory, kept on
        an object): report the epoch loops of the file when nothing in it ever calls a
        `set_epoch` (nor hands a loader to `accelerator.prepare`)."""
        called = [an.callee_name(call) or "" for call in idx.nodes(cst.Call)]
        if any("set_epoch" in name or name == "prepare" for name in called):
            return
        for loop in _epoch_loops(ctx, idx, funcs, sampler):
            yield self.report(
                loop.target,
                f"the `DistributedSampler`{made_in} is never given the epoch: nothing in this file "
                "calls `set_epoch`, so every epoch shuffles the data in the same order; call "
                f"`loader.sampler.set_epoch({an.dotted(loop.target)})` at the start of each epoch",
            )

    def _report(self, ctx: FileContext, idx: an.Index, loop: cst.For | cst.While, sampler: _Sampler) -> Report:
        where = loop.target if isinstance(loop, cst.For) else loop.test
        if idx.contains(loop, sampler.call):
            return self.report(
                where,
                "a `DistributedSampler` is created anew in every epoch without a seed: every epoch "
                "shuffles the data in the same order; create it once before the loop and call "
                "`sampler.set_epoch(epoch)` each epoch",
            )
        target = sampler.name or (f"{sampler.loader_name}.sampler" if sampler.loader_name else "sampler")
        epoch = an.dotted(loop.target) if isinstance(loop, cst.For) else None
        call = f"{target}.set_epoch({epoch or 'epoch'})"
        return self.report(
            where,
            f"`DistributedSampler` `{target}` is never given the epoch in this loop: every epoch "
            f"shuffles the data in the same order; call `{call}` at the start of each epoch",
            _fix(ctx, idx, loop, sampler, target) if sampler.name or sampler.loader_name else None,
        )


def _project_factory(ctx: FileContext, idx: an.Index) -> cst.Call | None:
    """A call, bound to a name that says loader, of a factory in another project module
    that returns a loader with a shuffling `DistributedSampler`."""
    for call in idx.nodes(cst.Call):
        target = _bound_target(idx, call)
        name = an.last_name(target) if target is not None else None
        if name and any(t.endswith("loader") for t in an.name_tokens(name)) and not _says_eval(name):
            if sm.builds_distributed_loader(ctx, call):
                return call
    return None


def _samplers(ctx: FileContext, idx: an.Index) -> Iterator[_Sampler]:
    """Shuffling DistributedSamplers with the DataLoader that draws from each."""
    loaders = an.calls_to(ctx, LOADERS, frozenset({"DataLoader"}))
    for call in an.calls_to(ctx, SAMPLERS, frozenset({"DistributedSampler"})):
        shuffle = an.keyword(call, "shuffle")
        if len(an.positional(call)) >= 4 or any(arg.star for arg in call.args):
            continue
        if shuffle is not None and not (isinstance(shuffle.value, cst.Name) and shuffle.value.value == "True"):
            continue
        target = _bound_target(idx, call)
        name = an.dotted(target) if target is not None else None
        if target is not None and name is None:
            continue
        local = name is not None and not name.startswith("self.")
        for loader in loaders:
            if local and idx.scope(loader) is not idx.scope(call):
                continue  # another function's `sampler` is another object
            if _draws_from(ctx, idx, loader, call, name):
                loader_target = _bound_target(idx, loader)
                loader_name = an.dotted(loader_target) if loader_target is not None else None
                if _says_eval(name) or _says_eval(loader_name) or _prepared(idx, loader, loader_name):
                    continue
                yield _Sampler(call, name, loader, loader_name)


def _draws_from(ctx: FileContext, idx: an.Index, loader: cst.Call, sampler: cst.Call, name: str | None) -> bool:
    """The loader's `sampler=` or `batch_sampler=` is the sampler, holds it, or is a name bound
    to something that holds it (`batch_sampler_train = BatchSampler(sampler_train, ...)`)."""
    for keyword in ("sampler", "batch_sampler"):
        arg = an.keyword(loader, keyword)
        if arg is None:
            continue
        if _holds(idx, arg.value, sampler, name):
            return True
        wrapper = an.dotted(arg.value)
        if wrapper is not None and any(
            _holds(idx, value, sampler, name) for value in an.assigned_values(ctx).get(wrapper, [])
        ):
            return True
    return False


def _holds(idx: an.Index, expr: cst.CSTNode, sampler: cst.Call, name: str | None) -> bool:
    return idx.contains(expr, sampler) or (name is not None and bool(an.mentions(idx, expr, name)))


def _prepared(idx: an.Index, loader: cst.Call, name: str | None) -> bool:
    """`accelerator.prepare(loader)`: the framework shards the data and sets the epoch itself."""
    for call in idx.nodes(cst.Call):
        if an.method_name(call) == "prepare" and any(
            idx.contains(arg.value, loader) or (name is not None and an.dotted(arg.value) == name)
            for arg in call.args
        ):
            return True
    return False


def _says_eval(name: str | None) -> bool:
    return name is not None and any(t in EVAL_WORDS for t in an.name_tokens(name.rpartition(".")[2]))


def _iterations(idx: an.Index, funcs: an.Functions, sampler: _Sampler) -> list[cst.CSTNode]:
    """Where the loader is iterated: `for` loops over it (or over a progress bar wrapping it),
    a loop over the DataLoader call itself, and calls of local functions that it is passed
    to and that loop."""
    found: list[cst.CSTNode] = []
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
    for use in an.mentions(idx, scope, sampler.loader_name):
        call = _enclosing_call_arg(idx, use)
        if call is None:
            continue
        if an.callee_name(call) in ITERATION_WRAPPERS:
            wrapper = _bound_target(idx, call)
            if wrapper is not None and (wrapper_name := an.dotted(wrapper)):
                names.append(wrapper_name)
        elif any(idx.within(f, cst.For) for f in funcs.resolve(call)):
            found.append(call)
    for name in names:
        found.extend(_loops_over(idx, scope, name))
    return found


def _enclosing_call_arg(idx: an.Index, use: cst.CSTNode) -> cst.Call | None:
    """The call that `use` is passed to directly (`f(loader)`, `f(data=loader)`)."""
    parent = idx.parent(use)
    call = idx.parent(parent) if isinstance(parent, cst.Arg) else None
    return call if isinstance(call, cst.Call) else None


def _loop_chains(idx: an.Index, funcs: an.Functions, sampler: _Sampler) -> list[list[cst.For | cst.While]]:
    """For each place that runs a whole pass over the loader, the loops around it, innermost
    first (the first is the epoch loop); through the callers of its function too."""
    chains: list[list[cst.For | cst.While]] = []
    for site in _iterations(idx, funcs, sampler):
        chains.extend(chain for chain in _loops_around(idx, funcs, site, 0) if chain)
    return chains


def _loops_around(
    idx: an.Index, funcs: an.Functions, node: cst.CSTNode, depth: int
) -> list[list[cst.For | cst.While]]:
    """The loops around `node` in its function, continued by the loops around each caller."""
    loops: list[cst.For | cst.While] = an.enclosing_loops(idx, node)
    scope = idx.scope(node)
    if not isinstance(scope, cst.FunctionDef) or depth >= MAX_CALLER_DEPTH:
        return [loops]
    outer = [chain for site in funcs.call_sites(scope) for chain in _loops_around(idx, funcs, site, depth + 1)]
    return [loops + chain for chain in outer] or [loops]


def _epoch_loops(ctx: FileContext, idx: an.Index, funcs: an.Functions, sampler: _Sampler) -> list[cst.For]:
    """Outermost `for epoch in ...` loops that run a backward pass through a loop over
    batches, and that do not build the sampler anew (then its order is another question)."""
    training = an.training(ctx)
    running = training.loops_running(training.backward, funcs)
    found: dict[int, cst.For] = {}
    for backward in training.backward:
        loops = running.get(id(backward), [])
        for loop in loops:
            if not isinstance(loop, cst.For) or not _says_epoch(loop) or id(loop) in found:
                continue
            roots = funcs.reachable(loop.body)
            inner = {id(other) for other in an.loops_run_by(idx, funcs, loop.body)}
            if any(id(other) in inner and not _says_epoch(other) for other in loops) and not any(
                idx.contains(root, sampler.call) for root in roots
            ):
                found[id(loop)] = loop
    return [
        loop
        for loop in found.values()
        if not any(other is not loop and idx.contains(other, loop) for other in found.values())
    ]


def _says_epoch(loop: cst.For | cst.While) -> bool:
    return isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and any(
        t.startswith("epoch") for t in an.name_tokens(loop.target.value)
    )


def _sets_epoch(idx: an.Index, funcs: an.Functions, loop: cst.For | cst.While) -> bool:
    return any(
        an.method_name(call) == "set_epoch"
        for root in funcs.reachable(loop.body)
        for call in idx.within(root, cst.Call)
    )


def _escapes(idx: an.Index, funcs: an.Functions, loop: cst.For | cst.While, sampler: _Sampler) -> bool:
    """The loop hands the loader or sampler to code this file cannot see, which may set the epoch."""
    names = [n for n in (sampler.name, sampler.loader_name) if n]
    for root in funcs.reachable(loop.body):
        for name in names:
            for use in an.mentions(idx, root, name):
                call = _enclosing_call_arg(idx, use)
                if call is not None and not funcs.resolve(call) and an.callee_name(call) not in ITERATION_WRAPPERS:
                    return True
    return False


def _fix(
    ctx: FileContext, idx: an.Index, loop: cst.For | cst.While, sampler: _Sampler, target: str
) -> FixSpec | None:
    """`target.set_epoch(epoch)` first in a `for epoch in range(...)` loop, when the sampler
    exists before the loop."""
    if not (
        isinstance(loop, cst.For)
        and isinstance(loop.target, cst.Name)
        and isinstance(loop.iter, cst.Call)
        and an.callee_name(loop.iter) in ("range", "trange")
        and not idx.contains(loop, sampler.call)
        and isinstance(loop.body, cst.IndentedBlock)
    ):
        return None
    statement = f"{target}.set_epoch({loop.target.value})\n"
    if sampler.name is not None and _may_be_none(ctx, idx, sampler):
        statement = f"if {sampler.name} is not None:\n    {statement}"
    new = cst.parse_statement(statement)
    body = loop.body.with_changes(body=(new, *loop.body.body))
    return FixSpec(f"call `{target}.set_epoch(...)` first in the epoch loop", ((loop.body, body),))


def _may_be_none(ctx: FileContext, idx: an.Index, sampler: _Sampler) -> bool:
    """The sampler's name is bound conditionally (`... if distributed else None`) or elsewhere."""
    parent = idx.parent(sampler.call)
    if isinstance(parent, cst.IfExp):
        return True
    return sampler.name is not None and len(an.assigned_values(ctx).get(sampler.name, [])) > 1


def _bound_target(idx: an.Index, value: cst.CSTNode) -> cst.BaseExpression | None:
    """What `value` is assigned to: `x = value`, `x: T = value`, `x = value if c else None`,
    `(x := value)`. With several targets (`a = b = value`), the first."""
    current = value
    parent = idx.parent(current)
    while isinstance(parent, cst.IfExp) and current is not parent.test:
        current, parent = parent, idx.parent(parent)
    if isinstance(parent, cst.Assign) and parent.value is current:
        return parent.targets[0].target
    if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is current:
        return parent.target
    return None


def _loops_over(idx: an.Index, scope: cst.CSTNode, name: str) -> list[cst.For]:
    """`for` loops in `scope` that iterate `name`: `for b in loader`, `for i, b in enumerate(loader)`,
    `for b in tqdm(loader, ...)`."""
    found: list[cst.For] = []
    for node in an.mentions(idx, scope, name):
        parent = idx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            continue  # `loader.dataset`: another object
        loop = idx.enclosing(node, (cst.For,))
        if isinstance(loop, cst.For) and idx.contains(loop.iter, node):
            found.append(loop)
    return found
