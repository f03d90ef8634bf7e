import torch


class LogSemiring:
    zero = -1e5
    one = 0.0

    @staticmethod
    def size():
        return 1

    @staticmethod
    def convert(potentials):
        return potentials.unsqueeze(0)

    @staticmethod
    def unconvert(potentials):
        return potentials.squeeze(0)

    @staticmethod
    def fill(c, mask, v):
        return torch.where(mask, torch.tensor(v, dtype=c.dtype, device=c.device), c)

    @staticmethod
    def sum(xs, dim=-1):
        return torch.logsumexp(xs, dim=dim)

    @classmethod
    def matmul(cls, a, b):
        return cls.sum(a.unsqueeze(-1) + b.unsqueeze(-3), dim=-2)
