"""Evaluation with gradients enabled: the outputs' graphs are built and never used."""
import torch
from torch import nn


def validate_bad(model, batches):
    model.eval()
    total = 0.0
    for x in batches:
        total += model(x).pow(2).mean().item()  # line: eval-forward
    model.train()
    return total


def validate_good(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x in batches:
            total += model(x).pow(2).mean().item()  # line: eval-no-grad
    model.train()
    return total


def validate_never_called(model, x):
    model.eval()
    return model(x)  # line: eval-never-called


def predict(model, batches):
    # The caller put the model in eval mode (TL004 across functions).
    return [model(x).argmax(1) for x in batches]  # line: eval-in-caller


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [torch.randn(16, 8) for _ in range(3)]
    for step in range(4):
        optimizer.zero_grad()
        model(torch.randn(16, 8)).pow(2).mean().backward()
        optimizer.step()
    print(validate_bad(model, batches), validate_good(model, batches))
    model.eval()
    print(len(predict(model, batches)))


if __name__ == "__main__":
    main()
