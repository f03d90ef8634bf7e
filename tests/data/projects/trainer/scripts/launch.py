# Run as `python scripts/launch.py`: its sibling module is importable by its bare name.
import torch.distributed as dist
from device_utils import pin_process_gpu
from torch.nn.parallel import DistributedDataParallel


def worker(rank, net):
    pin_process_gpu(rank)
    dist.init_process_group("nccl", rank=rank, world_size=2)
    return DistributedDataParallel(net.cuda())
