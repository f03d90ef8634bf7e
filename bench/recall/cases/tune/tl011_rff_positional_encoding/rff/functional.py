import numpy as np
import torch
from torch import Tensor


def sample_b(sigma: float, size: tuple) -> Tensor:
    return torch.randn(size) * sigma


@torch.jit.script
def gaussian_encoding(v: Tensor, b: Tensor) -> Tensor:
    vp = 2 * np.pi * v @ b.T
    return torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)


@torch.jit.script
def positional_encoding(v: Tensor, sigma: float, m: float) -> Tensor:
    j = torch.arange(m)
    coeffs = 2 * np.pi * sigma ** (j / m)
    vp = coeffs * v[..., np.newaxis]
    vp_cat = torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)
    return vp_cat.flatten(-2, -1)
