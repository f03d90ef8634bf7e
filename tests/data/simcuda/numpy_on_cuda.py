"""Bug: accuracy computed with `.numpy()` on a CUDA tensor."""
import torch
from torch import nn

model = nn.Linear(8, 4).cuda()
x, y = torch.randn(32, 8).cuda(), torch.randint(0, 4, (32,)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    predictions = logits.argmax(1).numpy()  # line: bug
