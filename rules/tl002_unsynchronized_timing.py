from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm


class UnsynchronizedTiming(Rule):
    """
    ## What it does
    Finds wall-clock timing (`time.time()`, `time.perf_counter()`, `time.monotonic()`,
    `timeit.default_timer()`, `datetime.now()`) of a region that launches CUDA work, in a
    file that uses CUDA, where nothing synchronizes with the GPU after the last GPU work
    and before the end time is read. CUDA work is a torch op, a tensor computation, or
    running a network: one named like a network, or any name whose value a network class
    (of this file or another project module) built, or that was moved with `.to(device)` /
    `.cuda()`; in a timing helper (`def bench(fn, *args)`), calling the function that a
    caller in the file passes when that is a network, a lambda, a method of the class or a
    function of another project module that runs one without synchronizing (also through a
    name: `forward_fn = self.forward_torch`); and a call
    of a timing helper of another project module that never synchronizes (`timeit(model, x)`)
    with a network or CUDA work to time; and a context manager (of this module or another
    project module) that reads the clock before and after its `yield`, used as `with
    record_time("train"):` around CUDA work, without synchronizing; and per-layer timing in
    forward hooks (a forward hook reading the clock minus the start time that a forward
    pre-hook stored on the module), where the hook does not synchronize. Also finds `start.elapsed_time(end)` on CUDA events
    with no synchronization on `end` (or the device) after `end.record()`.

    ## Why is this bad?
    CUDA kernels run asynchronously: a call such as `model(x)` returns as soon as its
    kernels are queued. Without `torch.cuda.synchronize()` before reading the clock, the
    measurement captures launch overhead, not GPU time, and benchmarks report numbers that
    are often 10-100x too good. `elapsed_time` on an event that has not completed raises
    or reads garbage.

    ## Example
    ```python
    start = time.perf_counter()
    for _ in range(100):
        y = model(x)
    elapsed = time.perf_counter() - start
    ```

    ## Use instead
    ```python
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(100):
        y = model(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    ```
    or `torch.utils.benchmark.Timer`, which synchronizes for you. A host read of a result
    (`.item()`, `.cpu()`, `.tolist()`, `.numpy()`, printing or formatting a tensor, testing
    one in a condition such as a generated token against the end token) also waits for the
    GPU.

    Per-iteration timing carried across a training loop (the clock read at the end of one
    iteration starts the next) is accurate on average when the loop reads a value on the
    host each iteration, and is not reported.

    ## Fix safety
    No automatic fix: where to synchronize depends on what the measurement is for.

    ## Runtime confirmation
    On a GPU, `torchlint probe` confirms it when the script reads the wall clock while the
    current CUDA stream still has queued work.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
    - https://pytorch.org/tutorials/recipes/recipes/benchmark.html
    """

    CODE = "TL002"
    NAME = "unsynchronized-timing"
    SUMMARY = "Wall-clock timing of CUDA work without synchronizing first"
    SEVERITY = Severity.WARNING
    TRIGGERS = (
        # The second line: names of timing helpers that another project module may define.
        ("time(", "time_ns(", "time.time", "perf_counter", "monotonic", "default_timer", "now(", "elapsed_time",
         "timeit", "timed", "bench", "measure", "latency", "throughput", "profil"),
        ("cuda",),
    )
    CONFIRMED_BY = ("TL002",)

    VALID = [
        # a pipeline hands back images on the host (PIL by default), which waits for the GPU
        """
        import time
        import torch
        def time_images(pipe, prompt):
            pipe.to("cuda")
            start = time.time()
            images = pipe(prompt, num_inference_steps=2).images
            return time.time() - start
        def time_outputs(pipe, prompt, kind):
            pipe.to("cuda")
            start = time.time()
            outputs = pipe(prompt, output_type=kind).images  # host or device: unknown
            return time.time() - start
        """,
        # Per-layer times between forward hooks that synchronize before each read.
        """
        import time
        import torch

        def pre_hook(module, inputs):
            torch.cuda.synchronize()
            module.start = time.time()

        def hook(module, inputs, output):
            torch.cuda.synchronize()
            durations[module] = time.time() - module.start

        model = build_model().cuda()
        for layer in model.modules():
            layer.register_forward_pre_hook(pre_hook)
            layer.register_forward_hook(hook)
        """,
        # A context manager that times the body of its `with` statement, and synchronizes
        # (the first) or whose body ends with a host read (the second).
        """
        import time
        from contextlib import contextmanager
        import torch

        @contextmanager
        def timer(name):
            start = time.perf_counter()
            yield
            torch.cuda.synchronize()
            print(name, time.perf_counter() - start)

        @contextmanager
        def rough_timer(name):
            start = time.perf_counter()
            yield
            print(name, time.perf_counter() - start)

        model = build_model().cuda()
        x = torch.randn(8, 3, device="cuda")
        with timer("forward"):
            model(x)
        with rough_timer("forward and read"):
            print(model(x).sum().item())
        """,
        # A timing method handed a bound method that waits for the GPU before returning.
        """
        import time, torch
        class Benchmark:
            def __init__(self, net):
                self.net = net.cuda()

            def forward_torch(self, x):
                out = self.net(x)
                torch.cuda.synchronize()
                return out

            def run(self, x):
                forward_fn = self.forward_torch
                return self._measure(forward_fn, x)

            def _measure(self, fn, x):
                tic = time.time()
                fn(x)
                return time.time() - tic
        """,
        # Synchronize before reading the end time.
        """
        import time, torch
        model = model.cuda()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(100):
            y = model(x)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        """,
        # A host read ends the region.
        """
        import time, torch
        x = torch.randn(1024, 1024, device="cuda")
        t0 = time.time()
        y = (x @ x).sum().item()
        print(time.time() - t0)
        """,
        # CPU-only file: nothing to synchronize.
        """
        import time, torch
        model = Net()
        t0 = time.time()
        out = model(torch.randn(8, 3))
        print(time.time() - t0)
        """,
        # torch.utils.benchmark synchronizes itself.
        """
        import torch
        from torch.utils import benchmark
        x = torch.randn(64, 64, device="cuda")
        t = benchmark.Timer(stmt="x @ x", globals={"x": x})
        print(t.timeit(100))
        """,
        # A helper of the same module synchronizes.
        """
        import time, torch
        def sync():
            if torch.cuda.is_available():
                torch.cuda.synchronize()

        model.cuda()
        start = time.time()
        out = model(x)
        sync()
        elapsed = time.time() - start
        """,
        # CUDA events with a synchronize before elapsed_time.
        """
        import torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        y = model(x)
        end.record()
        torch.cuda.synchronize()
        print(start.elapsed_time(end))
        """,
        """
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y = model(x)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        """,
        # The ImageNet example: per-iteration timing carried across the loop.
        """
        import time, torch
        end = time.time()
        for i, (images, target) in enumerate(train_loader):
            data_time.update(time.time() - end)
            images = images.cuda(non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            losses.update(loss.item(), images.size(0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            batch_time.update(time.time() - end)
            end = time.time()
        """,
        # Timing data loading only: no GPU work in the region.
        """
        import time, torch
        device = torch.device("cuda")
        t0 = time.time()
        batch = next(loader_iter)
        data_time = time.time() - t0
        """,
        # Epoch timing: a host read every iteration bounds the error to one step.
        """
        import time, torch
        for epoch in range(epochs):
            start = time.time()
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                loss = criterion(model(x), y)
                running += loss.item()
                loss.backward()
                optimizer.step()
            print(f"epoch took {time.time() - start:.1f}s")
        """,
        # A timeout check, not a measurement.
        """
        import time, torch
        start = time.time()
        while time.time() - start < 60:
            y = model(x.cuda())
        """,
        # Synchronize through the current stream.
        """
        import time, torch
        t0 = time.perf_counter()
        out = model(x)
        torch.cuda.current_stream().synchronize()
        t1 = time.perf_counter()
        print(t1 - t0)
        """,
        # Loop-carried per-iteration timing (minGPT, nanoGPT).
        """
        import time, torch
        t0 = time.time()
        while True:
            logits, loss = model(X.cuda(), Y.cuda())
            loss.backward()
            optimizer.step()
            t1 = time.time()
            dt = t1 - t0
            t0 = t1
        """,
        # Timing whole epochs run by helpers (word_language_model).
        """
        import time, torch
        def train():
            for batch in range(0, n, bptt):
                output = model(data[batch].cuda())
                loss = criterion(output, targets[batch])
                loss.backward()

        for epoch in range(1, epochs + 1):
            epoch_start_time = time.time()
            train()
            print("epoch time", time.time() - epoch_start_time)
        """,
        # Copy to the host ends the region.
        """
        import time, torch
        start = time.time()
        preds = model(images.cuda()).argmax(1).cpu()
        print("inference", time.time() - start)
        """,
        # A copy to a CPU device held in a variable ends the region too (torchvision's
        # detection reference).
        """
        import time, torch
        cpu_device = torch.device("cpu")
        model.cuda()
        for images in loader:
            model_time = time.time()
            outputs = model(images.cuda())
            outputs = [{k: v.to(cpu_device) for k, v in t.items()} for t in outputs]
            model_time = time.time() - model_time
        """,
        # A value printed or formatted on the host, or a generated token tested against the end
        # token, waits for the GPU.
        """
        import time, torch
        start = time.time()
        scores = model(batch.cuda())
        print(scores)
        print("took", time.time() - start)
        """,
        """
        import time, torch
        ids = prompt.cuda()
        start = time.perf_counter()
        for _ in range(max_new_tokens):
            logits = decoder(ids)[:, -1]
            next_id = torch.argmax(logits, dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
            if next_id == eos_id:
                break
        elapsed = time.perf_counter() - start
        """,
        """
        import time, torch
        t0 = time.time()
        loss = model(x.cuda()).mean()
        log(f"loss {loss:.3f}")
        t1 = time.time()
        print(t1 - t0)
        """,
        # A timing helper whose only caller passes host work.
        """
        import time, torch
        def measure(fn, *args):
            start = time.perf_counter()
            fn(*args)
            return time.perf_counter() - start

        model = model.cuda()
        print(measure(sorted, records))
        """,
    ]

    INVALID = [
        # latents stay on the GPU: the pipeline's call returns before its kernels finish
        """
        import time
        import torch
        def time_latents(pipe, prompt):
            pipe.to("cuda")
            start = time.time()
            latents = pipe(prompt, output_type="latent").images
            return time.time() - start  # expect: TL002
        """,
        # the timed session is moved to the GPU in place: it is a module (Olive's evaluator)
        """
        import time
        import torch
        def latencies(model, inputs, repeat):
            session = model.prepare_session()
            session.to(torch.device("cuda"))
            found = []
            for _ in range(repeat):
                t = time.perf_counter()
                session(inputs)
                found.append(time.perf_counter() - t)  # expect: TL002
            return found
        """,
        """
        import time, torch
        model = model.cuda()
        start = time.perf_counter()
        for _ in range(100):
            y = model(x)
        elapsed = time.perf_counter() - start  # expect: TL002
        """,
        # Aliased import of the clock.
        """
        from time import perf_counter as clock
        import torch
        x = torch.randn(4096, 4096, device="cuda")
        t0 = clock()
        y = torch.matmul(x, x)
        t1 = clock()  # expect: TL002
        print(f"{t1 - t0:.3f}s")
        """,
        # A single forward pass.
        """
        import time
        import torch
        model.to("cuda")
        start = time.time()
        output = model(inputs)
        end = time.time()  # expect: TL002
        print("inference took", end - start)
        """,
        # Work after the last host read.
        """
        import time, torch
        t0 = time.time()
        loss = model(x.cuda()).sum()
        print(loss.item())
        loss.backward()
        optimizer.step()
        dt = time.time() - t0  # expect: TL002
        """,
        # A synchronize before the region does not help.
        """
        import time, torch
        torch.cuda.synchronize()
        start = time.time()
        for _ in range(10):
            out = net(batch)
        print("time", time.time() - start)  # expect: TL002
        """,
        # timeit.default_timer and a matrix product.
        """
        import timeit, torch
        a = torch.randn(2048, 2048).cuda()
        begin = timeit.default_timer()
        c = a @ a
        took = timeit.default_timer() - begin  # expect: TL002
        """,
        # A copy to a device that may be the GPU does not wait for anything.
        """
        import time, torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model.to(device)
        start = time.time()
        out = model(x.to(device)).to(device)
        print("forward:", time.time() - start)  # expect: TL002
        """,
        # datetime.now.
        """
        from datetime import datetime
        import torch
        t0 = datetime.now()
        out = self.model(batch.cuda())
        print("forward:", datetime.now() - t0)  # expect: TL002
        """,
        # Inside a benchmarking function.
        """
        import time, torch
        def bench(model, x, iters=50):
            for _ in range(5):
                model(x)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                model(x)
            return (time.perf_counter() - t0) / iters  # expect: TL002
        """,
        # A local helper launches the work.
        """
        import time, torch
        def step(x):
            return torch.nn.functional.relu(x @ w)

        start = time.monotonic()
        y = step(x.cuda())
        elapsed = time.monotonic() - start  # expect: TL002
        """,
        # elapsed_time without synchronizing on the end event.
        """
        import torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        y = model(x)
        end.record()
        print(start.elapsed_time(end))  # expect: TL002
        """,
        """
        import torch
        def gpu_time(fn, x):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn(x)
            e.record()
            return s.elapsed_time(e)  # expect: TL002
        """,
        # Aliased torch and a method of a class.
        """
        import time
        import torch as T
        class Bench:
            def run(self):
                self.model.cuda()
                t0 = time.time()
                out = self.model(self.x)
                self.elapsed = time.time() - t0  # expect: TL002
        """,
        # The clock read saved to a variable, subtracted later.
        """
        import time, torch
        tic = time.perf_counter()
        z = torch.mm(a.cuda(), b.cuda())
        toc = time.perf_counter()  # expect: TL002
        log(toc - tic)
        """,
        # A network whatever its name: built by a network class of the module, or moved to the GPU.
        """
        import time, torch
        from torch import nn

        class Matcher(nn.Module):
            def forward(self, a, b):
                return a @ b.T

        matcher = Matcher()
        t0 = time.perf_counter()
        scores = matcher(left.cuda(), right.cuda())
        t1 = time.perf_counter()  # expect: TL002
        print(f"matching took {t1 - t0:.3f}s")
        """,
        """
        import time, torch
        import zoo
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        stereo = zoo.StereoNet(max_disp=192).to(device)
        begin = time.time()
        disparity = stereo(left.to(device), right.to(device))
        spent = time.time() - begin  # expect: TL002
        """,
        # A timing helper called with a network, or with a lambda that runs one.
        """
        import time, torch
        def measure(fn, *args, repeats=20):
            start = time.perf_counter()
            for _ in range(repeats):
                fn(*args)
            return (time.perf_counter() - start) / repeats  # expect: TL002

        detector = build_detector().cuda()
        print(measure(detector, torch.randn(1, 3, 224, 224, device="cuda")))
        """,
        """
        import time, torch
        def bench(f, n=10):
            t = time.time()
            for _ in range(n):
                f()
            return time.time() - t  # expect: TL002

        print(bench(lambda: net(x.cuda())))
        """,
        # Per-layer times between a forward pre-hook and a forward hook.
        """
        import time
        import torch

        def pre_hook(module, inputs):
            module.start = time.time()

        def hook(module, inputs, output):
            durations[module] = time.time() - module.start  # expect: TL002

        model = build_model().cuda()
        for layer in model.modules():
            layer.register_forward_pre_hook(pre_hook)
            layer.register_forward_hook(hook)
        """,
        # A context manager that times the body of its `with` statement.
        """
        import time
        from contextlib import contextmanager
        import torch

        @contextmanager
        def timer(name):
            start = time.perf_counter()
            yield
            print(name, time.perf_counter() - start)

        model = build_model().cuda()
        x = torch.randn(8, 3, device="cuda")
        with timer("forward"):  # expect: TL002
            model(x)
        """,
        # A timing method handed a bound method that runs the network, through a name.
        """
        import time, torch
        class Benchmark:
            def __init__(self, net):
                self.net = net.cuda()

            def forward_torch(self, x):
                return self.net(x)

            def run(self, x):
                forward_fn = self.forward_torch
                return self._measure(forward_fn, x)

            def _measure(self, fn, x):
                tic = time.time()
                fn(x)
                return time.time() - tic  # expect: TL002
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        clocks = an.clocks(ctx)
        work = an.GpuWork(
            ctx,
            an.Networks(ctx, lambda call: sm.builds_module(ctx, call)),
            lambda callee: sm.callee_effects(ctx, callee),
        )
        if an.uses_cuda(ctx):
            for call, timed in an.project_timer_calls(ctx, work.runs_work):
                helper = ctx.module.code_for_node(call.func)
                yield self.report(
                    call,
                    f"`{helper}()` reads the wall clock around a call of `{ctx.module.code_for_node(timed)}`, "
                    "which queues CUDA work, and never synchronizes: it measures launch time; call "
                    f"`torch.cuda.synchronize()` in `{helper}` before it reads the end time",
                )
        idx = an.index(ctx)
        if an.uses_cuda(ctx):
            for block, timer in an.timed_blocks(ctx, lambda call: sm.times_block(ctx, call)):
                home = an.execution_home(idx, block)
                if home is None:
                    continue
                region = [step for step in work.timeline(home) if idx.contains(block.body, step.node)]
                if work.pending(region, len(an.enclosing_loops(idx, block))):
                    yield self.report(timer, _block_message(ctx, timer))
            for read in an.hook_measurements(ctx):
                yield self.report(read, _clock_message(ctx, read, "the layer's forward, which ran since the pre-hook's start time,"))
        clocked_scopes = {
            id(an.execution_home(idx, call))
            for call in idx.nodes(cst.Call)
            if clocks.is_clock(call) or _reads_events(call)
        }
        for scope in (ctx.module, *an.functions(ctx).all):
            if id(scope) not in clocked_scopes:
                continue
            steps = work.timeline(scope)
            for measured in clocks.measurements(steps):
                if work.pending(measured.region, measured.depth):
                    yield self.report(measured.clock, _clock_message(ctx, measured.clock))
            for i, step in enumerate(steps):
                if _reads_events(step.node) and work.recorded_unwaited(steps[:i], step.node.args[0].value):  # type: ignore[attr-defined]
                    event = ctx.module.code_for_node(step.node.args[0].value)  # type: ignore[attr-defined]
                    yield self.report(
                        step.node,
                        f"`elapsed_time` reads CUDA event `{event}` before it is known to have completed: "
                        f"call `{event}.synchronize()` or `torch.cuda.synchronize()` first",
                    )


def _reads_events(node: cst.CSTNode) -> bool:
    """`start.elapsed_time(end)`."""
    return isinstance(node, cst.Call) and an.method_name(node) == "elapsed_time" and bool(node.args)


def _block_message(ctx: FileContext, timer: cst.Call) -> str:
    helper = ctx.module.code_for_node(timer.func)
    return (
        f"`{helper}()` reads the wall clock around this block, which queues CUDA work, and never "
        f"synchronizes: it measures launch time; call `torch.cuda.synchronize()` in `{helper}` before "
        f"it reads the end time (or at the end of the block)"
    )


def _clock_message(ctx: FileContext, node: cst.Call, work: str = "CUDA work launched since the start time") -> str:
    clock = ctx.module.code_for_node(node.func)
    return (
        f"`{clock}()` reads the clock while {work} may still be running: call "
        f"`torch.cuda.synchronize()` before reading the end time"
    )
