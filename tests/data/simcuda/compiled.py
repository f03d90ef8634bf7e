"""A CUDA model compiled with torch.compile, which simulated CUDA does not run."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        noise = torch.randn(x.shape)  # line: bug
        return self.linear(x + noise.to(x.device))


model = torch.compile(Net().cuda())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    optimizer.step()
