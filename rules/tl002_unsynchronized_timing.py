from __future__ import annotations

from enum import Enum
from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

WALL_CLOCKS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "timeit.default_timer",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
    }
)
# Calls that wait for the GPU: host reads and `synchronize()`.
HOST_READS = sm.HOST_READS
# `torch.<op>` functions that launch no kernels (or block anyway).
TORCH_HOST_ONLY = frozenset(
    """device manual_seed seed no_grad inference_mode enable_grad autocast load save compile
    tensor as_tensor from_numpy is_tensor is_grad_enabled numel typename""".split()
)
TORCH_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
# Tensor methods that are unmistakably GPU compute (generic names such as `add` or `sum`
# are left out: too many non-tensor objects have them).
TENSOR_WORK = frozenset(
    """matmul mm bmm mv addmm baddbmm einsum conv1d conv2d conv3d softmax log_softmax relu gelu
    sigmoid tanh topk argmax argmin cumsum backward""".split()
)
# `module_id`, `model_config`: names about a model, not the model.
NOT_MODEL_SUFFIXES = frozenset(
    """id ids name names path dir file config cfg type types size sizes list dict state params
    parameters kwargs args info spec str fn class cls""".split()
)
# A callee named like a verb builds or fetches something rather than running a model.
VERBS = frozenset(
    """get load import build create make init initialize register named set add find to compile
    wrap unwrap save print log shard parallelize prepare freeze unfreeze convert export quantize
    update copy clone move apply fuse replace patch setup reset check validate inspect count
    summarize describe eval evaluate test train run val benchmark profile measure time""".split()
)
MODEL_WORDS = frozenset(
    """model net network encoder decoder backbone layer layers block module head generator
    discriminator transformer unet vae policy critic actor mlp conv attn attention classifier
    gpt bert resnet vit llm""".split()
)


MAX_CALL_DEPTH = 2


class Effect(Enum):
    WORK = "work"
    SYNC = "sync"


