import torch


class Metrics:
    def __init__(self, names):
        self.names = names
        self.reset()

    def reset(self):
        self.sums = {n: 0.0 for n in self.names}
        self.count = 0
        self.current = {}

    def reset_current(self):
        self.current = {}

    def update(self, pred, gt):
        pred = (pred > 0.5).int()
        inter = (pred & gt).sum().float()
        union = (pred | gt).sum().float()
        self.current = {"JaccardIndex": inter / union.clamp(min=1),
                        "DiceCoefficient": 2 * inter / (pred.sum() + gt.sum()).clamp(min=1)}
        for n in self.names:
            self.sums[n] += self.current[n]
        self.count += 1

    def compute(self):
        return {n: (self.current[n], self.sums[n] / self.count) for n in self.names}
