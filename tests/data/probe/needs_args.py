"""A script that refuses to run without its arguments."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--tag", required=True)
args = parser.parse_args()
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(args.steps):
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
print(f"{args.tag}: trained {args.steps} steps")
