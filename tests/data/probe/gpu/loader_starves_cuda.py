"""A model on the GPU fed by two loaders: one with worker processes, then one that loads
in the main process from a slow dataset (2 ms per sample), so the GPU waits."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        time.sleep(0.002)
        return torch.randn(32), torch.randn(1)


def train(loader, model, optimizer, steps):
    for step, (x, y) in enumerate(loader):
        if step == steps:
            break
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        optimizer.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        optimizer.step()
        torch.cuda.synchronize()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    fed = DataLoader(SlowDataset(), batch_size=16, num_workers=4, pin_memory=True)  # line: fed
    train(fed, model, optimizer, steps=4)
    starved = DataLoader(SlowDataset(), batch_size=16)  # line: starved
    train(starved, model, optimizer, steps=12)
