import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self, size, style_dim, n_mlp):
        super().__init__()
        self.style_dim = style_dim
        self.style = nn.Sequential(*[nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2)) for _ in range(n_mlp)])
        self.net = nn.Sequential(nn.Linear(style_dim, 3 * size * size), nn.Tanh())
        self.size = size

    def forward(self, styles):
        w = self.style(styles[0])
        return self.net(w).view(-1, 3, self.size, self.size), None


class Discriminator(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(),
                                 nn.LazyLinear(1))

    def forward(self, x):
        return self.net(x)
