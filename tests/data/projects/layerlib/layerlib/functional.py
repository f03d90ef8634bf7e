import torch
from torch import Tensor


def sinusoid(x: Tensor, size: int) -> Tensor:
    steps = torch.arange(size)
    return torch.sin(x[..., None] * steps)


def table(x: Tensor, size: int) -> Tensor:
    steps = torch.arange(size)
    return x[..., None] * steps
