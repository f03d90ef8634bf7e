"""Correct: a small transformer under bf16 autocast, fused Adam, activation checkpointing,
gradient accumulation, LambdaLR, positions made with `device=`, and the optimizer state
saved and loaded back to the device."""
import io

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(16, dim)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True) for _ in range(2))
        self.out = nn.Linear(dim, vocab)

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        h = self.tok(idx) + self.pos(positions)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False)
        return self.out(h)


device = "cuda"
model = TinyLM().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, fused=True)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 4))
for step in range(8):
    for micro in range(2):
        idx = torch.randint(0, 64, (4, 16), device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
        loss = F.cross_entropy(logits.float().flatten(0, 1), idx.flatten()) / 2
        loss.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
buffer = io.BytesIO()
torch.save(optimizer.state_dict(), buffer)
buffer.seek(0)
optimizer.load_state_dict(torch.load(buffer, map_location="cuda"))
print(f"loss {loss.item():.3f}")
