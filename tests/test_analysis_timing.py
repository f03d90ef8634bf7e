"""Unit tests of the timing, networks and synchronization concepts of the analysis library:
clock reads and measurements, networks known by dataflow, GPU work and the points that
wait for it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from analysis_support import context, code, call

from torchlint import api
from torchlint.config import Config
from torchlint.rules import _analysis as an


class TestClocks:
    def test_measurements_pair_an_end_read_with_its_start(self) -> None:
        ctx = context(
            """
            from time import perf_counter as clock
            import datetime
            t0 = clock()
            y = f(x)
            t1 = clock()
            print(t1 - t0)
            begin = datetime.datetime.now()
            g(x)
            spent = datetime.datetime.now() - begin
            """
        )
        steps = an.execution_order(ctx.module)
        found = [
            (code(ctx, m.steps[m.start].node), [code(ctx, s.node) for s in m.region], m.end)
            for m in an.clocks(ctx).measurements(steps)
        ]
        assert found == [
            ("clock()", ["f(x)"], 2),
            ("datetime.datetime.now()", ["g(x)"], 6),
        ]

    def test_timeouts_and_loop_carried_reads_measure_nothing(self) -> None:
        ctx = context(
            """
            import time
            start = time.time()
            while time.time() - start < 60:
                poll()
            t0 = time.time()
            for batch in loader:
                step(batch)
                t1 = time.time()
                log(t1 - t0)
                t0 = t1
            """
        )
        assert an.clocks(ctx).measurements(an.execution_order(ctx.module)) == []


class TestNetworks:
    def test_names_that_hold_a_network_whatever_they_are_called(self) -> None:
        ctx = context(
            """
            import re
            import torch
            from torch import nn
            import zoo
            class Base(nn.Module):
                pass
            class Matcher(Base):
                pass
            matcher = Matcher()
            stereo = zoo.StereoNet(3).to(device)
            if multi_gpu:
                stereo = nn.DataParallel(stereo)
            traced = torch.jit.trace(stereo, example)
            host = zoo.StereoNet(3).to("cpu")
            table = zoo.Table()
            x = torch.randn(3)
            compiled = torch.compile(matcher)
            pattern = re.compile("[a-z]+")
            """
        )
        nets = an.networks(ctx)
        names = ("matcher", "stereo", "traced", "host", "table", "x", "compiled", "pattern")
        held = {name for name in names if nets.holds_module(cst.Name(name))}
        assert held == {"matcher", "stereo", "traced", "compiled"}
        assert nets.is_module_class("Matcher") and not nets.is_module_class("Table")

    def test_a_project_class_counts_when_the_caller_says_it_is_a_network(self) -> None:
        ctx = context(
            """
            import zoo
            enc = zoo.Encoder()
            """
        )
        says = an.Networks(ctx, lambda c: code(ctx, c.func) == "zoo.Encoder")
        assert says.holds_module(cst.Name("enc")) and not an.networks(ctx).holds_module(cst.Name("enc"))


class TestSynchronization:
    def effects(self, source: str) -> list[tuple[str, str | None]]:
        ctx = context(source)
        work = an.GpuWork(ctx)
        return [(code(ctx, s.node), getattr(work.effect(s.node), "value", None)) for s in work.timeline(ctx.module)]

    def test_work_and_waits(self) -> None:
        assert self.effects(
            """
            import torch
            cpu = torch.device("cpu")
            y = torch.matmul(a, b)
            out = model(x)
            loss = out.sum().item()
            z = out.to(cpu)
            w = torch.zeros(3)
            optimizer.step()
            torch.cuda.synchronize()
            """
        ) == [
            ('torch.device("cpu")', None),
            ("torch.matmul(a, b)", "work"),
            ("model(x)", "work"),
            ("out.sum()", None),
            ("out.sum().item()", "sync"),
            ("out.to(cpu)", "sync"),
            ("torch.zeros(3)", None),
            ("optimizer.step()", "work"),
            ("torch.cuda.synchronize()", "sync"),
        ]

    def test_implicit_host_reads_of_device_tensors_sit_in_execution_order(self) -> None:
        found = self.effects(
            """
            import torch
            for step in range(n):
                logits = decoder(ids)
                next_id = torch.argmax(logits, dim=-1)
                if step % 10 == 0:
                    pass
                if next_id == eos_id:
                    break
                print(f"{next_id}", len(ids))
            """
        )
        assert found == [
            ("range(n)", None),
            ("decoder(ids)", "work"),
            ("torch.argmax(logits, dim=-1)", "work"),
            ("next_id == eos_id", "sync"),
            ('f"{next_id}"', "sync"),
            ("len(ids)", None),
            ('print(f"{next_id}", len(ids))', None),  # the f-string already read it
        ]

    def test_a_parameter_is_work_when_a_caller_passes_work(self) -> None:
        ctx = context(
            """
            def measure(fn, *args):
                fn(*args)

            def timed(g):
                g()

            detector = Detector().cuda()
            measure(detector, x)
            measure(lambda: encoder(x))
            timed(sorted)
            """
        )
        work = an.GpuWork(ctx)
        assert work.effect(call(ctx, "fn(*args)")) is an.Effect.WORK
        assert work.effect(call(ctx, "g()")) is None

    def test_pending_work_and_events(self) -> None:
        ctx = context(
            """
            import torch
            s.record()
            y = model(x)
            e.record()
            torch.cuda.synchronize()
            e2.record()
            """
        )
        work = an.GpuWork(ctx)
        steps = work.timeline(ctx.module)
        assert work.pending(steps[:2], 0) and not work.pending(steps[:4], 0)
        assert not work.recorded_unwaited(steps, cst.Name("e"))
        assert work.recorded_unwaited(steps, cst.Name("e2"))


class TestNetworksOfOtherModules:
    """A class of another project module is a network when it subclasses `nn.Module`,
    there or through a base class of a third module."""

    def check(self, tmp_path: Path, base: str) -> list[tuple[str, int]]:
        (tmp_path / "layers.py").write_text(f"import torch.nn as nn\n\n\nclass Base({base}):\n    pass\n")
        (tmp_path / "nets.py").write_text("from layers import Base\n\n\nclass Matcher(Base):\n    pass\n")
        script = tmp_path / "infer.py"
        script.write_text(
            textwrap.dedent(
                """
                import time
                import nets

                matcher = nets.Matcher()
                pair = left.cuda(), right.cuda()
                start = time.perf_counter()
                scores = matcher(*pair)
                print(time.perf_counter() - start)
                """
            )
        )
        result = api.check_paths([script], Config(select=("TL002",)), cwd=tmp_path, jobs=1, cache_dir=None)
        return [(f.code, f.line) for f in result.findings]

    def test_a_network_class_of_another_module(self, tmp_path: Path) -> None:
        assert self.check(tmp_path, "nn.Module") == [("TL002", 9)]

    def test_a_class_of_another_module_that_is_no_network(self, tmp_path: Path) -> None:
        assert self.check(tmp_path, "object") == []


def test_printing_waits_only_for_device_tensors() -> None:
    ctx = context(
        """
        out = model(x)
        print("running", out.shape, len(out))
        print(out[0])
        """
    )
    work = an.GpuWork(ctx)
    prints = [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "print"]
    assert [work.effect(p) for p in prints] == [None, an.Effect.SYNC]


def test_a_helper_that_formats_its_result_waits() -> None:
    ctx = context(
        """
        def forward_and_log(x):
            out = model(x)
            log(f"mean {out.mean()}")

        def forward(x):
            return model(x)

        forward_and_log(batch)
        forward(batch)
        """
    )
    work = an.GpuWork(ctx)
    assert work.effect(call(ctx, "forward_and_log(batch)")) is an.Effect.SYNC
    assert work.effect(call(ctx, "forward(batch)")) is an.Effect.WORK


def test_timed_blocks_of_local_context_managers_and_of_the_project() -> None:
    ctx = context(
        """
        import time
        from contextlib import contextmanager

        @contextmanager
        def timer(name):
            t0 = time.perf_counter()
            yield
            print(name, time.perf_counter() - t0)

        @contextmanager
        def synced(name):
            t0 = time.perf_counter()
            yield
            torch.cuda.synchronize()
            print(name, time.perf_counter() - t0)

        @contextmanager
        def scope(name):
            yield name

        with timer("a"), open("f"):
            work()
        with synced("b"):
            work()
        with scope("c"):
            work()
        with remote_timer("d"):
            work()
        """
    )
    blocks = an.timed_blocks(ctx, lambda call: an.callee_name(call) == "remote_timer")
    assert [code(ctx, call) for _, call in blocks] == ['timer("a")', 'remote_timer("d")']


def test_hook_measurements_pair_a_forward_hook_with_the_pre_hooks_start() -> None:
    ctx = context(
        """
        import time

        def pre(module, inputs):
            module.t0 = time.time()

        def post(module, inputs, output):
            times.append(time.time() - module.t0)
            other.append(time.time() - started)

        def unregistered(module, inputs, output):
            times.append(time.time() - module.t0)

        for layer in model.modules():
            layer.register_forward_pre_hook(pre)
            layer.register_forward_hook(post)
        """
    )
    assert [code(ctx, c) for c in an.hook_measurements(ctx)] == ["time.time()"]
    (read,) = an.hook_measurements(ctx)
    assert an.index(ctx).scope(read).name.value == "post"
