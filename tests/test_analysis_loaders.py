"""Unit tests of `_analysis.loaders`: the batch as a loader yielded it, how a `DataLoader(...)`
is built, and what its data is."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def loaders(ctx: FileContext) -> list[cst.Call]:
    return [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "DataLoader"]


class TestRawBatch:
    def test_batch_target_skips_the_enumerate_index(self) -> None:
        ctx = context("for i, (x, y) in enumerate(loader):\n    pass\nfor batch in loader:\n    pass\n")
        first, second = an.index(ctx).nodes(cst.For)
        assert code(ctx, an.batch_target(first)) == "(x, y)"
        assert code(ctx, an.batch_target(second)) == "batch"

    @pytest.mark.parametrize(
        ("expr", "raw"),
        [
            ("x", True),
            ("x[0]", True),
            ("x.float().unsqueeze(1)", True),
            ("batch.images", True),
            ("Variable(x)", True),
            ("(x, y)", True),
            ("torch.stack(x)", True),
            ("torch.cat([x, y], dim=0)", True),
            ("pad_sequence(x, batch_first=True)", True),
            ("torch.cat([x, z])", False),
            ("torch.stack(x, device=device)", False),
            ("x.cuda()", False),
            ("x.to(device)", False),
            ("(x, z)", False),
            ("batch.Images", False),
        ],
    )
    def test_raw_batch(self, expr: str, raw: bool) -> None:
        assert an.raw_batch(cst.parse_expression(expr), {"x", "y", "batch"}) is raw

    def test_calls_on_raw_batch_follow_assignments_in_order(self) -> None:
        ctx = context(
            """
            for x, y in loader:
                a = model(x)
                x = x.cuda()
                b = model(x, y)
                z = y[0]
                c = model(z)
                def later():
                    return model(y)
            """
        )
        (loop,) = an.index(ctx).nodes(cst.For)
        found = [(code(ctx, call), [code(ctx, e) for e in inputs]) for call, inputs in an.calls_on_raw_batch(an.index(ctx), loop)]
        assert found == [("model(x)", ["x"]), ("model(x, y)", ["y"]), ("model(z)", ["z"])]

    def test_calls_on_raw_batch_follow_the_batch_into_local_helpers(self) -> None:
        ctx = context(
            """
            class Runner:
                def step(self, batch, scale):
                    x, y = batch
                    return self.model(x) * scale
                def moved(self, batch):
                    x = batch.cuda()
                    return self.model(x)
                def run(self):
                    for batch in self.loader:
                        self.step(batch, 2)
                        self.moved(batch)
            """
        )
        (loop,) = an.index(ctx).nodes(cst.For)
        calls = an.calls_on_raw_batch(an.index(ctx), loop, an.functions(ctx))
        found = [(code(ctx, call), [code(ctx, e) for e in inputs]) for call, inputs in calls]
        assert found == [
            ("self.step(batch, 2)", ["batch"]),
            ("self.model(x)", ["x"]),
            ("self.moved(batch)", ["batch"]),
        ]
        assert len(an.calls_on_raw_batch(an.index(ctx), loop)) == 2

    def test_calls_on_raw_data_outside_the_branches_skipped(self) -> None:
        ctx = context(
            """
            for x, y in loader:
                if gpu:
                    x = x.cuda()
                else:
                    y = y.cuda()
                loss = criterion(model(x), y)
            """
        )
        idx = an.index(ctx)
        (loop,) = idx.nodes(cst.For)
        (branch,) = idx.nodes(cst.If)
        calls = an.calls_on_raw_data(idx, loop.body, {"x", "y"}, idx.scope(loop), skipping=(branch.body,))
        found = [(code(ctx, call), [code(ctx, e) for e in inputs]) for call, inputs in calls]
        assert found == [("model(x)", ["x"])]
        calls = an.calls_on_raw_data(idx, loop.body, {"x", "y"}, idx.scope(loop))
        assert [code(ctx, call) for call, _ in calls] == []

    def test_parts_moved_by_calls(self) -> None:
        ctx = context(
            """
            def helper(t):
                return t
            x, y = x.cuda(), to_device(y)
            helper(z)
            print(w)
            """
        )
        idx = an.index(ctx)
        moved = an.parts_moved_by(idx, an.functions(ctx), idx.nodes(cst.Call), {"x", "y", "z", "w"})
        assert {part: code(ctx, call) for part, call in moved.items()} == {
            "x": "x.cuda()",
            "y": "to_device(y)",
            "z": "helper(z)",
        }

    @pytest.mark.parametrize(
        ("body", "forgotten"),
        [
            ("x = x.to(device); out = model(x)", {"y"}),
            ("x, y = x.to(device), y.to(device)", set()),
            ("out = model(x)", set()),  # nothing moved: the plain unmoved-batch case
            ("x = x.cuda(); loss = criterion(model(x), y.cuda())", set()),
            ("x = x.cuda(); loss = self.loss_on(x, y)", set()),  # handed to a local helper
        ],
    )
    def test_forgotten_batch_parts(self, body: str, forgotten: set[str]) -> None:
        ctx = context(
            f"""
            class T:
                def loss_on(self, x, y):
                    return x
                def run(self):
                  for x, y, x_lens in loader:
                    {body}
            """
        )
        (loop,) = an.index(ctx).nodes(cst.For)
        assert an.forgotten_batch_parts(an.index(ctx), an.functions(ctx), loop) == forgotten

    def test_forgotten_part_uses_meet_a_model_output_in_a_loss(self) -> None:
        ctx = context(
            """
            import torch
            for images, labels, paths in loader:
                images = images.to(device)
                outputs = model(images)
                loss = criterion(outputs, labels)
                save(outputs, paths)
                same = torch.eq(model(images), labels)
                other = criterion(targets, labels)
            """
        )
        (loop,) = an.index(ctx).nodes(cst.For)
        uses = an.forgotten_part_uses(ctx, loop)
        found = [(code(ctx, u.call.func), code(ctx, u.part), code(ctx, u.output)) for u in uses]
        assert found == [("criterion", "labels", "model(images)"), ("torch.eq", "labels", "model(images)")]

    def test_discarded_moves_only_for_unpacked_tensors(self) -> None:
        ctx = context(
            """
            for x, y in loader:
                x.to(device)
                y = y.to(device)
            for data in loader:
                data.to(device)
            """
        )
        first, second = an.index(ctx).nodes(cst.For)
        idx = an.index(ctx)
        assert {name: code(ctx, call) for name, call in an.discarded_moves(idx, first).items()} == {"x": "x.to(device)"}
        assert an.discarded_moves(idx, second) == {}


class TestLoaderConstruction:
    def test_settings_by_keyword_or_position(self) -> None:
        ctx = context("DataLoader(ds, 32, True, None, None, 4)\nDataLoader(dataset=ds, pin_memory=True)\n")
        positional, keywords = loaders(ctx)
        assert code(ctx, an.loader_setting(positional, "dataset")) == "ds"  # type: ignore[arg-type]
        assert code(ctx, an.loader_setting(positional, "num_workers")) == "4"  # type: ignore[arg-type]
        assert an.loader_setting(positional, "pin_memory") is None
        assert code(ctx, an.loader_setting(keywords, "pin_memory")) == "True"  # type: ignore[arg-type]

    def test_only_first_batch(self) -> None:
        ctx = context(
            """
            probe = DataLoader(ds)
            shape = next(iter(probe))[0].shape
            train = DataLoader(ds)
            sample = next(iter(train))
            for x in train:
                step(x)
            next(iter(DataLoader(ds)))
            """
        )
        idx = an.index(ctx)
        assert [an.only_first_batch(idx, call) for call in loaders(ctx)] == [True, False, True]

    def test_copies_asynchronously(self) -> None:
        assert an.copies_asynchronously(an.index(context("x = x.cuda(non_blocking=True)\n")))
        assert not an.copies_asynchronously(an.index(context("x = x.to(device, non_blocking=False)\n")))


class TestLoaderSources:
    def test_in_memory_datasets(self) -> None:
        ctx = context(
            """
            import torch
            from torch.utils.data import TensorDataset
            def make():
                return TensorDataset(torch.randn(8, 2))
            samples = [1, 2, 3]
            DataLoader(samples)
            DataLoader(make())
            DataLoader(range(10))
            DataLoader(ImageFolder(root))
            """
        )
        sources = an.loader_sources(ctx)
        assert [sources.in_memory(an.loader_setting(c, "dataset")) for c in loaders(ctx)] == [True, True, True, False]

    def test_gpu_tensors_collate_and_text(self) -> None:
        ctx = context(
            """
            class CudaSet(Dataset):
                def __getitem__(self, i):
                    return self.x[i].cuda()
            def to_gpu(batch):
                return [b.to("cuda") for b in batch]
            DataLoader(CudaSet())
            DataLoader(files, collate_fn=to_gpu)
            DataLoader(encoded, collate_fn=pad)
            DataLoader(files)
            """
        )
        sources = an.loader_sources(ctx)
        gpu, collated, text, plain = loaders(ctx)
        assert sources.holds_gpu_tensors(an.loader_setting(gpu, "dataset"))
        assert sources.collates_on_device(collated) and not sources.collates_on_device(plain)
        assert sources.serves_text(text) and not sources.serves_text(plain)
        assert not sources.holds_gpu_tensors(an.loader_setting(plain, "dataset"))


class TestLoaderSettings:
    def test_forwarded_keywords_come_from_each_call_site(self) -> None:
        ctx = context(
            """
            def make(ds, **opts):
                return DataLoader(ds, batch_size=8, **opts)
            make(train, num_workers=4, pin_memory=True)
            make(val, num_workers=2)
            DataLoader(ds, 16)
            """
        )
        forwarding, spelled = loaders(ctx)
        builds = an.loader_settings(ctx, forwarding)
        assert builds is not None
        assert [{k: code(ctx, v) for k, v in b.items() if v is not None} for b in builds] == [
            {"dataset": "ds", "batch_size": "8", "num_workers": "4", "pin_memory": "True"},
            {"dataset": "ds", "batch_size": "8", "num_workers": "2"},
        ]
        (only,) = an.loader_settings(ctx, spelled) or []
        assert code(ctx, only["batch_size"]) == "16" and only["pin_memory"] is None  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "source",
        [
            "def make(ds, **opts):\n    return DataLoader(ds, **opts)\n",  # no call site here
            "def make(ds, **opts):\n    return DataLoader(ds, **opts)\nmake(ds, **cfg)\n",  # `**` at the site
            "def make(ds, *args):\n    return DataLoader(ds, *args)\nmake(ds, 8)\n",
            "def make(ds, **opts):\n    return DataLoader(ds, **other)\nmake(ds)\n",
            "DataLoader(ds, **kwargs)\n",
        ],
    )
    def test_unknown_settings(self, source: str) -> None:
        ctx = context(source)
        (loader,) = loaders(ctx)
        assert an.loader_settings(ctx, loader) is None


class TestDatasetSamples:
    def test_samples_of_datasets_given_to_loaders_or_built_by_dataset_classes(self) -> None:
        ctx = context(
            """
            from torchvision import datasets
            train_set = datasets.MNIST("data", train=True)
            val_set = FaceDataset(root)
            test_data = load_split("test")
            loader = DataLoader(test_data, batch_size=8)
            gpu_set = TensorDataset(x.cuda(), y.cuda())
            image, label = train_set[0]
            x, y = test_data[3][0], test_data[3][1]
            face = val_set[i]["image"]
            on_gpu = gpu_set[0]
            mixed = train_set[0], other[0]
            first = examples[0]
            """
        )
        found = [(code(ctx, s.statement.targets[0].target), s.dataset) for s in an.dataset_samples(ctx)]
        assert found == [("image, label", "train_set"), ("x, y", "test_data"), ("face", "val_set")]

    def test_a_batch_drawn_from_a_loader_outside_a_loop(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader, TensorDataset
            loader = DataLoader(train_set, batch_size=8)
            gpu_loader = DataLoader(TensorDataset(x.cuda()), batch_size=8)
            images, labels = next(iter(loader))
            batches = iter(loader)
            first = batches.next()
            second = next(batches)
            on_gpu = next(iter(gpu_loader))
            other = next(iter(make_loader()))
            token = next(tokens)
            """
        )
        found = [(code(ctx, s.statement.targets[0].target), s.dataset, s.drawn) for s in an.dataset_samples(ctx)]
        assert found == [("images, labels", "loader", True), ("first", "loader", True), ("second", "loader", True)]

    def test_calls_on_a_raw_sample_until_it_is_moved(self) -> None:
        ctx = context(
            """
            from torchvision import datasets
            test_set = datasets.MNIST("data")
            model(test_set[0][0])
            image, label = test_set[0]
            show(image)
            with torch.no_grad():
                model(image.unsqueeze(0))
            image = image.to(device)
            model(image)
            def later():
                model(image)
            """
        )
        (sample,) = an.dataset_samples(ctx)
        calls = [code(ctx, c) for c, _ in an.calls_on_raw_sample(an.index(ctx), sample)]
        assert calls == ["show(image)", "model(image.unsqueeze(0))"]


