"""The same token model on batches of one fixed sequence length: after the first step every
request fits a cached block, and reserved memory stays flat."""

import torch
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(16, 2048), nn.GELU(), nn.Linear(2048, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(12):
    x = torch.randn(8, 1000, 16, device=device)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()  # line: step
print(f"reserved {torch.cuda.memory_reserved() >> 20} MiB, peak allocated {torch.cuda.max_memory_allocated() >> 20} MiB")
