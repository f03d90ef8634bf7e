"""Bug: the model is moved to the GPU, the batches never are."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(5):
    x, y = torch.randn(16, 20), torch.randint(0, 3, (16,))
    out = model(x)  # line: bug
    loss = nn.functional.cross_entropy(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
