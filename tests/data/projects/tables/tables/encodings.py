import math

import torch


def sinusoid_table(length, dim):
    pos = torch.arange(length).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(pos * div)
    table[:, 1::2] = torch.cos(pos * div)
    return table


def causal_mask(length):
    return torch.triu(torch.ones(length, length), diagonal=1).bool()
