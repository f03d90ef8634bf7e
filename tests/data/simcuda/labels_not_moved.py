"""Bug: the images go to the GPU, the labels stay on the CPU (AMP, GradScaler, DataLoader)."""
import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data = torch.utils.data.TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 5, (64,)))
loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
for images, labels in loader:
    images = images.to(device)
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(images)
        loss = F.cross_entropy(logits, labels)  # line: bug
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
