import torch.nn as nn
import MinkowskiEngine as ME


class ConvBNReLU(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, dimension=3):
        super().__init__()
        self.net = nn.Sequential(
            ME.MinkowskiConvolution(in_channels, out_channels, kernel_size=kernel_size, stride=stride,
                                    dimension=dimension),
            ME.MinkowskiBatchNorm(out_channels),
            ME.MinkowskiReLU(inplace=True),
        )

    def forward(self, x):
        return self.net(x)


class DisNet(nn.Module):
    """3D sparse U-Net that distills 2D CLIP features into every point (reduced)."""

    def __init__(self, cfg=None):
        super().__init__()
        self.stem = ConvBNReLU(3, 32, kernel_size=5)
        self.down = ConvBNReLU(32, 64, stride=2)
        self.up = nn.Sequential(
            ME.MinkowskiConvolutionTranspose(64, 32, kernel_size=2, stride=2, dimension=3),
            ME.MinkowskiBatchNorm(32),
            ME.MinkowskiReLU(inplace=True),
        )
        self.head = ME.MinkowskiConvolution(32, 768, kernel_size=1, dimension=3)

    def forward(self, sinput):
        x = self.stem(sinput)
        x = self.up(self.down(x)) + x
        return self.head(x).F
