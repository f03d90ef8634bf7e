from .linearchain import LinearChain


class LinearChainCRF:
    """Distribution over label sequences given log-potentials (batch x N-1 x C x C)."""

    struct = LinearChain

    def __init__(self, log_potentials, lengths=None):
        self.log_potentials = log_potentials
        self.lengths = lengths

    @property
    def partition(self):
        return self.struct().logpartition(self.log_potentials, self.lengths)

    def log_prob(self, score):
        return score - self.partition