class UnsynchronizedTiming(Rule):
    """
    ## What it does
    Finds wall-clock timing (`time.time()`, `time.perf_counter()`, `time.monotonic()`,
    `timeit.default_timer()`, `datetime.now()`) of a region that launches CUDA work, in a
    file that uses CUDA, where nothing synchronizes with the GPU after the last GPU work
    and before the end time is read. Also finds `start.elapsed_time(end)` on CUDA events
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
    (`.item()`, `.cpu()`, `.tolist()`, `.numpy()`) also waits for the GPU.

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
        ("time(", "time_ns(", "time.time", "perf_counter", "monotonic", "default_timer", "now(", "elapsed_time"),
        ("cuda",),
    )
    CONFIRMED_BY = ("TL002",)

    VALID = [
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
    ]

    INVALID = [
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
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        idx = an.index(ctx)
        imps = an.imports(ctx)
        funcs = an.functions(ctx)
        timing = _Timing(ctx, idx, imps, funcs)
        for scope in (ctx.module, *funcs.all):
            yield from timing.check_scope(scope, self)


class _Timing:
    def __init__(self, ctx: FileContext, idx: an.Index, imps: an.Imports, funcs: an.Functions) -> None:
        self.ctx = ctx
        self.idx = idx
        self.imps = imps
        self.funcs = funcs
        self._summaries: dict[tuple[int, int], Effect | None] = {}

    # -- classification -------------------------------------------------------

    def is_clock(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = self.imps.callee(node) or ""
        return name in WALL_CLOCKS or (name.endswith(".now") and "datetime" in name)

    def effect(self, node: cst.CSTNode, depth: int = 0) -> Effect | None:
        if isinstance(node, cst.BinaryOperation):
            return Effect.WORK
        assert isinstance(node, cst.Call)
        method = an.method_name(node)
        callee = self.imps.callee(node) or ""
        short = an.callee_name(node) or ""
        if method in HOST_READS or any(t.startswith(("sync", "synchroni")) for t in an.name_tokens(short)):
            return Effect.SYNC
        if method == "to" and self._to_cpu(node):
            return Effect.SYNC
        if short in ("float", "int", "bool") and len(node.args) == 1 and isinstance(
            node.args[0].value, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)
        ):
            return Effect.SYNC
        local = self.funcs.resolve(node)
        if local:
            # Summaries look two calls deep: deeper chains guess more than they know.
            return self.summary(local[0], depth + 1) if depth < MAX_CALL_DEPTH else None
        if _is_torch_op(callee):
            return Effect.WORK
        if "syncs" in sm.call_effects(self.ctx, node):
            return Effect.SYNC  # a helper of another project module that synchronizes
        if method in TENSOR_WORK:
            return Effect.WORK
        if method == "step" and an.name_says_optimizer(an.last_name(node.func.value)):  # type: ignore[attr-defined]
            return Effect.WORK
        if method in ("cuda", "to") and an.keyword(node, "non_blocking") is not None:
            return Effect.WORK
        # `model(x)`, `self.encoder(x)`, `net.forward(x)`: a call of something named like a model.
        target = node.func.value if method == "forward" else node.func  # type: ignore[attr-defined]
        name = an.last_name(target) or ""
        tokens = an.name_tokens(name)
        if (
            tokens
            and not name[:1].isupper()  # `Model(cfg)` builds a model; it does not run one
            and tokens[0] not in VERBS
            and tokens[-1] not in NOT_MODEL_SUFFIXES
            and any(t in MODEL_WORDS for t in tokens)
        ):
            return Effect.WORK
        return None

    def _to_cpu(self, call: cst.Call) -> bool:
        """`x.to("cpu")`, `x.to(device=cpu_device)`: a copy to the host, which waits for the GPU."""
        args = an.positional(call)
        target = an.keyword(call, "device") or (args[0] if args else None)
        return target is not None and self._is_cpu_device(target.value, follow=True)

    def _is_cpu_device(self, expr: cst.BaseExpression, follow: bool) -> bool:
        """`"cpu"`, `torch.device("cpu")`, or (one step) a name only ever bound to one of them."""
        if _is_cpu_literal(expr):
            return True
        if isinstance(expr, cst.Call) and self.imps.callee(expr) == "torch.device":
            return bool(expr.args) and _is_cpu_literal(expr.args[0].value)
        name = an.dotted(expr) if follow else None
        values = an.assigned_values(self.ctx).get(name, []) if name else []
        return bool(values) and all(self._is_cpu_device(value, follow=False) for value in values)

    def summary(self, func: cst.FunctionDef, depth: int) -> Effect | None:
        """The last GPU-relevant effect of running `func`."""
        key = (id(func), depth)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = None  # recursion guard
        last: Effect | None = None
        if self.idx.within(func, cst.For, cst.While):
            # A helper that loops (a train or evaluate epoch) does its own host reads more
            # often than not, and an error of one iteration in an epoch does not matter.
            return None
        for step in an.execution_order(func):
            effect = self.effect(step.node, depth)
            if effect is not None:
                last = effect
        self._summaries[key] = last
        return last

    # -- regions ------------------------------------------------------------------

    def check_scope(self, scope: cst.CSTNode, rule: Rule) -> Iterator[Report]:
        steps = an.execution_order(scope)
        position = {id(s.node): i for i, s in enumerate(steps)}
        for i, step in enumerate(steps):
            node = step.node
            if isinstance(node, cst.Call) and self.is_clock(node):
                start = self._start_of(steps, position, i)
                if start is not None and self._pending(steps[start + 1 : i], len(steps[start].loops)):
                    yield rule.report(node, self._clock_message(node))
            elif isinstance(node, cst.Call) and an.method_name(node) == "elapsed_time" and node.args:
                end_event = node.args[0].value
                if self._event_unsynced(steps[:i], end_event):
                    event = self.ctx.module.code_for_node(end_event)
                    yield rule.report(
                        node,
                        f"`elapsed_time` reads CUDA event `{event}` before it is known to have completed: "
                        f"call `{event}.synchronize()` or `torch.cuda.synchronize()` first",
                    )

    def _clock_message(self, node: cst.Call) -> str:
        clock = self.ctx.module.code_for_node(node.func)
        return (
            f"`{clock}()` reads the clock while CUDA work launched since the start time may still be "
            f"running: call `torch.cuda.synchronize()` before reading the end time"
        )

    def _start_of(self, steps: list[an.Step], position: dict[int, int], end: int) -> int | None:
        """Index of the clock read that the read at `end` is measured from, if it is the end of
        a measurement within one iteration; None for loop-carried or unpaired reads."""
        variable = self._subtracted_variable(steps[end].node)
        if variable is None:
            return None
        for i in range(end - 1, -1, -1):
            candidate = steps[i].node
            if self.is_clock(candidate) and self._assigned_name(candidate) == variable:
                end_loops, start_loops = steps[end].loops, steps[i].loops
                carried = [loop for loop in end_loops if loop not in start_loops]
                if any(self._reassigned_later(steps, position, end, loop, variable) for loop in carried):
                    return None
                return i
        return None

    def _subtracted_variable(self, clock: cst.CSTNode) -> str | None:
        """`t0` for `time.time() - t0`, or for `t1 = time.time()` followed by `t1 - t0`.
        None for a timeout check (`time.time() - t0 > limit`), which measures nothing."""
        parent = self.idx.parent(clock)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Subtract):
            if parent.left is clock and not self._compared(parent):
                return an.dotted(parent.right)
            return None
        assigned = self._assigned_name(clock)
        if assigned is None:
            return None
        scope = self.idx.scope(clock)
        after = self.idx.order(clock)
        for binop in self.idx.within(scope, cst.BinaryOperation):
            if (
                self.idx.order(binop) > after
                and isinstance(binop.operator, cst.Subtract)
                and an.dotted(binop.left) == assigned
            ):
                return an.dotted(binop.right)
        return None

    def _compared(self, node: cst.CSTNode) -> bool:
        for ancestor in self.idx.ancestors(node):
            if isinstance(ancestor, cst.Comparison):
                return True
            if not isinstance(ancestor, (cst.BinaryOperation, cst.UnaryOperation, cst.Call, cst.Arg)):
                return False
        return False

    def _assigned_name(self, clock: cst.CSTNode) -> str | None:
        parent = self.idx.parent(clock)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return an.dotted(parent.targets[0].target)
        if isinstance(parent, cst.AnnAssign):
            return an.dotted(parent.target)
        return None

    def _reassigned_later(
        self, steps: list[an.Step], position: dict[int, int], end: int, loop: cst.CSTNode, variable: str
    ) -> bool:
        """`variable` is assigned again later in `loop`'s body (`t0 = t1` or `t0 = time.time()`)."""
        after = self.idx.order(steps[end].node)
        for assign in self.idx.within(loop, cst.Assign):
            if self.idx.order(assign) > after and any(an.dotted(t.target) == variable for t in assign.targets):
                return True
        return False

    def _pending(self, region: list[an.Step], depth: int) -> bool:
        """GPU work is queued at the end of `region`: work after the last sync, and no sync
        in a loop that starts inside the region (that bounds the error to one iteration).
        `depth` is how many loops the region's start runs in."""
        pending = False
        for step in region:
            if len(step.loops) > depth and self._optimizer_step(step.node):
                # Timing a training phase of many steps: the error is one step at most.
                return False
            effect = self.effect(step.node)
            if effect is Effect.WORK:
                pending = True
            elif effect is Effect.SYNC:
                if len(step.loops) > depth:
                    return False
                pending = False
        return pending

    def _optimizer_step(self, node: cst.CSTNode) -> bool:
        return (
            isinstance(node, cst.Call)
            and an.method_name(node) == "step"
            and an.name_says_optimizer(an.last_name(node.func.value))  # type: ignore[attr-defined]
        )

    def _event_unsynced(self, before: list[an.Step], event: cst.BaseExpression) -> bool:
        """`event.record()` happened and nothing synchronized after it."""
        for step in reversed(before):
            node = step.node
            if not isinstance(node, cst.Call):
                continue
            if self.effect(node) is Effect.SYNC:
                return False
            if an.method_name(node) == "record" and an.same_expr(an.receiver(node), event):
                return True
        return False


def _is_torch_op(callee: str) -> bool:
    """`torch.matmul`, `torch.nn.functional.relu`: an op that launches kernels."""
    parts = callee.split(".")
    if len(parts) == 2 and parts[0] == "torch":
        op = parts[1]
        return (
            op[:1].islower()
            and not op.startswith(("set_", "get_", "is_", "_"))
            and op not in TORCH_HOST_ONLY
            # Factories launch at most a fill kernel: not the work anyone times.
            and op not in an.TENSOR_FACTORIES
        )
    return callee.startswith(TORCH_OP_NAMESPACES) and len(parts) == len(TORCH_OP_NAMESPACES[0].split("."))


def _is_cpu_literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.SimpleString) and expr.value.strip("'\"").startswith("cpu")
