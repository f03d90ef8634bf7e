"""Correct: train, save a checkpoint, resume with torch.load(map_location="cuda")."""
import os
import tempfile

import torch
from torch import nn

device = "cuda"


def make():
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 1)).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def train(model, optimizer, steps):
    for _ in range(steps):
        x = torch.randn(8, 10, device=device)
        y = torch.randn(8, 1, device=device)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


model, optimizer = make()
train(model, optimizer, 3)
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"model": model.state_dict(), "optim": optimizer.state_dict(), "epoch": 1}, path)

model, optimizer = make()
checkpoint = torch.load(path, map_location="cuda")
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optim"])
assert optimizer.state_dict()["state"][0]["exp_avg"].is_cuda
print("resumed at epoch", checkpoint["epoch"], "loss", train(model, optimizer, 3))
