"""Keeping the best loss tensor (with its graph) keeps one graph, not one per step."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
best = None
previous = None
for step in range(100):
    optimizer.zero_grad()
    loss = model(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
    if best is None or loss < best:
        best = loss
    previous = loss
