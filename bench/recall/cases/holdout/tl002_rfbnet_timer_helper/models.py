import torch
import torch.nn as nn


class RFBNet(nn.Module):
    """Stand-in for the RFB detector: a VGG trunk, RFB blocks and loc/conf heads (reduced)."""

    def __init__(self, phase, size, num_classes):
        super().__init__()
        self.phase = phase
        self.num_classes = num_classes
        self.base = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(inplace=True))
        self.loc = nn.Conv2d(128, 6 * 4, 3, padding=1)
        self.conf = nn.Conv2d(128, 6 * num_classes, 3, padding=1)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        x = self.base(x)
        loc = self.loc(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, 4)
        conf = self.conf(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.num_classes)
        if self.phase == "test":
            return loc, self.softmax(conf)
        return loc, conf


def build_net(phase, size=300, num_classes=21):
    return RFBNet(phase, size, num_classes)
