"""DistributedDataParallel on the CPU with gloo, launched by torchrun; gradients are
never cleared."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(100):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()  # line: step
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
