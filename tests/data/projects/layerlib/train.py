import torch
from torch import nn

from layerlib.layers import Recurrent, Sinusoid

device = torch.device("cuda")
model = nn.Sequential(Sinusoid(8), Recurrent(8)).to(device)
optimizer = torch.optim.Adam(model.parameters())
for x in loader:
    optimizer.zero_grad()
    model(x.to(device)).sum().backward()
    optimizer.step()
