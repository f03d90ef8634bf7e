"""Crashes for its own reasons after two steps."""
import torch
from torch import nn

model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(100):
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    if step == 1:
        raise ValueError("the data ran out")  # line: raise
