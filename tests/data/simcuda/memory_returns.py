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
# A simulated tensor built directly is the same as a result of dispatch: an allocation
# of its storage, around a plain CPU tensor.
from torchlint.runtime_probe.simcuda.tensor import SimTensor  # noqa: E402

before_direct = torch.cuda.memory_allocated()
direct = SimTensor(nn.Parameter(torch.zeros(256, 256)))
direct_counted = torch.cuda.memory_allocated() - before_direct == 256 * 256 * 4
direct_plain = direct.is_cuda and type(direct._elem) is torch.Tensor
del model, optimizer, loss, x, view, direct
gc.collect()
before_empty = torch.cuda.memory_reserved()
torch.cuda.empty_cache()
print(json.dumps({
    "peak": peak, "allocated": torch.cuda.memory_allocated(), "reserved_before_empty": before_empty,
    "reserved": torch.cuda.memory_reserved(), "views_share": views_share,
    "direct_counted": direct_counted, "direct_plain": direct_plain,
}))
