"""The model is moved to another device, the batch is not (on the CPU: the meta device)."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to("meta")
for step in range(3):
    batch = torch.randn(16, 8)
    out = model(batch)  # line: call
