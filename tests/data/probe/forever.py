"""Three steps, then a loop that never ends: only the timeout stops it."""
import torch
from torch import nn

model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
print("waiting forever", flush=True)
while True:
    pass
