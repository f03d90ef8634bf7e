import torch.nn as nn
from torch import Tensor

from rff import functional


class GaussianEncoding(nn.Module):
    def __init__(self, sigma: float, input_size: int, encoded_size: int):
        super().__init__()
        b = functional.sample_b(sigma, (encoded_size, input_size))
        self.b = nn.parameter.Parameter(b, requires_grad=False)

    def forward(self, v: Tensor) -> Tensor:
        return functional.gaussian_encoding(v, self.b)


class PositionalEncoding(nn.Module):
    def __init__(self, sigma: float, m: int):
        super().__init__()
        self.sigma = sigma
        self.m = m

    def forward(self, v: Tensor) -> Tensor:
        return functional.positional_encoding(v, self.sigma, self.m)
