import torch

from .data import make_eval_loader, make_loader
from .models import Plain


class Trainer:
    def __init__(self, dataset, val_dataset):
        self.model = Plain()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.train_loader = make_loader(dataset)
        self.val_loader = make_eval_loader(val_dataset)

    def _run_epoch(self):
        for x in self.train_loader:
            self.optimizer.zero_grad()
            self.model(x).sum().backward()
            self.optimizer.step()

    def train(self, epochs):
        for epoch in range(epochs):
            self._run_epoch()
