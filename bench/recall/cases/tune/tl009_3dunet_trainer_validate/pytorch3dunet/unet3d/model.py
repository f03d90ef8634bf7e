import torch.nn as nn


def create_conv(in_channels, out_channels, kernel_size, order, num_groups, padding):
    """Create a list of modules which together constitute a single conv layer with non-linearity
    and optional batchnorm/groupnorm, e.g. order='gcr' or 'cbr'."""
    modules = []
    for i, char in enumerate(order):
        if char == 'r':
            modules.append(('ReLU', nn.ReLU(inplace=True)))
        elif char == 'c':
            bias = not ('g' in order or 'b' in order)
            modules.append(('conv', nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding, bias=bias)))
        elif char == 'g':
            num_channels = in_channels if i < order.index('c') else out_channels
            modules.append(('groupnorm', nn.GroupNorm(num_groups=min(num_groups, num_channels),
                                                      num_channels=num_channels)))
        elif char == 'b':
            num_channels = in_channels if i < order.index('c') else out_channels
            modules.append(('batchnorm', nn.BatchNorm3d(num_channels)))
        elif char == 'd':
            modules.append(('dropout', nn.Dropout3d(p=0.1)))
    return modules


class DoubleConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, order='gcr', num_groups=8):
        super().__init__()
        for name, module in create_conv(in_channels, out_channels, 3, order, num_groups, 1):
            self.add_module('SingleConv1' + name, module)
        for name, module in create_conv(out_channels, out_channels, 3, order, num_groups, 1):
            self.add_module('SingleConv2' + name, module)


class UNet3D(nn.Module):
    def __init__(self, in_channels, out_channels, f_maps=32, layer_order='gcr', num_groups=8, num_levels=4):
        super().__init__()
        feats = [f_maps * 2 ** k for k in range(num_levels)]
        self.encoders = nn.ModuleList(
            [DoubleConv(in_channels if i == 0 else feats[i - 1], feats[i], layer_order, num_groups)
             for i in range(num_levels)])
        self.pool = nn.MaxPool3d(2)
        self.up = nn.Upsample(scale_factor=2, mode='nearest')
        self.decoders = nn.ModuleList(
            [DoubleConv(feats[i] + feats[i - 1], feats[i - 1], layer_order, num_groups)
             for i in range(num_levels - 1, 0, -1)])
        self.final_conv = nn.Conv3d(f_maps, out_channels, 1)
        self.final_activation = nn.Sigmoid()

    def forward(self, x):
        skips = []
        for i, encoder in enumerate(self.encoders):
            if i > 0:
                x = self.pool(x)
            x = encoder(x)
            skips.insert(0, x)
        for decoder, skip in zip(self.decoders, skips[1:]):
            x = decoder(torch_cat(skip, self.up(x)))
        x = self.final_conv(x)
        if not self.training:
            x = self.final_activation(x)
        return x


def torch_cat(a, b):
    import torch
    return torch.cat((a, b), dim=1)
