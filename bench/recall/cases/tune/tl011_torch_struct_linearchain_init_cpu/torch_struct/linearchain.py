import math

import torch

from .semirings import LogSemiring


class LinearChain:
    """Represents structured linear-chain CRFs (the potentials are batch x N-1 x C x C)."""

    def __init__(self, semiring=LogSemiring):
        self.semiring = semiring

    def _check_potentials(self, edge, lengths=None):
        batch, N_1, C, C2 = edge.shape
        edge = self.semiring.convert(edge)
        N = N_1 + 1
        if lengths is None:
            lengths = torch.LongTensor([N] * batch).to(edge.device)
        assert max(lengths) <= N, "Length longer than edge scores"
        assert C == C2, "Transition shape doesn't match"
        return edge, batch, N, C, lengths

    def _bin_length(self, length):
        log_N = int(math.ceil(math.log(length, 2)))
        bin_N = int(math.pow(2, log_N))
        return log_N, bin_N

    def _chart(self, size, potentials):
        return torch.zeros(*((self.semiring.size(),) + size), dtype=potentials.dtype,
                           device=potentials.device).fill_(self.semiring.zero)

    def logpartition(self, log_potentials, lengths=None):
        semiring = self.semiring
        ssize = semiring.size()
        log_potentials, batch, N, C, lengths = self._check_potentials(log_potentials, lengths)
        log_N, bin_N = self._bin_length(N - 1)
        chart = self._chart((batch, bin_N, C, C), log_potentials)

        # Init
        init = torch.zeros(ssize, batch, bin_N, C, C).bool()
        init.diagonal(0, 3, 4).fill_(True)
        chart = semiring.fill(chart, init, semiring.one)

        big = torch.zeros(ssize, batch, bin_N, C, C, dtype=log_potentials.dtype, device=log_potentials.device)
        big[:, :, : N - 1] = log_potentials
        c = chart[:, :, :].view(ssize, batch * bin_N, C, C)
        lp = big[:, :, :].view(ssize, batch * bin_N, C, C)
        mask = torch.arange(bin_N, device=lengths.device).view(1, bin_N).expand(batch, bin_N)
        mask = mask >= (lengths - 1).view(batch, 1)
        mask = mask.view(batch * bin_N, 1, 1).to(lp.device)
        lp.data[:] = semiring.fill(lp.data, mask, semiring.zero)
        c.data[:] = semiring.fill(c.data, ~mask, semiring.zero)
        c[:] = semiring.sum(torch.stack([c.data, lp], dim=-1))

        for n in range(1, log_N + 1):
            chart = semiring.matmul(chart[:, :, 1::2], chart[:, :, 0::2])
        v = semiring.sum(semiring.sum(chart[:, :, 0].contiguous()))
        return v
