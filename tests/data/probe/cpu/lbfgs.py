"""LBFGS: the closure clears and recomputes gradients inside step()."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=4)
x, y = torch.randn(32, 8), torch.randn(32, 1)


def closure():
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    return loss


for _ in range(100):
    optimizer.step(closure)  # line: step
