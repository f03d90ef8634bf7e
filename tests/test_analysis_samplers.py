"""Distributed samplers and epochs: `_analysis.loaders`' samplers, the loaders that draw from
them and where those run a pass; `_analysis.training`'s epoch loops; and the helpers they
stand on (`dataflow.bound_target`, `calls.call_taking`, `flow.loops_around_callers`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("train.py", text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode | None) -> str | None:
    return None if node is None else ctx.module.code_for_node(node)


def first_line(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node).strip().splitlines()[0]


class TestSamplers:
    def test_samplers_with_the_loaders_that_draw_from_them(self) -> None:
        ctx = context(
            """
            from torch.utils.data import BatchSampler, DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            batches = BatchSampler(DistributedSampler(ds2), 8, drop_last=True)
            loader2 = DataLoader(ds2, batch_sampler=batches)
            fixed = DistributedSampler(ds, shuffle=False)
            val_sampler = DistributedSampler(val_ds)
            val_loader = DataLoader(val_ds, sampler=val_sampler)
            """
        )
        found = [(s.name, s.loader_name) for s in an.distributed_samplers(ctx)]
        assert found == [("sampler", "loader"), (None, "loader2")]

    def test_samplers_of_alternative_branches_are_one_per_binding(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DistributedSampler
            class Bunch:
                def __init__(self, ds, horovod, ddp):
                    if horovod:
                        self.sampler = DistributedSampler(ds, num_replicas=8, rank=0)
                    elif ddp:
                        self.sampler = DistributedSampler(ds)
                    extra = DistributedSampler(ds)
                def other(self, ds):
                    self.sampler = DistributedSampler(ds)
            DistributedSampler(ds)
            DistributedSampler(ds)
            """
        )
        kept = an.one_per_binding(ctx, an.distributed_samplers(ctx))
        # The horovod branch's sampler is the ddp branch's binding; another method's binding
        # and unbound samplers stand for themselves.
        assert [(s.name, code(ctx, s.call)) for s in kept] == [
            ("self.sampler", "DistributedSampler(ds)"),
            ("extra", "DistributedSampler(ds)"),
            ("self.sampler", "DistributedSampler(ds)"),
            (None, "DistributedSampler(ds)"),
            (None, "DistributedSampler(ds)"),
        ]

    def test_shuffle_given_by_a_parameter_that_defaults_to_true(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DistributedSampler
            def shuffled(ds, shuffle=True):
                sampler = DistributedSampler(ds, shuffle=shuffle)
            def ordered(ds, shuffle=False):
                sampler = DistributedSampler(ds, shuffle=shuffle)
            def unknown(ds, shuffle):
                sampler = DistributedSampler(ds, shuffle=shuffle)
            """
        )
        scopes = [an.index(ctx).scope(s.call).name.value for s in an.distributed_samplers(ctx)]
        assert scopes == ["shuffled"]

    def test_shuffle_given_by_a_caller(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DistributedSampler
            def train_sampler(ds, shuffle):
                return DistributedSampler(ds, shuffle=shuffle)
            def eval_sampler(ds, shuffle):
                return DistributedSampler(ds, shuffle=shuffle)
            def unknown_sampler(ds, shuffle):
                return DistributedSampler(ds, shuffle=shuffle)
            train_sampler(train_ds, shuffle=True)
            eval_sampler(val_ds, False)
            unknown_sampler(val_ds, args.shuffle)
            """
        )
        scopes = [an.index(ctx).scope(s.call).name.value for s in an.distributed_samplers(ctx)]
        assert scopes == ["train_sampler"]

    def test_a_loader_draws_from_the_sampler_a_local_function_returns(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
            def pick_sampler(ds, distributed):
                if distributed:
                    return DistributedSampler(ds)
                return RandomSampler(ds)
            def maybe_sampler(ds, ddp):
                return DistributedSampler(ds, seed=1) if ddp else None
            def other(ds):
                sampler = DistributedSampler(ds)
                return len(sampler)
            loader = DataLoader(ds, batch_size=8, sampler=pick_sampler(ds, True))
            maybe = DataLoader(ds, batch_size=8, sampler=maybe_sampler(ds, True))
            plain = DataLoader(ds, batch_size=8, sampler=other(ds))
            """
        )
        found = [(code(ctx, s.call), s.loader_name) for s in an.distributed_samplers(ctx)]
        assert found == [
            ("DistributedSampler(ds)", "loader"),
            ("DistributedSampler(ds, seed=1)", "maybe"),
            ("DistributedSampler(ds)", None),
        ]

    def test_passes_of_a_generator_that_cycles_the_loader_it_is_given(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            def cycle(batches):  # a local generator, not itertools.cycle
                while True:
                    for b in batches:
                        yield b
            def fit(dl, steps):
                stream = cycle(dl)
                for _ in range(steps):
                    step(next(stream))
            def main():
                train_dl = DataLoader(ds, sampler=DistributedSampler(ds))
                fit(train_dl, 1000)
            """
        )
        (sampler,) = an.distributed_samplers(ctx)
        passes = [first_line(ctx, p) for p in an.loader_passes(ctx, sampler)]
        assert passes == ["fit(train_dl, 1000)", "for b in batches:"]

    def test_a_sampler_no_loader_of_the_module_draws_from(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DistributedSampler
            class Trainer:
                def __init__(self, ds):
                    self.sampler = DistributedSampler(ds)
                    self.loader = build_loader(ds, self.sampler)
            samplers = {"train": DistributedSampler(ds), "val": DistributedSampler(val_ds)}
            """
        )
        found = [(s.name, s.loader, code(ctx, s.call)) for s in an.distributed_samplers(ctx)]
        # The dict's "val" sampler is for evaluation; the others go where the module cannot follow.
        assert found == [("self.sampler", None, "DistributedSampler(ds)"), (None, None, "DistributedSampler(ds)")]

    def test_prepared_loaders_are_the_framework_s(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            loader = DataLoader(ds, sampler=DistributedSampler(ds))
            loader = accelerator.prepare(loader)
            """
        )
        assert an.distributed_samplers(ctx) == []

    def test_where_a_loader_runs_a_pass(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            def run_epoch(data):
                for batch in data:
                    step(batch)

            def main():
                loader = DataLoader(ds, sampler=DistributedSampler(ds))
                bar = tqdm(loader)
                for epoch in range(3):
                    for batch in bar:
                        step(batch)
                    run_epoch(loader)
                    print(len(loader.dataset))
            """
        )
        (sampler,) = an.distributed_samplers(ctx)
        passes = [first_line(ctx, p) for p in an.loader_passes(ctx, sampler)]
        assert passes == ["run_epoch(loader)", "for batch in data:", "for batch in bar:"]


class TestEpochLoops:
    @pytest.mark.parametrize(
        ("loop", "counts"),
        [
            ("for epoch in range(n):\n    run()", True),
            ("for ep_idx in range(n):\n    run()", False),
            ("while epoch < max_epochs:\n    run()", True),
            ("while self.cur_epoch < self.epochs:\n    run()", True),
            ("while True:\n    train_one_epoch()", True),
            ("while True:\n    run()", False),
            ("for step in range(n):\n    train_one_epoch()", True),
            ("while step < max_steps:\n    epoch += 1\n    run()", True),
            ("while step < max_steps:\n    run()\n    step += 1", False),
        ],
    )
    def test_loops_that_count_epochs(self, loop: str, counts: bool) -> None:
        ctx = context(f"def run(): ...\ndef train_one_epoch(): ...\n{loop}\n")
        idx = an.index(ctx)
        (node,) = idx.nodes(cst.For, cst.While)
        assert an.counts_epochs(idx, an.functions(ctx), node) is counts

    def test_epoch_loops_run_a_training_pass_in_another_method(self) -> None:
        ctx = context(
            """
            class Trainer:
                def run(self):
                    while True:
                        self._train_epoch()
                        if self.done:
                            break

                def _train_epoch(self):
                    for batch in self.loader:
                        self.optimizer.zero_grad()
                        self.model(batch).backward()
                        self.optimizer.step()

                def evaluate(self):
                    for epoch in range(3):
                        print(epoch)
            """
        )
        assert [first_line(ctx, loop) for loop in an.epoch_loops(ctx)] == ["while True:"]

    def test_only_the_outermost_and_not_those_that_build_the_object(self) -> None:
        ctx = context(
            """
            for epoch in range(3):
                sampler = DistributedSampler(ds)
                for epoch_part in range(2):
                    for batch in loader:
                        model(batch).backward()
                        optimizer.step()
            """
        )
        (loop,) = an.epoch_loops(ctx)
        assert first_line(ctx, loop) == "for epoch in range(3):"
        built = next(c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "DistributedSampler")
        # The loop that builds the sampler anew is left out; the inner epoch loop is not.
        assert [first_line(ctx, loop) for loop in an.epoch_loops(ctx, avoid=built)] == ["for epoch_part in range(2):"]

    def test_a_loop_without_an_inner_pass_is_not_an_epoch_loop(self) -> None:
        ctx = context(
            """
            for epoch in range(3):
                model(x).backward()
                optimizer.step()
            """
        )
        assert an.epoch_loops(ctx) == []


class TestHelpers:
    def test_bound_target(self) -> None:
        ctx = context("a = f()\nb: int = g()\nc = h() if x else None\nprint(k())\n(d := m())\n")
        idx = an.index(ctx)
        targets = {an.callee_name(c): code(ctx, an.bound_target(idx, c)) for c in idx.nodes(cst.Call)}
        assert targets == {"f": "a", "g": "b", "h": "c", "print": None, "k": None, "m": "d"}

    def test_call_taking(self) -> None:
        ctx = context("f(loader, data=other)\nloader.sampler\n")
        idx = an.index(ctx)
        loader, other, attribute = (n for n in idx.nodes(cst.Name) if n.value in ("loader", "other"))
        assert code(ctx, an.call_taking(idx, loader)) == "f(loader, data=other)"
        assert an.call_taking(idx, other) is an.call_taking(idx, loader)
        assert an.call_taking(idx, attribute) is None  # `loader.sampler`

    def test_loops_around_callers(self) -> None:
        ctx = context(
            """
            def inner():
                for batch in loader:
                    work(batch)

            for epoch in range(3):
                inner()
            while True:
                inner()
            """
        )
        idx, funcs = an.index(ctx), an.functions(ctx)
        work = next(c for c in idx.nodes(cst.Call) if an.callee_name(c) == "work")
        chains = [[first_line(ctx, loop) for loop in chain] for chain in an.loops_around_callers(idx, funcs, work, 2)]
        assert chains == [["for batch in loader:", "for epoch in range(3):"], ["for batch in loader:", "while True:"]]
        assert an.loops_around_callers(idx, funcs, work, 0) == [[next(iter(idx.nodes(cst.For)))]]


class TestSetEpochFor:
    """`loaders.sets_epoch_for`: a `set_epoch` in the epoch loop counts for a sampler unless it
    is clearly another sampler's."""

    @pytest.mark.parametrize(
        ("call", "sets"),
        [
            ("sampler.set_epoch(epoch)", True),
            ("loader.sampler.set_epoch(epoch)", True),
            ("other.set_epoch(epoch)", False),
            ("other_loader.sampler.set_epoch(epoch)", False),
            ("s.set_epoch(epoch)", True),  # a name the module does not bind: may be this one
            ("helper(epoch)", True),  # the local helper sets the epoch
            ("pass", False),
        ],
    )
    def test_the_receiver_decides(self, call: str, sets: bool) -> None:
        ctx = context(
            f"""
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            other = DistributedSampler(val_ds, shuffle=False)
            other_loader = DataLoader(val_ds, sampler=other)
            def helper(epoch):
                sampler.set_epoch(epoch)
            for epoch in range(3):
                {call}
                for batch in loader:
                    step(batch)
            """
        )
        (sampler,) = an.distributed_samplers(ctx)
        loop = an.index(ctx).nodes(cst.For)[0]
        assert an.sets_epoch_for(ctx, loop, sampler) is sets
