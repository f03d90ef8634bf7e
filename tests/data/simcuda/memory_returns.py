"""Trains a little, frees everything, empties the cache: prints the simulated allocator's
allocated and reserved bytes at the peak and at the end, and the views' sharing."""
import gc
import json

import torch
from torch import nn

model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
optimizer = torch.optim.Adam(model.parameters())
for _ in range(3):
    loss = model(torch.randn(64, 256, device="cuda")).logsumexp(-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
peak = torch.cuda.max_memory_allocated()
base = torch.cuda.memory_allocated()
x = torch.empty(1024, 1024, device="cuda")
view = x[:10].t()
views_share = torch.cuda.memory_allocated() - base == 4 * 1024 * 1024
del model, optimizer, loss, x, view
gc.collect()
before_empty = torch.cuda.memory_reserved()
torch.cuda.empty_cache()
print(json.dumps({
    "peak": peak, "allocated": torch.cuda.memory_allocated(), "reserved_before_empty": before_empty,
    "reserved": torch.cuda.memory_reserved(), "views_share": views_share,
}))
