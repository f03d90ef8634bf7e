import os

import torch


def select_device():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def world_size():
    return int(os.environ.get("WORLD_SIZE", 1))


class DeviceManager:
    def pin(self):
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
