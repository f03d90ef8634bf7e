"""A model that moves its input itself: inputs on another device are not a bug here."""
import torch
from torch import nn


class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 1)

    def forward(self, x):
        return self.linear(x.to(self.linear.weight.device))


model = Moves().to("meta")
for step in range(3):
    out = model(torch.randn(16, 8))  # line: call
