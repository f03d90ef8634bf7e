import torch

from . import models


def train(model, loader, optimizer):
    model.train()
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


def validate(model, loader):
    with torch.no_grad():
        return [model(x) for x in loader]


def main(loader, rate):
    model = models.Regularized(0)
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    validate(model, loader)
