"""Correct: fp16 autocast, GradScaler and a StepLR schedule stepped once per epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda"
model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(TensorDataset(torch.randn(48, 16), torch.randint(0, 4, (48,))), batch_size=12)

for epoch in range(2):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
        assert logits.dtype == torch.float16
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    scheduler.step()
    print(epoch, loss.item(), scheduler.get_last_lr())
