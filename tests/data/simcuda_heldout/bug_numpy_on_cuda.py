"""Buggy: .numpy() on a CUDA tensor when computing the accuracy."""
import numpy as np
import torch
from torch import nn

device = "cuda"
model = nn.Linear(12, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    x = torch.randn(24, 12, device=device)
    y = torch.randint(0, 3, (24,), device=device)
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    preds = logits.argmax(dim=1).numpy()
    acc = np.mean(preds == y.cpu().numpy())
    print(f"step {step} loss {loss.item():.3f} acc {acc:.2f}")
