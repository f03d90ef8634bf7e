"""`.view()` on a transposed tensor: works here only because of the strides."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(100):
    optimizer.zero_grad()
    batch = torch.randn(8, 16)
    x = batch.t().view(16, 2, 4).sum(1)  # line: view
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
