"""Unit tests of the distributed part of the devices analysis: process groups, whether a
module selects each process's GPU (one definition for the LibCST analysis and the `ast`
project summaries), and whether models go to each process's own GPU or a shared one."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from analysis_support import code, context

from torchlint.rules import _analysis as an
from torchlint.rules._summarize import summarize


SELECTING = [
    "torch.cuda.set_device(local_rank)",
    "torch.cuda.set_device_index(rank)",
    "dist.init_process_group('nccl', device_id=device)",
    "FSDP(model, device_id=rank)",
    "os.environ['CUDA_VISIBLE_DEVICES'] = str(rank)",
]
NOT_SELECTING = ["torch.cuda.device_count()", "dist.init_process_group('nccl')", "model.cuda()"]


@pytest.mark.parametrize("line", SELECTING + NOT_SELECTING)
def test_the_checked_file_and_the_project_summaries_agree_on_what_selects_the_gpu(line: str) -> None:
    source = f"import os, torch\nimport torch.distributed as dist\n\ndef setup(rank, local_rank, device, model):\n    {line}\n"
    ctx = context(source)
    in_file = an.gpu_selected(ctx, an.process_group_inits(ctx))
    summarised = "selects_gpu" in summarize(ast.parse(source))["defs"]["setup"]["effects"]
    assert in_file == summarised == (line in SELECTING)


def test_process_groups_and_their_backends() -> None:
    ctx = context(
        """
        import torch.distributed as dist
        dist.init_process_group("nccl", rank=rank)
        dist.init_process_group(backend="gloo")
        dist.init_process_group(backend=name)
        init_process_group("nccl")
        """
    )
    assert [an.backend(init) for init in an.process_group_inits(ctx)] == ["nccl", "gloo", None, "nccl"]


@pytest.mark.parametrize(
    "source, wrapped",
    [
        ("from torch.nn.parallel import DistributedDataParallel as D\nmodel = D(net)\n", ["D(net)"]),
        ("import torch.nn.parallel as par\nmodel = par.DistributedDataParallel(net)\n", ["par.DistributedDataParallel(net)"]),
        ("import torch\nmodel = torch.nn.parallel.distributed.DistributedDataParallel(net)\n",
         ["torch.nn.parallel.distributed.DistributedDataParallel(net)"]),
        ("model = DDP(net)\n", ["DDP(net)"]),  # a snippet that leaves its imports out
        # The word alone does not wrap a model.
        ("# the launcher wraps it in DistributedDataParallel: DDP(model)\nmodel = net\n", []),
        ('print("DDP(model) is DistributedDataParallel(model)")\n', []),
        ("from torch.nn.parallel import DistributedDataParallel\nassert isinstance(model, DistributedDataParallel)\n", []),
        ("from fairscale.nn import ShardedDataParallel as DDP\nmodel = DDP(net)\n", []),
        ("from torch.nn.parallel import DataParallel as DDP\nmodel = DDP(net)\n", []),
    ],
)
def test_ddp_wrappers_are_calls_that_resolve_to_distributed_data_parallel(source: str, wrapped: list[str]) -> None:
    ctx = context(source)
    assert [code(ctx, call) for call in an.ddp_wrappers(ctx)] == wrapped


@pytest.mark.parametrize(
    "move, share",
    [
        ("Net().cuda()", an.Share.SHARED),
        ("Net().cuda(local_rank)", an.Share.PER_PROCESS),
        ('Net().to("cuda:0")', an.Share.SHARED),
        ('Net().to(f"cuda:{rank}")', an.Share.PER_PROCESS),
        ("Net().to(torch.device('cuda', rank))", an.Share.PER_PROCESS),
        ("Net().to(device)", an.Share.SHARED),  # device = torch.device("cuda") below
        ("Net().to(torch.float16)", None),
        ("Net()", None),
    ],
)
def test_where_a_wrapped_model_was_put(move: str, share: an.Share | None) -> None:
    ctx = context(f'import torch\ndevice = torch.device("cuda")\nmodel = {move}\n')
    assert an.process_devices(ctx).of_module(cst.Name("model")) is share
