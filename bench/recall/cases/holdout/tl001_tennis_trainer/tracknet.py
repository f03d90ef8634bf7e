import torch.nn as nn


class BallTrackerNet(nn.Module):
    def __init__(self, out_channels=15):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(64),
            nn.Conv2d(64, out_channels, 3, padding=1),
        )

    def forward(self, x):
        return self.features(x)
