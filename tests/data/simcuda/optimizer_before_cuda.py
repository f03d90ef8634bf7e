"""Bug: Adam takes a step on the CPU (its state is made there), then the model moves to
the GPU; the next step mixes CPU state with CUDA parameters."""
import torch
from torch import nn

model = nn.Linear(10, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model(torch.randn(4, 10)).sum().backward()
optimizer.step()
model.cuda()
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(4, 10, device="cuda")).sum().backward()
    optimizer.step()  # line: bug
