"""Correct: SGD with Nesterov momentum and OneCycleLR, noise made like the input, a CPU
index tensor into a CUDA tensor, a 0-dim CPU tensor times a CUDA one, `copy_` from the
CPU, `where` with a Python scalar, and a checkpoint loaded with map_location="cuda"."""
import io

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10)
scale = torch.tensor(0.5)
keep = torch.tensor([0, 2, 4, 6])
staging = torch.empty(8, 1, 16, 16, device=device)
for step in range(10):
    staging.copy_(torch.randn(8, 1, 16, 16))
    x = staging + torch.randn(staging.shape, device=staging.device) * scale
    y = torch.randint(0, 10, (8,), device=device)
    logits = model(x)[keep]
    loss = F.cross_entropy(torch.where(logits > -1e4, logits, 0.0), y[keep])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
model.load_state_dict(torch.load(buffer, map_location="cuda"))
print(f"loss {loss.item():.3f}")
