from __future__ import annotations

from enum import Enum
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

DDP = frozenset(
    {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
)
INIT = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
# Launchers that pick each process's device themselves.
MANAGED = ("accelerate", "lightning", "pytorch_lightning", "deepspeed", "ignite", "colossalai", "horovod")
# Names that hold a per-process device index.
RANK_WORDS = frozenset("rank gpu gpus local device id idx index ordinal".split())
MAX_DEPTH = 3


class Placement(Enum):
    PER_PROCESS = "per-process"  # `cuda:{local_rank}`, `.cuda(rank)`
    SHARED = "shared"  # `"cuda"`, `.cuda()`, `"cuda:0"`: the same device in every process
    UNKNOWN = "unknown"


class DdpDeviceNotSet(Rule):
    """
    ## What it does
    Finds `DistributedDataParallel(model)` without `device_ids=`, in a script that starts the
    process group and runs on CUDA, where nothing gives each process its own GPU: no
    `torch.cuda.set_device(local_rank)`, no `device_id=` for `init_process_group`, and the
    model is moved with `.cuda()` or `.to("cuda")` rather than to `cuda:{local_rank}`.
    Also finds `init_process_group(backend="nccl")` in such a script when it has no
    `DistributedDataParallel` call.

    ## Why is this bad?
    `"cuda"` and `.cuda()` mean the *current* device, which is GPU 0 in every process until
    `torch.cuda.set_device` says otherwise. All ranks then put their model and batches on
    GPU 0: it runs out of memory or crawls while the other GPUs idle, and NCCL may hang or
    fail with "Duplicate GPU detected".

    ## Example
    ```python
    dist.init_process_group(backend="nccl")
    model = Net().cuda()
    model = DistributedDataParallel(model)
    ```

    ## Use instead
    ```python
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    model = Net().cuda()
    model = DistributedDataParallel(model, device_ids=[local_rank])
    ```
    Not reported: a model moved to `cuda:{local_rank}` (or `.cuda(rank)`, `.to(rank)`), CPU
    process groups (`gloo`, `mpi`), `CUDA_VISIBLE_DEVICES` set per process, a helper of
    the project (in any of its modules) that calls `torch.cuda.set_device`, and scripts run
    by Accelerate, Lightning, DeepSpeed or Ignite, which pick each process's device.

    ## Fix safety
    No automatic fix: the index to use (`LOCAL_RANK`, a spawned process's rank, `args.gpu`)
    depends on how the script is launched.

    ## Runtime confirmation
    On several GPUs, `torchlint probe --nproc-per-node N` confirms it when a process wraps a
    model that sits on another GPU than its `LOCAL_RANK` in `DistributedDataParallel`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
    - https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
    """

    CODE = "TL016"
    NAME = "ddp-device-not-set"
    SUMMARY = "DDP script never gives each process its own GPU (`set_device` / `device_ids`)"
    TRIGGERS = (("init_process_group",), ("DistributedDataParallel", "DDP", "nccl"))
    CONFIRMED_BY = ("TL016",)

    VALID = [
        # The tutorial: an indexed device and device_ids.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        def demo(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            model = Net().to(rank)
            ddp_model = DDP(model, device_ids=[rank])
        """,
        # set_device, then DDP without device_ids.
        """
        import os, torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl")
        model = DistributedDataParallel(Net().cuda())
        """,
        # device_id passed to init_process_group.
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        device = torch.device(f"cuda:{local_rank}")
        dist.init_process_group("nccl", device_id=device)
        model = DDP(model.cuda())
        """,
        # CPU training with gloo.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        model = DDP(Net())
        """,
        # The model moved to this process's GPU (nanoGPT style); DDP finds it there.
        """
        import torch
        from torch.distributed import init_process_group
        from torch.nn.parallel import DistributedDataParallel as DDP
        init_process_group(backend="nccl")
        device = f"cuda:{ddp_local_rank}"
        model.to(device)
        model = DDP(model)
        """,
        # Accelerate or Lightning place each process themselves.
        """
        import torch
        from accelerate import Accelerator
        from torch.nn.parallel import DistributedDataParallel
        torch.distributed.init_process_group("nccl")
        model = DistributedDataParallel(model.cuda())
        """,
        # DDP in a helper module: the process group is set up elsewhere.
        """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def wrap(model):
            return DDP(model.cuda())
        """,
        # The device comes from an argument: unknown here.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        def main(args):
            dist.init_process_group(backend="nccl")
            model = build(args).to(args.device)
            model = DDP(model)
        """,
        # CUDA_VISIBLE_DEVICES gives each process exactly one GPU.
        """
        import os
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        model = DDP(Net().cuda())
        """,
        # init_process_group with nccl and per-rank tensors, no DDP.
        """
        import torch
        import torch.distributed as dist
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        t = torch.ones(4).cuda(rank)
        dist.all_reduce(t)
        """,
        # `with torch.cuda.device(rank)` selects the device for the block.
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        with torch.cuda.device(rank):
            model = DDP(Net().cuda())
        """,
        # `.cuda(local_rank)` or `torch.device("cuda", local_rank)`: each process has its own GPU.
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("nccl")
        encoder = DDP(Encoder().cuda(args.local_rank))
        device = torch.device("cuda", args.local_rank)
        decoder = DDP(Decoder().to(device))
        """,
        # device_ids given as the second positional argument, or through **kwargs.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("nccl")
        a = DDP(model_a.cuda(), [local_rank])
        b = DDP(model_b.cuda(), **ddp_kwargs)
        """,
    ]

    INVALID = [
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        dist.init_process_group(backend="nccl")
        model = Net().cuda()
        model = DistributedDataParallel(model)  # expect: TL016
        """,
        # Aliased imports and a "cuda" device.
        """
        import torch
        import torch.distributed as D
        from torch.nn.parallel import DistributedDataParallel as DDP
        D.init_process_group("nccl", rank=rank, world_size=world_size)
        device = torch.device("cuda")
        model = Net().to(device)
        model = DDP(model)  # expect: TL016
        """,
        # The full module path, a spawned worker.
        """
        import torch
        import torch.multiprocessing as mp
        def worker(rank, world_size):
            torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)
            model = torch.nn.parallel.DistributedDataParallel(Net().cuda())  # expect: TL016
            train(model)

        mp.spawn(worker, args=(4,), nprocs=4)
        """,
        # "cuda:0" is the same GPU in every process.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group(backend="nccl", init_method="env://")
        model = Net().to("cuda:0")
        ddp = DDP(model, output_device=0)  # expect: TL016
        """,
        # A device chosen with the usual fallback.
        """
        import torch
        from torch import distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        def main():
            dist.init_process_group("nccl")
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = build_model().to(device)
            model = DDP(model, find_unused_parameters=True)  # expect: TL016
        """,
        # A snippet without imports.
        """
        dist.init_process_group(backend='nccl', world_size=world_size, rank=rank)
        model = model.cuda()
        model = DDP(model)  # expect: TL016
        """,
        # No DDP: the process group on NCCL, everything on the default GPU.
        """
        import torch
        import torch.distributed as dist
        dist.init_process_group(backend="nccl")  # expect: TL016
        x = torch.randn(1024, device="cuda")
        dist.all_reduce(x)
        """,
        # A trainer class.
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        class Trainer:
            def __init__(self, model):
                dist.init_process_group("nccl")
                self.model = model.cuda()
                self.model = DDP(self.model)  # expect: TL016
        """,
        # torchrun's LOCAL_RANK read but never used to pick the GPU.
        """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group(backend="nccl")
        model = DDP(Net().to("cuda"))  # expect: TL016
        """,
        # `.cuda()` without an index inline.
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
        net = DDP(Net().cuda(), broadcast_buffers=False)  # expect: TL016
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        reports = list(self._reports(ctx))
        # Asked last, as it reads other modules: a project helper that selects the GPU.
        if reports and sm.any_call_has(ctx, an.index(ctx).nodes(cst.Call), "selects_gpu") is None:
            yield from reports

    def _reports(self, ctx: FileContext) -> Iterator[Report]:
        inits = an.calls_to(ctx, INIT, frozenset({"init_process_group", "dist.init_process_group"}))
        if not inits or not an.uses_cuda(ctx) or _device_chosen(ctx, inits) or _cpu_backends_only(inits):
            return
        imps = an.imports(ctx)
        if any(imps.mentions(framework) for framework in MANAGED):
            return
        placements = _Placements(ctx)
        wrappers = an.calls_to(ctx, DDP, frozenset({"DistributedDataParallel", "DDP"}))
        for call in wrappers:
            if _gives_devices(call):
                continue
            args = an.positional(call)
            module = args[0].value if args else (kw.value if (kw := an.keyword(call, "module")) else None)
            if module is None:
                continue
            placed = placements.of_module(module)
            if placed is Placement.SHARED or (
                placed is None and any(_backend_is_nccl(i) for i in inits) and placements.whole_file() is Placement.SHARED
            ):
                yield self.report(call, self._message(ctx, call, module))
        if wrappers or any(an.keyword(c, "device_ids") for c in an.index(ctx).nodes(cst.Call)):
            return
        for init in inits:
            if _backend_is_nccl(init) and placements.whole_file() is Placement.SHARED:
                yield self.report(
                    init,
                    "the NCCL process group starts but no process selects its own GPU: every rank "
                    "uses GPU 0; call `torch.cuda.set_device(local_rank)` before "
                    "`init_process_group` (or pass `device_id=`)",
                )

    def _message(self, ctx: FileContext, call: cst.Call, module: cst.BaseExpression) -> str:
        wrapper = ctx.module.code_for_node(call.func)
        name = ctx.module.code_for_node(module)
        return (
            f"`{wrapper}({name})` has no `device_ids` and no process selects its own GPU: every rank "
            f"puts its replica on GPU 0; call `torch.cuda.set_device(local_rank)` and pass "
            f"`device_ids=[local_rank]`"
        )


def _device_chosen(ctx: FileContext, inits: list[cst.Call]) -> bool:
    """Something in the file selects the process's device, or may."""
    if "CUDA_VISIBLE_DEVICES" in ctx.source:
        return True
    if any(any(a.star for a in init.args) for init in inits):
        return True
    if any(arg.keyword is not None and arg.keyword.value == "device_id" for arg in an.index(ctx).nodes(cst.Arg)):
        return True  # `init_process_group(device_id=...)`, `FSDP(device_id=...)`
    imps = an.imports(ctx)
    for call in an.index(ctx).nodes(cst.Call):
        name = an.callee_name(call)
        if name in ("set_device", "set_device_index"):
            return True
        if name == "device" and (imps.callee(call) or "").endswith("cuda.device"):
            return True
    return False


def _gives_devices(call: cst.Call) -> bool:
    return (
        len(an.positional(call)) >= 2
        or an.keyword(call, "device_ids") is not None
        or any(arg.star for arg in call.args)
    )


def _backend(init: cst.Call) -> str | None:
    """The backend when it is spelled as a string literal."""
    args = an.positional(init)
    backend = an.keyword(init, "backend")
    value = backend.value if backend is not None else (args[0].value if args else None)
    return an.string_text(value) if value is not None else None


def _backend_is_nccl(init: cst.Call) -> bool:
    return _backend(init) == "nccl"


def _cpu_backends_only(inits: list[cst.Call]) -> bool:
    """Every process group is started with a literal backend other than NCCL (gloo, mpi)."""
    backends = [_backend(init) for init in inits]
    return all(b is not None and b != "nccl" for b in backends)


class _Placements:
    """Where the file puts modules and tensors: on each process's own GPU, or on a shared one.
    `None` means the code says nothing about a device (no move, or a move to a dtype)."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = an.index(ctx)
        self.imps = an.imports(ctx)
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        for assign in self.idx.nodes(cst.Assign):
            for target in assign.targets:
                name = an.dotted(target.target)
                if name:
                    self.assigned.setdefault(name, []).append(assign.value)
        self.moves = [c for c in self.idx.nodes(cst.Call) if an.method_name(c) in ("cuda", "to")]

    def of_module(self, module: cst.BaseExpression) -> Placement | None:
        """Where `module` (what DDP wraps) was put: inline, by moves of its name, or by the
        values assigned to its name."""
        inline = self._of_move_chain(module)
        if inline is not None:
            return inline
        name = an.dotted(module)
        if name is None:
            return None
        found = [self._of_move(c) for c in self.moves if an.dotted(an.receiver(c) or c.func) == name]
        found += [self._of_move_chain(value) for value in self.assigned.get(name, [])]
        return _agree([p for p in found if p is not None])

    def whole_file(self) -> Placement | None:
        """Per-process if anything is; shared if something is and nothing is per-process."""
        found = [self._of_move(c) for c in self.moves]
        for node in self.idx.nodes(cst.Arg):
            if node.keyword is not None and node.keyword.value == "device":
                found.append(self.of_device(node.value, 0))
        if Placement.PER_PROCESS in found:
            return Placement.PER_PROCESS
        return Placement.SHARED if Placement.SHARED in found else None

    def _of_move_chain(self, expr: cst.BaseExpression) -> Placement | None:
        """`Net().cuda()`, `model.to(device).train()`: the last move in a method chain."""
        while isinstance(expr, cst.Call):
            if an.method_name(expr) in ("cuda", "to"):
                return self._of_move(expr)
            owner = an.receiver(expr)
            if owner is None:
                break
            expr = owner
        return None

    def _of_move(self, call: cst.Call) -> Placement | None:
        args = [a for a in call.args if a.keyword is None or a.keyword.value == "device"]
        if an.method_name(call) == "cuda":
            return Placement.PER_PROCESS if args else Placement.SHARED
        return self.of_device(args[0].value, 0) if args else None

    def of_device(self, expr: cst.BaseExpression, depth: int) -> Placement | None:
        text = an.string_text(expr)
        if text is not None:
            if text.startswith("cuda"):
                return Placement.PER_PROCESS if "{}" in text else Placement.SHARED
            return None if text.startswith(("cpu", "mps", "xla", "meta")) else Placement.UNKNOWN
        if isinstance(expr, cst.Integer):
            return Placement.SHARED
        if isinstance(expr, cst.IfExp):
            branches = [self.of_device(expr.body, depth), self.of_device(expr.orelse, depth)]
            return _agree([p for p in branches if p is not None])
        if isinstance(expr, cst.BinaryOperation):
            return Placement.PER_PROCESS  # "cuda:" + str(rank), "cuda:%d" % rank
        if isinstance(expr, cst.Call):
            return self._of_device_call(expr, depth)
        name = an.dotted(expr)
        if name is None:
            return Placement.UNKNOWN
        qualified = self.imps.qualify(expr) or ""
        if qualified.startswith("torch.") or name.endswith(".dtype") or name == "dtype":
            return None  # `torch.float16`, `x.dtype`: a cast, not a move
        values = self.assigned.get(name, [])
        if values and depth < MAX_DEPTH:
            return _agree([p for p in (self.of_device(v, depth + 1) for v in values) if p is not None])
        tokens = an.name_tokens(name.rpartition(".")[2])
        return Placement.PER_PROCESS if any(t in RANK_WORDS and t != "device" for t in tokens) else Placement.UNKNOWN

    def _of_device_call(self, call: cst.Call, depth: int) -> Placement | None:
        callee = self.imps.callee(call) or ""
        if callee == "torch.device":
            if len(call.args) >= 2:
                return Placement.PER_PROCESS
            return self.of_device(call.args[0].value, depth) if call.args else Placement.UNKNOWN
        if an.method_name(call) == "format" and (an.string_text(call.func.value) or "").startswith("cuda"):  # type: ignore[attr-defined]
            return Placement.PER_PROCESS
        return Placement.PER_PROCESS if callee.endswith("current_device") else Placement.UNKNOWN


def _agree(found: list[Placement]) -> Placement | None:
    """Per-process if any is; shared only if all are; otherwise unknown."""
    if not found:
        return None
    if Placement.PER_PROCESS in found:
        return Placement.PER_PROCESS
    return Placement.SHARED if all(p is Placement.SHARED for p in found) else Placement.UNKNOWN
