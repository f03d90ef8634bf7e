"""Correct: torch.optim.Adam(fused=True) on a CUDA model."""
import torch
from torch import nn

device = "cuda"
model = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)

for step in range(5):
    x = torch.randn(16, 8, device=device)
    y = torch.randint(0, 2, (16,), device=device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
