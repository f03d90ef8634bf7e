import torch
from torch.utils.data import DataLoader

from .data import make_random_sampler


class Trainer:
    """Runs until `max_steps`: the sampler comes from the data module."""

    def __init__(self, model, dataset, max_steps):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.sampler = make_random_sampler(dataset)
        self.data_loader = DataLoader(dataset, batch_size=16, sampler=self.sampler)
        self.max_steps = max_steps
        self.steps = 0

    def fit(self):
        while self.steps < self.max_steps:
            self._one_epoch()

    def _one_epoch(self):
        for batch in self.data_loader:
            self.optimizer.zero_grad()
            self.model(batch).mean().backward()
            self.optimizer.step()
            self.steps += 1
