"""A token model trained on batches whose sequence length grows every step (a curriculum
over longer and longer sequences): on CUDA no cached segment fits the next step's larger
activations, so the caching allocator reserves new ones and the old ones sit idle."""

import torch
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(16, 2048), nn.GELU(), nn.Linear(2048, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(12):
    length = 400 + 60 * step
    x = torch.randn(8, length, 16, device=device)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()  # line: step
print(f"reserved {torch.cuda.memory_reserved() >> 20} MiB, peak allocated {torch.cuda.max_memory_allocated() >> 20} MiB")
