"""Ever larger temporary buffers under a 1 GiB cap: the cached blocks never fit the next
request, so the allocator must free its cache and retry (num_alloc_retries)."""
import torch
from torch import nn

MIB = 1024 * 1024
torch.cuda.set_per_process_memory_fraction(1024 * MIB / torch.cuda.get_device_properties(0).total_memory)
model = nn.Linear(64, 64).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(12):
    buffer = torch.empty((300 + 50 * step) * MIB, dtype=torch.uint8, device="cuda")
    buffer.fill_(1)
    del buffer
    optimizer.zero_grad()
    model(torch.randn(32, 64, device="cuda")).sum().backward()
    optimizer.step()  # line: step