class TestUnmovedBatch:
    def test_calls_on_the_batch_when_nothing_moves_it(self) -> None:
        ctx = context(
            """
            for x, y in train_loader:
                x.to(device)
                loss = criterion(model(x), y)
            for x, y in val_loader:
                x = x.cuda()
                model(x)
            for x, y in DataLoader(ds):
                step(x, y)
            for x in items:
                model(x)
            """
        )
        data = an.loader_data(ctx)
        thrown, moved, helper, plain = an.index(ctx).nodes(cst.For)
        batch = data.unmoved_batch(thrown)
        assert batch is not None
        assert [code(ctx, c) for c, _ in batch.calls] == ["criterion(model(x), y)", "model(x)"]
        assert {name: code(ctx, c) for name, c in batch.discarded.items()} == {"x": "x.to(device)"}
        assert data.unmoved_batch(moved) is None
        helper_batch = data.unmoved_batch(helper)
        assert helper_batch is not None and [code(ctx, c) for c, _ in helper_batch.calls] == ["step(x, y)"]
        assert data.unmoved_batch(plain) is None

    def test_a_collate_function_bound_to_a_name_from_elsewhere_may_move_the_batch(self) -> None:
        ctx = context(
            """
            collate = None
            if mixup:
                collate = FastCollateMixup(alpha)
            padded = DataCollatorWithPadding(tokenizer)
            for x, y in DataLoader(ds, collate_fn=collate):
                model(x)
            for x, y in DataLoader(ds, collate_fn=padded):
                model(x)
            """
        )
        data = an.loader_data(ctx)
        mixed, padding = an.index(ctx).nodes(cst.For)
        assert data.iterable_prepared(mixed)
        assert not data.iterable_prepared(padding)


def test_batch_items_are_the_parts_of_the_batch_not_the_batch_object() -> None:
    ctx = context(
        """
        for t in loader:
            X, y = t["X"], t["y"]
            mask = t.mask
            data = t
            lengths = len(t)
        for x, y in loader:
            pass
        for batch in loader:
            pass
        """
    )
    first, second, third = an.index(ctx).nodes(cst.For)
    idx = an.index(ctx)
    assert an.batch_items(idx, first) == {"X", "y", "mask"}
    assert an.batch_items(idx, second) == {"x", "y"}
    assert an.batch_items(idx, third) == set()


def test_discarded_moves_of_items_bound_in_the_loop() -> None:
    ctx = context(
        """
        for t in loader:
            X, y = t["X"], t["y"]
            X.cuda()
            t.to(device)
        """
    )
    (loop,) = an.index(ctx).nodes(cst.For)
    assert sorted(an.discarded_moves(an.index(ctx), loop)) == ["X"]
