import torch

from data.bunch import Bunch


def fit(model, optimizer, trainset, epochs):
    bunch = Bunch(trainset)
    for epoch in range(epochs):
        for x, y in bunch.train_loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
