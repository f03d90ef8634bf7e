"""Every way of clearing gradients in place, or by dropping them, one per step (the
`.data` forms escape the gradients' version counters)."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def clear(step):
    kind = step % 8
    if kind == 0:
        optimizer.zero_grad(set_to_none=False)
    elif kind == 1:
        model.zero_grad()
    elif kind == 2:
        for p in model.parameters():
            p.grad.zero_()
    elif kind == 3:
        for p in model.parameters():
            p.grad.data.zero_()
    elif kind == 4:
        for p in model.parameters():
            p.grad.data.mul_(0)
    elif kind == 5:
        for p in model.parameters():
            p.grad = None
    elif kind == 6:
        for p in model.parameters():
            p.grad.data.fill_(0.0)
    else:
        for p in model.parameters():
            p.grad.data *= 0


for step in range(100):
    loss = model(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()  # line: step
    clear(step)
