"""Device helpers of the package: each process selects its own GPU."""
import os
import torch


def get_device(device: str = "cuda") -> torch.device:
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"{device}:{local_rank}")
    torch.cuda.set_device(device)
    return device
