"""Buggy: forward() creates a tensor without device= and adds it to a CUDA tensor."""
import torch
from torch import nn

device = "cuda"


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)

    def forward(self, x):
        h = self.proj(x)
        bias = torch.zeros(x.size(0), 4)
        return h + bias


model = Head().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(4):
    x = torch.randn(16, 8, device=device)
    target = torch.randn(16, 4, device=device)
    loss = ((model(x) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
