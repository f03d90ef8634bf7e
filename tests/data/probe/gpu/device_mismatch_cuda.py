"""The model is moved to the GPU, the batch is not."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    optimizer.zero_grad()
    batch = torch.randn(16, 8)
    loss = model(batch).pow(2).mean()  # line: call
    loss.backward()
    optimizer.step()
