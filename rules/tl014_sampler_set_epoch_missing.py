from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

MAX_CALLER_DEPTH = 2


class SamplerSetEpochMissing(Rule):
    """
    ## What it does
    Finds a `DistributedSampler` whose loader is iterated once per epoch in an epoch loop
    that never calls `sampler.set_epoch(epoch)` (directly, through
    `loader.sampler.set_epoch(epoch)`, or in a helper of the same module that the loop calls;
    a `set_epoch` of another sampler of the module, such as the evaluation one, does not count).
    When the sampler or its loader goes where the rule cannot follow it (returned by a factory
    function, kept on a trainer object or in a dict), it reports the file's epoch loops that
    run a backward pass in a loop over batches (`for epoch in ...`, `while epoch < n`, or a
    loop that calls an epoch method, `while True: self._train_epoch()`) only if nothing in the
    file calls a `set_epoch` at all and the loop does not hand the sampler to code it cannot
    see. A factory of another module of the project that builds the sampler
    (`self.sampler = make_sampler(dataset)`) or a loader with one
    (`self.train_loader = make_loader(dataset)`) counts as the sampler. A data module that
    builds and keeps the sampler for a training loop in another module (a `Bunch` holding
    `self.train_loader`) is reported at the sampler when no module of the project calls a
    `set_epoch`, hands loaders to `accelerator.prepare`, or imports a framework that sets the
    epoch itself (Lightning, Hugging Face, ignite, DeepSpeed, ...). A sampler whose `shuffle=`
    is a parameter counts as shuffling when that parameter defaults to `True` or a call here
    passes `True`; a sampler that a local function returns (`sampler=make_sampler(ds)`) is
    the loader's. The loader is followed into the local helpers it is passed to: a generator
    that cycles it (`while True: for batch in loader: yield batch`) starts a new epoch with
    each pass, and is reported at that pass when nothing there calls `set_epoch`.

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
        # A trainer whose epoch method sets the epoch of the sampler it keeps.
        """
        from torch.utils.data import DistributedSampler
        class Trainer:
            def __init__(self, dataset):
                self.sampler = DistributedSampler(dataset)
                self.loader = build_loader(dataset, self.sampler)

            def run(self):
                while not self.finished:
                    self.run_epoch()

            def run_epoch(self):
                self.epoch += 1
                self.sampler.set_epoch(self.epoch)
                for batch in self.loader:
                    self.optimizer.zero_grad()
                    self.model(batch).backward()
                    self.optimizer.step()
        """,
        # The epoch loop hands the kept sampler to a helper of another module.
        """
        from torch.utils.data import DistributedSampler
        from .utils import reseed
        class Trainer:
            def __init__(self, dataset):
                self.sampler = DistributedSampler(dataset)
                self.loader = build_loader(dataset, self.sampler)

            def run(self, epochs):
                for epoch in range(epochs):
                    reseed(self.sampler, epoch)
                    self.run_epoch()

            def run_epoch(self):
                for batch in self.loader:
                    self.optimizer.zero_grad()
                    self.model(batch).backward()
                    self.optimizer.step()
        """,
        # Samplers kept in a dict that do not shuffle.
        """
        from torch.utils.data import DataLoader, DistributedSampler
        def setup(train_set):
            samplers = {"train": DistributedSampler(train_set, shuffle=False)}
            return {"train": DataLoader(train_set, sampler=samplers["train"])}

        def fit(loaders, epochs):
            for epoch in range(epochs):
                train_one_epoch(loaders["train"])

        def train_one_epoch(loader):
            for x in loader:
                optimizer.zero_grad()
                model(x).backward()
                optimizer.step()
        """,
        # a generator that cycles the loader and gives the sampler each new pass's number,
        # directly or through a helper
        """
        import torch
        from torch.utils.data import DataLoader, DistributedSampler
        def endless(dl):
            passes = 0
            while True:
                dl.sampler.set_epoch(passes)
                for batch in dl:
                    yield batch
                passes += 1
        def reseed(dl, n):
            dl.sampler.set_epoch(n)
        def endless_reseeded(dl):
            n = 0
            while True:
                reseed(dl, n)
                yield from dl
                for batch in dl:
                    yield batch
                n += 1
        def pick(ds, distributed):
            return DistributedSampler(ds) if distributed else None
        def main(ds, model, opt):
            train_dl = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))
            other_dl = DataLoader(ds, batch_size=32, sampler=pick(ds, True))
            for batch, other in zip(endless(train_dl), endless_reseeded(other_dl)):
                model(batch).backward()
                opt.step()
        """,
    ]

    INVALID = [
        # a step-bounded loop that counts epochs; the loaders come from a local factory (nanoVLM)
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def get_dataloaders(train_dataset, val_dataset, batch_size):
            train_loader = DataLoader(train_dataset, batch_size=batch_size, sampler=DistributedSampler(train_dataset))
            val_loader = DataLoader(val_dataset, batch_size=batch_size, sampler=DistributedSampler(val_dataset, shuffle=False))
            return train_loader, val_loader

        def train(model, optimizer, train_dataset, val_dataset, max_steps):
            train_loader, val_loader = get_dataloaders(train_dataset, val_dataset, 32)
            global_step = 0
            epoch = 0
            while global_step < max_steps:  # expect: TL014
                epoch += 1
                for batch in train_loader:
                    optimizer.zero_grad()
                    model(**batch).loss.backward()
                    optimizer.step()
                    global_step += 1
        """,
        # PyTorch/XLA: the loop iterates the device loader that wraps the sampler's loader.
        """
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl
        sampler = torch.utils.data.distributed.DistributedSampler(
            dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True)
        loader = torch.utils.data.DataLoader(dataset, batch_size=64, sampler=sampler)
        for epoch in range(10):  # expect: TL014
            device_loader = pl.ParallelLoader(loader, [device]).per_device_loader(device)
            for x, y in device_loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
        """,
        # the sampler comes from a local helper; a generator cycles the loader forever
        """
        import torch
        from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
        def make_sampler(ds, shuffle, distributed):
            if distributed:
                return DistributedSampler(ds, shuffle=shuffle)
            return RandomSampler(ds)
        def cycle(dl):
            while True:
                for batch in dl:  # expect: TL014
                    yield batch
        def fit(loader, model, opt, steps):
            stream = cycle(loader)
            for _ in range(steps):
                model(next(stream)).backward()
                opt.step()
        def main(ds, model, opt):
            train_loader = DataLoader(ds, batch_size=32, sampler=make_sampler(ds, shuffle=True, distributed=True))
            fit(train_loader, model, opt, 10000)
        """,
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
        # The epoch goes to the evaluation sampler only: the training order never changes.
        Example(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_set)
            val_sampler = DistributedSampler(val_set, shuffle=False)
            train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
            val_loader = DataLoader(val_set, batch_size=32, sampler=val_sampler)
            for epoch in range(10):  # expect: TL014
                val_sampler.set_epoch(epoch)
                for x, y in train_loader:
                    train_step(x, y)
                for x, y in val_loader:
                    eval_step(x, y)
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            train_sampler = DistributedSampler(train_set)
            val_sampler = DistributedSampler(val_set, shuffle=False)
            train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
            val_loader = DataLoader(val_set, batch_size=32, sampler=val_sampler)
            for epoch in range(10):  # expect: TL014
                train_sampler.set_epoch(epoch)
                val_sampler.set_epoch(epoch)
                for x, y in train_loader:
                    train_step(x, y)
                for x, y in val_loader:
                    eval_step(x, y)
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
        # Samplers and loaders kept in dicts and handed to a runner whose epoch loop calls
        # the epoch in another method.
        """
        from torch.utils.data import DataLoader, DistributedSampler

        class Runner:
            def __init__(self, loaders, samplers, model, optimizer):
                self.loaders, self.samplers = loaders, samplers
                self.model, self.optimizer = model, optimizer

            def train(self, epochs):
                for epoch in range(epochs):  # expect: TL014
                    self.train_one_epoch()

            def train_one_epoch(self):
                for x, y in self.loaders["train"]:
                    self.optimizer.zero_grad()
                    self.model(x, y).backward()
                    self.optimizer.step()

        def setup(train_set, model, optimizer):
            samplers = {"train": DistributedSampler(train_set)}
            loaders = {"train": DataLoader(train_set, batch_size=8, sampler=samplers["train"])}
            return Runner(loaders, samplers, model, optimizer)
        """,
        # A trainer keeps the sampler; a `while` loop runs the epoch method until it is done.
        """
        from torch.utils.data import DistributedSampler
        class Trainer:
            def __init__(self, dataset):
                self.sampler = DistributedSampler(dataset)
                self.loader = build_loader(dataset, self.sampler)

            def run(self):
                while not self.finished:  # expect: TL014
                    self.run_epoch()

            def run_epoch(self):
                for batch in self.loader:
                    self.optimizer.zero_grad()
                    self.model(batch).backward()
                    self.optimizer.step()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        idx = an.index(ctx)
        funcs = an.functions(ctx)
        reported: set[int] = set()
        untracked: list[an.Sampler] = []
        for sampler in an.distributed_samplers(ctx):
            chains = [
                (site, chain)
                for site in an.loader_passes(ctx, sampler)
                for chain in an.loops_around_callers(idx, funcs, site, MAX_CALLER_DEPTH)
                if chain
            ]
            if not chains:
                untracked.append(sampler)
            for site, chain in chains:
                loop = chain[0]
                if id(loop) in reported or any(
                    an.sets_epoch_for(ctx, outer, sampler) or _escapes(idx, funcs, outer, sampler) for outer in chain
                ):
                    continue
                if idx.contains(loop, sampler.call) and an.keyword(sampler.call, "seed") is not None:
                    continue
                reported.add(id(loop))
                yield self._report(ctx, idx, loop, sampler, site)
        if untracked and not reported:
            kept = [(s, made_in) for s in untracked for made_in in (_made_in(ctx, idx, s),) if made_in is not None]
            if kept:
                yield from self._report_untracked(ctx, idx, kept)

    def _report_untracked(self, ctx: FileContext, idx: an.Index, kept: list[tuple[an.Sampler, str]]) -> Iterator[Report]:
        """The samplers travel where this rule cannot follow them (returned by a factory, kept
        on an object or in a dict): report the file's epoch loops that train and do not hand
        the first to code this file cannot see, when nothing in the file ever calls a
        `set_epoch` (nor hands a loader to `accelerator.prepare`); in a file without such
        loops, each sampler, when no module of the project gives any sampler the epoch."""
        called = [an.callee_name(call) or "" for call in idx.nodes(cst.Call)]
        if any("set_epoch" in name or name == "prepare" for name in called):
            return
        funcs = an.functions(ctx)
        sampler = kept[0][0]
        loops = an.epoch_loops(ctx, avoid=sampler.call)
        for loop in loops:
            if _escapes(idx, funcs, loop, sampler):
                continue
            made_in = _made_for(idx, funcs, loop, kept)
            epoch = an.dotted(loop.target) if isinstance(loop, cst.For) else None
            yield self.report(
                loop.target if isinstance(loop, cst.For) else loop.test,
                f"the `DistributedSampler`{made_in} is never given the epoch: nothing in this file "
                "calls `set_epoch`, so every epoch shuffles the data in the same order; call "
                f"`loader.sampler.set_epoch({epoch or 'epoch'})` at the start of each epoch",
            )
        # A data module whose loaders another module trains on: the epoch loop is elsewhere.
        if loops or sm.project_sets_epoch(ctx):
            return
        once = {id(s) for s in an.one_per_binding(ctx, [s for s, _ in kept])}
        for sampler, made_in in kept:
            if id(sampler) not in once:
                continue
            yield self.report(
                sampler.call,
                f"the `DistributedSampler`{made_in} is never given the epoch: no module of this "
                "project calls `set_epoch`, so every epoch shuffles the data in the same order; call "
                "`sampler.set_epoch(epoch)` at the start of each epoch of the loop that trains on it",
            )

    def _report(
        self, ctx: FileContext, idx: an.Index, loop: cst.For | cst.While, sampler: an.Sampler, site: cst.CSTNode
    ) -> Report:
        where = loop.target if isinstance(loop, cst.For) else loop.test
        target = sampler.name or (f"{sampler.loader_name}.sampler" if sampler.loader_name else "sampler")
        if an.runs_forever(loop):
            # No epoch count to pass: each new pass over the loader starts an epoch.
            return self.report(
                site,
                f"`DistributedSampler` `{target}` is never given the epoch: `while True` starts pass "
                "after pass over its loader here, each in the same order; count the passes and call "
                f"`{target}.set_epoch(passes)` before each",
            )
        if idx.contains(loop, sampler.call):
            return self.report(
                where,
                "a `DistributedSampler` is created anew in every epoch without a seed: every epoch "
                "shuffles the data in the same order; create it once before the loop and call "
                "`sampler.set_epoch(epoch)` each epoch",
            )
        epoch = an.dotted(loop.target) if isinstance(loop, cst.For) else None
        call = f"{target}.set_epoch({epoch or 'epoch'})"
        return self.report(
            where,
            f"`DistributedSampler` `{target}` is never given the epoch in this loop: every epoch "
            f"shuffles the data in the same order; call `{call}` at the start of each epoch",
            _fix(ctx, idx, loop, sampler, target) if sampler.name or sampler.loader_name else None,
        )


def _made_in(ctx: FileContext, idx: an.Index, sampler: an.Sampler) -> str | None:
    """Where a message says the sampler is built; None for a sampler of evaluation data."""
    maker = idx.scope(sampler.loader or sampler.call)
    if sampler.factory:
        return f" built by `{ctx.module.code_for_node(sampler.call.func)}()`"
    if isinstance(maker, cst.FunctionDef) and an.says_evaluation_data(maker.name.value):
        return None
    return f" built in `{maker.name.value}()`" if isinstance(maker, cst.FunctionDef) else ""


def _made_for(idx: an.Index, funcs: an.Functions, loop: cst.For | cst.While, kept: list[tuple[an.Sampler, str]]) -> str:
    """Where the message at `loop` says the sampler is built: in the function that the loop's
    own function calls to build its loader, where there are several."""
    called = {id(f) for call in idx.within(idx.scope(loop), cst.Call) for f in funcs.resolve(call)}
    for sampler, made_in in kept:
        if id(idx.scope(sampler.loader or sampler.call)) in called:
            return made_in
    return kept[0][1]


def _escapes(idx: an.Index, funcs: an.Functions, loop: cst.For | cst.While, sampler: an.Sampler) -> bool:
    """The loop hands the loader or sampler to code this file cannot see, which may set the epoch."""
    names = [n for n in (sampler.name, sampler.loader_name) if n]
    for root in funcs.reachable(loop.body):
        for name in names:
            for use in an.mentions(idx, root, name):
                call = an.call_taking(idx, use)
                if call is not None and not funcs.resolve(call) and an.callee_name(call) not in an.PASS_WRAPPERS:
                    return True
    return False


def _fix(
    ctx: FileContext, idx: an.Index, loop: cst.For | cst.While, sampler: an.Sampler, target: str
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


def _may_be_none(ctx: FileContext, idx: an.Index, sampler: an.Sampler) -> bool:
    """The sampler's name is bound conditionally (`... if distributed else None`) or elsewhere."""
    if isinstance(idx.parent(sampler.call), cst.IfExp):
        return True
    return sampler.name is not None and len(an.assigned_values(ctx).get(sampler.name, [])) > 1
