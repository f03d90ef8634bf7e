"""Every step's output is kept with its autograd graph: CUDA memory grows by about
8 MiB per step (the output and the input its graph saved)."""
import torch
from torch import nn

model = nn.Linear(4096, 4096).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
history = []
for step in range(100):
    optimizer.zero_grad()
    out = model(torch.randn(256, 4096, device="cuda"))
    out.pow(2).mean().backward()
    optimizer.step()
    history.append(model(torch.randn(256, 4096, device="cuda")) * 2)  # line: keep
