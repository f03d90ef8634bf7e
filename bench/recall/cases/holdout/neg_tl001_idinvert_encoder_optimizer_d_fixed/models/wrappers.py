import torch
import torch.nn as nn


class _Wrapper:
    """A model wrapper keeping the network on `.net`, as the repository's base_module does."""

    def __init__(self, net, gpu_ids):
        self.net = nn.DataParallel(net.cuda(), device_ids=gpu_ids)


class _Synthesis(nn.Module):
    def __init__(self, num_layers, w_dim, resolution=256):
        super().__init__()
        self.resolution = resolution
        self.fc = nn.Linear(num_layers * w_dim, 3 * 16 * 16)
        self.up = nn.Upsample(size=(resolution, resolution))

    def forward(self, w):
        return self.up(torch.tanh(self.fc(w.flatten(1)).view(-1, 3, 16, 16)))


class _Generator(nn.Module):
    def __init__(self, num_layers, w_dim):
        super().__init__()
        self.synthesis = _Synthesis(num_layers, w_dim)


class StyleGANGenerator(_Wrapper):
    def __init__(self, model_name, logger=None, gpu_ids=(0,)):
        self.num_layers, self.w_space_dim = 14, 512
        self.min_val, self.max_val = -1.0, 1.0
        super().__init__(_Generator(self.num_layers, self.w_space_dim), gpu_ids)


class StyleGANEncoder(_Wrapper):
    def __init__(self, model_name, logger=None, gpu_ids=(0,)):
        net = nn.Sequential(
            nn.Conv2d(3, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 14 * 512),
        )
        super().__init__(net, gpu_ids)


class StyleGANDiscriminator(_Wrapper):
    def __init__(self, model_name, logger=None, gpu_ids=(0,)):
        net = nn.Sequential(
            nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1),
        )
        super().__init__(net, gpu_ids)


class PerceptualModel(_Wrapper):
    def __init__(self, min_val=-1.0, max_val=1.0, gpu_ids=(0,)):
        net = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), nn.ReLU(), nn.Conv2d(64, 64, 3, 1, 1))
        for p in net.parameters():
            p.requires_grad_(False)
        super().__init__(net, gpu_ids)
