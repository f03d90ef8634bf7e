import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from .distributed import DeviceManager
from .models import Plain


class Launcher:
    def __init__(self):
        self.devices = DeviceManager()

    def start(self):
        self.devices.pin()
        dist.init_process_group("nccl")
        return DDP(Plain().cuda())
