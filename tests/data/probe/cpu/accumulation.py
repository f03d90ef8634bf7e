"""Correct gradient accumulation: four backward passes, one step, then a clear."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
ACCUMULATE = 4
for i in range(200):
    loss = model(torch.randn(16, 8)).pow(2).mean() / ACCUMULATE
    loss.backward()
    if (i + 1) % ACCUMULATE == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # line: step
        optimizer.zero_grad()
