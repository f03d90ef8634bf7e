import torch
from torch import nn
from torch.nn import functional as F


class SegFormer(nn.Module):
    def __init__(self, backbone: str = 'MiT-B0', num_classes: int = 19) -> None:
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 7, 4, 3), nn.BatchNorm2d(32), nn.GELU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.GELU(),
        )
        self.decode_head = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(64, num_classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.decode_head(self.backbone(x))
        return F.interpolate(y, size=x.shape[2:], mode='bilinear', align_corners=False)
