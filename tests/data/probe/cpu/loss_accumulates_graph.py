"""`total_loss += loss` keeps every step's autograd graph alive."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
total_loss = 0.0
for step in range(100):
    optimizer.zero_grad()
    loss = model(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
    total_loss += loss  # line: accumulate
print(f"mean loss {float(total_loss) / 100:.4f}")
