"""Deliberate eval-mode training: batch-norm statistics frozen, weights still trained."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model.eval()
for step in range(100):
    optimizer.zero_grad()
    out = model(torch.randn(16, 8))  # line: forward
    out.pow(2).mean().backward()
    optimizer.step()
