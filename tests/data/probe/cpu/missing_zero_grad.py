"""Gradients are never cleared: every step applies the sum of all earlier gradients."""
import torch
from torch import nn


def finetune(model, optimizer):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()  # line: never-called


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(100):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()  # line: step


if __name__ == "__main__":
    main()
