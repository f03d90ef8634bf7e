class NoamOpt:
    """Optimizer wrapper implementing the Noam learning-rate schedule."""

    def __init__(self, model_size, factor, warmup, optimizer, min_lr=1e-5):
        self.optimizer = optimizer
        self._step = 0
        self.warmup = warmup
        self.factor = factor
        self.model_size = model_size
        self.min_lr = min_lr
        self._rate = 0

    def step(self):
        self._step += 1
        rate = self.rate()
        for p in self.optimizer.param_groups:
            p['lr'] = rate
        self._rate = rate
        self.optimizer.step()

    def rate(self, step=None):
        if step is None:
            step = self._step
        return max(self.min_lr, self.factor * (self.model_size ** (-0.5) *
                                               min(step ** (-0.5), step * self.warmup ** (-1.5))))

    def zero_grad(self):
        self.optimizer.zero_grad()
