"""Buggy: the optimizer is stepped on the CPU model, then the model moves to the GPU.

Adam's state (exp_avg, exp_avg_sq) stays on the CPU while the parameters and
their gradients are now on cuda:0.
"""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()

# a warm-up step on the CPU
x, y = torch.randn(32, 6), torch.randn(32, 1)
optimizer.zero_grad()
loss_fn(model(x), y).backward()
optimizer.step()

device = "cuda"
model.cuda()

for step in range(3):
    x = torch.randn(32, 6, device=device)
    y = torch.randn(32, 1, device=device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
