# Reconstructed: the README's kind of use, an MLP with dropout fitted with validation data.
import torch
from torch import nn
from torch.nn import functional as F

from torchtuples.base import Model

n_rows, n_covs = 10000, 20
x = torch.randn((n_rows, n_covs))
y = 2 * x.sum(1, keepdim=True) + 4
x_val = torch.randn((1000, n_covs))
y_val = 2 * x_val.sum(1, keepdim=True) + 4

net = nn.Sequential(
    nn.Linear(n_covs, 64), nn.ReLU(), nn.BatchNorm1d(64), nn.Dropout(0.1),
    nn.Linear(64, 64), nn.ReLU(), nn.BatchNorm1d(64), nn.Dropout(0.1),
    nn.Linear(64, 1),
)
model = Model(net, F.mse_loss)
log = model.fit(x, y, batch_size=256, epochs=50, val_data=(x_val, y_val))
