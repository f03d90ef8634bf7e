from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


class DataloaderStarvesGpu(Rule):
    """
    ## What it does
    Finds a `DataLoader` in a file that trains models on CUDA and loads in the main
    process (`num_workers` unset or `0`), or that copies batches with `non_blocking=True`
    from a loader without `pin_memory=True`. One finding per `DataLoader`, naming what is
    missing. A loader factory that forwards its `**kwargs` to the `DataLoader` is judged by
    what its call sites in the module pass. A data module whose package has a trainer that
    back-propagates and copies batches with `non_blocking=True` (in another module of the
    package) is checked for the pinning those copies need.

    ## Why is this bad?
    With `num_workers=0` the training loop stops at every batch to read, decode and collate
    it while the GPU idles; with pageable (unpinned) host memory each host-to-device copy is
    staged through a pinned buffer and cannot overlap with compute (`non_blocking=True` does
    nothing without it). Both are common reasons for low GPU utilization.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    ```
    Loaders over data already in memory are not reported: a `TensorDataset`, tensors built
    in the script (`torch.randn(...)`, `torch.tensor(...)`), a list or tuple of samples,
    directly or through a function of the module that returns one; a worker could only
    index memory and would add start-up cost and copies between processes. Nor are loaders
    used once (`next(iter(loader))`: one batch to check a shape or trace a model), loaders
    over tensors that already live on the GPU, or loaders whose arguments come from a
    `**kwargs` dict or from callers this module does not show. Only files with a training
    loop (a backward pass), or data modules beside such a trainer, are checked: evaluation
    scripts and offline data tools are not, nor are test files.
    Loaders of tokenized text (a dataset built with a tokenizer, a Hugging Face data
    collator) are not reported either: indexing token ids and padding them costs little next
    to a language model's step.

    ## Fix safety
    When only pinning is missing, the fix adds `pin_memory=True`; it is unsafe: pinning fails
    on CUDA tensors produced by a dataset or collate function, and uses page-locked host
    memory. The number of workers is left to you: it changes how the dataset is copied into
    processes, and random state.

    ## Runtime confirmation
    On a GPU, `torchlint probe` measures the share of the loop's time spent waiting for
    batches from a loader with `num_workers=0` and confirms it above 20%.

    ## References
    - https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading
    - https://pytorch.org/docs/stable/data.html#memory-pinning
    - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
    """

    CODE = "TL017"
    NAME = "dataloader-starves-gpu"
    SUMMARY = "DataLoader feeding CUDA work loads in the main process or without pinned memory"
    SEVERITY = Severity.INFO
    TRIGGERS = (("DataLoader",),)
    CONFIRMED_BY = ("TL017",)

    VALID = [
        # Workers and pinned memory.
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = model(x, y)
            loss.backward()
        """,
        # Settings from variables count as set (the ImageNet example).
        """
        import torch
        train_loader = torch.utils.data.DataLoader(
            train_dataset, batch_size=args.batch_size, shuffle=True,
            num_workers=args.workers, pin_memory=use_cuda, sampler=train_sampler)
        model.cuda()
        """,
        # Keyword arguments from a dict (the MNIST example).
        """
        import torch
        train_kwargs = {"batch_size": 64}
        if use_cuda:
            train_kwargs.update({"num_workers": 1, "pin_memory": True})
        train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
        device = torch.device("cuda")
        """,
        # A loader factory whose callers pass `pin_memory=True`, and one with no caller here.
        """
        import torch
        from torch.utils.data import DataLoader
        def make_loader(ds, **kwargs):
            return DataLoader(ds, batch_size=32, **kwargs)
        def external_loader(ds, **kwargs):
            return DataLoader(ds, batch_size=32, **kwargs)
        model = Net().cuda()
        for x, y in make_loader(train_set, num_workers=4, pin_memory=True):
            criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True)).backward()
        """,
        # A CPU-only file.
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32)
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
        """,
        # Tensors already on the GPU: workers and pinning do not apply.
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        x = torch.randn(1000, 10).cuda()
        y = torch.randn(1000, 1, device="cuda")
        loader = DataLoader(TensorDataset(x, y), batch_size=100, shuffle=True)
        for xb, yb in loader:
            loss = model(xb, yb)
            loss.backward()
        """,
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        dataset = TensorDataset(features.to(device), labels.to(device))
        loader = DataLoader(dataset, batch_size=256)
        device = "cuda"
        """,
        # A data module with no CUDA work in the file.
        """
        import torch
        def get_loaders(train_set, val_set):
            train = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)
            val = torch.utils.data.DataLoader(val_set, batch_size=32)
            return train, val
        use_cuda = torch.cuda.is_available()
        """,
        # A project's own DataLoader class.
        """
        from mylib.data import DataLoader
        loader = DataLoader(ds, batch_size=32)
        model.cuda()
        for batch in loader:
            model(batch).backward()
        """,
        # A dataset class of the same module that puts its samples on the GPU.
        """
        import torch
        from torch.utils.data import DataLoader, Dataset
        class GpuDataset(Dataset):
            def __init__(self, x):
                self.x = x.to("cuda")

            def __getitem__(self, i):
                return self.x[i]

        loader = DataLoader(GpuDataset(features), batch_size=64)
        for xb in loader:
            model(xb).sum().backward()
        """,
        # A file that mentions CUDA but trains nowhere and moves no batches.
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=16)
        print(torch.cuda.is_available(), "cuda")
        stats = [x.mean() for x, _ in loader]
        """,
        # Workers but no pinning, with blocking copies (the DCGAN example): pinning alone would
        # gain little.
        """
        import torch
        dataloader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=2)
        device = torch.device("cuda:0")
        for i, data in enumerate(dataloader):
            real = data[0].to(device)
            netD(real).mean().backward()
        """,
        # Plain Python data: nothing to load in parallel.
        """
        import torch
        from torch.utils.data import DataLoader
        dl = DataLoader(range(64), batch_size=8)
        for batch in dl:
            model(batch.float().cuda()).sum().backward()
        """,
        # Evaluation or offline analysis without a training loop (fairseq's evaluation scripts,
        # DeepSpeed's data analyzer).
        """
        import torch
        from torch.utils.data import DataLoader
        device = "cuda" if torch.cuda.is_available() else "cpu"
        test_loader = DataLoader(test_set, batch_size=256, collate_fn=test_set.collater)
        with torch.no_grad():
            for x, _ in test_loader:
                preds.append(model(x.to(device)).argmax(1))
        """,
        # Tokenized text: a tokenizer-built dataset with a padding collate function
        # (torchtune's recipes), or a Hugging Face data collator.
        """
        import torch
        from functools import partial
        from torch.utils.data import DataLoader, DistributedSampler
        class Recipe:
            def setup_data(self, cfg, batch_size):
                ds = instantiate(cfg.dataset, tokenizer=self._tokenizer)
                sampler = DistributedSampler(ds, num_replicas=self.world_size, rank=self.rank)
                collate = partial(padded_collate_sft, padding_idx=0)
                return DataLoader(ds, batch_size=batch_size, sampler=sampler, collate_fn=collate)

            def train(self):
                for batch in self._dataloader:
                    batch = {k: v.to(self._device) for k, v in batch.items()}
                    self._loss_fn(self._model(**batch)).backward()
        device = torch.device("cuda")
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        from transformers import DataCollatorWithPadding
        collator = DataCollatorWithPadding(tokenizer)
        train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=collator, batch_size=8)
        model.to("cuda")
        for batch in train_dataloader:
            model(**{k: v.cuda() for k, v in batch.items()}).loss.backward()
        """,
        # Everything passed positionally.
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, 64, True, None, None, 4, None, True)
        for x, y in loader:
            model(x.cuda()).sum().backward()
        """,
        # Data already in memory: a TensorDataset of CPU tensors, tensors or a list of
        # samples built in the script, a function of the module that returns a TensorDataset.
        # A worker could only index memory, and would add start-up cost and copies.
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        ds = TensorDataset(torch.randn(1000, 10), torch.randn(1000, 1))
        loader = DataLoader(ds, batch_size=100, shuffle=True)
        model.to("cuda")
        for xb, yb in loader:
            loss_fn(model(xb.to("cuda")), yb.to("cuda")).backward()
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        features = torch.randn(4096, 16)
        samples = [(torch.randn(16), i % 2) for i in range(512)]
        feature_loader = DataLoader(features, batch_size=64)
        sample_loader = DataLoader(samples, batch_size=64)
        for x in feature_loader:
            model(x.cuda()).sum().backward()
        """,
        """
        import torch
        def make_data(n=512):
            x = torch.randn(n, 8)
            return torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True))
        loader = torch.utils.data.DataLoader(make_data(), batch_size=32, shuffle=True)
        for x, y in loader:
            criterion(model(x.cuda()), y.cuda()).backward()
        """,
        # A loader used once, for one batch (a shape check, a warm-up, tracing the model):
        # workers would only add their start-up time.
        """
        import torch
        from torch.utils.data import DataLoader
        probe_loader = DataLoader(ImageFolder(root), batch_size=8)
        example, _ = next(iter(probe_loader))
        traced = torch.jit.trace(model.cuda(), example.cuda())
        warmup = next(iter(DataLoader(val_set, batch_size=4)))
        model(warmup.cuda()).sum().backward()
        """,
        # A collate function that puts each batch on the GPU (PyTorch's text-classification
        # tutorial): workers and pinned memory cannot carry CUDA tensors.
        """
        import torch
        from torch.utils.data import DataLoader
        device = torch.device("cuda")
        def collate_batch(batch):
            labels = torch.tensor([label for label, _ in batch])
            texts = torch.cat([torch.tensor(vocab(text)) for _, text in batch])
            return labels.to(device), texts.to(device)
        loader = DataLoader(train_iter, batch_size=8, shuffle=True, collate_fn=collate_batch)
        for label, text in loader:
            optimizer.zero_grad()
            criterion(model(text), label).backward()
            optimizer.step()
        """,
    ]

    INVALID = [
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4)  # expect: TL017
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                loss = criterion(model(x), y)
                loss.backward()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)  # expect: TL017
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                loss = criterion(model(x), y)
                loss.backward()
            """,
        ),
        # Neither workers nor pinned memory (no fix: the number of workers is yours to choose).
        """
        import torch
        device = torch.device("cuda")
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)  # expect: TL017
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            outputs = model(images)
            criterion(outputs, labels).backward()
        """,
        # A multi-line call with a trailing comma keeps its layout when fixed.
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(  # expect: TL017
                dataset,
                batch_size=128,
                num_workers=4,
            )
            for x, y in loader:
                model(x.cuda(non_blocking=True)).sum().backward()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(  # expect: TL017
                dataset,
                batch_size=128,
                num_workers=4,
                pin_memory=True,
            )
            for x, y in loader:
                model(x.cuda(non_blocking=True)).sum().backward()
            """,
        ),
        # num_workers=0 explicitly.
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=8, num_workers=0, pin_memory=True)  # expect: TL017
        model = model.cuda()
        for batch in loader:
            model(batch.cuda()).mean().backward()
        """,
        # pin_memory=False with asynchronous copies.
        """
        import torch.utils.data as tud
        loader = tud.DataLoader(ds, batch_size=8, num_workers=2, pin_memory=False)  # expect: TL017
        for x in loader:
            model(x.to("cuda", non_blocking=True)).sum().backward()
        """,
        # A validation loader too: one finding per DataLoader.
        """
        import torch
        from torch.utils.data import DataLoader
        train = DataLoader(train_set, batch_size=32, shuffle=True)  # expect: TL017
        val = DataLoader(val_set, batch_size=32)  # expect: TL017
        model = Net().cuda()
        for x, y in train:
            criterion(model(x.cuda()), y.cuda()).backward()
        """,
        # A snippet without imports, a multi-line call.
        """
        train_loader = DataLoader(  # expect: TL017
            dataset,
            batch_size=128,
            shuffle=True,
        )
        for data, target in train_loader:
            data, target = data.cuda(), target.cuda()
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
        """,
        # A dataset unpacked from a tuple that a function returns is no tuple of samples.
        """
        import torch
        from torch.utils.data import DataLoader
        def load_train_objs():
            return MyTrainDataset(2048), Net(), None
        dataset, model, optimizer = load_train_objs()
        loader = DataLoader(dataset, batch_size=32)  # expect: TL017
        for x, y in loader:
            criterion(model(x.cuda()), y.cuda()).backward()
        """,
        # A loader used for one batch and also for training.
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ImageFolder(root), batch_size=64, shuffle=True)  # expect: TL017
        sample, _ = next(iter(loader))
        model.cuda()
        for x, y in loader:
            criterion(model(x.cuda()), y.cuda()).backward()
        """,
        # A loader imported under its full module path, next to an evaluation loader.
        """
        import torch
        from torch.utils.data.dataloader import DataLoader
        device = "cuda" if torch.cuda.is_available() else "cpu"
        train_loader = DataLoader(train_set, batch_size=256, shuffle=True)  # expect: TL017
        test_loader = DataLoader(test_set, batch_size=256)  # expect: TL017
        for x, y in train_loader:
            criterion(model(x.to(device)), y.to(device)).backward()
        with torch.no_grad():
            for x, _ in test_loader:
                preds.append(model(x.to(device)).argmax(1))
        """,
        # A loader built inside a function of a training script.
        """
        import torch
        from torch.utils.data import DataLoader
        def make_loader(ds):
            return DataLoader(ds, batch_size=32, shuffle=True, pin_memory=True)  # expect: TL017

        model = Net().cuda()
        for x, y in make_loader(train_set):
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
        """,
        # Padding audio is no sign of tokenized text: decoding wants workers.
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(AudioDataset(files), batch_size=16, collate_fn=pad_collate)  # expect: TL017
        for waves, labels in loader:
            criterion(model(waves.cuda()), labels.cuda()).backward()
        """,
        # A loader factory that forwards `**kwargs`: its only call site passes no pin_memory.
        """
        import torch
        from torch.utils.data import DataLoader
        def make_loader(ds, **kwargs):
            return DataLoader(ds, batch_size=32, **kwargs)  # expect: TL017
        model = Net().cuda()
        for x, y in make_loader(train_set, num_workers=4, shuffle=True):
            criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True)).backward()
        """,
        # A collate function of this module that only stacks on the CPU.
        """
        import torch
        from torch.utils.data import DataLoader
        def collate(batch):
            return torch.stack([x for x, _ in batch]), torch.tensor([y for _, y in batch])
        loader = DataLoader(images, batch_size=64, collate_fn=collate)  # expect: TL017
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        # Only a training loop makes a slow loader cost GPU time worth a finding; a test's
        # loaders are small on purpose.
        if an.is_test_file(ctx):
            return
        trains_here = an.uses_cuda(ctx) and bool(an.training(ctx).backward)
        loaders = an.calls_to(ctx, LOADERS, frozenset({"DataLoader"}))
        # A data module's loaders feed the trainer of its package: that trainer's asynchronous
        # copies need them pinned.
        trainer = None if trains_here or not loaders else sm.package_async_trainer(ctx)
        if not loaders or not (trains_here or trainer):
            return
        idx = an.index(ctx)
        sources = an.loader_sources(ctx)
        asynchronous = not trains_here or an.copies_asynchronously(idx)
        for call in loaders:
            dataset = an.loader_setting(call, "dataset")
            builds = an.loader_settings(ctx, call)
            if (
                builds is None
                or sources.in_memory(dataset)
                or an.only_first_batch(idx, call)
                or sources.holds_gpu_tensors(dataset)
                or sources.serves_text(call)
                or sources.collates_on_device(call)
            ):
                continue
            for settings in builds:
                workers, pinned = settings["num_workers"], settings["pin_memory"]
                no_workers = trains_here and (
                    workers is None or (isinstance(workers, cst.Integer) and workers.evaluated_value == 0)
                )
                no_pinning = pinned is None or an.is_false(pinned)
                # Pinning alone matters most where the code asks for asynchronous copies.
                if no_workers or (no_pinning and asynchronous):
                    # A fix must cure its finding: only pinning of a spelled-out call can be
                    # fixed without a choice.
                    forwarded = any(arg.star for arg in call.args)
                    fix = None if no_workers or forwarded else _fix(call, pinned)
                    yield self.report(call, _message(no_workers, no_pinning, workers is None, trainer), fix)
                    break


def _message(no_workers: bool, no_pinning: bool, workers_unset: bool, trainer: str | None = None) -> str:
    missing = []
    if no_workers:
        missing.append(
            "loads batches in the main process (`num_workers` " + ("unset" if workers_unset else "is 0") + ")"
        )
    if no_pinning:
        missing.append("copies from pageable memory (no `pin_memory=True`)")
    advice = []
    if no_workers:
        advice.append("set `num_workers` (e.g. 4)")
    if no_pinning:
        advice.append("pass `pin_memory=True`")
    feeds = f" (`{trainer}` copies batches with `non_blocking=True`)" if trainer else ""
    return (
        f"this DataLoader feeds CUDA work{feeds} but {' and '.join(missing)}: the GPU waits for data; "
        f"{' and '.join(advice)}"
    )


def _fix(call: cst.Call, pinned: cst.BaseExpression | None) -> FixSpec | None:
    if pinned is not None and not an.is_false(pinned):
        return None
    true = cst.Name("True")
    if pinned is not None:
        return FixSpec("pass `pin_memory=True`", ((pinned, true),), safe=False)
    args = list(call.args)
    if not args:
        return None
    pin = cst.Arg(
        keyword=cst.Name("pin_memory"),
        value=true,
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    last = args[-1]
    if isinstance(last.comma, cst.Comma) and len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        # One argument per line with a trailing comma: keep that layout.
        args[-1] = last.with_changes(comma=args[-2].comma)
        pin = pin.with_changes(comma=last.comma)
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return FixSpec("pass `pin_memory=True`", ((call, call.with_changes(args=(*args, pin))),), safe=False)

