"""A recipe in a folder that is not a package: it imports the root-level package `tune`."""
import torch
import torch.distributed as dist
from tune import utils


def main():
    dist.init_process_group(backend="nccl")
    device = utils.get_device("cuda")
    x = torch.ones(4, device="cuda")
    dist.all_reduce(x)


if __name__ == "__main__":
    main()
