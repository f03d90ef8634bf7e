import torch
import torch.nn as nn


class StaticEncoder(nn.Module):
    def __init__(self, topology, channels=3):
        super().__init__()
        joints = len(topology)
        self.conv1by1 = nn.Conv1d(joints * channels, joints * 8, kernel_size=1)
        self.enc_layer = nn.Sequential(nn.Conv1d(joints * channels, joints * 8, kernel_size=1),
                                       nn.LeakyReLU(0.2))

    def forward(self, x):
        x = x.reshape(x.shape[0], -1, 1)
        identity = self.conv1by1(x)
        return self.enc_layer(x) + identity


class DynamicEncoder(nn.Module):
    def __init__(self, topology, channels=4):
        super().__init__()
        joints = len(topology)
        self.conv = nn.Sequential(nn.Conv1d(joints * channels + joints * 8, 128, kernel_size=3, padding=1),
                                  nn.LeakyReLU(0.2),
                                  nn.Conv1d(128, 128, kernel_size=3, padding=1, stride=2))

    def forward(self, x, static_latent):
        static = static_latent.expand(-1, -1, x.shape[-1])
        return self.conv(torch.cat([x, static], dim=1))


class Decoder(nn.Module):
    def __init__(self, topology, channels=4):
        super().__init__()
        joints = len(topology)
        self.up = nn.Upsample(scale_factor=2, mode='linear', align_corners=False)
        self.conv = nn.Conv1d(128 + joints * 8, joints * channels, kernel_size=3, padding=1)

    def forward(self, d_latent, static_latent):
        x = self.up(d_latent)
        static = static_latent.expand(-1, -1, x.shape[-1])
        return self.conv(torch.cat([x, static], dim=1))
