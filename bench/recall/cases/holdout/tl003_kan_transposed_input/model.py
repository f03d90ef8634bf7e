import torch
import torch.nn as nn

from kan import KANLinear


class TimeSeriesKAN(nn.Module):
    """Channels-first sequences (batch, channels, time) mixed over channels by a KAN layer."""

    def __init__(self, channels, hidden):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size=3, padding=1)
        self.kan = KANLinear(channels, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        x = self.conv(x)
        x = x.transpose(1, 2)
        x = self.kan(x)
        return self.head(x).squeeze(-1)


if __name__ == "__main__":
    model = TimeSeriesKAN(channels=8, hidden=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(100):
        x = torch.randn(4, 8, 32)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
