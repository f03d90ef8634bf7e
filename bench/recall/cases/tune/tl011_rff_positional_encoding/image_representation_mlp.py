import torch
import torch.nn as nn

import rff

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
coords = torch.rand(256 * 256, 2, device=device)
pixels = torch.rand(256 * 256, 3, device=device)

model = nn.Sequential(
    rff.layers.PositionalEncoding(sigma=10.0, m=10),
    nn.Linear(40, 256), nn.ReLU(),
    nn.Linear(256, 3), nn.Sigmoid(),
).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()

for step in range(1000):
    optimizer.zero_grad()
    loss = loss_fn(model(coords), pixels)
    loss.backward()
    optimizer.step()
