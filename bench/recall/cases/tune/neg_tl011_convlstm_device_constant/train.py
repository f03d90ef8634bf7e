import torch
from torch import nn

from convlstm.model import ConvLSTM
from core.constants import DEVICE

model = ConvLSTM(in_channels=1, out_channels=16, kernel_size=3, padding=1, activation="relu",
                 frame_size=(64, 64)).to(DEVICE)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = nn.BCEWithLogitsLoss()

for epoch in range(10):
    X = torch.rand(4, 1, 10, 64, 64, device=DEVICE)
    optimizer.zero_grad()
    output = model(X)
    loss = criterion(output[:, :1], X)
    loss.backward()
    optimizer.step()
