"""Correct: a small transformer block trained under bf16 autocast (no GradScaler needed)."""
import torch
from torch import nn

device = "cuda"


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


model = nn.Sequential(Block(), Block(), nn.Linear(32, 32)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

for step in range(4):
    tokens = torch.randn(4, 16, 32, device=device)
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        out = model(tokens)
        loss = (out.float() - tokens).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(step, out.dtype, loss.item())
