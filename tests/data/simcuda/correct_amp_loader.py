"""Correct: float16 AMP with a GradScaler (unscale + clip), AdamW + StepLR, a pinned
DataLoader with non_blocking moves, CUDA-event timing after a synchronize, a checkpoint
saved and loaded back onto the device, and `.cpu()` before host conversions."""
import io

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data = torch.utils.data.TensorDataset(torch.randint(0, 50, (128, 12)), torch.randint(0, 4, (128,)))
loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True, pin_memory=True, num_workers=2)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 32)
        self.conv = nn.Conv1d(32, 32, 3, padding=1)
        self.norm = nn.BatchNorm1d(32)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(32, 4)

    def forward(self, tokens):
        h = self.conv(self.embed(tokens).transpose(1, 2))
        return self.head(self.drop(F.relu(self.norm(h))).mean(-1))


model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4)
scaler = torch.amp.GradScaler("cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for epoch in range(2):
    model.train()
    start.record()
    for tokens, labels in loader:
        tokens, labels = tokens.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
    end.record()
    torch.cuda.synchronize()
    print(f"epoch {epoch}: {start.elapsed_time(end):.1f} ms, loss {loss.item():.3f}, {torch.cuda.memory_allocated()} bytes")
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}, buffer)
buffer.seek(0)
state = torch.load(buffer, map_location=device)
model.load_state_dict(state["model"])
optimizer.load_state_dict(state["optimizer"])
model.eval()
with torch.no_grad():
    predictions = model(torch.randint(0, 50, (4, 12), device=device)).argmax(1).cpu().tolist()
print(predictions)
