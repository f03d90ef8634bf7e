"""Correct: activation checkpointing with use_reentrant=False on CUDA."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

device = "cuda"


class DeepMLP(nn.Module):
    def __init__(self, dim=24, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Dropout(0.1)) for _ in range(depth)
        )
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.out(x)


model = DeepMLP().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model.train()
for step in range(4):
    x = torch.randn(10, 24, device=device, requires_grad=True)
    y = torch.randn(10, 1, device=device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
