from torch import nn

from .layers import Block


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)


class Regularized(nn.Module):
    def __init__(self, rate=0.1):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.drop = nn.Dropout(rate)

    def forward(self, x):
        return self.drop(self.fc(x))


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)
