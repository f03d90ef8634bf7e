from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

# Launchers that pick each process's device themselves.
MANAGED = ("accelerate", "lightning", "pytorch_lightning", "deepspeed", "ignite", "colossalai", "horovod")


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
    # The process group may start in a helper of another module: a DDP wrap alone triggers.
    TRIGGERS = (("init_process_group", "DistributedDataParallel", "DDP"), ("DistributedDataParallel", "DDP", "nccl"))
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
        wrappers = an.ddp_wrappers(ctx)
        # A process group started by a helper of another module counts where a DDP wrap needs it.
        inits = an.process_group_inits(ctx, through_helpers=bool(wrappers))
        backends = [an.backend(init) for init in inits]
        if not inits or not an.uses_cuda(ctx) or an.gpu_selected(ctx, inits):
            return
        if all(b is not None and b != "nccl" for b in backends):
            return  # CPU process groups only (gloo, mpi)
        if any(an.imports(ctx).mentions(framework) for framework in MANAGED):
            return
        devices = an.process_devices(ctx)
        for call in wrappers:
            if _gives_devices(call):
                continue
            args = an.positional(call)
            module = args[0].value if args else (kw.value if (kw := an.keyword(call, "module")) else None)
            if module is None:
                continue
            placed = devices.of_module(module)
            if placed is an.Share.SHARED or (
                placed is None and "nccl" in backends and devices.whole_file() is an.Share.SHARED
            ):
                yield self.report(call, self._message(ctx, call, module))
        if wrappers or any(an.keyword(c, "device_ids") for c in an.index(ctx).nodes(cst.Call)):
            return
        for init, backend in zip(inits, backends):
            if backend == "nccl" and devices.whole_file() is an.Share.SHARED:
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


def _gives_devices(call: cst.Call) -> bool:
    return (
        len(an.positional(call)) >= 2
        or an.keyword(call, "device_ids") is not None
        or any(arg.star for arg in call.args)
    )
