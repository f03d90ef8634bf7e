# Reconstructed: the alias-method sampler the loss imports (its tables are plain tensors
# built on the CPU, not buffers of a module).
import numpy as np
import torch


class AliasMultinomial(object):
    """Fast sampling from a discrete distribution (Walker's alias method)."""

    def __init__(self, probs):
        K = len(probs)
        self.q = torch.zeros(K)
        self.J = torch.LongTensor([0] * K)

        smaller = []
        larger = []
        for kk, prob in enumerate(probs):
            self.q[kk] = K * prob
            if self.q[kk] < 1.0:
                smaller.append(kk)
            else:
                larger.append(kk)

        while len(smaller) > 0 and len(larger) > 0:
            small = smaller.pop()
            large = larger.pop()

            self.J[small] = large
            self.q[large] = (self.q[large] - 1.0) + self.q[small]

            if self.q[large] < 1.0:
                smaller.append(large)
            else:
                larger.append(large)

        self.q.clamp_(0, 1)
        self.J.clamp_(0, K - 1)

    def draw(self, N):
        """Draw N samples from the distribution."""
        K = self.J.size(0)
        r = torch.LongTensor(np.random.randint(0, K, size=N))
        q = self.q.index_select(0, r)
        j = self.J.index_select(0, r)
        b = torch.bernoulli(q)
        oq = r.mul(b.long())
        oj = j.mul((1 - b).long())
        return oq + oj
