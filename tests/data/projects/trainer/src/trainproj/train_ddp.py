import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from trainproj.distributed import select_device
from trainproj.models import Plain


def main():
    select_device()
    dist.init_process_group(backend="nccl")
    model = DDP(Plain().cuda())
    return model
