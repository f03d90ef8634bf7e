"""The DDP tutorial's bug: the loader comes from a factory and lives on a trainer, and no
epoch ever reaches its DistributedSampler (TL014 across functions)."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def prepare_dataloader(dataset, batch_size):
    # One replica, so that no process group is needed on the CPU.
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


class Trainer:
    def __init__(self, model, train_data, optimizer):
        self.model, self.train_data, self.optimizer = model, train_data, optimizer

    def _run_epoch(self, epoch):
        for source, targets in self.train_data:
            self.optimizer.zero_grad()
            torch.nn.functional.mse_loss(self.model(source), targets).backward()
            self.optimizer.step()

    def train(self, max_epochs):
        for epoch in range(max_epochs):  # line: epoch-loop
            self._run_epoch(epoch)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    data = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
    Trainer(model, prepare_dataloader(data, 8), torch.optim.SGD(model.parameters(), lr=0.01)).train(3)
