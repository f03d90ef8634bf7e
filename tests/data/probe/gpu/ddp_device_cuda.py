"""DistributedDataParallel over NCCL, launched by torchrun, where no process selects its
own GPU: every rank moves its model to the current device, cuda:0."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()
    model = DistributedDataParallel(model)  # line: ddp
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(4):
        optimizer.zero_grad()
        model(torch.randn(16, 8, device="cuda")).pow(2).mean().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
